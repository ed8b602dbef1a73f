"""The report's checks that runs belong together (``report/consistency.py``): shard runs
(``--metadata '{"shard": "I/N"}'``) merge into the unsharded result; a missing, repeated or
foreign shard is refused."""

from __future__ import annotations

import random

import pytest

from dna_fixtures import evaluate, random_dna, write_run
from perturbation_bench.errors import DataValidationError
from perturbation_bench.pairs.settings import TaskSettings
from perturbation_bench.report.make import make_report

TASK = "perturbation_syn_human"


def sharded_runs(model, data, root, count, tasks=(TASK,), metadata=None, **model_args):
    runs = []
    for index in range(count):
        folder = root / f"shard{index}"
        evaluate(
            model,
            list(tasks),
            {"data_dir": str(data), **(metadata or {}), "shard": f"{index}/{count}"},
            model="dna-hf",
            output_path=folder,
            **model_args,
        )
        runs.append(folder)
    return runs


def test_merged_shards_report_the_unsharded_metrics(tiny_models, pair_data, tmp_path):
    evaluate(
        tiny_models["char"],
        [TASK],
        {"data_dir": str(pair_data)},
        model="dna-hf",
        output_path=tmp_path / "whole",
    )
    whole = make_report([tmp_path / "whole"], tmp_path / "r1", n_boot=100)
    runs = sharded_runs(tiny_models["char"], pair_data, tmp_path, 3)
    merged = make_report(runs, tmp_path / "r2", n_boot=100)
    (got,), (expected,) = merged["summary"], whole["summary"]
    for key, value in expected.items():
        if key != "model":
            assert got[key] == (
                pytest.approx(value) if isinstance(value, (float, list)) else value
            ), key
    assert any("3 shards merged (8 pairs)" in note for note in merged["notes"])


def test_merged_shards_of_a_labelled_variant_task(tiny_models, tmp_path):
    import random

    from dna_fixtures import build_variants, traitgym_like

    rng = random.Random(3)
    sequences = {
        "chr1": "".join(rng.choice("ACGT") for _ in range(5000)),
        "chr2": "".join(rng.choice("ACGT") for _ in range(3000)),
    }
    fasta = tmp_path / "g.fa"
    fasta.write_text("".join(f">{k}\n{v}\n" for k, v in sequences.items()))
    traitgym_like(sequences, n=40, seed=5).to_parquet(tmp_path / "v.parquet")
    build_variants(tmp_path, tmp_path / "v.parquet", fasta, "labelled")
    metadata = {"config": "labelled"}
    data = tmp_path / "out"
    evaluate(
        tiny_models["char"],
        ["perturbation_variants"],
        {"data_dir": str(data), **metadata},
        model="dna-hf",
        output_path=tmp_path / "whole",
    )
    fast = {"n_boot": 100, "se_boot": 2, "se_chrom_boot": 2}  # the intervals, not the SEs
    whole = make_report([tmp_path / "whole"], tmp_path / "r1", **fast)["variants"]["summary"]
    runs = sharded_runs(
        tiny_models["char"], data, tmp_path / "s", 3, ["perturbation_variants"], metadata
    )
    merged = make_report(runs, tmp_path / "r2", **fast)["variants"]["summary"]
    for name in (
        "auroc",
        "auprc",
        "auroc_by_chrom",
        "auprc_by_chrom",
        "auroc_95",
        "auprc_by_chrom_95",
    ):
        assert merged[0][name] == pytest.approx(whole[0][name]), name


def test_missing_repeated_and_foreign_shards_are_refused(tiny_models, pair_data, tmp_path):
    runs = sharded_runs(tiny_models["char"], pair_data, tmp_path, 3)
    with pytest.raises(
        DataValidationError, match=r"perturbation_syn_human .*: shard\(s\) 2/3 missing"
    ):
        make_report(runs[:2], tmp_path / "r")
    import shutil

    shutil.copytree(runs[1], tmp_path / "again")  # shard 1 run twice (e.g. a retried array task)
    with pytest.raises(DataValidationError, match="shard 1/3 repeated in"):
        make_report([*runs, tmp_path / "again"], tmp_path / "r")
    evaluate(
        tiny_models["char"],
        [TASK],
        {"data_dir": str(pair_data), "shard": "2/3"},
        model="dna-hf",
        output_path=tmp_path / "other",
        dedupe="false",
    )
    with pytest.raises(DataValidationError, match="a foreign shard, other scorer settings"):
        make_report([*runs[:2], tmp_path / "other"], tmp_path / "r")


def shard_runs(root, shards, data):
    """Fake runs (``write_run``) of ``TASK``, one per shard, each of four pairs of its own."""
    rng = random.Random(0)
    runs = []
    for index, (shard, identity) in enumerate(zip(shards, data, strict=True)):
        pairs = [(o, o[:10] + "A" + o[11:]) for o in ("C" + random_dna(rng, 39) for _ in range(4))]
        runs.append(
            write_run(
                root / f"run{index}",
                TASK,
                [(-1.0, -2.0)] * 4,
                pairs=pairs,
                settings=TaskSettings(data=identity, shard=shard),
            )
        )
    return runs


@pytest.mark.parametrize(
    "shards, data, named, message",
    [
        (
            ["0/2", "1/2", "2/3"],
            ["sha256:aa"] * 3,
            False,
            r"shards of different N: \S+: shard 0/2; \S+: shard 1/2; \S+: shard 2/3$",
        ),
        (
            ["0/2", None],
            ["sha256:aa"] * 2,
            False,
            r"sharded and unsharded runs mixed: \S+: shard 0/2; \S+: unsharded$",
        ),
        (["0/2", "1/2"], ["sha256:aa", "sha256:bb"], True, r"a foreign shard, other data"),
        (["0/2", "1/2"], ["sha256:aa", "sha256:bb"], False, r"data=aa\): shard\(s\) 1/2 missing"),
        (["1/3", "2/3"], ["sha256:aa"] * 2, False, r"\): shard\(s\) 0/3 missing"),  # the first
    ],
)
def test_shards_that_do_not_make_one_run_are_refused(tmp_path, shards, data, named, message):
    """Shards 0/2 and 1/2 with a 2/3 would count pairs twice over; shards of other data would
    pool two datasets into one score, whether ``--name`` gives them one name or the data tells
    them apart as two runs (each then lacks its sibling). The same shards made alike merge."""
    runs = shard_runs(tmp_path / "bad", shards, data)
    names = {str(run): "one model" for run in runs} if named else None
    with pytest.raises(DataValidationError, match=message):
        make_report(runs, tmp_path / "r1", names=names)
    alike = shard_runs(tmp_path / "good", ["0/2", "1/2"], ["sha256:aa"] * 2)
    assert any(
        "2 shards merged (8 pairs)" in note for note in make_report(alike, tmp_path / "r2")["notes"]
    )


def test_two_runs_on_different_data_are_refused_naming_both(tmp_path):
    """The message names the task, each model and each data identity, and the way out."""
    runs = [
        write_run(
            tmp_path / name,
            TASK,
            [(-1.0, -2.0)] * 4,
            model_name=name,
            settings=TaskSettings(data=data),
        )
        for name, data in (("model-a", "sha256:aa"), ("model-b", "sha256:bb"))
    ]
    with pytest.raises(DataValidationError) as refused:
        make_report(runs, tmp_path / "report")
    message = str(refused.value)
    assert message.startswith(f"{TASK} was scored on different data by the runs (")
    assert "data=aa: sha256:aa" in message and "data=bb: sha256:bb" in message  # both runs named
    assert "--allow-different-data" in message

"""``report --export traitgym DIR`` (``report/export.py``): the files, read back as TraitGym's
``get_metric`` and ``get_metric_by_block_weighted_average`` read them, give the report's AUPRC."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

from dna_fixtures import build_variants, evaluate, labelled_snvs, random_genome
from perturbation_bench.cli import main

TASK = "perturbation_variants"


def traitgym_auprc(folder, model: str) -> tuple[float, float]:
    """TraitGym's two AUPRC rules on its files: over all variants, and by chromosome weighted by
    each chromosome's number of variants."""
    variants = pd.read_parquet(folder / "test.parquet")
    variants["score"] = pd.read_parquet(folder / "preds" / "all" / f"{model}.parquet")["score"]
    overall = average_precision_score(variants["label"], variants["score"])
    blocks = [
        (len(part), average_precision_score(part["label"], part["score"]))
        for _, part in variants.groupby("chrom")
    ]
    total = sum(n for n, _ in blocks)
    return overall, sum(n / total * value for n, value in blocks)


def test_the_exported_files_give_traitgym_the_report_s_auprc(tiny_models, tmp_path, capsys):
    fasta, sequences = random_genome(tmp_path, {"chr1": 2500, "chr2": 2000}, 29)
    snvs = labelled_snvs(sequences, 60, 8, 40, lambda i, rng: rng.random() < 0.35)
    snvs.to_csv(tmp_path / "v.csv", index=False)
    table = build_variants(tmp_path, tmp_path / "v.csv", fasta, "v", window=40)
    metadata = {"data_dir": str(tmp_path / "out"), "config": "v"}
    evaluate(tiny_models["char"], [TASK], metadata, model="dna-hf", output_path=tmp_path / "run")
    run = next((tmp_path / "run").iterdir())
    export = tmp_path / "traitgym"
    status = main(
        ["report", str(run), "--out", str(tmp_path / "report"), "--bootstrap", "20"]
        + ["--se-resamples", "5", "--se-chrom-resamples", "5", "--export", "traitgym", str(export)]
    )
    assert status == 0 and "files in TraitGym's layout" in capsys.readouterr().out
    import json

    (row,) = json.loads((tmp_path / "report" / "report.json").read_text())["variants"]["summary"]
    folder = export / TASK
    (model,) = [p.stem for p in (folder / "preds" / "all").iterdir()]
    assert model.endswith("_LLR.minus.score")
    variants = pd.read_parquet(folder / "test.parquet")
    assert list(variants.columns) == ["chrom", "pos", "ref", "alt", "label"]
    assert variants[["chrom", "pos", "ref", "alt"]].equals(table[["chrom", "pos", "ref", "alt"]])
    overall, by_chrom = traitgym_auprc(folder, model)
    assert overall == pytest.approx(row["auprc"], abs=1e-12)
    assert by_chrom == pytest.approx(row["auprc_by_chrom"], abs=1e-12)
    metric = pd.read_csv(folder / "AUPRC" / "all" / f"{model}.csv")
    assert list(metric.columns) == ["Model", "AUPRC", "se"]
    assert metric.iloc[0].tolist() == [
        model,
        pytest.approx(overall),
        pytest.approx(row["auprc_se"]),
    ]
    weighted = pd.read_csv(folder / "AUPRC_by_chrom_weighted_average" / "all" / f"{model}.csv")
    assert list(weighted.columns) == ["model", "metric", "score", "se"]
    assert weighted.iloc[0]["score"] == pytest.approx(by_chrom)
    # a re-export under another name replaces the earlier one whole: TraitGym sees one model
    again = ["report", str(run), "--out", str(tmp_path / "report2"), "--bootstrap", "20"]
    again += ["--export", "traitgym", str(export), "--name", f"{run}=renamed"]
    assert main(again) == 0
    assert [p.name for p in (folder / "preds" / "all").iterdir()] == [
        "renamed_LLR.minus.score.parquet"
    ]
    assert not (folder / "AUPRC" / "all" / f"{model}.csv").exists()
    # a folder holding a file the export did not write is refused before any work
    (export / "notes.txt").write_text("mine")
    refused = ["report", str(run), "--out", str(tmp_path / "report3"), "--bootstrap", "20"]
    assert main([*refused, "--export", "traitgym", str(export)]) == 2
    err = capsys.readouterr().err
    assert "holds 1 file(s) this tool did not write there (first: notes.txt)" in err
    assert not (tmp_path / "report3").exists() and (export / "notes.txt").read_text() == "mine"


def test_an_unknown_export_format_is_refused(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r"), "--export", "x", "d"]) == 2
    assert "--export x: formats are traitgym" in capsys.readouterr().err


def test_runs_on_other_rows_are_refused_and_the_subset_columns_and_features_exported(
    tiny_models, tmp_path, capsys
):
    """A run on the first 20 variants (as ``--limit 20`` scores) beside a full run of the same
    task: the export is refused, naming both, and writes nothing. The full run alone exports
    ``consequence`` and ``match_group``, and a ``features/`` file from which TraitGym's
    ``unsupervised_pred`` rule (its sign applied, the subset merged on coordinates) gives the
    exported predictions."""
    fasta, sequences = random_genome(tmp_path, {"chr1": 2500, "chr2": 2000}, 31)
    snvs = labelled_snvs(sequences, 40, 9, 40, lambda i, rng: i % 4 == 0).reset_index(drop=True)
    snvs["consequence"] = ["PLS" if i % 2 else "dELS" for i in snvs.index]
    snvs["match_group"] = [f"g{i // 4}" for i in snvs.index]
    snvs.to_csv(tmp_path / "v.csv", index=False)
    snvs.head(20).to_csv(tmp_path / "head.csv", index=False)
    build_variants(tmp_path, tmp_path / "v.csv", fasta, "v", window=40)
    build_variants(tmp_path, tmp_path / "head.csv", fasta, "head", window=40)
    runs = []
    for config in ("v", "head"):
        metadata = {"data_dir": str(tmp_path / "out"), "config": config}
        output = tmp_path / f"run_{config}"
        evaluate(tiny_models["char"], [TASK], metadata, model="dna-hf", output_path=output)
        runs.append(str(next(output.iterdir())))
    base = ["--bootstrap", "5", "--se-resamples", "2", "--se-chrom-resamples", "2"]
    export = tmp_path / "traitgym"
    names = ["--name", f"{runs[0]}=full", "--name", f"{runs[1]}=limited"]
    args = ["report", *runs, "--out", str(tmp_path / "r1"), *base, *names]
    args.append("--allow-different-data")  # two configs stand for a --limit run's rows
    assert main([*args, "--export", "traitgym", str(export)]) == 2
    err = capsys.readouterr().err
    assert (
        f"--export traitgym: full and limited scored {TASK} on other variants (40 and 20 labelled)"
    ) in err or (
        f"--export traitgym: limited and full scored {TASK} on other variants (20 and 40 labelled)"
    ) in err
    assert "Traceback" not in err and not list(export.rglob("*.parquet"))
    args = ["report", runs[0], "--out", str(tmp_path / "r2"), *base, "--name", f"{runs[0]}=full"]
    assert main([*args, "--export", "traitgym", str(export)]) == 0
    folder = export / TASK
    variants = pd.read_parquet(folder / "test.parquet")
    assert list(variants.columns) == [
        *"chrom pos ref alt label".split(),
        "consequence",
        "match_group",
    ]
    assert variants["match_group"].tolist() == snvs["match_group"].tolist()
    preds = pd.read_parquet(folder / "preds" / "all" / "full_LLR.minus.score.parquet")
    feature = pd.read_parquet(folder / "features" / "full_LLR.parquet", columns=["score"])
    subset = variants[["chrom", "pos", "ref", "alt"]].sample(frac=1, random_state=0)
    joined = subset.merge(
        pd.concat([variants, -feature], axis=1), on=["chrom", "pos", "ref", "alt"]
    )
    by_coordinates = variants.assign(score=preds["score"]).set_index(["chrom", "pos", "ref", "alt"])
    expected = by_coordinates.loc[list(subset.itertuples(index=False, name=None)), "score"]
    assert joined["score"].tolist() == pytest.approx(expected.tolist(), abs=0)


def test_a_sharded_run_is_refused_and_nothing_is_written(tmp_path):
    """The rows of a run scored in two shards have no one order, so no test.parquet is written
    for them."""
    from perturbation_bench.errors import OptionsError
    from perturbation_bench.report.export import export_traitgym

    pairs = pd.DataFrame(
        {"model": "m", "task": TASK, "pair_id": ["a", "b", "c", "d"], "label": [1, 0, 1, 0],
         "shard": ["0/2", "0/2", "1/2", "1/2"], "doc_id": [0, 1, 0, 1], "score": 0.5}
    )  # fmt: skip
    with pytest.raises(OptionsError) as refused:
        export_traitgym(pairs, [{"model": "m", "task": TASK, "score": "llr"}], tmp_path / "d")
    assert str(refused.value) == (
        f"--export traitgym: m scored {TASK} in shards, whose rows have no one order; export an "
        "unsharded run"
    )
    assert not (tmp_path / "d").exists()

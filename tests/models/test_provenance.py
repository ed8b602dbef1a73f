"""Every results file says what produced it; the report refuses to compare runs on other data."""

from __future__ import annotations

import hashlib
import json

import pytest

from dna_fixtures import evaluate
from perturbation_bench import __version__
from perturbation_bench.cli import main
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet

TASK = "perturbation_syn_human"


def file_sha256(folder) -> str:
    (path,) = sorted(folder.glob("*.parquet"))
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
def test_the_results_file_records_version_scorer_settings_and_data(
    tiny_models, pair_data, tmp_path, model
):
    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    path = (
        tiny_models["char"]
        if model == "dna-hf"
        else str(
            save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer("char")))
        )
    )
    metadata = {"data_dir": str(pair_data), "rc_average": True}
    evaluate(path, [TASK], metadata, model=model, output_path=tmp_path / "run")
    (results,) = (tmp_path / "run").glob("*/results_*.json")
    made = json.loads(results.read_text())["config"]["perturbation_bench"]
    assert made["version"] == __version__ and made["model"] == model
    assert made["settings"]["dtype"] == "torch.float32" and made["settings"]["dedupe"] is True
    if model == "dna-hf":
        assert (
            made["settings"]["share_prefix"] == "auto"  # the default, as given
            and made["settings"]["add_bos_token"] is False
        )
    assert made["tasks"][TASK] == {
        "data": file_sha256(pair_data / "syn_human"),
        "preset": "default",
        "dna_prefix": "",
        "kmer_size": 1,
        "kmer_overlap": False,
        "rc_average": True,
        "context_bp": None,
        "reduction": "sum",
        "start_token": "model",
        "convention": None,
        "shard": None,
        "score": None,
        "one_class_chromosomes": "drop",
        "labels": None,
        "min_per_class": None,
        "ties": None,
        "calibration": None,
    }


def test_the_report_refuses_runs_that_scored_different_data(
    tiny_models, pair_data, tmp_path, capsys
):
    other = tmp_path / "other"
    write_parquet(random_pairs(8, 124, seed=99), other, "syn_human")
    runs = []
    for name, data in (("a", pair_data), ("b", other)):
        evaluate(
            tiny_models[{"a": "char", "b": "bpe"}[name]],
            [TASK],
            {"data_dir": str(data)},
            model="dna-hf",
            output_path=tmp_path / name,
        )
        runs.append(str(tmp_path / name))
    assert main(["report", *runs, "--out", str(tmp_path / "report"), "--bootstrap", "50"]) == 2
    error = capsys.readouterr().err
    assert f"{TASK} was scored on different data by the runs" in error
    assert (
        file_sha256(pair_data / "syn_human") in error and file_sha256(other / "syn_human") in error
    )
    assert (
        main(
            [
                "report",
                *runs,
                "--out",
                str(tmp_path / "report"),
                "--bootstrap",
                "50",
                "--allow-different-data",
            ]
        )
        == 0
    )
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "compared anyway (--allow-different-data)" in markdown and "## Provenance" in markdown


def test_the_results_file_records_every_setting_that_identifies_a_run(tmp_path):
    """The variant task's score and one-class rule included: runs that differ only there are
    told apart by their results files, not only by their samples."""
    import pandas as pd

    from dna_fixtures import random_genome
    from perturbation_bench.pairs.settings import IDENTIFYING

    fasta, sequences = random_genome(tmp_path, {"chr1": 600, "chr2": 400}, seed=4)
    table = pd.DataFrame(
        [
            {
                "chrom": chrom,
                "pos": pos,
                "ref": sequences[chrom][pos - 1],
                "alt": alt,
                "label": i % 2,
            }
            for i, (chrom, pos, alt) in enumerate(
                [("chr1", 100, "A"), ("chr1", 250, "C"), ("chr2", 120, "G"), ("chr2", 300, "T")]
            )
            if sequences[chrom][pos - 1] != alt
        ]
    )
    table.to_csv(tmp_path / "v.csv", index=False)
    out = tmp_path / "out"
    build = ["build", "variants", "--variants", str(tmp_path / "v.csv"), "--fasta", str(fasta)]
    assert main([*build, "--config", "v", "--out", str(out), "--window", "64"]) == 0
    given = {"score": "abs_llr", "one_class_chromosomes": "keep", "rc_average": True}
    metadata = {"data_dir": str(out), "config": "v", "start_token": "none", **given}
    evaluate(
        str(fasta),
        ["perturbation_variants"],
        metadata,
        model="kmer-markov",
        output_path=tmp_path / "run",
    )
    (results,) = (tmp_path / "run").glob("*/results_*.json")
    recorded = json.loads(results.read_text())["config"]["perturbation_bench"]["tasks"]
    settings = recorded["perturbation_variants"]
    assert set(IDENTIFYING) <= set(settings)
    assert {key: settings[key] for key in given} == given
    assert (settings["start_token"], settings["labels"]) == ("none", "binary")
    assert settings["data"] == file_sha256(out / "v")

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
            made["settings"]["share_prefix"] is True and made["settings"]["add_bos_token"] is False
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

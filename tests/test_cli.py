"""The real command lines, end to end (each lm_eval start costs ~20-40 s: keep these few)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perturbation_bench.cli import main
from perturbation_bench.pairs.kinds import KINDS
from perturbation_bench.paths import tasks_dir

pytestmark = pytest.mark.slow  # every test here starts processes

TASKS = ("perturbation_syn_human", "perturbation_syn_mouse", "perturbation_motif_human")


def lm_eval(*args: str, expect: int = 0) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [sys.executable, "-m", "lm_eval", *args], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == expect, run.stderr[-3000:]
    return run


def run_tasks(model: str, data: Path, out: Path, tasks: str, *extra: str) -> dict:
    lm_eval(
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--tasks",
        tasks,
        "--metadata",
        json.dumps({"data_dir": str(data)}),
        "--device",
        "cpu",
        "--batch_size",
        "4",
        "--output_path",
        str(out),
        *extra,
    )
    (results,) = out.glob("**/results_*.json")
    return json.loads(results.read_text())


def test_path_command_prints_the_task_folder(capsys):
    assert main(["path"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert folder == tasks_dir()
    lengths = ("512", "1024", "2048", "4096")
    assert {p.stem for p in folder.glob("*.yaml")} == {
        *TASKS,
        *(f"{task}_{length}bp" for task in TASKS for length in lengths),
        "perturbation_bench",
        "perturbation_bench_context",
        *(kind.task for kind in KINDS),  # each kind's task (perturbation_custom for the pairs)
    }


def test_include_path_run_reports_the_group_as_the_unweighted_mean(
    tiny_models, pair_data, tmp_path
):
    data = run_tasks(
        tiny_models["char"],
        pair_data,
        tmp_path,
        "perturbation_bench",
        "--include_path",
        str(tasks_dir()),
    )
    results = data["results"]
    accuracies = [results[t]["pairwise_acc,pairs"] for t in TASKS]
    assert [results[t]["sample_len"] for t in TASKS] == [8, 6, 6]
    assert results["perturbation_bench"]["pairwise_acc,pairs"] == pytest.approx(sum(accuracies) / 3)
    assert data["configs"]["perturbation_syn_human"]["metadata"]["preset"] == "default"


def test_unreachable_hub_stops_the_cli_with_one_message(tiny_models):
    run = lm_eval(
        "--model",
        "hf",
        "--model_args",
        f"pretrained={tiny_models['char']}",
        "--tasks",
        "perturbation_syn_human",
        "--include_path",
        str(tasks_dir()),
        "--device",
        "cpu",
        expect=1,
    )
    assert "perturbation-bench error: cannot load HuggingFaceBio/perturbation-bench" in run.stderr
    assert '--metadata \'{"data_dir": ' in run.stderr
    assert "Traceback" not in run.stderr


def test_plain_lm_eval_finds_the_tasks_through_the_import_hook(tiny_models, pair_data, tmp_path):
    data = run_tasks(tiny_models["bpe"], pair_data, tmp_path, "perturbation_motif_human")
    assert data["results"]["perturbation_motif_human"]["sample_len"] == 6


def test_lm_eval_ls_lists_the_tasks_and_the_group():
    listing = lm_eval("ls", "tasks").stdout
    for name in (*TASKS, "perturbation_bench"):
        assert f"|{name} " in listing


def test_plain_lm_eval_runs_a_masked_model_on_the_demo_data(tmp_path):
    """`lm_eval --model dna-mlm --tasks perturbation_bench`, offline, found through the hook."""
    from perturbation_bench.fixtures.random_models import (
        as_masked_lm_tokenizer,
        save_random_bert,
        single_nucleotide_tokenizer,
    )

    model = save_random_bert(
        tmp_path / "mlm",
        as_masked_lm_tokenizer(single_nucleotide_tokenizer()),
        layers=1,
        hidden=16,
        max_positions=8200,
    )
    lm_eval(
        "--model",
        "dna-mlm",
        "--model_args",
        f"pretrained={model}",
        "--device",
        "cpu",
        "--tasks",
        "perturbation_bench",
        "--metadata",
        '{"data_dir": "demo"}',
        "--limit",
        "3",
        "--output_path",
        str(tmp_path / "out"),
    )
    (results,) = (tmp_path / "out").glob("**/results_*.json")
    scores = json.loads(results.read_text())["results"]
    assert [scores[t]["sample_len"] for t in TASKS] == [3, 3, 3]
    assert 0 <= scores["perturbation_bench"]["pairwise_acc,pairs"] <= 1

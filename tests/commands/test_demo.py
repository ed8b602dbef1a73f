"""``perturbation-bench demo`` (``commands/demo.py``): the shipped demo end to end; its report's
numbers are the samples' own, recomputed here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from perturbation_bench.cli import main
from perturbation_bench.commands.demo import TASK, build_model


def recomputed(run: Path) -> dict:
    """``pairwise_acc`` (LL original strictly above LL perturbed), n and the mean margin of one
    run's samples file, read line by line here."""
    (samples,) = run.rglob("samples_*.jsonl")
    lls = [json.loads(line)["filtered_resps"][0] for line in samples.read_text().splitlines()]
    margins = [float(o) - float(p) for o, p in lls]
    return {
        "n": len(lls),
        "pairwise_acc": sum(m > 0 for m in margins) / len(lls),
        "margin_mean": sum(margins) / len(margins),
    }


@pytest.mark.slow
def test_the_demo_writes_a_report_whose_numbers_are_the_samples(tmp_path, capsys):
    assert main(["demo", "--dir", str(tmp_path / "demo")]) == 0
    printed = capsys.readouterr().out
    report = tmp_path / "demo" / "report"
    assert f"report: {report / 'report.md'}" in printed
    assert f"leaderboard: {tmp_path / 'demo' / 'leaderboard' / 'leaderboard.md'}" in printed
    summary = {
        row["model"]: row for row in json.loads((report / "report.json").read_text())["summary"]
    }
    assert sorted(summary) == ["tiny-dna-lm", "tiny-dna-mlm"]
    board = pd.read_csv(tmp_path / "demo" / "leaderboard" / "leaderboard.csv").set_index("name")
    for kind, name in (("causal", "tiny-dna-lm"), ("masked", "tiny-dna-mlm")):
        expected = recomputed(tmp_path / "demo" / "runs" / kind)
        assert expected["n"] == 24  # the shipped demo's motif_human pairs
        row = summary[name]
        assert (row["task"], row["n"]) == (TASK, expected["n"])
        assert row["pairwise_acc"] == pytest.approx(expected["pairwise_acc"], abs=1e-12)
        assert row["margin_mean"] == pytest.approx(expected["margin_mean"], rel=1e-9)
        assert board.loc[name, f"{TASK}:value"] == pytest.approx(expected["pairwise_acc"])
    assert (report / "report.md").read_text().count("tiny-dna-lm") >= 2


def test_a_demo_model_is_built_once_and_then_reused(tmp_path, capsys):
    folder = build_model("causal", tmp_path / "tiny-dna-lm")
    config = (folder / "config.json").read_text()
    assert json.loads(config)["max_position_embeddings"] == 8200
    assert capsys.readouterr().out == f"built {folder}\n"
    (folder / "config.json").write_text(config + " ")  # a rebuild would write it anew
    assert build_model("causal", folder) == folder
    assert capsys.readouterr().out == f"using {folder}\n"
    assert (folder / "config.json").read_text() == config + " "

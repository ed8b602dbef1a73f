"""The report's recall section (``kinds/recall/section.py``) from a real run's samples: each
distance's copy advantage is the mean of the logged pairs' margins per target base, its interval
recall-bench's percentile bootstrap of them, and the figure and table are written."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dna_fixtures import build_tokenizer, evaluate
from perturbation_bench.cli import main
from perturbation_bench.fixtures.random_models import save_random_llama

from .recall_doubles import build, per_document


def test_the_report_gives_copy_advantage_per_distance_with_its_interval(tmp_path):
    data, _, _ = build(tmp_path, trials=4)
    folder = save_random_llama(tmp_path / "m", build_tokenizer("char"), max_positions=1024)
    run = tmp_path / "run"
    metadata = {"config": "rc", "data_dir": str(data)}
    result = evaluate(str(folder), ["perturbation_recall"], metadata, "dna-hf", output_path=run)
    out = str(tmp_path / "report")
    assert main(["report", str(run), "--out", out, "--seed", "3", "--bootstrap", "500"]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    table = {row["distance"]: row for row in report["recall"]}
    assert sorted(table) == [64, 256]
    for distance, row in table.items():
        values = [(a - b) / 64 for doc in per_document(result) if doc["distance"] == distance
                  for a, b in [doc["lls"]]]  # fmt: skip
        assert row["rows"] == 4
        assert row["copy_advantage"] == pytest.approx(np.mean(values), abs=1e-9)
        means = np.random.default_rng(3).choice(values, (500, 4)).mean(1)
        assert row["ci_low"] == pytest.approx(np.percentile(means, 2.5), abs=1e-9)
        assert row["ci_high"] == pytest.approx(np.percentile(means, 97.5), abs=1e-9)
        assert row["pairwise_acc"] == np.mean([v > 0 for v in values])
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Long-range recall" in markdown and "| 256 | 4 |" in markdown
    assert "## Strata" not in markdown  # recall rows have no stratum: no empty table
    assert (tmp_path / "report" / "recall.png").stat().st_size > 0
    assert (tmp_path / "report" / "recall.csv").exists()

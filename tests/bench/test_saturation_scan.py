"""The saturation benchmark's arithmetic (bench/saturation_scan.py): the ideal speed-ups, the
fastest of repeated runs, and the table's ratios."""

from __future__ import annotations

import pytest

from perturbation_bench.bench.measuring import Measurement
from perturbation_bench.bench.saturation_scan import fastest, format_table, ideal_speedup


def test_the_ideal_speedups_count_the_passes_saved():
    assert ideal_speedup("dna-mlm") == 3.0
    assert ideal_speedup("dna-hf") == pytest.approx(3 * 1.5 / 2.5)  # 1.8x at p = 0.5
    assert ideal_speedup("dna-hf", p=1.0) == 3.0  # a change at the end shares everything
    assert ideal_speedup("dna-mlm", score="entropy") == 6.0
    assert ideal_speedup("dna-hf", score="marginal_llr") == 3.0


def _run(seconds: float, model_seconds: float, lls=((-1.0, -2.0),)) -> Measurement:
    return Measurement("dna-mlm", list(lls), seconds, 0, model_seconds=model_seconds)


def test_the_fastest_keeps_the_least_disturbed_time_of_each_kind():
    runs = [_run(9.0, 4.0, [(-1.0, -2.0)]), _run(7.0, 5.0, [(-3.0, -4.0)]), _run(8.0, 3.5)]
    best = fastest(runs)
    assert (best.seconds, best.model_seconds) == (7.0, 3.5)
    assert best.lls == [(-1.0, -2.0)]


def test_the_table_gives_the_whole_and_the_scoring_speedup_against_the_ideal():
    plain, deduped = _run(12.0, 10.0, [(-1.0, -2.0)] * 6), _run(3.0, 2.0, [(-1.0, -2.0)] * 6)
    header, rule, row = format_table([("dna-mlm", plain, deduped, 0.0, 6.0)]).splitlines()
    assert [cell.strip() for cell in header.strip("|").split("|")] == [
        "model",
        "pairs",
        "dedupe=false pairs/s",
        "dedupe=true pairs/s",
        "speed-up",
        "scoring speed-up",
        "ideal",
        "of ideal (whole, scoring)",
        "max abs dLL",
    ]
    assert rule == "|---" * 9 + "|"
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells == [
        "dna-mlm",
        "6",
        "0.50",
        "2.00",
        "4.00x",
        "5.00x",
        "6.00x",
        "67%, 83%",
        "0.0e+00",
    ]

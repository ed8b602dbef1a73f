"""The footprint task's aggregations (``kinds/footprints/task.py``) on items as its
``process_results`` makes them; the task run through lm-eval is ``test_footprints.py``'s."""

from __future__ import annotations

import pytest

from perturbation_bench.kinds.footprints.rules import FootprintRow
from perturbation_bench.kinds.footprints.task import motif_acc


def item(motif: str, copies: int, ll_motif: float, ll_control: float, ties: str = "strict"):
    return tuple(FootprintRow(motif, copies, 0, ll_motif, ll_control, 0.0, 0.0)), ties


def test_motif_acc_is_the_unweighted_mean_over_motif_doses():
    """M at one copy: 1 row, right (1.0); M at two copies: 3 rows, 1 right (1/3); N: 4 rows, a
    tie and 3 wrong (0, strict). The mean over motif-doses is 4/9; over rows it would be 2/8."""
    items = [item("M", 1, -1.0, -2.0)]
    items += [item("M", 2, a, b) for a, b in ((-1.0, -2.0), (-3.0, -2.0), (-4.0, -2.0))]
    items += [item("N", 1, a, -2.0) for a in (-2.0, -3.0, -3.0, -5.0)]
    assert motif_acc(items) == pytest.approx((1.0 + 1 / 3 + 0.0) / 3, rel=1e-15)
    ties_right = [(row, "correct") for row, _ in items]  # N's tie now right: 1/4
    assert motif_acc(ties_right) == pytest.approx((1.0 + 1 / 3 + 1 / 4) / 3, rel=1e-15)


def test_the_dose_aggregations_are_the_mean_over_motifs_of_each_motifs_spearman():
    """M's margins rise with copies and fall with spacing; N's copies are all 1 (no rho: left
    out of the copies mean) and its margins fall with spacing."""
    from scipy.stats import spearmanr

    from perturbation_bench.kinds.footprints.task import copies_spearman, spacing_spearman

    m = [(1, 0, 0.5), (2, 0, 1.0), (3, 5, 4.0), (2, 5, 0.2)]  # (copies, spacing, margin)
    n = [(1, 0, 2.0), (1, 5, 1.0), (1, 9, 1.5)]
    items = [
        (tuple(FootprintRow(motif, c, s, margin, 0.0, 0.0, 0.0)), "strict")
        for motif, rows in (("M", m), ("N", n))
        for c, s, margin in rows
    ]

    def rho(rows, axis: int) -> float:
        return spearmanr([r[axis] for r in rows], [r[2] for r in rows]).statistic

    assert copies_spearman(items) == pytest.approx(rho(m, 0), rel=1e-12)
    assert spacing_spearman(items) == pytest.approx((rho(m, 1) + rho(n, 1)) / 2, rel=1e-12)

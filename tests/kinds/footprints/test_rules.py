"""DART-Eval's footprinting metrics (``kinds/footprints/rules.py``) on rows written here: each rule
against its definition, scipy's own Wilcoxon and Spearman as the reference."""

from __future__ import annotations

import math
import warnings

import pytest
from scipy.stats import spearmanr, wilcoxon

from perturbation_bench.kinds.footprints.rules import (
    FootprintRow,
    beats_background,
    dose_spearman,
    is_correct,
    mean_of,
    motif_doses,
)


@pytest.mark.parametrize(
    ("a", "b", "strict", "correct"),
    [(-1.0, -2.0, True, True), (-2.0, -2.0, False, True), (-3.0, -2.0, False, False)],
)
def test_a_tie_is_wrong_unless_the_rule_says_correct(a, b, strict, correct):
    assert is_correct(a, b, "strict") is strict
    assert is_correct(a, b, "correct") is correct


def test_the_background_rule_compares_distances_strictly():
    assert beats_background(-3.0, 2.0) and beats_background(3.0, -2.0)
    assert not beats_background(-2.0, 2.0) and not beats_background(1.0, -2.0)


def row(motif, copies, a, b, spacing=0, motif_margin=0.0, control_margin=0.0):
    return FootprintRow(motif, copies, spacing, a, b, motif_margin, control_margin)


def test_each_motif_dose_is_scored_over_its_own_rows_in_order_of_appearance():
    rows = [
        row("B", 1, -1.0, -2.0, motif_margin=2.0, control_margin=1.0),
        row("A", 1, -5.0, -5.0, motif_margin=0.5, control_margin=0.5),
        row("B", 2, -1.0, -1.5, spacing=3),
        row("B", 1, -4.0, -3.0, motif_margin=-1.0, control_margin=3.0),
        row("B", 1, -2.0, -2.0),
        row("A", 1, -6.0, -7.0, motif_margin=1.0, control_margin=0.0),
    ]
    for ties in ("strict", "correct"):
        doses = motif_doses(rows, ties)
        assert [(d.motif, d.copies, d.spacing, d.rows, d.tied) for d in doses] == [
            ("B", 1, 0, 3, 1),
            ("A", 1, 0, 2, 1),
            ("B", 2, 3, 1, 0),
        ]
        tie = 1 if ties == "correct" else 0
        assert [d.accuracy for d in doses] == [(1 + tie) / 3, (1 + tie) / 2, 1.0]
        assert [d.vs_background for d in doses] == [1 / 3, 1 / 2, 0.0]
        b = wilcoxon([-1.0, -4.0, -2.0], [-2.0, -3.0, -2.0], alternative="greater").pvalue
        assert doses[0].wilcoxon_p == pytest.approx(b, abs=1e-15)


def test_the_dose_response_is_each_motifs_spearman_and_nan_where_a_side_is_constant():
    rows = [row("flat", c, -1.0, -1.0) for c in (1, 2, 4)]  # margins constant: nan, first
    rows += [row("two", c, m, 0.0) for c, m in ((1, 0.0), (2, 0.0), (4, 1.0), (4, 1.0))]
    rows += [row("one_dose", 1, m, 0.0) for m in (0.5, 1.5)]  # doses constant: nan
    rows += [row("last", c, m, 0.0) for c, m in ((1, 3.0), (2, 1.0), (4, 2.0))]
    with warnings.catch_warnings():  # nan by the rule, not by scipy's constant-input warning
        warnings.simplefilter("error")
        rhos = dose_spearman(rows, "copies")
    assert list(rhos) == ["flat", "two", "one_dose", "last"]
    assert math.isnan(rhos["flat"]) and math.isnan(rhos["one_dose"])
    assert rhos["two"] == pytest.approx(spearmanr([1, 2, 4, 4], [0, 0, 1, 1]).statistic)
    assert rhos["last"] == pytest.approx(spearmanr([1, 2, 4], [3, 1, 2]).statistic)
    assert mean_of(rhos.values()) == pytest.approx((rhos["two"] + rhos["last"]) / 2)
    assert math.isnan(dose_spearman(rows, "spacing")["two"])  # every spacing 0


def test_the_mean_leaves_out_nan_and_is_nan_without_a_value():
    assert mean_of([1.0, math.nan, 2.0]) == 1.5
    assert math.isnan(mean_of([math.nan])) and math.isnan(mean_of([]))

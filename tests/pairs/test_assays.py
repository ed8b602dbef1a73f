"""Per-assay metrics (``pairs/assays.py``): each assay's value equals scikit-learn's or scipy's on
that assay alone, a cell below the gate has its n and no value, the macro is the mean of the
cells that pass, and a functional label is oriented to damaging."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, roc_auc_score

from perturbation_bench.pairs.assays import cell, gate_text, macro, oriented, per_assay


def binary_rows(seed: int = 3):
    """Three assays: a (40 of each class), b (12 positives of 50), c (35 of each)."""
    rng = random.Random(seed)
    rows = []
    for assay, positives, negatives in (("a", 40, 40), ("b", 12, 38), ("c", 35, 35)):
        labels = [True] * positives + [False] * negatives
        rows += [(assay, y, rng.gauss(0.8 if y else 0.0, 1.0)) for y in labels]
    rng.shuffle(rows)
    return rows


def test_each_assay_is_scored_alone_as_scikit_learn_scores_it():
    rows = binary_rows()
    for metric, reference in (("auroc", roc_auc_score), ("auprc", average_precision_score)):
        cells = per_assay("binary", metric, rows, min_per_class=30)
        assert list(cells) == ["a", "b", "c"]
        for assay in ("a", "c"):
            labels = [y for a, y, _ in rows if a == assay]
            scores = [s for a, _, s in rows if a == assay]
            assert cells[assay].value == pytest.approx(reference(labels, scores), abs=1e-12)
            assert cells[assay].n == len(labels)
        # b has 12 positives: below the gate, with its n and no value
        assert cells["b"].value is None and (cells["b"].n, cells["b"].n_positive) == (50, 12)
        assert gate_text(cells["b"]) == "n=50 (12 positive)"
        assert macro(cells.values()) == pytest.approx(
            (cells["a"].value + cells["c"].value) / 2, abs=1e-12
        )


def test_two_assays_are_not_pooled():
    """Each assay ranks its positives first, but assay b's scores all lie above a's: alone each
    has AUROC 1; pooled, a's positives fall below b's negatives (AUROC 0.75)."""
    a = [("a", i < 30, (60 - i) / 60) for i in range(60)]
    b = [("b", y, s + 10) for _, y, s in a]
    cells = per_assay("binary", "auroc", a + b, min_per_class=30)
    assert (cells["a"].value, cells["b"].value, macro(cells.values())) == (1.0, 1.0, 1.0)
    assert roc_auc_score([y for _, y, _ in a + b], [s for *_, s in a + b]) == 0.75


def test_the_gate_counts_each_class_for_binary_labels_and_variants_for_quantitative():
    assert cell("binary", "auroc", [True] * 29 + [False] * 100, range(129)).value is None
    assert cell("binary", "auroc", [True] * 100 + [False] * 29, range(129)).value is None
    assert cell("binary", "auroc", [True] * 30 + [False] * 30, range(60)).value is not None
    values = [float(i % 7) for i in range(29)]
    assert cell("quantitative", "spearman", values, values).value is None
    assert cell("quantitative", "spearman", values, values, min_per_class=29).value == (
        pytest.approx(1.0, abs=1e-12)
    )
    assert gate_text(cell("quantitative", "spearman", values, values)) == "n=29"


def test_quantitative_cells_equal_scipy_and_a_functional_label_is_turned_to_damaging():
    rng = random.Random(5)
    function = [rng.gauss(0, 1) for _ in range(40)]
    llr = [-f + rng.gauss(0, 0.5) for f in function]  # damaging variants lose function
    labels = [oriented(f, "functional") for f in function]
    got = cell("quantitative", "spearman", labels, llr).value
    assert got == pytest.approx(-stats.spearmanr(llr, function)[0], abs=1e-12) and got > 0.5
    assert [oriented(f, "damaging") for f in function] == function
    assert [oriented(f, None) for f in function] == function
    pearson = cell("quantitative", "pearson", labels, llr).value
    assert pearson == pytest.approx(-stats.pearsonr(llr, function)[0], abs=1e-12)


def test_a_macro_without_a_passing_cell_is_nan():
    cells = per_assay("binary", "auprc", binary_rows(), min_per_class=41)
    assert all(c.value is None for c in cells.values()) and math.isnan(macro(cells.values()))


def test_a_cell_without_a_value_says_why():
    """Each reason of ``cell`` on a group built to give it; a group with a value has none."""
    inf, nan = float("inf"), float("nan")
    cases = [
        ("quantitative", [1.0, 2.0, inf], [1.0, 2.0, 3.0], "non-finite labels"),
        ("quantitative", [1.0, 2.0, 3.0], [1.0, nan, 3.0], "non-finite scores"),
        ("quantitative", [1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "constant labels"),
        ("quantitative", [1.0, 2.0, 3.0], [4.0, 4.0, 4.0], "constant scores"),
        ("quantitative", [1.0, 2.0], [1.0, 2.0], "fewer than 3 variants"),
        ("binary", [True, True], [0.1, 0.2], "one class"),
        ("binary", [True, False], [0.1, 0.2], "below the gate"),
    ]
    for kind, labels, scores, why in cases:
        metric = "spearman" if kind == "quantitative" else "auroc"
        gate = 2 if why == "below the gate" else 0
        got = cell(kind, metric, labels, scores, min_per_class=gate)
        assert (got.value, got.why) == (None, why), why
    valued = cell("binary", "auroc", [True, False], [0.9, 0.1], min_per_class=1)
    assert (valued.value, valued.why) == (1.0, None)

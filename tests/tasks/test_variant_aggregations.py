"""The variant task's aggregations (``tasks/variant_aggregations.py``): the per-chromosome
average and the warning that names the one-class chromosomes it keeps or leaves out; the macro
average over the assays that pass the gate, and the log line that gives each assay's value or,
below the gate, its counts. The whole-task metrics are held against TraitGym's formulas in
``tests/report/test_variant_metrics.py`` and ``test_variant_correlations.py``."""

from __future__ import annotations

import math

import pytest

from perturbation_bench.pairs.assays import MIN_PER_CLASS
from perturbation_bench.tasks.variant_aggregations import (
    auprc_by_chrom,
    auroc_by_chrom,
    auroc_macro,
    spearman_macro,
)

LOGGER = "lm_eval.perturbation_bench.tasks.variant_aggregations"


def by_chrom_items(one_class: str) -> list[tuple]:
    """``(score, label, chrom, one_class)``: chr1 ordered right (AUROC 1), chr2 and chr3 one
    class each, chr4 unlabelled."""
    rows = [(0.9, True, "chr1"), (0.1, False, "chr1"), (0.5, True, "chr2"), (0.4, True, "chr2")]
    rows += [(0.3, False, "chr3"), (0.7, None, "chr4")]
    return [(*row, one_class) for row in rows]


def test_one_class_chromosomes_left_out_of_the_average_are_named(caplog):
    with caplog.at_level("WARNING", logger=LOGGER):
        assert auroc_by_chrom(by_chrom_items("drop")) == pytest.approx(1.0)
    assert (
        "auroc_by_chrom: 2 chromosome(s) with variants of one class only left out of the "
        "average: chr2, chr3"
    ) in caplog.text


def test_one_class_chromosomes_kept_in_the_average_are_named(caplog):
    with caplog.at_level("WARNING", logger=LOGGER):
        # chr1 (n=2) 1, chr2 (n=2) and chr3 (n=1) counted 0: 2 / 5
        assert auroc_by_chrom(by_chrom_items("keep")) == pytest.approx(2 / 5)
        # AUPRC 1 for chr2 (all positive), 0 for chr3: (2 + 2) / 5
        assert auprc_by_chrom(by_chrom_items("keep")) == pytest.approx(4 / 5)
    for metric in ("auroc", "auprc"):
        assert (
            f"{metric}_by_chrom: 2 chromosome(s) with variants of one class only kept in the "
            "average as TraitGym does (AUPRC 0 or 1, AUROC counted 0, each with its weight): "
            "chr2, chr3"
        ) in caplog.text


def test_the_macro_averages_the_assays_that_pass_the_gate_and_logs_each(caplog):
    gate = 2
    items = [  # (assay, label, score, min_per_class)
        ("A", True, 0.9, gate),
        ("A", True, 0.8, gate),
        ("A", False, 0.1, gate),
        ("A", False, 0.85, gate),  # one of four positive-negative pairs misordered
        ("A", None, 5.0, gate),  # unlabelled: in no metric
        ("B", True, 0.5, gate),  # one per class: below the gate
        ("B", False, 0.6, gate),
    ]
    with caplog.at_level("INFO", logger=LOGGER):
        assert auroc_macro(items) == pytest.approx(0.75)
    assert (
        "auroc per assay (gate 2 per class): A 0.7500 (n=4); B below the gate (n=2, 1 positive)"
    ) in caplog.text


def test_a_quantitative_macro_is_the_mean_of_each_assay_s_correlation(caplog):
    items = [("A", x, x, 3) for x in (1.0, 2.0, 3.0)] + [("B", x, -x, 3) for x in (1.0, 2.0, 3.0)]
    with caplog.at_level("INFO", logger=LOGGER):
        assert spearman_macro(items) == pytest.approx(0.0)  # (1 + -1) / 2
    assert "spearman per assay (gate 3 per class): A 1.0000 (n=3); B -1.0000 (n=3)" in caplog.text


def test_no_labelled_variant_is_nan_and_says_so(caplog):
    with caplog.at_level("INFO", logger=LOGGER):
        assert math.isnan(auroc_macro([("A", None, 0.3, 2)]))
        assert math.isnan(auroc_macro([]))
    assert "auroc per assay (gate 2 per class): A no labelled variant (n=1)" in caplog.text
    assert f"auroc per assay (gate {MIN_PER_CLASS} per class): no variant" in caplog.text


def test_every_assay_left_out_of_the_macro_is_named_with_why(caplog):
    """Four assays, one valued: constant labels, a constant score and an assay without labels
    each leave the macro, and each is named in the log with why and its n."""
    items = (
        [("good", x, x, 3) for x in (1.0, 2.0, 3.0)]  # rho 1
        + [("flat", 2.0, x, 3) for x in (1.0, 2.0, 3.0)]  # constant labels
        + [("same", x, 0.5, 3) for x in (1.0, 2.0, 3.0)]  # constant scores
        + [("none", None, x, 3) for x in (1.0, 2.0)]
    )
    with caplog.at_level("INFO", logger=LOGGER):
        assert spearman_macro(items) == pytest.approx(1.0)  # good alone
    assert (
        "spearman per assay (gate 3 per class): flat constant labels (n=3); good 1.0000 (n=3); "
        "same constant scores (n=3); none no labelled variant (n=2)"
    ) in caplog.text

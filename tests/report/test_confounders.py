"""Confounders held fixed: within-stratum AUROC against scikit-learn per stratum, auroc_eq,
seqleak's published share bounds, the out-of-fold gain, and the report's section."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from perturbation_bench.report.confounders import (
    confounder_table,
    equalized,
    gain,
    share_bounds,
    within_auroc,
)

# seqleak 0.4.1's README, "Why a bound": AUROC, within, eq -> share (BOUND), share_upper (upper).
# Its inputs are printed to 3 decimals, so the shares recomputed from them differ from the
# printed ones in the third decimal (at most 0.003 here).
SEQLEAK_TABLE = [
    # position is a consequence of the label
    ((0.688, 0.684, 0.579), (0.022, 0.581)),
    ((0.761, 0.761, 0.611), (0.002, 0.573)),
    ((0.849, 0.761, 0.612), (0.252, 0.680)),
    ((0.916, 0.761, 0.612), (0.373, 0.731)),
    ((0.943, 0.762, 0.613), (0.409, 0.746)),
    ((0.914, 0.521, 0.513), (0.948, 0.968)),
    # position is a cause of the label (the first row's lower bound clipped from -0.390)
    ((0.650, 0.708, 0.647), (0.000, 0.017)),
    ((0.742, 0.709, 0.648), (0.136, 0.390)),
    ((0.829, 0.710, 0.648), (0.360, 0.548)),
    ((0.844, 0.710, 0.648), (0.389, 0.569)),
    ((0.798, 0.527, 0.518), (0.909, 0.940)),
]


@pytest.mark.parametrize("figures, bounds", SEQLEAK_TABLE)
def test_share_bounds_are_seqleaks_published_table(figures, bounds):
    assert share_bounds(*figures) == pytest.approx(bounds, abs=0.0035)


def test_the_lower_bound_is_the_smaller_share_whichever_figure_gives_it():
    # s_within = 1 - 0.1 / 0.3, s_eq = 1 - 0.25 / 0.3: here equalizing keeps less
    assert share_bounds(0.8, 0.6, 0.75) == pytest.approx((1 / 6, 2 / 3), rel=1e-12)
    assert share_bounds(0.8, 1.0, 0.2) == (0.0, 1.0)  # clipped to [0, 1]


def test_no_share_near_chance():
    assert share_bounds(0.515, 0.51, 0.5) == (None, None)
    assert share_bounds(0.521, 0.5, 0.5) == (1.0, 1.0)


def random_variants(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    stratum = rng.choice(["a", "b", "c", "d"], n)
    label = rng.random(n) < np.select([stratum == "a", stratum == "b"], [0.7, 0.2], 0.45)
    # stratum shifts the score; tied scores (rounded) count 1/2
    score = np.round(label + (stratum == "a") * 1.0 + rng.normal(0, 1, n), 1)
    chrom = rng.choice(["1", "2", "3", "4"], n)
    return pd.DataFrame({"label": label, "score": score, "stratum": stratum, "chrom": chrom})


def test_within_stratum_auroc_is_sklearns_per_stratum_weighted_by_pairs():
    frame = random_variants()
    numerator = denominator = 0.0
    for _, rows in frame.groupby("stratum"):
        positives = rows["label"].sum()
        weight = positives * (len(rows) - positives)
        numerator += weight * roc_auc_score(rows["label"], rows["score"])
        denominator += weight
    assert within_auroc(frame["label"], frame["score"], frame["stratum"]) == pytest.approx(
        numerator / denominator, rel=1e-12
    )
    one = ["x"] * len(frame)  # one stratum: the AUROC
    assert within_auroc(frame["label"], frame["score"], one) == pytest.approx(
        roc_auc_score(frame["label"], frame["score"]), rel=1e-12
    )


def test_auroc_eq_ranks_each_score_within_its_stratum():
    frame = random_variants(seed=1)
    expected = np.empty(len(frame))
    for _, rows in frame.groupby("stratum"):
        expected[rows.index] = (rankdata(rows["score"]) - 0.5) / len(rows)
    np.testing.assert_allclose(equalized(frame["score"], frame["stratum"]), expected, rtol=1e-12)


def test_a_score_of_the_stratum_alone_is_all_stratum():
    frame = random_variants(seed=2)
    score = frame["stratum"].map({"a": 3.0, "b": 0.0, "c": 1.0, "d": 2.0})
    raw = roc_auc_score(frame["label"], score)
    within = within_auroc(frame["label"], score, frame["stratum"])
    eq = roc_auc_score(frame["label"], equalized(score, frame["stratum"]))
    assert raw > 0.6 and within == 0.5 and eq == 0.5
    assert share_bounds(raw, within, eq) == (1.0, 1.0)


def test_the_gain_of_a_score_that_separates_the_labels_over_one_stratum_is_one_half():
    frame = random_variants(seed=3)
    score = np.where(frame["label"], 1.0, -1.0) + np.arange(len(frame)) * 1e-4
    added, plus, alone = gain(frame["label"], score, ["one"] * len(frame), frame["chrom"])
    assert (added, plus, alone) == (0.5, 1.0, 0.5)
    assert gain(frame["label"], score, frame["stratum"], ["1"] * len(frame)) == (None,) * 3


def test_the_report_rows_per_stratum_column():
    frame = random_variants(seed=4).assign(
        model="m", task="t", pair_id=[f"{i:04x}" for i in range(400)]
    )
    frame["distance"] = np.arange(400) * 7  # numeric, many values: quintile bins
    rows = confounder_table(
        frame.rename(columns={"stratum": "consequence"}), by=["distance"], n_boot=100
    )
    assert [(r["column"], r["strata"]) for r in rows] == [("consequence", 4), ("distance", 5)]
    row = rows[0]
    y, s, k = frame["label"], frame["score"], frame["stratum"]
    assert row["auroc"] == pytest.approx(roc_auc_score(y, s))
    assert row["within"] == pytest.approx(within_auroc(y, s, k))
    assert row["auroc_eq"] == pytest.approx(roc_auc_score(y, equalized(s, k)))
    assert (row["share"], row["share_upper"]) == pytest.approx(
        share_bounds(row["auroc"], row["within"], row["auroc_eq"])
    )
    assert row["gain"] == pytest.approx(row["auroc_stratum_plus_score"] - row["auroc_stratum"])
    for reading in ("within", "auroc_eq"):
        low, high = row[f"{reading}_95"]
        assert low < row[reading] < high


def test_the_report_holds_the_section_for_a_labelled_task_with_consequences(tmp_path):
    from dna_fixtures import write_run
    from perturbation_bench.report.make import make_report

    docs = [
        {"chrom": str(1 + i % 3), "pos": i, "ref": "A", "alt": "C", "label": i % 2 == 0}
        | {"consequence": ("stop_gained", "synonymous_variant")[i % 4 < 2]}
        for i in range(24)
    ]
    lls = [(-1.0 - (i * 7) % 5, -2.0) for i in range(24)]
    run = write_run(tmp_path / "llr", "perturbation_variants", lls, docs=docs)
    report = make_report([run], tmp_path / "report", n_boot=20, se_boot=5, se_chrom_boot=5)
    (row,) = report["variants"]["confounders"]
    assert (row["column"], row["strata"], row["n"], row["n_positive"]) == ("consequence", 2, 24, 12)
    assert row["auroc"] == pytest.approx(report["variants"]["summary"][0]["auroc"])
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Confounders held fixed" in markdown and "| consequence (2) | 24 (12) |" in markdown
    assert (
        "| model | task | stratum (strata) | n (positives) | AUROC | within | auroc_eq | share "
        "[lower, upper] | gain (stratum alone) |" in markdown.splitlines()
    )


def test_the_intervals_hold_what_every_resample_must_give_and_narrow_with_more_variants():
    """A score of the stratum alone is at chance within strata in every resample, and so is its
    auroc_eq: intervals [0.5, 0.5]; a score that separates the labels is 1 in every resample;
    a noisy score's interval holds its value and is about half as wide on four times the
    variants (0.7 allows the bootstrap's own noise)."""
    from perturbation_bench.report.confounders import bootstrap_95, equalized_auroc

    frame = random_variants(seed=5)
    y, k = frame["label"], frame["stratum"]
    alone = frame["stratum"].map({"a": 3.0, "b": 0.0, "c": 1.0, "d": 2.0})
    assert bootstrap_95(within_auroc, y, alone, k, 0, 200) == [0.5, 0.5]
    assert bootstrap_95(equalized_auroc, y, alone, k, 0, 200) == [0.5, 0.5]
    separating = np.where(y, 1.0, -1.0)
    assert bootstrap_95(within_auroc, y, separating, k, 0, 200) == [1.0, 1.0]
    widths = []
    for n in (400, 1600):
        noisy = random_variants(seed=6, n=n)
        args = (noisy["label"], noisy["score"], noisy["stratum"])
        low, high = bootstrap_95(within_auroc, *args, 0, 400)
        assert low < within_auroc(*args) < high
        widths.append(high - low)
    assert widths[1] < 0.7 * widths[0]
    seeded = [bootstrap_95(within_auroc, *args, seed, 100) for seed in (0, 0, 1)]
    assert seeded[0] == seeded[1] != seeded[2]  # the report's --seed reaches the draws


def test_a_stratum_of_one_positive_and_one_negative_is_one_pair():
    """P_k N_k = 1: the AUROC of that one pair, 1 ranked right, 0 wrong, 1/2 tied."""
    assert within_auroc([True, False], [2.0, 1.0], ["a", "a"]) == 1.0
    assert within_auroc([True, False], [1.0, 2.0], ["a", "a"]) == 0.0
    assert within_auroc([True, False], [1.0, 1.0], ["a", "a"]) == 0.5
    assert np.isnan(within_auroc([True, False], [1.0, 2.0], ["a", "b"]))


def test_the_worked_example_of_the_reports_page():
    """docs/reports.md: AUROC 25 of 35 pairs, within (4 + 3) of (8 + 5), auroc_eq 37 of 70, share
    bounds from those; on 12 variants within's interval holds chance."""
    variants = pd.DataFrame(
        {
            "consequence": ["missense"] * 6 + ["synonymous"] * 6,
            "label": [1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0],
            "score": [5.0, 4.0, 3.5, 2.0, 3.0, 4.5, 1.5, 2.5, 1.0, 0.5, 0.0, 2.2],
            "chrom": ["1", "2", "3", "1", "2", "3"] * 2,
        }
    ).assign(model="m", task="t", pair_id=[f"{i:02d}" for i in range(12)])
    (row,) = confounder_table(variants)
    assert (row["auroc"], row["within"], row["auroc_eq"]) == pytest.approx(
        (25 / 35, 7 / 13, 37 / 70)
    )
    assert (row["share"], row["share_upper"]) == pytest.approx(
        share_bounds(25 / 35, 7 / 13, 37 / 70)
    )
    low, high = row["within_95"]
    assert low < 0.5 < high

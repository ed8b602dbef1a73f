"""The report's section for quantitative labels (``report/variant_correlations.py``): correlations
equal to scipy's by chromosome and stratum, whatever the row order."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from scipy import stats


def report_frame(seed: int = 3, n: int = 60) -> pd.DataFrame:
    rng = random.Random(seed)
    labels = [rng.gauss(0, 1) for _ in range(n)]
    return pd.DataFrame(
        {
            "model": "m",
            "task": "t",
            "score_kind": "llr",
            "labels": "quantitative",
            "label": labels,
            "score": [-y + rng.gauss(0, 1.5) for y in labels],
            "chrom": [rng.choice(["13", "17"]) for _ in range(n)],
            "consequence": [
                rng.choice(["missense_variant", "synonymous_variant"]) for _ in range(n)
            ],
            "pair_id": [f"{i:04x}" for i in range(n)],
        }
    )


def test_the_reports_correlations_equal_scipys_by_chromosome_and_stratum_whatever_the_order():
    from perturbation_bench.report.variant_correlations import (
        correlation_strata,
        correlation_summary,
        markdown,
    )

    frame = report_frame()
    (row,) = correlation_summary(frame, n_boot=300)
    assert row["spearman"] == pytest.approx(
        stats.spearmanr(frame["score"], frame["label"])[0], abs=1e-12
    )
    assert row["pearson"] == pytest.approx(
        stats.pearsonr(frame["score"], frame["label"])[0], abs=1e-12
    )
    low, high = row["spearman_95"]
    assert low < row["spearman"] < high < 0
    shuffled = frame.sample(frac=1.0, random_state=2)
    assert correlation_summary(shuffled, n_boot=300) == [row]
    strata = correlation_strata(frame, ["consequence"])
    for stratum in strata:
        group = frame[frame[stratum["column"]].astype(str) == stratum["value"]]
        assert stratum["n"] == len(group)
        assert stratum["spearman"] == pytest.approx(
            stats.spearmanr(group["score"], group["label"])[0], abs=1e-12
        )
    assert [(s["column"], s["value"]) for s in strata] == [
        ("chrom", "13"),
        ("chrom", "17"),
        ("consequence", "missense_variant"),
        ("consequence", "synonymous_variant"),
    ]
    text = "\n".join(markdown([row], strata))
    assert f"| m | t | llr | 60 | {row['spearman']:.3f} [{low:.3f}, {high:.3f}] |" in text
    first = strata[0]
    assert (
        f"| m | t | chrom | 13 | {first['n']} | {first['spearman']:.3f} | {first['pearson']:.3f} |"
    ) in text


def test_quantitative_labels_are_not_read_as_binary_by_the_ranking_section():
    from perturbation_bench.report.variant_metrics import labelled, ranking_summary

    frame = report_frame()
    assert labelled(frame).empty and ranking_summary(frame) == []
    binary = frame.assign(labels="binary", label=frame["label"] > 0)
    assert len(labelled(binary)) == len(frame)


def test_correlations_of_too_few_or_constant_values_are_nan():
    from perturbation_bench.pairs.ranking import pearson, spearman

    assert spearman([1.0, 2.0], [3.0, 1.0]) != spearman([1.0, 2.0], [3.0, 1.0])
    assert pearson([1.0, 1.0, 1.0], [3.0, 1.0, 2.0]) != pearson([1.0, 1.0, 1.0], [3.0, 1.0, 2.0])
    assert spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)


def test_a_stratum_column_given_again_with_by_is_reported_once():
    from perturbation_bench.report.variant_metrics import ranking_strata

    binary = report_frame().assign(labels="binary", label=lambda f: f["score"] + f["label"] > 0)
    strata = [(s["column"], s["value"]) for s in ranking_strata(binary, ["consequence"])]
    assert sorted(strata) == sorted(set(strata)) and len(strata) == 2

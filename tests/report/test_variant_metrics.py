"""The variant ranking metrics' standard errors and one-class chromosomes (``report/variant_metrics.py``,
``pairs/ranking.py``, ``tasks/variant_aggregations.py``) against TraitGym's formulas written out."""

from __future__ import annotations

import random

import pandas as pd
import pytest


def traitgym_by_chrom(metric, labels, scores, chroms) -> float:
    """TraitGym's get_metric_by_block + weighted average, written out: scikit-learn's metric on
    every chromosome (a one-class chromosome's AUROC is NaN, read back as null), each weighted by
    its share of all variants, nulls adding nothing to the sum."""
    import warnings

    frame = pd.DataFrame({"label": labels, "score": scores, "chrom": chroms})
    total, weighted = len(frame), 0.0
    for _, block in frame.groupby("chrom"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = metric(block["label"], block["score"])
            except ValueError:
                value = float("nan")
        if value == value:
            weighted += value * len(block) / total
    return weighted


def one_class_variants(seed: int = 4) -> pd.DataFrame:
    """Three chromosomes with both classes, one with negatives only, one with positives only."""
    rng = random.Random(seed)
    rows = []
    for chrom, positives, negatives in (
        ("1", 4, 9),
        ("2", 3, 11),
        ("3", 5, 7),
        ("4", 0, 6),
        ("5", 2, 0),
    ):
        rows += [(chrom, True) for _ in range(positives)] + [
            (chrom, False) for _ in range(negatives)
        ]
    frame = pd.DataFrame(rows, columns=["chrom", "label"])
    frame["score"] = [rng.gauss(1.0 if label else 0.0, 1.0) for label in frame["label"]]
    return frame


def test_kept_one_class_chromosomes_follow_traitgyms_pipeline():
    from sklearn.metrics import average_precision_score, roc_auc_score

    from perturbation_bench.pairs.ranking import by_chromosome

    frame = one_class_variants()
    args = list(frame["label"]), list(frame["score"]), list(frame["chrom"])
    for name, metric in (("auroc", roc_auc_score), ("auprc", average_precision_score)):
        kept = by_chromosome(name, *args, one_class="keep")
        assert kept.value == pytest.approx(traitgym_by_chrom(metric, *args), abs=1e-12)
        assert kept.kept == ["4", "5"] and kept.left_out == []
        dropped = by_chromosome(name, *args)
        assert dropped.left_out == ["4", "5"] and dropped.kept == []
        assert dropped.value != pytest.approx(kept.value)


def test_the_standard_errors_are_traitgyms_formulas_on_the_documented_draws():
    """Stratified: positives then negatives drawn with replacement from one seeded generator per
    replicate set; chromosomes: rows drawn with replacement, weights renormalised, a NaN metric
    adding 0; both read as the sample standard deviation (ddof=1, polars' .std())."""
    import statistics

    import numpy as np
    from sklearn.metrics import average_precision_score

    from perturbation_bench.pairs.ranking import by_chromosome
    from perturbation_bench.report.statistics import (
        chromosome_bootstrap,
        standard_error,
        stratified_bootstrap,
    )

    frame = one_class_variants()
    labels, scores = np.array(frame["label"]), np.array(frame["score"])
    rng = np.random.default_rng(7)
    positives, negatives = np.flatnonzero(labels), np.flatnonzero(~labels)
    values = []
    for _ in range(100):
        rows = list(rng.choice(positives, len(positives))) + list(
            rng.choice(negatives, len(negatives))
        )
        values.append(average_precision_score(labels[rows], scores[rows]))
    got = standard_error(
        stratified_bootstrap(average_precision_score, labels, scores, seed=7, n_boot=100)
    )
    assert got == pytest.approx(statistics.stdev(values), rel=1e-12)

    rows = by_chromosome("auroc", list(labels), list(scores), list(frame["chrom"]), "keep").rows
    rng = np.random.default_rng(3)
    values = []
    for picks in rng.integers(0, len(rows), size=(1000, len(rows))):
        chosen = [rows[i] for i in picks]
        values.append(
            sum(n * (m if m == m else 0.0) for _, n, m in chosen) / sum(n for _, n, _ in chosen)
        )
    assert standard_error(chromosome_bootstrap(rows, seed=3, n_boot=1000)) == pytest.approx(
        statistics.stdev(values), rel=1e-12
    )
    assert standard_error([0.5]) != standard_error([0.5])  # one replicate: no error (NaN)


def report_pairs(frame: pd.DataFrame, one_class: str = "drop", convention=None) -> pd.DataFrame:
    return frame.assign(
        model="m",
        task="t",
        score_kind="llr",
        margin=frame["score"],
        correct=frame["score"] > 0,
        one_class_chromosomes=one_class,
        convention=convention,
        pair_id=[f"{i:04x}" for i in range(len(frame))],
    )


def test_the_report_resamples_the_same_whatever_the_row_order():
    from perturbation_bench.report.variant_metrics import auprc_differences, ranking_summary

    frame = report_pairs(one_class_variants())
    two = pd.concat([frame, frame.assign(model="n", score=frame["score"] * -1.0)])
    shuffled = two.sample(frac=1.0, random_state=11)
    assert list(shuffled["pair_id"]) != list(two["pair_id"])
    resamples = {"n_boot": 300, "se_boot": 20, "se_chrom_boot": 20}
    assert ranking_summary(shuffled, **resamples) == ranking_summary(two, **resamples)
    assert auprc_differences(shuffled, n_boot=300) == auprc_differences(two, n_boot=300)


def test_the_report_keeps_one_class_chromosomes_under_the_traitgym_convention():
    from sklearn.metrics import average_precision_score

    from perturbation_bench.report.variant_markdown import markdown
    from perturbation_bench.report.variant_metrics import ranking_summary, thin_notes

    frame = one_class_variants()
    (kept,) = ranking_summary(
        report_pairs(frame, "keep", "traitgym"), n_boot=200, se_boot=50, se_chrom_boot=300
    )
    (dropped,) = ranking_summary(report_pairs(frame), n_boot=200)
    args = list(frame["label"]), list(frame["score"]), list(frame["chrom"])
    assert kept["auprc_by_chrom"] == pytest.approx(
        traitgym_by_chrom(average_precision_score, *args)
    )
    assert (kept["chromosomes_kept"], kept["chromosomes_left_out"]) == (["4", "5"], [])
    assert (dropped["chromosomes_kept"], dropped["chromosomes_left_out"]) == ([], ["4", "5"])
    assert kept["se_resamples"] == 50 and kept["se_chrom_resamples"] == 300
    assert kept["auprc_se"] > 0 and kept["auroc_by_chrom_se"] > 0
    lines = "\n".join(markdown([kept], [], [], []))
    assert f"| traitgym | 47 (14) | {kept['auroc']:.3f} ± {kept['auroc_se']:.3f} [" in lines
    assert "| kept: 4, 5 |" in lines and "50 stratified resamples" in lines
    assert any(
        "chromosome(s) 4, 5 hold variants of one class and are kept" in n
        for n in thin_notes([kept])
    )


def test_the_tasks_by_chromosome_metrics_follow_the_tasks_one_class_rule(caplog):
    from sklearn.metrics import average_precision_score

    from perturbation_bench.tasks.variant_aggregations import auprc_by_chrom

    frame = one_class_variants()
    args = list(frame["label"]), list(frame["score"]), list(frame["chrom"])
    items = [(s, y, c, "keep") for y, s, c in zip(*args, strict=True)]
    assert auprc_by_chrom(items) == pytest.approx(traitgym_by_chrom(average_precision_score, *args))
    assert "kept in the average as TraitGym does" in caplog.text
    assert auprc_by_chrom([]) != auprc_by_chrom([])  # no variant: NaN, not an error
    dropped = auprc_by_chrom([(s, y, c, "drop") for s, y, c, _ in items])
    both = frame[frame["chrom"].isin(["1", "2", "3"])]
    assert dropped == pytest.approx(
        traitgym_by_chrom(
            average_precision_score, list(both["label"]), list(both["score"]), list(both["chrom"])
        )
    )


def test_the_class_ladder_leaves_out_an_embedding_run(tmp_path):
    """A distance has no direction and another unit than a margin: its run has no ladder row,
    while the likelihood run of the same variants has one per class."""
    from dna_fixtures import write_run
    from perturbation_bench.report.make import make_report

    docs = [
        {"chrom": "1", "pos": i, "ref": "A", "alt": "C", "label": i % 2 == 0}
        | {"consequence": ("stop_gained", "synonymous_variant")[i % 2]}
        for i in range(12)
    ]
    lls = [(-1.0 - i % 3, -2.0) for i in range(12)]
    runs = [
        write_run(tmp_path / "llr", "perturbation_variants", lls, docs=docs),
        write_run(
            tmp_path / "embedding",
            "perturbation_variants",
            [(0.0, -1.0 - i) for i in range(12)],
            model="dna-mlm",
            model_args={"pretrained": "m", "scoring": "embedding"},
            docs=docs,
        ),
    ]
    report = make_report(runs, tmp_path / "report", n_boot=20, se_boot=5, se_chrom_boot=5)
    ladder = report["variants"]["class_ladder"]
    assert {row["model"] for row in ladder} == {"kmer-markov"}
    assert sorted(row["consequence"] for row in ladder) == ["stop_gained", "synonymous_variant"]


def test_the_labelled_rows_are_none_without_a_label_column_and_in_pair_id_order():
    from perturbation_bench.report.variant_metrics import labelled

    paired = pd.DataFrame({"model": ["m", "m"], "pair_id": ["b", "a"], "correct": [1, 0]})
    assert labelled(paired).empty and list(labelled(paired).columns) == list(paired.columns)
    rows = paired.assign(label=[1.0, None], assay=None)
    rows = pd.concat([rows, rows.assign(pair_id=["d", "c"], label=[0.0, 1.0])])
    got = labelled(rows)
    assert list(got["pair_id"]) == ["b", "c", "d"] and list(got["label"]) == [True, True, False]

"""lm-eval's aggregations of the variant task (``tasks/variants.py``): each receives every
document's item, gathered from all processes on rank 0, and computes one metric over them.

Items: ``(score, label, chrom, one_class_chromosomes)`` for the whole-task metrics (ranking:
``auroc``, ``auprc``, ``auroc_by_chrom``, ``auprc_by_chrom``, ``pairs/ranking.py``; correlation:
``spearman``, ``pearson``), ``(assay, label, score, min_per_class)`` for their per-assay macro
forms (``pairs/assays.py``). A variant whose label is null is left out of every metric.
"""

from __future__ import annotations

import logging
from collections import Counter

from perturbation_bench.pairs.assays import (
    BINARY,
    MIN_PER_CLASS,
    QUANTITATIVE,
    macro,
    no_value_text,
    per_assay,
)
from perturbation_bench.pairs.ranking import CORRELATIONS, METRICS, by_chromosome

log = logging.getLogger(f"lm_eval.{__name__}")


def _labelled(items) -> tuple[list[bool], list[float], list[str]]:
    kept = [(bool(item[1]), item[0], item[2]) for item in items if item[1] is not None]
    return [k[0] for k in kept], [k[1] for k in kept], [k[2] for k in kept]


def auroc(items) -> float:
    """lm-eval aggregation: AUROC over the labelled variants."""
    labels, scores, _ = _labelled(items)
    return METRICS["auroc"](labels, scores)


def auprc(items) -> float:
    """lm-eval aggregation: AUPRC (average precision) over the labelled variants."""
    labels, scores, _ = _labelled(items)
    return METRICS["auprc"](labels, scores)


def _by_chrom(metric: str, items) -> float:
    result = by_chromosome(metric, *_labelled(items), one_class=items[0][3] if items else "drop")
    if result.kept:
        log.warning(
            "%s_by_chrom: %d chromosome(s) with variants of one class only kept in the average "
            "as TraitGym does (AUPRC 0 or 1, AUROC counted 0, each with its weight): %s",
            metric,
            len(result.kept),
            ", ".join(result.kept),
        )
    if result.left_out:
        log.warning(
            "%s_by_chrom: %d chromosome(s) with variants of one class only left out of the "
            "average: %s",
            metric,
            len(result.left_out),
            ", ".join(result.left_out),
        )
    return result.value


def auroc_by_chrom(items) -> float:
    """lm-eval aggregation: AUROC per chromosome, averaged weighted by variants (``pairs/ranking.py``)."""
    return _by_chrom("auroc", items)


def auprc_by_chrom(items) -> float:
    """lm-eval aggregation: AUPRC per chromosome, averaged weighted by variants (``pairs/ranking.py``)."""
    return _by_chrom("auprc", items)


def _correlation(name: str, items) -> float:
    kept = [(item[1], item[0]) for item in items if item[1] is not None]
    return CORRELATIONS[name]([label for label, _ in kept], [score for _, score in kept])


def spearman(items) -> float:
    """lm-eval aggregation: Spearman's rho of the score with quantitative labels."""
    return _correlation("spearman", items)


def pearson(items) -> float:
    """lm-eval aggregation: Pearson's r of the score with quantitative labels."""
    return _correlation("pearson", items)


def _macro(kind: str, metric: str, items) -> float:
    """The macro average over assays of ``metric`` (``pairs/assays.py``); in the log, every
    assay of the items: its value, or why it has none (below the gate, an undefined metric, no
    labelled variant) with its n."""
    labelled = [(assay, label, score) for assay, label, score, _ in items if label is not None]
    gate = items[0][3] if items else MIN_PER_CLASS
    if kind == BINARY:
        labelled = [(assay, bool(label), score) for assay, label, score in labelled]
    cells = per_assay(kind, metric, labelled, gate)
    unlabelled = Counter(item[0] for item in items if item[0] not in cells)
    log.info(
        "%s per assay (gate %d per class): %s",
        metric,
        gate,
        "; ".join(
            [
                f"{assay} {no_value_text(c) if c.value is None else f'{c.value:.4f} (n={c.n})'}"
                for assay, c in cells.items()
            ]
            + [f"{assay} no labelled variant (n={n})" for assay, n in sorted(unlabelled.items())]
        )
        or "no variant",
    )
    return macro(cells.values())


def auroc_macro(items) -> float:
    """lm-eval aggregation: AUROC per assay, the mean over the assays that pass the gate."""
    return _macro(BINARY, "auroc", items)


def auprc_macro(items) -> float:
    """lm-eval aggregation: AUPRC per assay, the mean over the assays that pass the gate."""
    return _macro(BINARY, "auprc", items)


def spearman_macro(items) -> float:
    """lm-eval aggregation: Spearman's rho per assay, the mean over the assays that pass the gate."""
    return _macro(QUANTITATIVE, "spearman", items)


def pearson_macro(items) -> float:
    """lm-eval aggregation: Pearson's r per assay, the mean over the assays that pass the gate."""
    return _macro(QUANTITATIVE, "pearson", items)


RANKING_METRICS = ("auroc", "auprc", "auroc_by_chrom", "auprc_by_chrom")
CORRELATION_METRICS = ("spearman", "pearson")
ASSAY_RANKING_METRICS = ("auroc_macro", "auprc_macro")
ASSAY_CORRELATION_METRICS = ("spearman_macro", "pearson_macro")

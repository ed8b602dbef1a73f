"""Variant-effect ranking metrics, defined once for the variant task and the report (TraitGym's).

A variant's score ranks how harmful the model finds it. With ``margin = LL(ref window) -
LL(alt window)`` (nats)::

    llr      s = margin          TraitGym's "LLR, minus" (-LLR, LLR = log P(alt) - log P(ref))
    abs_llr  s = |margin|        TraitGym's "absLLR, plus", its choice for complex traits

Over the labelled variants (``label`` true = positive; unlabelled ones take no part):

- ``auroc``: scikit-learn's ``roc_auc_score(labels, s)``;
- ``auprc``: ``average_precision_score(labels, s)``;
- ``auroc_by_chrom``, ``auprc_by_chrom``: the metric on each chromosome's variants, averaged with
  weights ``n_c / sum(n)``, ``n_c`` the chromosome's labelled variants (both classes). A
  chromosome whose variants are all of one class has no such metric. By default
  (``one_class_chromosomes: drop``) it is left out of the average (and named), the weights
  renormalised over the others. ``keep`` (TraitGym's pipeline, its ``traitgym`` convention) keeps
  it with what scikit-learn gives such a chromosome: AUPRC 0 (negatives only) or 1 (positives
  only), AUROC NaN, which counts 0 in the sum with its weight ``n_c`` in the denominator.

A metric that cannot be computed (no labelled variant, or a single class overall) is NaN.

Quantitative labels (a score per variant, ``formats/variant_files.py``) are read by correlation
instead, over the labelled variants:

- ``spearman``: ``scipy.stats.spearmanr(s, label)``, Spearman's rho (average ranks for ties);
- ``pearson``: ``scipy.stats.pearsonr(s, label)``, Pearson's r;

NaN with fewer than 3 variants or a constant score or label. With ``s = margin`` (``llr``) a
damaging variant scores high, so a label where low means damaging (a function score) gives a
negative correlation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from perturbation_bench.pairs.scores import MARGIN, SCORE


def variant_score(margin: float, score: str) -> float:
    """``s`` of the module docstring for one variant's margin under a score read off the
    margin (``scores.py``); the margin itself under any other."""
    row = SCORE.get(score)
    return row.of(margin) if row is not None and row.reading is MARGIN else margin


def auroc(labels, scores) -> float:
    """Area under the ROC curve (NaN with fewer than two classes)."""
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores)) if len(set(labels)) == 2 else math.nan


def auprc(labels, scores) -> float:
    """Average precision, scikit-learn's estimate of the area under the precision-recall curve."""
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(labels, scores)) if len(set(labels)) == 2 else math.nan


METRICS = {"auroc": auroc, "auprc": auprc}


def spearman(labels, scores) -> float:
    """Spearman's rho of ``scores`` with quantitative ``labels`` (module docstring)."""
    return _correlation("spearmanr", labels, scores)


def pearson(labels, scores) -> float:
    """Pearson's r of ``scores`` with quantitative ``labels`` (module docstring)."""
    return _correlation("pearsonr", labels, scores)


def _correlation(name: str, labels, scores) -> float:
    import numpy as np
    from scipy import stats

    labels, scores = np.asarray(labels, dtype=float), np.asarray(scores, dtype=float)
    if len(labels) < 3 or np.ptp(labels) == 0 or np.ptp(scores) == 0:
        return math.nan
    return float(getattr(stats, name)(scores, labels)[0])


CORRELATIONS = {"spearman": spearman, "pearson": pearson}


@dataclass
class ByChromosome:
    """A by-chromosome weighted average and what it was made of."""

    value: float
    rows: list[tuple[str, int, float]] = field(default_factory=list)
    """``(chrom, n, metric)`` of every chromosome averaged."""
    left_out: list[str] = field(default_factory=list)
    """Chromosomes whose variants are all of one class, left out (``drop``)."""
    kept: list[str] = field(default_factory=list)
    """Chromosomes whose variants are all of one class, kept (``keep``)."""


def one_class_metric(metric: str, labels) -> float:
    """What scikit-learn gives a chromosome whose ``labels`` are of one class (module docstring)."""
    return (1.0 if all(labels) else 0.0) if metric == "auprc" else math.nan


def by_chromosome(metric: str, labels, scores, chroms, one_class: str = "drop") -> ByChromosome:
    """``<metric>_by_chrom`` of the module docstring; ``one_class``: ``drop`` or ``keep``."""
    groups = defaultdict(lambda: ([], []))
    for label, score, chrom in zip(labels, scores, chroms, strict=True):
        groups[chrom][0].append(label)
        groups[chrom][1].append(score)
    result = ByChromosome(math.nan)
    for chrom in sorted(groups):
        chrom_labels, chrom_scores = groups[chrom]
        if len(set(chrom_labels)) < 2:
            if one_class == "keep":
                result.kept.append(chrom)
                result.rows.append(
                    (chrom, len(chrom_labels), one_class_metric(metric, chrom_labels))
                )
            else:
                result.left_out.append(chrom)
            continue
        result.rows.append((chrom, len(chrom_labels), METRICS[metric](chrom_labels, chrom_scores)))
    result.value = weighted_average(result.rows)
    return result


def weighted_average(rows) -> float:
    """``sum(n_c m_c) / sum(n_c)`` over ``(chrom, n, metric)`` rows, a NaN ``m_c`` counting 0
    (NaN without rows)."""
    total = sum(n for _, n, _ in rows)
    return sum(n * m for _, n, m in rows if not math.isnan(m)) / total if total else math.nan

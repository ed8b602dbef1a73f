"""Confidence intervals and tests for pairwise accuracy and for variant ranking metrics.

The accuracy ones take per-pair 0/1 outcomes (``correct = 1[LL(original) > LL(perturbed)]``):

- :func:`bootstrap_interval`: percentile interval of the mean over ``n_boot`` resamples of the
  pairs, drawn with a seeded generator (same seed, same interval); :func:`cluster_bootstrap`
  resamples clusters of pairs instead (``report/clusters.py`` says which), each replicate
  ``sum of the drawn clusters' outcomes / sum of their sizes``: with one pair per cluster, in row
  order, its draws and its interval are the pair bootstrap's exactly.
- :func:`design_effect`: ``(clusters, deff, effective n)``, ``deff`` the ratio of the ideal
  (infinitely resampled) cluster bootstrap's variance of the mean to the pair bootstrap's, to
  first order: with ``e_c = sum over cluster c of (x - p)``, ``deff = sum_c e_c^2 / sum_i
  (x_i - p)^2`` (1 with one pair per cluster; the cluster size when the pairs of each cluster
  are identical and the clusters equal in size); effective n ``= n / max(deff, 1)``: never more
  than the pairs (a design effect under 1, clusters less alike than chance, is reported but
  gives no interval narrower than the pairs'). Without any variance (every outcome alike) the
  pairs of a cluster are as alike as they can be: effective n = the number of clusters. The
  accuracy's Wilson interval by cluster is Wilson's at ``(k, n)`` scaled to the effective n.
- :func:`wilson_interval`: Wilson score interval for ``k`` successes in ``n`` trials,
  ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``, within [0, 1] and holding
  ``p = k / n``.
- :func:`paired_bootstrap_difference`: interval of ``mean(a) - mean(b)`` resampling pairs
  jointly, for two models scored on the same pairs; :func:`paired_cluster_bootstrap` resamples
  clusters jointly and adds the two-sided bootstrap p-value of no difference, with ``B``
  replicates ``d*``: ``p = min(1, 2 (1 + min(#{d* <= 0}, #{d* >= 0})) / (B + 1))``.
- :func:`mcnemar_exact`: two-sided exact McNemar test on the discordant pairs: with ``b`` pairs
  only model A gets right and ``c`` only B, ``p = min(1, 2 P[X <= min(b, c)])``,
  ``X ~ Binomial(b + c, 1/2)`` (1 when ``b + c = 0``).

The ranking ones resample as TraitGym does (``pairs/ranking.py`` defines the metrics):
:func:`stratified_bootstrap` (global AUROC/AUPRC: positives and negatives resampled
separately), :func:`chromosome_bootstrap` (by-chromosome averages: the ``(chrom, n, metric)``
rows resampled, weights renormalised, a NaN metric counting 0 with its weight),
:func:`paired_stratified_bootstrap_difference` (two models on the same variants). Each gives
the replicate values, read as a seeded percentile interval (:func:`percentile_interval`) or as
TraitGym's standard error, their standard deviation with ``ddof=1`` (:func:`standard_error`;
TraitGym draws 100 replicates for a global metric, 1,000 for a by-chromosome average).
Replicates depend on the order of the values given: callers pass them in a fixed order.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

LEVEL = 0.95


def bootstrap_interval(
    correct, seed: int = 0, n_boot: int = 2000, level: float = LEVEL
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``correct`` (NaN for no values)."""
    return percentile_interval(cluster_bootstrap(correct, None, seed, n_boot), level)


def cluster_bootstrap(values, clusters=None, seed: int = 0, n_boot: int = 2000) -> np.ndarray:
    """``n_boot`` seeded replicates of the mean of ``values``, resampling ``clusters`` (one label
    per value; None: each value its own cluster) with replacement; empty for no values."""
    values = np.asarray(values, dtype=float)
    if not len(values):
        return np.array([])
    if clusters is None:
        sums, sizes = values, np.ones(len(values))
    else:
        codes = pd.factorize(np.asarray(clusters, dtype=object))[0]
        sums, sizes = np.bincount(codes, weights=values), np.bincount(codes).astype(float)
    rng = np.random.default_rng(seed)
    count = len(sums)
    block = max(1, 2_000_000 // count)  # resamples per draw: bounded memory for 20,000 clusters
    replicates = []
    for done in range(0, n_boot, block):
        picks = rng.integers(0, count, size=(min(block, n_boot - done), count))
        replicates.append(sums[picks].sum(axis=1) / sizes[picks].sum(axis=1))
    return np.concatenate(replicates)


def design_effect(values, clusters=None) -> tuple[int, float, float]:
    """``(clusters, deff, effective n)`` of the mean of ``values`` (module docstring)."""
    values = np.asarray(values, dtype=float)
    if clusters is None:
        return len(values), 1.0, float(len(values))
    codes = pd.factorize(np.asarray(clusters, dtype=object))[0]
    count = int(codes.max()) + 1 if len(codes) else 0
    residuals = values - values.mean() if len(values) else values
    pair_variance = float((residuals**2).sum())
    if pair_variance == 0:
        return count, (len(values) / count if count else 1.0), float(count)
    deff = float((np.bincount(codes, weights=residuals) ** 2).sum()) / pair_variance
    return count, deff, len(values) / max(deff, 1.0)


def wilson_interval(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval for a proportion (formula in the module docstring)."""
    if n == 0:
        return 0.0, 1.0
    z = _z(level)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # within [0, 1] and around p even where rounding would put p outside (k = n gives 1 - 1e-16)
    return min(max(0.0, centre - half), p), max(min(1.0, centre + half), p)


def paired_bootstrap_difference(
    a, b, seed: int = 0, n_boot: int = 2000, level: float = LEVEL
) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), low, high)`` resampling the pairs jointly."""
    return paired_cluster_bootstrap(a, b, None, seed, n_boot, level)[:3]


def paired_cluster_bootstrap(
    a, b, clusters=None, seed: int = 0, n_boot: int = 2000, level: float = LEVEL
) -> tuple[float, float, float, float]:
    """``(mean(a) - mean(b), low, high, p)`` resampling the clusters of the pairs jointly
    (module docstring; ``clusters`` None: each pair its own)."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if not len(diff):
        return math.nan, math.nan, math.nan, math.nan
    replicates = cluster_bootstrap(diff, clusters, seed, n_boot)
    low, high = percentile_interval(replicates, level)
    tail = min(int((replicates <= 0).sum()), int((replicates >= 0).sum()))
    p = min(1.0, 2 * (1 + tail) / (len(replicates) + 1))
    return float(diff.mean()), low, high, p


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value (module docstring)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def stratified_bootstrap(metric, labels, scores, seed: int = 0, n_boot: int = 1000) -> np.ndarray:
    """``metric(labels, scores)`` over ``n_boot`` resamples that draw the positives and the
    negatives separately, each class keeping its size (TraitGym's bootstrap of a global AUROC or
    AUPRC); empty without both classes."""
    labels, scores = np.asarray(labels, dtype=bool), np.asarray(scores, dtype=float)
    positives, negatives = np.flatnonzero(labels), np.flatnonzero(~labels)
    if not len(positives) or not len(negatives):
        return np.array([])
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        rows = np.concatenate(
            [rng.choice(positives, len(positives)), rng.choice(negatives, len(negatives))]
        )
        values.append(metric(labels[rows], scores[rows]))
    return np.asarray(values, dtype=float)


def chromosome_bootstrap(rows, seed: int = 0, n_boot: int = 1000) -> np.ndarray:
    """A by-chromosome weighted average over ``n_boot`` resamples of its ``(chrom, n, metric)``
    rows with replacement, the weights renormalised in each, the metrics not recomputed and a
    NaN metric counting 0 with its weight (TraitGym's bootstrap of ``*_by_chrom``); empty
    without rows."""
    if not rows:
        return np.array([])
    n = np.array([row[1] for row in rows], dtype=float)
    metric = np.nan_to_num(np.array([row[2] for row in rows], dtype=float), nan=0.0)
    picks = np.random.default_rng(seed).integers(0, len(rows), size=(n_boot, len(rows)))
    return (n[picks] * metric[picks]).sum(axis=1) / n[picks].sum(axis=1)


def percentile_interval(values, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap replicates, NaN replicates left
    out (NaN without any other)."""
    values = np.asarray(values, dtype=float)
    if np.isnan(values).all():
        return math.nan, math.nan
    return _percentiles(values, level)


def standard_error(values) -> float:
    """TraitGym's standard error: the replicates' standard deviation, ``ddof=1`` (NaN with
    fewer than two)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def paired_stratified_bootstrap_difference(
    metric, labels, scores_a, scores_b, seed: int = 0, n_boot: int = 1000, level: float = LEVEL
) -> tuple[float, float, float]:
    """``(metric_a - metric_b, low, high)`` for two models' scores of the same variants, each
    resample drawing positives and negatives separately and the SAME variants for both models."""
    labels = np.asarray(labels, dtype=bool)
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    difference = metric(labels, a) - metric(labels, b)
    low, high = percentile_interval(
        stratified_bootstrap(
            lambda y, s: metric(y, a[s.astype(int)]) - metric(y, b[s.astype(int)]),
            labels,
            np.arange(len(labels)),
            seed=seed,
            n_boot=n_boot,
        ),
        level,
    )
    return float(difference), low, high


def _percentiles(values, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    low, high = np.nanquantile(np.asarray(values, dtype=float), [tail, 1 - tail])
    return float(low), float(high)

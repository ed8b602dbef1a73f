"""Confidence intervals and tests for pairwise accuracy and for variant ranking metrics.

The accuracy ones take per-pair 0/1 outcomes (``correct = 1[LL(original) > LL(perturbed)]``):

- :func:`bootstrap_interval`: percentile interval of the mean over ``n_boot`` resamples of the
  pairs, drawn with a seeded generator (same seed, same interval).
- :func:`wilson_interval`: Wilson score interval for ``k`` successes in ``n`` trials,
  ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``, within [0, 1] and holding
  ``p = k / n``.
- :func:`paired_bootstrap_difference`: interval of ``mean(a) - mean(b)`` resampling pairs
  jointly, for two models scored on the same pairs.
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

LEVEL = 0.95


def bootstrap_interval(
    correct, seed: int = 0, n_boot: int = 2000, level: float = LEVEL
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``correct`` (NaN for no values)."""
    values = np.asarray(correct, dtype=float)
    if not len(values):
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    block = max(1, 2_000_000 // len(values))  # resamples per draw: bounded memory for 20,000 pairs
    means = np.concatenate(
        [
            values[
                rng.integers(0, len(values), size=(min(block, n_boot - done), len(values)))
            ].mean(axis=1)
            for done in range(0, n_boot, block)
        ]
    )
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


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
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    low, high = bootstrap_interval(diff, seed=seed, n_boot=n_boot, level=level)
    return (float(diff.mean()) if len(diff) else math.nan), low, high


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
    """The central ``level`` percentile interval of bootstrap replicates (NaN without any)."""
    if not len(values):
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

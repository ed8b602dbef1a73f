"""Confounders held fixed: how much of a labelled variant task's AUROC a stratum explains.

The definitions are pairctrl's (``pairctrl/metrics.py``) and seqleak's (``seqleak/metrics.py``),
with the stratum in the place of their gene position. For every model and labelled task (binary
labels, ``variant_metrics.labelled``) and every stratum column (``consequence`` and each ``--by``
column; a numeric column of more than :data:`MAX_VALUES` values, such as a distance, in
:data:`DISTANCE_BINS` quantile bins), over the variants that have a value of the column, with
``y`` the label, ``s`` the score and ``k`` the stratum:

- ``auroc``: Mann-Whitney AUROC of ``s`` (ties count 1/2);
- ``within`` (:func:`within_auroc`): positives compared only with negatives of their own
  stratum, pooled: ``sum_k U_k / sum_k P_k N_k`` (``U_k`` the Mann-Whitney U of stratum ``k``,
  ``P_k``, ``N_k`` its positives and negatives): the strata's AUROCs averaged with weights
  ``P_k N_k``; with one stratum, the AUROC;
- ``auroc_eq``: the AUROC of ``s`` replaced by its percentile in its stratum,
  ``(midrank - 1/2) / n_k`` (:func:`equalized`): the score with its distribution made the
  same in every stratum, its order inside each kept;
- ``within_95``, ``auroc_eq_95``: their 95% percentile intervals over bootstrap resamples that
  draw the positives and the negatives apart, as the task's AUROC interval
  (``statistics.stratified_bootstrap``, the report's ``--seed`` and ``--bootstrap``);
- ``share`` and ``share_upper`` (:func:`share_bounds`): with ``s_within = 1 - (within - 1/2) /
  (auroc - 1/2)`` and ``s_eq = 1 - (auroc_eq - 1/2) / (auroc - 1/2)``, ``clip(min, 0, 1)`` and
  ``clip(max, 0, 1)``: the lower and upper bound of the share of the AUROC above chance that
  the stratum explains (the lower exact when the stratum is a consequence of the label, the
  upper when it is a cause); not reported (None) when ``auroc - 1/2 <= MIN_MARGIN``;
- ``gain`` (:func:`gain`): the out-of-fold AUROC of a logistic regression on stratum (one-hot)
  + score (standardised) minus that of one on the stratum alone, the folds the chromosomes
  (each left out in turn), each AUROC within folds (the ``within`` formula with the folds as
  strata: predictions of two fold models are never ranked against each other); None with
  fewer than two chromosomes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from perturbation_bench.report.statistics import percentile_interval, stratified_bootstrap
from perturbation_bench.report.variant_markdown import number_cell
from perturbation_bench.report.variant_metrics import labelled

MIN_MARGIN = 0.02
"""An AUROC at most this far above 1/2 is near chance: no share is reported."""
MAX_VALUES = 10
"""A numeric stratum column with more values than this is binned."""
DISTANCE_BINS = 5


def within_auroc(labels, scores, strata) -> float:
    """``sum_k U_k / sum_k P_k N_k`` (module docstring); NaN where no stratum has both classes."""
    labels = np.asarray(labels, dtype=bool)
    rank, codes, _ = _ranks_within(scores, strata)
    positives = np.bincount(codes, weights=labels)
    total = np.bincount(codes).astype(float)
    rank_sum = np.bincount(codes, weights=np.where(labels, rank, 0.0))
    pairs = float((positives * (total - positives)).sum())
    u = float((rank_sum - positives * (positives + 1) / 2).sum())
    return u / pairs if pairs > 0 else math.nan


def equalized(scores, strata) -> np.ndarray:
    """Each score's percentile in its stratum, ``(midrank - 1/2) / n_k``."""
    rank, codes, sizes = _ranks_within(scores, strata)
    return (rank - 0.5) / sizes[codes]


def _ranks_within(scores, strata) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rank, code, sizes)``: each score's 1-based rank in its stratum, ties given their mean
    rank; each row's stratum code; each stratum's size (``scores`` not empty)."""
    scores = np.asarray(scores, dtype=float)
    codes = pd.factorize(np.asarray(strata))[0]
    order = np.lexsort((scores, codes))
    code, score = codes[order], scores[order]
    new_stratum = np.r_[True, code[1:] != code[:-1]]
    new_run = new_stratum | np.r_[True, score[1:] != score[:-1]]
    at = np.arange(len(order))
    position = at - np.maximum.accumulate(np.where(new_stratum, at, 0))  # 0-based in the stratum
    run = np.cumsum(new_run) - 1
    rank = np.empty(len(order))
    rank[order] = position[new_run][run] + (np.bincount(run)[run] + 1) / 2
    return rank, codes, np.bincount(codes)


def equalized_auroc(labels, scores, strata) -> float:
    """``auroc_eq``: the AUROC of :func:`equalized` scores (module docstring)."""
    return within_auroc(labels, equalized(scores, strata), np.zeros(len(scores)))


def bootstrap_95(reading, labels, scores, strata, seed: int, n_boot: int) -> list[float]:
    """The 95% percentile interval of ``reading(labels, scores, strata)`` over resamples that
    draw the positives and the negatives apart (module docstring)."""
    scores = np.asarray(scores, dtype=float)
    strata = pd.factorize(np.asarray(strata, dtype=object))[0]  # codes: fast to regroup

    def resampled(labels_drawn, rows):
        rows = rows.astype(int)
        return reading(labels_drawn, scores[rows], strata[rows])

    rows = np.arange(len(scores))
    replicates = stratified_bootstrap(resampled, labels, rows, seed=seed, n_boot=n_boot)
    return list(percentile_interval(replicates))


def share_bounds(auroc: float, within: float, auroc_eq: float) -> tuple:
    """``(share, share_upper)`` (module docstring); ``(None, None)`` near chance."""
    excess = auroc - 0.5
    if not excess > MIN_MARGIN:
        return None, None
    s_within, s_eq = 1 - (within - 0.5) / excess, 1 - (auroc_eq - 0.5) / excess
    clip = lambda x: float(min(1.0, max(0.0, x)))  # noqa: E731
    return clip(min(s_within, s_eq)), clip(max(s_within, s_eq))


def gain(labels, scores, strata, chroms) -> tuple:
    """``(gain, auroc of stratum + score, auroc of stratum)``, out of fold (module docstring);
    Nones with fewer than two chromosomes."""
    from sklearn.linear_model import LogisticRegression

    labels, chroms = np.asarray(labels, dtype=bool), np.asarray(chroms, dtype=object)
    if len(set(chroms)) < 2:
        return None, None, None
    stratum = pd.get_dummies(pd.Series(np.asarray(strata, dtype=object)).astype(str)).to_numpy(
        dtype=float
    )
    score = np.asarray(scores, dtype=float)
    score = (score - score.mean()) / (score.std() or 1.0)
    designs = {"plus": np.column_stack([stratum, score]), "alone": stratum}
    predicted = {name: np.full(len(labels), math.nan) for name in designs}
    for chrom in sorted(set(chroms), key=str):
        held = chroms == chrom
        if len(set(labels[~held])) < 2:
            continue  # one class to learn from: the fold has no prediction
        for name, design in designs.items():
            model = LogisticRegression(max_iter=1000).fit(design[~held], labels[~held])
            predicted[name][held] = model.decision_function(design[held])
    made = ~np.isnan(predicted["plus"])
    plus, alone = (
        within_auroc(labels[made], predicted[name][made], chroms[made]) for name in designs
    )
    return plus - alone, plus, alone


def stratum_values(frame: pd.DataFrame, column: str) -> pd.Series:
    """The stratum of each row: the column's value, or its quantile bin (module docstring)."""
    values = frame[column]
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.notna().all() and numeric.nunique() > MAX_VALUES:
        return pd.qcut(numeric, DISTANCE_BINS, duplicates="drop").astype(str)
    return values.astype(str)


def confounder_table(pairs: pd.DataFrame, by=(), seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Per model, labelled task and stratum column: the readings of the module docstring."""
    from perturbation_bench.pairs.ranking import auroc

    out = []
    frame = labelled(pairs)
    for column in dict.fromkeys(("consequence", *by)):
        if column not in frame.columns:
            continue
        present = frame[frame[column].notna()]
        for (model, task), group in present.groupby(["model", "task"], sort=True):
            y, s = group["label"].to_numpy(), group["score"].to_numpy(dtype=float)
            strata = stratum_values(group, column).to_numpy()
            raw = auroc(list(y), list(s))
            if math.isnan(raw):
                continue  # one class of label: nothing to rank
            within, eq = within_auroc(y, s, strata), equalized_auroc(y, s, strata)
            share, upper = share_bounds(raw, within, eq)
            added, plus, alone = gain(y, s, strata, group["chrom"].to_numpy())
            out.append(
                {
                    "model": model,
                    "task": task,
                    "column": column,
                    "strata": len(set(strata)),
                    "n": len(group),
                    "n_positive": int(y.sum()),
                    "auroc": raw,
                    "within": within,
                    "within_95": bootstrap_95(within_auroc, y, s, strata, seed, n_boot),
                    "auroc_eq": eq,
                    "auroc_eq_95": bootstrap_95(equalized_auroc, y, s, strata, seed, n_boot),
                    "share": share,
                    "share_upper": upper,
                    "gain": added,
                    "auroc_stratum_plus_score": plus,
                    "auroc_stratum": alone,
                }
            )
    return out


def markdown(rows: list[dict]) -> list[str]:
    """The section's table (nothing without a row)."""
    if not rows:
        return []
    lines = [
        "",
        "## Confounders held fixed",
        "",
        "Per stratum column: the AUROC, the AUROC within strata (positives against negatives of "
        "their own stratum, pooled), auroc_eq (the score as its percentile in its stratum), each "
        "with its 95% bootstrap interval (positives and negatives drawn apart), the "
        "share of AUROC - 0.5 the stratum explains [lower, upper bound] (n/a: AUROC within "
        f"{MIN_MARGIN} of chance), and the gain: out-of-fold AUROC of stratum + score minus "
        "stratum alone, folds by chromosome.",
        "",
        "| model | task | stratum (strata) | n (positives) | AUROC | within | auroc_eq | share "
        "[lower, upper] | gain (stratum alone) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = "n/a" if r["share"] is None else f"[{r['share']:.3f}, {r['share_upper']:.3f}]"
        lines.append(
            f"| {r['model']} | {r['task']} | {r['column']} ({r['strata']}) | {r['n']} "
            f"({r['n_positive']}) | {number_cell(r['auroc'])} | "
            f"{_with_interval(r['within'], r['within_95'])} | "
            f"{_with_interval(r['auroc_eq'], r['auroc_eq_95'])} | {share} | {number_cell(r['gain'])} "
            f"({number_cell(r['auroc_stratum'])}) |"
        )
    return lines


def _with_interval(value: float, bounds: list[float]) -> str:
    return f"{number_cell(value)} [{number_cell(bounds[0])}, {number_cell(bounds[1])}]"

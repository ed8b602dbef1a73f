"""The report's measured tables: per model and task, per stratum, per context length, and
model against model.

- :func:`summarize`: per model and task, accuracy with a seeded bootstrap and a Wilson 95%
  interval, both by cluster (:func:`accuracy`: ``clusters.py`` says which pairs resample
  together; ``statistics.py`` the cluster bootstrap and the design effect), tie rate, margin mean and median, n; and the margins as DART-Eval reports them: the
  Wilcoxon signed-rank test that they lie above 0 (``scipy.stats.wilcoxon(margins,
  alternative="greater")``, its defaults: zero margins dropped; statistic and p-value, None when
  every margin is 0) and their quantiles 5/25/50/75/95 (:data:`MARGIN_QUANTILES`);
  :func:`group_means`: the unweighted mean over the
  whole-window tasks each model ran;
- :func:`strata`: accuracy per stratum value (``fraction_codons_changed`` in fifths,
  ``exon_rank`` with 5+ pooled, ``is_first_exon``, ``strand``, ``chr``, ``is_clamped``,
  ``consequence`` and ``--by`` columns), strata under :data:`FEW_PAIRS` pairs flagged;
- :func:`context_sweep`: accuracy per context length, for every model and config scored at two or
  more lengths;
- :func:`model_comparisons`: for every two models that ran a task, the accuracy difference with a
  paired cluster bootstrap interval and p-value, and the exact McNemar p-value (which takes the
  pairs as independent) over the pairs both scored (matched by ``pair_id``; pairs only one
  model scored are counted);
- :data:`PUBLISHED`: the Carbon report's numbers, shown as reference rows, never measured here.
"""

from __future__ import annotations

import itertools
import math

import pandas as pd

from perturbation_bench.report.clusters import CLUSTER, PAIR_UNIT, UNIT
from perturbation_bench.report.samples import CONTEXT_SUFFIX, STRATA
from perturbation_bench.report.statistics import (
    cluster_bootstrap,
    design_effect,
    mcnemar_exact,
    paired_cluster_bootstrap,
    percentile_interval,
    wilson_interval,
)

FEW_PAIRS = 30
"""Strata with fewer pairs than this are flagged: their intervals are wide."""
THIN_PAIRS = 10
"""An interval from fewer pairs than this is flagged as thin, in the tables and the notes."""
PUBLISHED_CONFIGS = ("syn_human", "syn_mouse", "motif_human")
"""The configs the published numbers and the codon strata are about."""

PUBLISHED = [  # Carbon technical report (Allal et al., 2026), token-level scoring, accuracy %
    {"model": "Carbon-3B", "motif": 85.20, "synonymous": 88.89},
    {"model": "Carbon-8B", "motif": 89.05, "synonymous": 91.46},
    {"model": "GENERator-v2 3B", "motif": 83.06, "synonymous": 87.03},
    {"model": "Evo2-7B", "motif": 88.43, "synonymous": 91.59},
]
PUBLISHED_SOURCE = (
    "Carbon technical report (Allal et al., 2026), token-level scoring; published, not measured "
    "here; whether 'synonymous' pools human and mouse is not stated"
)
CODON_BINS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
MARGIN_QUANTILES = (5, 25, 50, 75, 95)


def summarize(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Per model and task: accuracy with both intervals, tie rate, margin mean/median, n."""
    out = []
    for (model, task), group in pairs.groupby(["model", "task"], sort=True):
        out.append(
            {
                "model": model,
                "task": task,
                **accuracy(group, seed, n_boot),
                "tie_rate": float(group["tie"].mean()),
                "margin_mean": float(group["margin"].mean()),
                "margin_median": float(group["margin"].median()),
                **margin_test(group["margin"].to_numpy()),
            }
        )
    return out


def margin_test(margins) -> dict:
    """The Wilcoxon signed-rank test of ``margins`` > 0 and their quantiles (module docstring)."""
    import numpy as np
    from scipy.stats import wilcoxon

    statistic = p_value = None
    if np.any(margins != 0):
        result = wilcoxon(margins, alternative="greater")
        statistic, p_value = float(result.statistic), float(result.pvalue)
    quantiles = np.percentile(margins, MARGIN_QUANTILES)
    return {
        "wilcoxon_statistic": statistic,
        "wilcoxon_p": p_value,
        "margin_quantiles": {
            f"q{q}": float(v) for q, v in zip(MARGIN_QUANTILES, quantiles, strict=True)
        },
    }


def clusters_of(rows: pd.DataFrame):
    """``(unit, labels)`` of ``rows``' clusters (``clusters.assign_clusters``); the pair and None
    where they have none."""
    if CLUSTER not in rows:
        return PAIR_UNIT, None
    unit = str(rows[UNIT].iloc[0]) if len(rows) else PAIR_UNIT
    return unit, (None if unit == PAIR_UNIT else rows[CLUSTER].to_numpy())


def accuracy(rows: pd.DataFrame, seed: int, n_boot: int) -> dict:
    """Accuracy of ``rows`` (their ``correct``) with its intervals by cluster: the cluster
    bootstrap and Wilson's at the effective n, the unit, the clusters, the effective n and the
    design effect (``statistics.py``); thin under :data:`THIN_PAIRS` pairs or clusters (a
    bootstrap over a few clusters is as rough as one over a few pairs, and can be narrower)."""
    correct = rows["correct"].to_numpy()
    unit, clusters = clusters_of(rows)
    k, n = int(correct.sum()), len(correct)
    count, deff, effective = design_effect(correct, clusters)
    return {
        "n": n,
        "pairwise_acc": k / n if n else math.nan,
        "bootstrap_95": list(
            percentile_interval(cluster_bootstrap(correct, clusters, seed, n_boot))
        ),
        "wilson_95": list(wilson_interval(k * effective / n, effective)) if n else [math.nan] * 2,
        "thin": n < THIN_PAIRS or count < THIN_PAIRS,
        "cluster_unit": unit,
        "n_clusters": count,
        "effective_n": effective,
        "design_effect": deff,
    }


def thin_notes(summary: list[dict]) -> list[str]:
    """A note per model and task whose interval rests on fewer than :data:`THIN_PAIRS` pairs,
    or clusters."""
    return [
        f"{s['model']} {s['task']}: the intervals rest on {_few(s)} (fewer than "
        f"{THIN_PAIRS}): read them as rough"
        for s in summary
        if s["thin"]
    ]


def _few(row: dict) -> str:
    """What a thin row's intervals rest on: its pairs, or its clusters."""
    if row["n"] < THIN_PAIRS:
        return f"{row['n']} pair(s)"
    return f"{row['n_clusters']} clusters by {row['cluster_unit']}"


def has_published_config(tasks) -> bool:
    """Whether any task is one of the published configs (whole windows or a context crop)."""
    return any(
        CONTEXT_SUFFIX.sub("", task).removeprefix("perturbation_") in PUBLISHED_CONFIGS
        for task in tasks
    )


def group_means(summary: list[dict]) -> list[dict]:
    """Unweighted mean of ``pairwise_acc`` over the whole-window tasks each model ran (the
    context-length tasks are left out: an average over crop lengths means nothing); none without
    a run that prefers a window (only embedding distances)."""
    if not summary:
        return []
    frame = pd.DataFrame(summary)
    frame = frame[~frame["task"].str.contains(CONTEXT_SUFFIX)]
    return [
        {
            "model": model,
            "tasks": sorted(g["task"]),
            "mean_pairwise_acc": float(g["pairwise_acc"].mean()),
        }
        for model, g in frame.groupby("model", sort=True)
    ]


def strata(
    pairs: pd.DataFrame, by: list[str] = (), seed: int = 0, n_boot: int = 2000
) -> list[dict]:
    """Accuracy per stratum value, per model and task (module docstring for the binning)."""
    frame = pairs.copy()
    if frame["fraction_codons_changed"].notna().any():
        frame["fraction_codons_changed"] = pd.cut(
            frame["fraction_codons_changed"], CODON_BINS, include_lowest=True
        ).astype(str)
    frame["exon_rank"] = frame["exon_rank"].map(
        lambda r: None if pd.isna(r) else ("5+" if r >= 5 else str(int(r)))
    )
    out = []
    for column in dict.fromkeys((*STRATA, *by)):  # a --by column that is a stratum: once
        present = frame[frame[column].notna() & (frame[column].astype(str) != "nan")]
        for (model, task, value), group in present.groupby(["model", "task", column], sort=True):
            acc = accuracy(group, seed, n_boot)
            out.append(
                {
                    "model": model,
                    "task": task,
                    "column": column,
                    "value": str(value),
                    **acc,
                    "few_pairs": acc["n"] < FEW_PAIRS,
                }
            )
    return out


def context_sweep(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Accuracy per model, config and context length, for each model and config scored at two
    or more lengths."""
    out = []
    for (model, config), group in pairs.groupby(["model", "config"], sort=True):
        if group["context_bp"].nunique() < 2:
            continue
        for length, rows in group.groupby("context_bp", sort=True):
            out.append(
                {
                    "model": model,
                    "config": config,
                    "context_bp": int(length),
                    **accuracy(rows, seed, n_boot),
                }
            )
    return out


def model_comparisons(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Every two models on every task both ran: paired difference by cluster and exact McNemar."""
    out = []
    for task, group in pairs.groupby("task", sort=True):
        tables = {m: g.set_index("pair_id") for m, g in group.groupby("model", sort=True)}
        for a, b in itertools.combinations(sorted(tables), 2):
            common = tables[a].index.intersection(tables[b].index)
            rows = tables[a].loc[common]
            x, y = rows["correct"].to_numpy(), tables[b].loc[common, "correct"].to_numpy()
            unit, clusters = clusters_of(rows)
            diff, low, high, p = paired_cluster_bootstrap(x, y, clusters, seed, n_boot)
            only_a, only_b = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
            out.append(
                {
                    "task": task,
                    "model_a": a,
                    "model_b": b,
                    "n_common": len(common),
                    "only_in_a": len(tables[a]) - len(common),
                    "only_in_b": len(tables[b]) - len(common),
                    "acc_difference": diff,
                    "paired_bootstrap_95": [low, high],
                    "paired_bootstrap_p": p,
                    "cluster_unit": unit,
                    "n_clusters": design_effect(x - y, clusters)[0],
                    "a_right_b_wrong": only_a,
                    "b_right_a_wrong": only_b,
                    "mcnemar_exact_p": mcnemar_exact(only_a, only_b),
                }
            )
    return out

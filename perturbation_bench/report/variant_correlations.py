"""The report's section for variants with quantitative labels (a deep mutational scan's or a
saturation genome editing screen's score per variant, ``formats/variant_files.py``).

For every model and task whose labels are quantitative, over the labelled variants, with each
task's score (``pairs/ranking.py``: ``llr`` = margin or ``abs_llr``):

- ``spearman`` (rho) and ``pearson`` (r) of the score with the label, each with a seeded
  percentile bootstrap 95% interval: variants resampled with replacement, the two values of a
  variant kept together, in ``pair_id`` order (independent of the order of the files' rows);
- the same two per chromosome, per ``consequence`` and per ``--by`` column value, without
  intervals (a group of fewer than 3 variants, or a constant score or label, gives n/a).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perturbation_bench.pairs.ranking import CORRELATIONS
from perturbation_bench.report.assays import oriented_labels
from perturbation_bench.report.statistics import percentile_interval
from perturbation_bench.report.variant_markdown import number_cell
from perturbation_bench.report.variant_metrics import pooled


def quantitative(pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``pairs`` whose task has quantitative labels, that have one and no assay
    (``assays.py``), in ``pair_id`` order (empty if none); each label oriented by its declared
    direction (``pairs/assays.py``)."""
    if "labels" not in pairs.columns:
        return pairs.iloc[0:0]
    rows = pairs[(pairs["labels"] == "quantitative") & pairs["label"].notna() & pooled(pairs)]
    return rows.assign(label=oriented_labels(rows)).sort_values("pair_id", kind="stable")


def variant_bootstrap(statistic, labels, scores, seed: int = 0, n_boot: int = 2000) -> np.ndarray:
    """``statistic(labels, scores)`` over ``n_boot`` resamples of the variants with replacement."""
    labels, scores = np.asarray(labels, dtype=float), np.asarray(scores, dtype=float)
    if not len(labels):
        return np.array([])
    picks = np.random.default_rng(seed).integers(0, len(labels), size=(n_boot, len(labels)))
    return np.array([statistic(labels[rows], scores[rows]) for rows in picks])


def correlation_summary(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Per model and task with quantitative labels: both correlations with their intervals."""
    out = []
    for (model, task), group in quantitative(pairs).groupby(["model", "task"], sort=True):
        row = {
            "model": model,
            "task": task,
            "score": str(group["score_kind"].iloc[0]),
            "n": len(group),
        }
        for name, statistic in CORRELATIONS.items():
            row[name] = statistic(group["label"], group["score"])
            row[f"{name}_95"] = list(
                percentile_interval(
                    variant_bootstrap(statistic, group["label"], group["score"], seed, n_boot)
                )
            )
        out.append(row)
    return out


def correlation_strata(pairs: pd.DataFrame, by: list[str] = ()) -> list[dict]:
    """Per model, task with quantitative labels, and chromosome, ``consequence`` or ``by`` value:
    n and both correlations."""
    out = []
    frame = quantitative(pairs)
    for column in dict.fromkeys(("chrom", "consequence", *by)):  # each column once
        if column not in frame.columns:
            continue
        present = frame[frame[column].notna()]
        for (model, task, value), group in present.groupby(["model", "task", column], sort=True):
            out.append(
                {
                    "model": model,
                    "task": task,
                    "column": column,
                    "value": str(value),
                    "n": len(group),
                    **{
                        name: statistic(group["label"], group["score"])
                        for name, statistic in CORRELATIONS.items()
                    },
                }
            )
    return out


def markdown(summary: list[dict], strata: list[dict]) -> list[str]:
    """The report.md lines of the section (none without quantitative labels)."""
    if not summary:
        return []

    lines = [
        "",
        "## Variant effect (quantitative labels)",
        "",
        "Correlation of the score (`llr` = LL(ref window) - LL(alt window), `abs_llr` its "
        "absolute value) with each variant's label, with a variant bootstrap 95%. A high "
        "`llr` means the model finds the variant damaging; a label declared `functional` "
        "(`label_direction`: higher is more function) is turned to damaging first, so a model "
        "that ranks variants as the assay does correlates positively, and an undeclared "
        "function score negatively.",
        "",
        "| model | task | score | n | Spearman rho | Pearson r |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['model']} | {r['task']} | {r['score']} | {r['n']} | "
        f"{number_cell(r['spearman'], r['spearman_95'])} | "
        f"{number_cell(r['pearson'], r['pearson_95'])} |"
        for r in summary
    ]
    if strata:
        lines += [
            "",
            "| model | task | column | value | n | Spearman rho | Pearson r |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {s['model']} | {s['task']} | {s['column']} | {s['value']} | {s['n']} | "
            f"{number_cell(s['spearman'])} | {number_cell(s['pearson'])} |"
            for s in strata
        ]
    return lines

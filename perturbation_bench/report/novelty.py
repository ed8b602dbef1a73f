"""Each model read against novelty: does it only prefer the window whose k-mers the genome holds?

Present only when the pairs carry the novelty columns of ``perturbation-bench annotate novelty``
(``dataset/novelty.py``: ``novel_k<K>_original``, ``novel_k<K>_perturbed``, the number of each
window's canonical K-mers absent from the genome). For every paired task, run and K, over the
pairs with both counts, with ``d = novel(perturbed) - novel(original)``:

- accuracy by novelty bin: the pairs binned by ``d`` (:data:`BINS`: ``d <= 0``, ``1-3``,
  ``4-15``, ``16-63``, ``>= 64``), each bin's number of pairs, accuracy and 95% intervals by
  cluster (``summaries.accuracy``: the cluster bootstrap, shown, and Wilson's at the effective
  n, the clusters the report's ``--cluster`` rule draws: a gene's pairs move together);
  a model that only recognises what it has seen is right where ``d`` is large and at chance
  where it is 0;
- the membership floor: the rule "prefer the window with fewer novel k-mers", right on a pair
  when ``novel(original) < novel(perturbed)``, a tie (equal counts) counted as a failure, as a
  model's tie is; its accuracy beside the model's, and the model's accuracy on the pairs the
  rule gets wrong or ties (where membership does not decide), with the same intervals (thin
  under ``summaries.THIN_PAIRS`` pairs or clusters).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from perturbation_bench.pairs.fields import NOVELTY_COLUMN, novelty_columns
from perturbation_bench.report.summaries import accuracy

BINS = ((-math.inf, 0, "<= 0"), (1, 3, "1-3"), (4, 15, "4-15"), (16, 63, "16-63"),
        (64, math.inf, ">= 64"))  # fmt: skip
"""``(lowest, highest, label)`` of each bin of ``d`` (module docstring), both ends included."""


def annotated_ks(pairs: pd.DataFrame) -> list[int]:
    """The k-mer sizes whose novelty columns the pairs carry."""
    found = (NOVELTY_COLUMN.match(column) for column in pairs.columns)
    return sorted({int(m.group(1)) for m in found if m and m.group(2) == "original"})


def _annotated(pairs: pd.DataFrame):
    """``(task, model, k, rows, d)`` per paired task, run and K with annotated pairs."""
    paired = pairs[pairs["score_kind"].isna()] if "score_kind" in pairs else pairs
    for k in annotated_ks(paired):
        original, perturbed = novelty_columns(k)
        if perturbed not in paired:
            continue
        rows = paired.dropna(subset=[original, perturbed])
        for (task, model), group in rows.groupby(["task", "model"], sort=True):
            d = group[perturbed].astype(np.int64) - group[original].astype(np.int64)
            yield task, model, k, group, d


def novelty_bins(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """Accuracy by novelty bin (module docstring), one row per task, run, K and bin."""
    out = []
    for task, model, k, group, d in _annotated(pairs):
        for low, high, label in BINS:
            inside = (d >= low) & (d <= high)
            if inside.any():
                row = {"task": task, "model": model, "k": k, "bin": label}
                out.append(row | accuracy(group.loc[inside], seed, n_boot))
    return out


def membership_floor(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """The membership floor beside each run (module docstring), one row per task, run and K."""
    out = []
    for task, model, k, group, d in _annotated(pairs):
        member_right = d > 0
        model_right = group["correct"] == 1
        out.append(
            {
                "task": task,
                "model": model,
                "k": k,
                "n": len(group),
                "membership_accuracy": float(member_right.mean()),
                "membership_ties": int((d == 0).sum()),
                "model_accuracy": float(model_right.mean()),
                "beyond_membership": accuracy(group.loc[~member_right], seed, n_boot),
            }
        )
    return out


def _cell(part: dict) -> str:
    low, high = part["bootstrap_95"]
    thin = ", thin" if part["thin"] else ""
    return (
        f"{part['pairwise_acc']:.3f} [{low:.3f}, {high:.3f}] ({part['n']}; "
        f"{part['n_clusters']} by {part['cluster_unit']}{thin})"
    )


def markdown(bins: list[dict], floor: list[dict]) -> list[str]:
    """The report's section (nothing when no pair carries novelty columns)."""
    if not bins and not floor:
        return []
    lines = [
        "",
        "## Novelty against the genome",
        "",
        "d = novel k-mers of the perturbed window - of the original (absent from the genome, "
        "`annotate novelty`). Membership floor: prefer the window with fewer novel k-mers, ties "
        "wrong; beyond: the model's accuracy where that rule is wrong or ties. Intervals: 95% "
        "bootstrap over clusters (n; clusters by unit, `--cluster`).",
        "",
        "| model | task | k | n | membership floor (ties) | model acc | beyond membership (n) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in floor:
        lines.append(
            f"| {r['model']} | {r['task']} | {r['k']} | {r['n']} | "
            f"{r['membership_accuracy']:.3f} ({r['membership_ties']}) | "
            f"{r['model_accuracy']:.3f} | {_cell(r['beyond_membership'])} |"
        )
    lines += [
        "",
        "Accuracy by d:",
        "",
        "| model | task | k | d | accuracy (n) |",
        "|---|---|---|---|---|",
    ]
    for r in bins:
        lines.append(f"| {r['model']} | {r['task']} | {r['k']} | {r['bin']} | {_cell(r)} |")
    return lines

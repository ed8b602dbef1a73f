"""Matched-group metrics of labelled variants: match-group accuracy (this project's strict rule,
or TraitGym's under its convention) and the matched-pair leaderboards' pairwise accuracy
(Open-Athena marin-dna), Global and Macro Avg.

For variant tasks whose data carries a ``match_group`` column (TraitGym's ``matched_9`` sets:
each positive with its matched negatives), per model and task, over the labelled variants with
a group, ``s`` each variant's score (``pairs/ranking.py``):

- ``group_accuracy`` (``group_rule: strict``, the default): over the groups holding both
  classes, the share whose top score is a positive's and above every negative's (strictly: a
  tie with a negative counts 0);
- under ``convention: traitgym`` (``group_rule: traitgym``), TraitGym's
  ``Accuracy_by_match_group_weighted_average`` (``workflow/rules/model.smk``): each group's
  accuracy is ``label[argmax(s)]`` over its rows in the data's order (``np.argmax``: the first
  row wins a tie), the groups averaged with weights ``n_group / sum(n)``, its standard error
  the standard deviation (``ddof=1``) of that average over 1,000 resamples of the groups with
  replacement (``bootstrap_se``, seeded 0..999; TraitGym's polars draws differ, its rule does
  not). TraitGym asserts one positive per group; a group with another number is left out and
  counted (``groups_left_out``);
- ``pairwise_acc``: over every (positive, negative) pair of one group, the share with
  ``s(positive) > s(negative)`` (strict), with the binomial (Wald) standard error
  ``sqrt(p (1 - p) / n)``: the "Global" of the leaderboards;
- per ``consequence`` of the positive (or another ``subset`` column), the same accuracy;
  ``macro_avg`` is the unweighted mean over the subsets with at least ``min_subset`` pairs
  (default 30, the leaderboards' rule), its standard error ``sqrt(sum se_i^2) / k``; the
  subsets left out are named with their counts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from perturbation_bench.report.variant_metrics import labelled

MIN_SUBSET = 30


def _pairs(group: pd.DataFrame) -> pd.DataFrame:
    """Every (positive, negative) pair within one match group: their scores and the subset."""
    positives, negatives = group[group["label"]], group[~group["label"]]
    return positives.merge(negatives, on="match_group", suffixes=("_pos", "_neg"))


def _accuracy(correct) -> dict:
    n = len(correct)
    p = float(np.mean(correct)) if n else math.nan
    return {"n_pairs": n, "pairwise_acc": p, "se": math.sqrt(p * (1 - p) / n) if n else math.nan}


def strict_group_accuracy(group: pd.DataFrame) -> dict:
    """The strict rule (module docstring) over one model's rows of one task."""
    tops = []
    for _, members in group.groupby("match_group", sort=True):
        if members["label"].all() or not members["label"].any():
            continue
        best_negative = members.loc[~members["label"], "score"].max()
        tops.append(members.loc[members["label"], "score"].max() > best_negative)
    return {
        "group_rule": "strict",
        "group_accuracy": float(np.mean(tops)) if tops else math.nan,
        "group_accuracy_se": None,
        "groups_left_out": 0,
    }


def traitgym_group_accuracy(group: pd.DataFrame, resamples: int = 1000) -> dict:
    """TraitGym's rule (module docstring) over one model's rows of one task."""
    blocks = []
    for _, members in group.sort_values("doc_id", kind="stable").groupby("match_group"):
        if int(members["label"].sum()) == 1:
            top = int(np.argmax(members["score"].to_numpy()))
            blocks.append((len(members), float(members["label"].iloc[top])))
    n = np.array([size for size, _ in blocks], dtype=float)
    value = np.array([correct for _, correct in blocks], dtype=float)

    def weighted(rows) -> float:
        return float(np.sum(value[rows] * n[rows]) / np.sum(n[rows]))

    draws = [
        weighted(np.random.default_rng(seed).integers(0, len(n), len(n)))
        for seed in range(resamples if len(n) else 0)
    ]
    return {
        "group_rule": "traitgym",
        "group_accuracy": weighted(np.arange(len(n))) if len(n) else math.nan,
        "group_accuracy_se": float(np.std(draws, ddof=1)) if len(draws) > 1 else math.nan,
        "groups_left_out": int(group["match_group"].nunique()) - len(n),
    }


def matched_metrics(
    pairs: pd.DataFrame, subset: str = "consequence", min_subset: int = MIN_SUBSET
) -> list[dict]:
    """Per model and task with match groups, the metrics of the module docstring."""
    rows = labelled(pairs)
    if "match_group" not in rows.columns:
        return []
    rows = rows[rows["match_group"].notna()]
    out = []
    for (model, task), group in rows.groupby(["model", "task"], sort=True):
        matched = _pairs(group)
        if matched.empty:
            continue
        correct = (matched["score_pos"] > matched["score_neg"]).to_numpy()
        traitgym = (group["convention"] == "traitgym").any() if "convention" in group else False
        accuracy = (traitgym_group_accuracy if traitgym else strict_group_accuracy)(group)
        by_subset, kept, left_out = {}, [], {}
        key = f"{subset}_pos"
        if key in matched.columns:
            for name, part in matched.groupby(key, sort=True):
                cell = _accuracy((part["score_pos"] > part["score_neg"]).to_numpy())
                by_subset[str(name)] = cell
                if cell["n_pairs"] >= min_subset:
                    kept.append(cell)
                else:
                    left_out[str(name)] = cell["n_pairs"]
        macro = (
            {
                "pairwise_acc": float(np.mean([c["pairwise_acc"] for c in kept])),
                "se": math.sqrt(sum(c["se"] ** 2 for c in kept)) / len(kept),
                "subsets": len(kept),
            }
            if kept
            else None
        )
        out.append(
            {
                "model": model,
                "task": task,
                "score": str(group["score_kind"].iloc[0]),
                "groups": int(group["match_group"].nunique()),
                **accuracy,
                "global": _accuracy(correct),
                "by_subset": by_subset,
                "macro_avg": macro,
                "subsets_left_out": left_out,
                "min_subset": min_subset,
            }
        )
    return out


def markdown(rows: list[dict]) -> list[str]:
    """The report's section of matched-group metrics (nothing without match groups)."""
    if not rows:
        return []
    lines = [
        "",
        "## Matched groups",
        "",
        "Pairwise accuracy over (positive, matched negative) pairs ± binomial SE; Macro Avg over "
        f"the subsets with at least {rows[0]['min_subset']} pairs; match-group accuracy = share "
        "of groups whose top score is a positive's, above every negative's (strict), or under "
        "the traitgym convention TraitGym's rule: the label of each group's first top-scoring "
        "row, groups weighted by size, ± its bootstrap SE.",
        "",
        "| model | task | score | groups | group accuracy | Global (pairs) | Macro Avg (subsets) | left out |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        glob, macro = r["global"], r["macro_avg"]
        macro_text = (
            f"{macro['pairwise_acc']:.3f} ± {macro['se']:.3f} ({macro['subsets']})"
            if macro
            else "-"
        )
        left = ", ".join(f"{k} ({v})" for k, v in r["subsets_left_out"].items()) or "none"
        lines.append(
            f"| {r['model']} | {r['task']} | {r['score']} | {r['groups']} | "
            f"{_group_text(r)} | {glob['pairwise_acc']:.3f} ± {glob['se']:.3f} "
            f"({glob['n_pairs']}) | {macro_text} | {left} |"
        )
    return lines


def _group_text(row: dict) -> str:
    """The group accuracy cell: its value, and under TraitGym's rule its SE and the rule."""
    if row["group_rule"] != "traitgym":
        return f"{row['group_accuracy']:.3f}"
    return f"{row['group_accuracy']:.3f} ± {row['group_accuracy_se']:.3f} (TraitGym's rule)"

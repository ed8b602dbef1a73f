"""Each model read against its floors: what it knows beyond the k-mer statistics, and beyond
what its architecture and tokenizer give with random weights.

A floor is a run of ``kmer-markov`` (a composition floor), a run with ``random_init=true`` (a
random-weights floor, ``models/random_weights.py``), or any run given with ``--floor``, on the
same pairs (``families.floor_kind``; each row names its floor's kind). For
every task, every floor run ``F`` and every other run ``M`` that scored it, over the pairs both
scored (matched by ``pair_id``):

- paired tasks: ``M``'s accuracy on the pairs ``F`` gets wrong or ties (where composition does
  not decide: the knowledge beyond the floor) and on those ``F`` gets right, each with its
  intervals by cluster (``summaries.accuracy``) and marked thin under ``summaries.THIN_PAIRS``
  pairs; ``M``'s accuracy minus ``F``'s with the paired cluster bootstrap interval and p-value
  (``statistics.paired_cluster_bootstrap``); the exact McNemar p-value of ``M`` against ``F``,
  which takes the pairs as independent (``b`` = pairs ``M`` gets right and ``F`` not, ``c`` the
  reverse); Spearman's rho of ``M``'s margins with ``F``'s (how much ``M`` ranks pairs as
  composition does);
- variant tasks with binary labels: the AUPRC of ``M`` and of ``F`` (``pairs/ranking.auprc`` of
  their scores), and of ``M`` within each quintile of ``F``'s score, where the floor cannot
  rank the variants apart: the variant of 0-based rank ``r`` among ``n`` by ``F``'s score (ties
  in order of ``pair_id``) is in quintile ``floor(5 r / n) + 1``; each quintile with its number
  of variants and positives (one of a single class has NaN).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.ranking import auprc
from perturbation_bench.report.statistics import mcnemar_exact, paired_cluster_bootstrap
from perturbation_bench.report.summaries import accuracy, clusters_of
from perturbation_bench.report.variant_metrics import labelled

QUINTILES = 5


def _matched(pairs: pd.DataFrame):
    """``(task, floor, model, joined)`` per floor and other run of a task, ``joined`` their
    rows by ``pair_id`` (columns suffixed ``_floor`` and ``_model``)."""
    for task, group in pairs.groupby("task", sort=True):
        floors = sorted(group.loc[group["floor"], "model"].unique())
        models = sorted(group.loc[~group["floor"], "model"].unique())
        for floor in floors:
            base = group[group["model"] == floor].set_index("pair_id")
            for model in models:
                other = group[group["model"] == model].set_index("pair_id")
                joined = base.merge(
                    other, left_index=True, right_index=True, suffixes=("_floor", "_model")
                )
                if len(joined):
                    yield task, floor, model, joined.sort_index()


def check_floors_apply(pairs: pd.DataFrame, floors) -> None:
    """Refuse a ``--floor`` run that shares no pair of any task with a run it would floor: it
    would be read against nothing (and drawn alone)."""
    models = pairs[~pairs["floor"]]
    modelled = set(zip(models["task"], models["pair_id"], strict=True))
    for folder in floors:
        rows = pairs[pairs["run"] == str(Path(folder))]
        if not modelled & set(zip(rows["task"], rows["pair_id"], strict=True)):
            tasks = ", ".join(sorted(rows["task"].unique())) or "none"
            others = ", ".join(sorted(models["task"].unique())) or "none"
            raise OptionsError(
                f"--floor {folder}: shares no pair with the other runs (its tasks: {tasks}; "
                f"theirs: {others}); a floor is read against runs that scored the same pairs"
            )


def _side(joined: pd.DataFrame, suffix: str) -> pd.DataFrame:
    """One run's columns of ``joined`` under their own names."""
    columns = [c for c in joined.columns if c.endswith(suffix)]
    return joined[columns].rename(columns=lambda c: c.removesuffix(suffix))


def floor_comparisons(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 2000) -> list[dict]:
    """The paired tasks' rows of the module docstring."""
    from scipy.stats import spearmanr

    out = []
    for task, floor, model, joined in _matched(pairs[pairs["score_kind"].isna()]):
        floor_right = joined["correct_floor"] == 1
        model_right = joined["correct_model"] == 1
        b, c = int((model_right & ~floor_right).sum()), int((~model_right & floor_right).sum())
        rho = (
            spearmanr(joined["margin_model"], joined["margin_floor"])[0]
            if len(joined) > 2
            else math.nan
        )
        rows = _side(joined, "_model")
        unit, clusters = clusters_of(rows)
        diff, low, high, p = paired_cluster_bootstrap(
            joined["correct_model"], joined["correct_floor"], clusters, seed, n_boot
        )
        out.append(
            {
                "task": task,
                "model": model,
                "floor": floor,
                "floor_kind": joined["floor_kind_floor"].iloc[0],
                "n_common": len(joined),
                "floor_accuracy": float(floor_right.mean()),
                "beyond_floor": accuracy(rows[~floor_right.to_numpy()], seed, n_boot),
                "with_floor": accuracy(rows[floor_right.to_numpy()], seed, n_boot),
                "acc_difference": diff,
                "paired_bootstrap_95": [low, high],
                "paired_bootstrap_p": p,
                "cluster_unit": unit,
                "model_right_floor_wrong": b,
                "floor_right_model_wrong": c,
                "mcnemar_exact_p": mcnemar_exact(b, c),
                "margin_spearman": float(rho),
            }
        )
    return out


def floor_variant_comparisons(pairs: pd.DataFrame) -> list[dict]:
    """The variant tasks' rows of the module docstring (binary labels only)."""
    out = []
    for task, floor, model, joined in _matched(labelled(pairs)):
        labels = joined["label_model"]
        ranks = joined["score_floor"].rank(method="first").to_numpy() - 1
        bins = pd.Series(ranks * QUINTILES // len(joined), index=joined.index).astype(int)
        quintiles = [
            {
                "quintile": int(q) + 1,
                "n": int((bins == q).sum()),
                "positives": int(labels[bins == q].sum()),
                "model_auprc": auprc(labels[bins == q], joined.loc[bins == q, "score_model"]),
            }
            for q in sorted(bins.unique())
        ]
        out.append(
            {
                "task": task,
                "model": model,
                "floor": floor,
                "floor_kind": joined["floor_kind_floor"].iloc[0],
                "n_common": len(joined),
                "model_auprc": auprc(labels, joined["score_model"]),
                "floor_auprc": auprc(labels, joined["score_floor"]),
                "by_floor_quintile": quintiles,
            }
        )
    return out


def markdown(paired: list[dict], variants: list[dict]) -> list[str]:
    """The report's section for both tables (nothing when there is no floor)."""
    if not paired and not variants:
        return []
    lines = ["", "## Beyond the floors", ""]
    if paired:
        lines += [
            "Accuracy of each model on the pairs its floor gets wrong or ties (beyond) and on those "
            "it gets right (with), Wilson 95% by cluster; McNemar model vs floor (pairs "
            "independent); Spearman of the margins; model minus floor accuracy, paired cluster "
            "bootstrap 95% and p.",
            "",
            "| model | task | floor | floor acc | beyond (n) | with (n) | McNemar p (pairs "
            "independent) | margin rho | model - floor [95%], p (unit) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in paired:
            cells = []
            for part in (r["beyond_floor"], r["with_floor"]):
                low, high = part["wilson_95"]
                thin = " (thin)" if part["thin"] else ""
                cells.append(
                    f"{part['pairwise_acc']:.3f} [{low:.3f}, {high:.3f}] ({part['n']}){thin}"
                )
            lines.append(
                f"| {r['model']} | {r['task']} | {_floor(r)} | {r['floor_accuracy']:.3f} | "
                f"{cells[0]} | {cells[1]} | {r['mcnemar_exact_p']:.3g} | {r['margin_spearman']:.3f} | "
                f"{_difference_cell(r)} |"
            )
    if variants:
        lines += [
            "",
            "AUPRC of each model, of its floor, and of the model within quintiles of the floor's "
            "score (1 = lowest):",
            "",
            "| model | task | floor | n | model AUPRC | floor AUPRC | by floor quintile |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in variants:
            quintiles = "; ".join(
                f"Q{q['quintile']}: {q['model_auprc']:.3f} ({q['positives']}/{q['n']})"
                for q in r["by_floor_quintile"]
            )
            lines.append(
                f"| {r['model']} | {r['task']} | {_floor(r)} | {r['n_common']} | "
                f"{r['model_auprc']:.3f} | {r['floor_auprc']:.3f} | {quintiles} |"
            )
    return lines


def _difference_cell(row: dict) -> str:
    """``model - floor [low, high], p (unit)`` of a paired row (blank for a row without it)."""
    if "acc_difference" not in row:
        return ""
    low, high = row["paired_bootstrap_95"]
    return (
        f"{row['acc_difference']:+.3f} [{low:+.3f}, {high:+.3f}], "
        f"p {row['paired_bootstrap_p']:.3g} ({row['cluster_unit']})"
    )


def _floor(row: dict) -> str:
    """A floor's cell: its run's name and its kind."""
    return f"{row['floor']} ({row['floor_kind']})"

"""The report's variant section: ranking metrics of the labelled variant tasks, with intervals.

For every model and task whose samples carry a ``label`` (``perturbation_variants`` and built
variant configs), over the labelled variants, with each task's score (``llr`` or ``abs_llr``,
:mod:`perturbation_bench.pairs.ranking`):

- ``auroc``, ``auprc`` with a stratified bootstrap 95% interval (positives and negatives
  resampled separately), ``auroc_by_chrom``, ``auprc_by_chrom`` with a chromosome bootstrap 95%
  interval (``report/statistics.py``), each also with TraitGym's standard error (ddof=1 over
  ``se_boot`` stratified resamples, default 100, and ``se_chrom_boot`` chromosome resamples,
  default 1,000: TraitGym's counts); chromosomes of one class are left out and named, or, where
  the task's ``one_class_chromosomes`` is ``keep`` (the ``traitgym`` convention), kept as TraitGym
  does and named in a note; the task's convention is shown;
- the same four per stratum (``consequence`` and every ``--by`` column), without intervals;
- for every two models on a task, ``AUPRC_a - AUPRC_b`` over the variants both scored (matched
  by ``pair_id``) with a paired stratified bootstrap 95% interval.

And for every task with a ``consequence`` column (labelled or not), the class ladder: pairwise
accuracy (reference preferred) per class with its bootstrap 95% interval and the mean margin,
classes in :data:`LADDER` order (the others after, alphabetically).

Every resampling starts from the variants in one fixed order (by ``pair_id``, the hash of the
two windows), so the report's intervals and errors do not depend on the order of the files' rows.
"""

from __future__ import annotations

import itertools
import math

import pandas as pd

from perturbation_bench.pairs.ranking import METRICS, by_chromosome
from perturbation_bench.report.statistics import (
    bootstrap_interval,
    chromosome_bootstrap,
    paired_stratified_bootstrap_difference,
    percentile_interval,
    standard_error,
    stratified_bootstrap,
)

FEW_CHROMOSOMES = 5
"""A by-chromosome bootstrap over fewer chromosomes than this is flagged as thin."""
LADDER = (
    "intergenic_variant",
    "synonymous_variant",
    "missense_variant",
    "stop_lost",
    "start_lost",
    "splice_acceptor_variant",
    "splice_donor_variant",
    "frameshift_variant",
    "stop_gained",
)
"""From the mildest class to the most disruptive."""


def ladder_order(value: str) -> tuple[int, str]:
    """Sort key: :data:`LADDER` classes in order, the others after them alphabetically."""
    return (LADDER.index(value), "") if value in LADDER else (len(LADDER), value)


def class_ladder(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> list[dict]:
    """Per model, task and consequence class: n, pairwise accuracy, its bootstrap 95%, mean margin
    (of runs that prefer a window: ``make.py`` leaves embedding distances out, which have no
    direction and another unit)."""
    if "consequence" not in pairs.columns:
        return []
    out = []
    present = pairs[pairs["consequence"].notna()]
    for (model, task), group in present.groupby(["model", "task"], sort=True):
        classes = sorted(group["consequence"].unique(), key=ladder_order)
        for consequence in classes:
            rows = group[group["consequence"] == consequence]
            out.append(
                {
                    "model": model,
                    "task": task,
                    "consequence": consequence,
                    "n": len(rows),
                    "pairwise_acc": float(rows["correct"].mean()),
                    "bootstrap_95": list(
                        bootstrap_interval(rows["correct"].to_numpy(), seed=seed, n_boot=n_boot)
                    ),
                    "margin_mean": float(rows["margin"].mean()),
                }
            )
    return out


def labelled(pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``pairs`` with a binary label and no assay (empty if no task has one), in
    ``pair_id`` order (quantitative labels: ``variant_correlations.py``; assays: ``assays.py``)."""
    if "label" not in pairs.columns:
        return pairs.iloc[0:0]
    binary = pairs["labels"] != "quantitative" if "labels" in pairs.columns else True
    rows = pairs[pairs["label"].notna() & binary & pooled(pairs)].assign(
        label=lambda f: f["label"].astype(bool)
    )
    return rows.sort_values("pair_id", kind="stable")


def pooled(pairs: pd.DataFrame):
    """The rows that may be pooled: those of no assay (an assay's are scored apart, ``assays.py``)."""
    return pairs["assay"].isna() if "assay" in pairs.columns else True


def _one_class_rule(group: pd.DataFrame) -> str:
    rules = group["one_class_chromosomes"] if "one_class_chromosomes" in group else []
    return next((rule for rule in rules if rule), "drop")


def _metrics(group: pd.DataFrame) -> dict:
    labels, scores, chroms = list(group["label"]), list(group["score"]), list(group["chrom"])
    out = {name: fn(labels, scores) for name, fn in METRICS.items()}
    for name in METRICS:
        result = by_chromosome(name, labels, scores, chroms, _one_class_rule(group))
        out[f"{name}_by_chrom"] = result.value
        out[f"{name}_by_chrom_rows"] = result.rows
    # one-class chromosomes: the same for both metrics
    out["chromosomes_left_out"], out["chromosomes_kept"] = result.left_out, result.kept
    return out


def ranking_summary(
    pairs: pd.DataFrame,
    seed: int = 0,
    n_boot: int = 1000,
    se_boot: int = 100,
    se_chrom_boot: int = 1000,
) -> list[dict]:
    """Per model and labelled task: the four metrics with their intervals and standard errors
    (module docstring)."""
    out = []
    for (model, task), group in labelled(pairs).groupby(["model", "task"], sort=True):
        values = _metrics(group)
        conventions = group["convention"].dropna() if "convention" in group else []
        row = {
            "model": model,
            "task": task,
            "score": str(group["score_kind"].iloc[0]),
            "convention": next(iter(conventions), None),
            "n": len(group),
            "n_positive": int(group["label"].sum()),
            "chromosomes_left_out": values["chromosomes_left_out"],
            "chromosomes_kept": values["chromosomes_kept"],
            "chromosomes": len(values["auroc_by_chrom_rows"]),
            "se_resamples": se_boot,
            "se_chrom_resamples": se_chrom_boot,
        }
        row["by_chrom_thin"] = row["chromosomes"] < FEW_CHROMOSOMES
        for name, fn in METRICS.items():
            labels, scores = group["label"], group["score"]
            chrom_rows = values[f"{name}_by_chrom_rows"]
            row[name] = values[name]
            row[f"{name}_95"] = list(
                percentile_interval(
                    stratified_bootstrap(fn, labels, scores, seed=seed, n_boot=n_boot)
                )
            )
            row[f"{name}_se"] = standard_error(
                stratified_bootstrap(fn, labels, scores, seed=seed, n_boot=se_boot)
            )
            row[f"{name}_by_chrom"] = values[f"{name}_by_chrom"]
            row[f"{name}_by_chrom_95"] = list(
                percentile_interval(chromosome_bootstrap(chrom_rows, seed=seed, n_boot=n_boot))
            )
            row[f"{name}_by_chrom_se"] = standard_error(
                chromosome_bootstrap(chrom_rows, seed=seed, n_boot=se_chrom_boot)
            )
        out.append(row)
    return out


def ranking_strata(pairs: pd.DataFrame, by: list[str] = ()) -> list[dict]:
    """Per model, labelled task and stratum value (``consequence``, ``by``): the four metrics,
    for the strata that hold both classes of label."""
    out = []
    frame = labelled(pairs)
    for column in dict.fromkeys(("consequence", *by)):  # each column once
        if column not in frame.columns:
            continue
        present = frame[frame[column].notna()]
        for (model, task, value), group in present.groupby(["model", "task", column], sort=True):
            values = _metrics(group)
            if all(math.isnan(values[name]) for name in METRICS):
                continue  # one class of label in the stratum (a scan's classes): nothing to rank
            out.append(
                {
                    "model": model,
                    "task": task,
                    "column": column,
                    "value": str(value),
                    "n": len(group),
                    "n_positive": int(group["label"].sum()),
                    **{
                        k: v
                        for k, v in values.items()
                        if not k.endswith(("_rows", "left_out", "kept"))
                    },
                }
            )
    return out


def auprc_differences(pairs: pd.DataFrame, seed: int = 0, n_boot: int = 1000) -> list[dict]:
    """Every two models on a labelled task: paired AUPRC difference (module docstring)."""
    out = []
    for task, group in labelled(pairs).groupby("task", sort=True):
        tables = {m: g.set_index("pair_id") for m, g in group.groupby("model", sort=True)}
        for a, b in itertools.combinations(sorted(tables), 2):
            common = tables[a].index.intersection(tables[b].index).sort_values()
            labels = tables[a].loc[common, "label"]
            diff, low, high = paired_stratified_bootstrap_difference(
                METRICS["auprc"],
                labels,
                tables[a].loc[common, "score"],
                tables[b].loc[common, "score"],
                seed=seed,
                n_boot=n_boot,
            )
            out.append(
                {
                    "task": task,
                    "model_a": a,
                    "model_b": b,
                    "n_common": len(common),
                    "auprc_difference": diff,
                    "paired_bootstrap_95": [low, high],
                }
            )
    return out


def thin_notes(summary: list[dict]) -> list[str]:
    """A note per by-chromosome interval resampled from fewer than :data:`FEW_CHROMOSOMES`, and
    per task whose one-class chromosomes were kept in the by-chromosome averages."""
    thin = [
        f"{r['model']} {r['task']}: the by-chromosome intervals resample {r['chromosomes']} "
        f"chromosome(s) (fewer than {FEW_CHROMOSOMES}): they say little"
        for r in summary
        if r["by_chrom_thin"]
    ]
    kept = [
        f"{r['model']} {r['task']}: chromosome(s) {', '.join(r['chromosomes_kept'])} hold "
        "variants of one class and are kept in the by-chromosome averages as TraitGym does "
        "(AUPRC 0 for negatives only, 1 for positives only; AUROC counts 0; each with its "
        "weight); one_class_chromosomes: drop leaves them out"
        for r in summary
        if r["chromosomes_kept"]
    ]
    return thin + kept

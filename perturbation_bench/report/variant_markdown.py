"""The Markdown of the variant ranking section (``variant_metrics.py`` computes it): the class
ladder, the ranking metrics with their intervals and standard errors, per stratum, and the
paired AUPRC differences; and :func:`number_cell`, the variant tables' number format.
"""

from __future__ import annotations

import math

from perturbation_bench.report.variant_metrics import FEW_CHROMOSOMES


def number_cell(x, interval=None, se=None) -> str:
    """A table cell: ``x`` to 3 decimals, ``± se`` and ``[low, high]`` where given; ``n/a`` for a
    value that could not be computed."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    text = f"{x:.3f}" + (f" ± {se:.3f}" if se is not None and not math.isnan(se) else "")
    return text + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


def markdown(
    summary: list[dict], strata: list[dict], differences: list[dict], ladder: list[dict]
) -> list[str]:
    """The report.md lines of the variant section (none without variant tasks)."""
    lines = []
    if ladder:
        lines += [
            "",
            "## Class ladder",
            "",
            "Pairwise accuracy (reference window preferred) per consequence class, mildest first.",
            "",
            "| model | task | class | n | pairwise_acc % | bootstrap 95% | margin mean |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['model']} | {r['task']} | {r['consequence']} | {r['n']} | "
            f"{100 * r['pairwise_acc']:.2f} | [{100 * r['bootstrap_95'][0]:.2f}, "
            f"{100 * r['bootstrap_95'][1]:.2f}] | {r['margin_mean']:.3f} |"
            for r in ladder
        ]
        lines += ["", "![class ladder](class_ladder.png)"]
    if not summary:
        return lines

    def thin(row) -> str:
        return f" (thin: {row['chromosomes']} chromosomes)" if row["by_chrom_thin"] else ""

    def metric(row, name):
        return number_cell(row[name], row[f"{name}_95"], row[f"{name}_se"])

    def one_class(row) -> str:
        if row["chromosomes_kept"]:
            return "kept: " + ", ".join(row["chromosomes_kept"])
        return ", ".join(row["chromosomes_left_out"]) or "none"

    lines += [
        "",
        "## Variant effect (labelled variants)",
        "",
        "Score per variant: `llr` = LL(ref window) - LL(alt window), `abs_llr` = its absolute "
        "value. Each metric as value ± TraitGym's standard error (ddof=1; "
        f"{summary[0]['se_resamples']} stratified resamples for AUROC/AUPRC, "
        f"{summary[0]['se_chrom_resamples']} chromosome resamples for the by-chromosome "
        "averages) [95% percentile interval: stratified bootstrap for AUROC/AUPRC, "
        f"chromosome bootstrap for the averages] (thin: fewer than {FEW_CHROMOSOMES} "
        "chromosomes to resample, the by-chromosome figures say little).",
        "",
        "| model | task | score | convention | n (positive) | AUROC | AUPRC | AUROC by chrom | AUPRC by chrom | one-class chromosomes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['model']} | {r['task']} | {r['score']} | {r['convention'] or 'none'} | "
            f"{r['n']} ({r['n_positive']}) | {metric(r, 'auroc')} | {metric(r, 'auprc')} | "
            f"{metric(r, 'auroc_by_chrom')}{thin(r)} | {metric(r, 'auprc_by_chrom')}{thin(r)} | "
            f"{one_class(r)} |"
        )
    if strata:
        lines += [
            "",
            "| model | task | column | value | n (positive) | AUROC | AUPRC |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {s['model']} | {s['task']} | {s['column']} | {s['value']} | {s['n']} "
            f"({s['n_positive']}) | {number_cell(s['auroc'])} | {number_cell(s['auprc'])} |"
            for s in strata
        ]
    if differences:
        lines += [
            "",
            "| task | A | B | common variants | AUPRC A - B | paired bootstrap 95% |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {d['task']} | {d['model_a']} | {d['model_b']} | {d['n_common']} | "
            f"{number_cell(d['auprc_difference'], d['paired_bootstrap_95'])} |"
            for d in differences
        ]
    lines += ["", "![ROC curves](roc.png)", "", "![precision-recall curves](precision_recall.png)"]
    return lines

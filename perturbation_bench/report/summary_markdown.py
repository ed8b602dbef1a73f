"""The Markdown of the measured tables (``summaries.py``): accuracy and margins per model and
task with the mean over tasks, the context-length sweep, the paired comparisons, the strata and
the published reference rows. Each function takes its section's tables from ``report.json`` and
returns its lines (none where the section has nothing to show, as every section's ``markdown``).
"""

from __future__ import annotations

from perturbation_bench.report.summaries import FEW_PAIRS, THIN_PAIRS


def pct(x: float) -> str:
    """A share as a percentage with two decimals."""
    return f"{100 * x:.2f}"


CLUSTER_NOTE = (
    "Both intervals resample clusters of pairs (unit: gene_id, overlapping windows or the pair, "
    "`--cluster`); the design effect is the variance of the mean by cluster over that by pair, "
    "the effective n the pairs over the design effect (never more than the pairs)."
)


def cluster_cells(row: dict) -> str:
    """``unit | clusters | effective n | design effect`` cells of an accuracy row."""
    return (
        f"{row['cluster_unit']} | {row['n_clusters']} | {row['effective_n']:.1f} | "
        f"{row['design_effect']:.2f}"
    )


def interval(bounds) -> str:
    """``[low, high]`` of a share's interval, in percent."""
    return f"[{pct(bounds[0])}, {pct(bounds[1])}]"


def accuracy(summary: list[dict], group_mean: list[dict]) -> list[str]:
    """Accuracy per model and task with both intervals, the margins' Wilcoxon test and
    quantiles, and the unweighted mean over the tasks each model ran."""
    lines = [
        "## Accuracy (measured)",
        "",
        f"Intervals from fewer than {THIN_PAIRS} pairs are marked (thin). {CLUSTER_NOTE}",
        "",
        "| model | task | n | pairwise_acc % | bootstrap 95% | Wilson 95% | tie rate % | margin mean | margin median | unit | clusters | effective n | design effect |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['model']} | {s['task']} | {s['n']}{' (thin)' if s['thin'] else ''} | {pct(s['pairwise_acc'])} | "
            f"{interval(s['bootstrap_95'])} | {interval(s['wilson_95'])} | {pct(s['tie_rate'])} | "
            f"{s['margin_mean']:.3f} | {s['margin_median']:.3f} | {cluster_cells(s)} |"
        )
    lines += [
        "",
        "Margins (LL(original) - LL(perturbed), nats): the Wilcoxon signed-rank test that "
        "they lie above 0 (zero margins dropped) and their quantiles.",
        "",
        "| model | task | n | Wilcoxon W | p (greater) | q5 | q25 | q50 | q75 | q95 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        test = (
            f"{s['wilcoxon_statistic']:.1f} | {s['wilcoxon_p']:.3g}"
            if s["wilcoxon_p"] is not None
            else "n/a (every margin 0) | n/a"
        )
        lines.append(
            f"| {s['model']} | {s['task']} | {s['n']} | {test} | "
            + " | ".join(f"{v:.3f}" for v in s["margin_quantiles"].values())
            + " |"
        )
    lines += ["", "Unweighted mean over the tasks each model ran:", ""]
    return lines + [
        f"- {g['model']}: {pct(g['mean_pairwise_acc'])}% ({', '.join(g['tasks'])})"
        for g in group_mean
    ]


def context_sweep(rows: list[dict]) -> list[str]:
    """Accuracy per context length, and its figure."""
    if not rows:
        return []
    lines = [
        "",
        "## Context-length sweep",
        "",
        "Pairs cropped to L bp around their changes (the `_<L>bp` tasks); the largest L is the whole window.",
        "",
        "| model | config | context (bp) | n | pairwise_acc % | bootstrap 95% |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['model']} | {r['config']} | {r['context_bp']:,} | {r['n']} | "
        f"{pct(r['pairwise_acc'])} | {interval(r['bootstrap_95'])} |"
        for r in rows
    ]
    return lines + ["", "![accuracy against context length](context_sweep.png)"]


def comparisons(rows: list[dict]) -> list[str]:
    """Every two models on a task: the paired difference and McNemar's test."""
    lines = ["", "## Paired comparisons", ""]
    if not rows:
        return lines + ["(one model per task: nothing to compare)"]
    lines += [
        "The paired bootstrap resamples clusters of pairs (the unit, and how many); McNemar's "
        "test takes the pairs as independent.",
        "",
        "| task | A | B | common pairs | only A / only B | A - B (pts) | paired bootstrap 95% | A right, B wrong | B right, A wrong | McNemar exact p (pairs independent) | bootstrap p | unit (clusters) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    return lines + [
        f"| {c['task']} | {c['model_a']} | {c['model_b']} | {c['n_common']} | "
        f"{c['only_in_a']} / {c['only_in_b']} | {pct(c['acc_difference'])} | "
        f"{interval(c['paired_bootstrap_95'])} | {c['a_right_b_wrong']} | "
        f"{c['b_right_a_wrong']} | {c['mcnemar_exact_p']:.3g} | {c['paired_bootstrap_p']:.3g} | "
        f"{c['cluster_unit']} ({c['n_clusters']}) |"
        for c in rows
    ]


def strata(rows: list[dict]) -> list[str]:
    """Accuracy per stratum value, few-pair strata marked (nothing when no pair has a stratum)."""
    if not rows:
        return []
    lines = [
        "",
        "## Strata",
        "",
        f"Strata with fewer than {FEW_PAIRS} pairs are marked (few). {CLUSTER_NOTE}",
        "",
        "| model | task | column | value | n | pairwise_acc % | Wilson 95% | unit | clusters | effective n | design effect |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    return lines + [
        f"| {s['model']} | {s['task']} | {s['column']} | {s['value']} | "
        f"{s['n']}{' (few)' if s['few_pairs'] else ''} | "
        f"{pct(s['pairwise_acc'])} | {interval(s['wilson_95'])} | {cluster_cells(s)} |"
        for s in rows
    ]


def published(reference: dict) -> list[str]:
    """The published numbers, as reference rows (never measured here)."""
    if not reference:
        return []
    lines = [
        "",
        "## Published reference (not measured here)",
        "",
        reference["source"],
        "",
        "| model | motif % | synonymous % |",
        "|---|---|---|",
    ]
    return lines + [
        f"| {r['model']} | {r['motif']:.2f} | {r['synonymous']:.2f} |" for r in reference["rows"]
    ]

"""The report as Markdown (``report.md``): the tables of ``report.json``, then the figures."""

from __future__ import annotations

from perturbation_bench.report import (
    assays,
    floors,
    footprints,
    matched,
    strands,
    variant_correlations,
    variant_metrics,
)
from perturbation_bench.report.summaries import FEW_PAIRS, THIN_PAIRS


def to_markdown(report: dict) -> str:
    """The report as Markdown tables."""

    def pct(x):
        return f"{100 * x:.2f}"

    def interval(pair):
        return f"[{pct(pair[0])}, {pct(pair[1])}]"

    lines = [
        "# perturbation-bench report",
        "",
        "## Accuracy (measured)",
        "",
        f"Intervals from fewer than {THIN_PAIRS} pairs are marked (thin).",
        "",
        "| model | task | n | pairwise_acc % | bootstrap 95% | Wilson 95% | tie rate % | margin mean | margin median |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report["summary"]:
        lines.append(
            f"| {s['model']} | {s['task']} | {s['n']}{' (thin)' if s['thin'] else ''} | {pct(s['pairwise_acc'])} | "
            f"{interval(s['bootstrap_95'])} | {interval(s['wilson_95'])} | {pct(s['tie_rate'])} | "
            f"{s['margin_mean']:.3f} | {s['margin_median']:.3f} |"
        )
    lines += [
        "",
        "Margins (LL(original) - LL(perturbed), nats): the Wilcoxon signed-rank test that "
        "they lie above 0 (zero margins dropped) and their quantiles.",
        "",
        "| model | task | n | Wilcoxon W | p (greater) | q5 | q25 | q50 | q75 | q95 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report["summary"]:
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
    lines += [
        f"- {g['model']}: {pct(g['mean_pairwise_acc'])}% ({', '.join(g['tasks'])})"
        for g in report["group_mean"]
    ]
    if report["context_sweep"]:
        lines += [
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
            for r in report["context_sweep"]
        ]
        lines += ["", "![accuracy against context length](context_sweep.png)"]
    lines += ["", "## Paired comparisons", ""]
    if report["comparisons"]:
        lines += [
            "| task | A | B | common pairs | only A / only B | A - B (pts) | paired bootstrap 95% | A right, B wrong | B right, A wrong | McNemar exact p |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in report["comparisons"]:
            lines.append(
                f"| {c['task']} | {c['model_a']} | {c['model_b']} | {c['n_common']} | "
                f"{c['only_in_a']} / {c['only_in_b']} | {pct(c['acc_difference'])} | "
                f"{interval(c['paired_bootstrap_95'])} | {c['a_right_b_wrong']} | "
                f"{c['b_right_a_wrong']} | {c['mcnemar_exact_p']:.3g} |"
            )
    else:
        lines.append("(one model per task: nothing to compare)")
    lines += [
        "",
        "## Strata",
        "",
        f"Strata with fewer than {FEW_PAIRS} pairs are marked (few).",
        "",
        "| model | task | column | value | n | pairwise_acc % | Wilson 95% |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in report["strata"]:
        few = " (few)" if s["few_pairs"] else ""
        lines.append(
            f"| {s['model']} | {s['task']} | {s['column']} | {s['value']} | {s['n']}{few} | "
            f"{pct(s['pairwise_acc'])} | {interval(s['wilson_95'])} |"
        )
    published = report["published_reference"]
    if published:
        lines += [
            "",
            "## Published reference (not measured here)",
            "",
            published["source"],
            "",
            "| model | motif % | synonymous % |",
            "|---|---|---|",
        ]
        lines += [
            f"| {r['model']} | {r['motif']:.2f} | {r['synonymous']:.2f} |"
            for r in published["rows"]
        ]
    variants = report["variants"]
    lines += floors.markdown(report["floors"]["paired"], report["floors"]["variants"])
    lines += matched.markdown(variants["matched"])
    lines += strands.markdown(variants["strands"])
    lines += footprints.markdown(report["footprints"])
    lines += variant_metrics.markdown(
        variants["summary"],
        variants["strata"],
        variants["auprc_differences"],
        variants["class_ladder"],
    )
    lines += variant_correlations.markdown(variants["correlations"], variants["correlation_strata"])
    lines += assays.markdown(variants.get("assays", []), variants.get("assay_macros", []))
    if any(len(made) > 1 for made in report["provenance"].values()):
        lines += [
            "",
            "## Provenance",
            "",
            "| model | package | scorer | settings | task: data |",
            "|---|---|---|---|---|",
        ]
        for _, made in sorted(report["provenance"].items()):
            model = made.get("model")
            if len(made) == 1:  # no provenance beyond the model's name
                continue
            settings = ", ".join(f"{k}={v}" for k, v in made.get("settings", {}).items())
            tasks = "; ".join(
                f"{task}: {info.get('data')} ({', '.join(f'{k}={v}' for k, v in info.items() if k != 'data')})"
                for task, info in sorted(made.get("tasks", {}).items())
            )
            lines.append(
                f"| {model} | {made.get('version')} | {made.get('scorer')} | {settings} | {tasks} |"
            )
    if report["saturation_maps"]:
        lines += ["", "## Saturation maps", ""]
        lines += [f"![saturation map]({name})" for name in report["saturation_maps"]]
    if report["notes"]:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in report["notes"]]
    lines.append("")
    if report["figures"].get("accuracy"):
        lines += ["![accuracy](accuracy.png)", ""]
    if report["figures"].get("accuracy_by_codons_changed"):
        lines += ["![accuracy by codons changed](accuracy_by_codons_changed.png)", ""]
    lines += ["![margins](margins.png)", ""]
    return "\n".join(lines)

"""Long-range recall in the report: copy advantage against distance, for every model and recall
task (``build recall``), computed from each run's samples with ``kinds/recall/rules.py``:

- per model, task, copy, control and distance: rows, the mean copy advantage
  ``(LL(A | repeat) - LL(A | control)) / target_bp`` in nats per base with its 95% percentile
  bootstrap interval (the report's seed and resamples, over the trials in order), pairwise accuracy
  ``1[LL(A | repeat) > LL(A | control)]`` (strict) and the tie rate (``recall.csv``);
- ``recall.png``: the copy advantage against distance, a line per run (and copy and control
  where they vary), distance on a log axis, the intervals as error bars, 0 as a line.

No distance beyond a model's positions reaches the report: the model refuses it
(``pairs/requests.refuse_cropped_context``) and the run has no row of it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from perturbation_bench.report.statistics import bootstrap_interval

RUN = ["model", "task", "copy", "control"]


def recall_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows of recall samples (those with a distance and a target length), each with its
    ``copy_advantage``."""
    if "target_bp" not in pairs or pairs["target_bp"].isna().all():
        return pairs.iloc[0:0].assign(copy_advantage=[])
    rows = pairs[pairs["target_bp"].notna()].copy()
    rows["copy_advantage"] = rows["margin"] / rows["target_bp"]
    return rows


def recall_table(pairs: pd.DataFrame, seed: int, n_boot: int) -> list[dict]:
    """The rows of ``recall.csv`` (module docstring), by run and distance."""
    rows = recall_pairs(pairs)
    table = []
    for keys, group in rows.groupby([*RUN, "distance"], sort=True):
        group = group.sort_values("trial", kind="stable")  # the resamples read trial order
        low, high = bootstrap_interval(group["copy_advantage"], seed, n_boot)
        table.append(
            {
                **dict(zip([*RUN, "distance"], keys, strict=True)),
                "distance": int(keys[-1]),
                "rows": len(group),
                "copy_advantage": float(group["copy_advantage"].mean()),
                "ci_low": low,
                "ci_high": high,
                "pairwise_acc": float(group["correct"].mean()),
                "tie_rate": float(group["tie"].mean()),
            }
        )
    return table


def section_tables(inputs) -> tuple[list[dict]]:
    """The section's one table (:func:`recall_table`), from the runs that prefer a window."""
    return (recall_table(inputs.preferences, inputs.seed, inputs.n_boot),)


def write_files(out: Path, inputs, table: list[dict]) -> dict[str, bool]:
    """``recall.csv`` and ``recall.png`` (:func:`draw`) into ``out`` where there are rows."""
    if table:
        pd.DataFrame(table).to_csv(out / "recall.csv", index=False)
        draw(table, out / "recall.png")
    return {"recall": bool(table)}


def markdown(table: list[dict]) -> list[str]:
    """The report's section on long-range recall (nothing without recall runs)."""
    if not table:
        return []
    lines = [
        "",
        "## Long-range recall",
        "",
        "Copy advantage = (LL(target | repeat) - LL(target | control)) / target bp, in nats per "
        "base (0: the earlier copy is not used); 95% percentile bootstrap interval; accuracy = "
        "mean of 1[LL(repeat) > LL(control)] (strict). Figure: recall.png.",
        "",
        "| model | task | copy | control | distance (bp) | rows | copy advantage | 95% interval "
        "| accuracy | ties |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['model']} | {r['task']} | {r['copy']} | {r['control']} | {r['distance']} | "
            f"{r['rows']} | {r['copy_advantage']:+.4f} | [{r['ci_low']:+.4f}, "
            f"{r['ci_high']:+.4f}] | {r['pairwise_acc']:.3f} | {r['tie_rate']:.3f} |"
        )
    return lines


def draw(table: list[dict], path) -> None:
    """``recall.png`` (module docstring), by the rules of ``report/plots.py``."""
    from perturbation_bench.report.plots import LAYOUT, MARKERS, SIZE, plt, save_figure

    figure, axes = plt.subplots(figsize=SIZE, layout=LAYOUT)
    frame = pd.DataFrame(table)
    for index, (keys, group) in enumerate(frame.groupby(RUN, sort=True)):
        group = group.sort_values("distance")
        axes.errorbar(
            group["distance"],
            group["copy_advantage"],
            yerr=[
                group["copy_advantage"] - group["ci_low"],
                group["ci_high"] - group["copy_advantage"],
            ],
            marker=MARKERS[index % len(MARKERS)],
            capsize=3,
            label=" ".join(map(str, keys)),
        )
    axes.axhline(0, color="grey", lw=0.8)
    axes.set_xscale("log", base=2)
    axes.set_xlabel("distance between the copy and the target (bp, log scale)")
    axes.set_ylabel("copy advantage (nats per base)")
    axes.set_title("Long-range recall: copy advantage against distance (95% intervals)")
    axes.legend(fontsize="small")
    save_figure(figure, path)

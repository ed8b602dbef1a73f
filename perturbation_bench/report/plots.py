"""The report's figures (PNG, 900 x 500 px; the margins 350 px wide per task when that is more):
accuracy, accuracy by codons changed, margins,
accuracy against context length (the variant tasks' figures are in ``variant_plots.py``).

Rules every figure keeps:

- accuracy bars rise from 0, with the chance level (0.5) drawn as a line, and carry the Wilson
  95% interval, the same interval the table gives for a proportion (so 0 of 24 is drawn as
  [0, 13.8%], not as a point);
- binned plots write each bin's number of pairs beside its point and join two neighbouring bins
  by a line only when both hold at least :data:`MIN_BIN_PAIRS` pairs;
- series that may coincide get their own marker and a small horizontal offset, so none hides
  another;
- causal log-likelihoods (whole sequences), masked marginals (the differing positions only),
  pseudo-log-likelihoods (``scoring=pll``) and embedding scores (``scoring=embedding``) are not
  on one scale: their margins get separate panels;
- every figure says how many pairs each series or bar holds (``n``), counts have whole-number
  ticks, a bar of height 0 carries a marker at 0 so that it is seen, and the layout is
  constrained so that no label or title falls outside the figure.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from perturbation_bench.families import SCORINGS  # noqa: E402
from perturbation_bench.pairs.scores import SCORES  # noqa: E402

SIZE, DPI = (9, 5), 100
PANEL_WIDTH = 3.5
"""Inches per panel of a figure with a panel per task (wider than SIZE when there are many)."""
LAYOUT = "constrained"
"""Matplotlib's layout engine for every figure: titles, labels and legends kept inside."""
CHANCE = 0.5
MIN_BIN_PAIRS = 10
"""Fewest pairs in a bin for a line to join it to its neighbour."""
MARKERS = "osD^vP*X"
OFFSET = 0.06
"""Horizontal offset between series, in units of the gap between two bins."""


def save_figure(figure, path: Path) -> None:
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def draw_chance(axes) -> None:
    axes.axhline(CHANCE, color="black", linestyle="--", linewidth=1, label="chance (0.5)")


def error_bars(rows: list[dict], key: str = "wilson_95") -> list[list[float]]:
    """Matplotlib's ``yerr`` for the ``key`` intervals of ``rows`` (an interval that misses its
    point, as a percentile bootstrap may, gives a zero-length bar on that side)."""
    return [
        [max(0.0, r["pairwise_acc"] - r[key][0]) for r in rows],
        [max(0.0, r[key][1] - r["pairwise_acc"]) for r in rows],
    ]


def accuracy(summary: list[dict], path: Path) -> None:
    """Pairwise accuracy per task (groups) and model (bars) from 0, Wilson 95% bars, chance line."""
    tasks = sorted({s["task"] for s in summary})
    models = sorted({s["model"] for s in summary})
    width = 0.8 / len(models)
    figure, axes = plt.subplots(figsize=SIZE, layout=LAYOUT)
    for m, model in enumerate(models):
        rows = {s["task"]: s for s in summary if s["model"] == model}
        present = [task for task in tasks if task in rows]
        xs = [tasks.index(task) + (m - (len(models) - 1) / 2) * width for task in present]
        drawn = [rows[task] for task in present]
        accuracies = [r["pairwise_acc"] for r in drawn]
        bars = axes.bar(xs, accuracies, width, label=model, yerr=error_bars(drawn), capsize=4)
        colour = bars.patches[0].get_facecolor() if bars.patches else None
        axes.plot(
            xs,
            accuracies,
            linestyle="none",
            marker="o",
            markersize=6,
            color=colour,
            markeredgecolor="black",
            clip_on=False,
            zorder=3,
        )
        for x, r in zip(xs, drawn, strict=True):
            axes.annotate(
                f"n={r['n']}",
                (x, 0.0),
                textcoords="offset points",
                xytext=(0, 6),
                ha="center",
                fontsize="x-small",
            )
    draw_chance(axes)
    axes.set_xticks(range(len(tasks)), [t.removeprefix("perturbation_") for t in tasks])
    axes.set_ylabel("pairwise accuracy (LL original > LL perturbed)")
    axes.set_xlabel("task")
    axes.set_title("Pairwise accuracy with Wilson 95% intervals")
    axes.set_ylim(0.0, 1.0)
    legend_beside(axes)
    save_figure(figure, path)


def legend_beside(axes) -> None:
    """The legend to the right of the axes, where it covers no bar, point or line."""
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def series_offset(index: int, count: int) -> float:
    """Offset of series ``index`` of ``count``, centred on 0, in units of :data:`OFFSET`."""
    return (index - (count - 1) / 2) * OFFSET


def _binned_series(axes, xs, rows: list[dict], index: int, count: int, label: str) -> None:
    """Series ``index`` of ``count`` of a binned plot: points with Wilson bars and their n, a line
    only between neighbouring bins that both hold :data:`MIN_BIN_PAIRS` pairs (module docstring)."""
    shifted = [x + series_offset(index, count) for x in xs]
    marker = MARKERS[index % len(MARKERS)]
    drawn = axes.errorbar(
        shifted,
        [r["pairwise_acc"] for r in rows],
        yerr=error_bars(rows),
        marker=marker,
        linestyle="none",
        capsize=4,
        label=label,
    )
    colour = drawn[0].get_color()
    for k in range(len(rows) - 1):
        joined = xs[k + 1] - xs[k] == 1 and min(rows[k]["n"], rows[k + 1]["n"]) >= MIN_BIN_PAIRS
        if joined:
            axes.plot(
                shifted[k : k + 2],
                [rows[k]["pairwise_acc"], rows[k + 1]["pairwise_acc"]],
                color=colour,
            )
    for x, row in zip(shifted, rows, strict=True):
        axes.annotate(
            f"n={row['n']}",
            (x, row["pairwise_acc"]),
            textcoords="offset points",
            xytext=(6, -10 - 9 * index),
            fontsize="x-small",
            color=colour,
        )


def accuracy_by_codons_changed(strata_rows: list[dict], path: Path) -> None:
    """Accuracy per bin of ``fraction_codons_changed`` (syn tasks), Wilson 95% bars, n per bin."""
    figure, axes = plt.subplots(figsize=SIZE, layout=LAYOUT)
    series = sorted({(s["model"], s["task"]) for s in strata_rows})
    bins = sorted({s["value"] for s in strata_rows})
    for index, (model, task) in enumerate(series):
        rows = {s["value"]: s for s in strata_rows if (s["model"], s["task"]) == (model, task)}
        xs = [i for i, b in enumerate(bins) if b in rows]
        _binned_series(
            axes,
            xs,
            [rows[bins[i]] for i in xs],
            index,
            len(series),
            f"{model} / {task.removeprefix('perturbation_')}",
        )
    draw_chance(axes)
    axes.set_xticks(range(len(bins)), bins)
    axes.set_xlabel("share of codons changed (fraction_codons_changed bin)")
    axes.set_ylabel("pairwise accuracy")
    axes.set_ylim(0.0, 1.0)
    axes.set_title(
        f"Accuracy against share of codons changed (Wilson 95%; lines join bins of >= {MIN_BIN_PAIRS} pairs)"
    )
    axes.legend(fontsize="small")
    save_figure(figure, path)


SCALE_LABELS = {
    **{scoring.scale: scoring.label for scoring in SCORINGS},
    **{score.name: f"{score.name}: {score.formula}" for score in SCORES if score.reading.by_model},
}
"""What a run's margins are, by scale (a score the model computes is its own scale)."""


def margins(pairs, path: Path) -> None:
    """Histograms of LL(original) - LL(perturbed) per model: a row of panels per score scale
    (``pairs["scale"]``: causal, masked or pll), a column per task; a pair without a value
    (NaN: a jsd with no base after its variant) is not drawn, and the legend's n leaves it out."""
    pairs = pairs[np.isfinite(pairs["margin"])]
    tasks = sorted(pairs["task"].unique())
    scales = [s for s in SCALE_LABELS if s in set(pairs["scale"])]
    size = (max(SIZE[0], PANEL_WIDTH * len(tasks)), SIZE[1] * len(scales))  # room for every panel
    figure, panels = plt.subplots(
        len(scales), len(tasks), figsize=size, squeeze=False, layout=LAYOUT
    )
    for row, scale in enumerate(scales):
        for axes, task in zip(panels[row], tasks, strict=True):
            rows = pairs[(pairs["task"] == task) & (pairs["scale"] == scale)]
            if rows.empty:
                axes.set_axis_off()
                continue
            edges = np.histogram_bin_edges(rows["margin"], bins=30)  # shared: models comparable
            for model, group in rows.groupby("model", sort=True):
                axes.hist(group["margin"], bins=edges, alpha=0.5, label=f"{model} (n={len(group)})")
            axes.yaxis.set_major_locator(MaxNLocator(integer=True))
            axes.axvline(0, color="black", linestyle="--", linewidth=1)
            axes.set_title(f"{task.removeprefix('perturbation_')} ({scale})")
            axes.set_xlabel("margin (nats)")
            axes.set_ylabel("pairs")
            axes.legend(fontsize="small")
    figure.suptitle(
        "Margins: LL(original) - LL(perturbed) per pair (right of 0: the model prefers the original)"
    )
    figure.supxlabel(
        "; ".join(f"{scale}: {SCALE_LABELS[scale]}" for scale in scales), fontsize="small"
    )
    save_figure(figure, path)


def context_sweep(rows: list[dict], path: Path) -> None:
    """Accuracy against context length (log x axis): a line per model and config, each with its
    own marker and a small offset, bootstrap 95% intervals as bands, chance line."""
    figure, axes = plt.subplots(figsize=SIZE, layout=LAYOUT)
    keys = sorted({(r["model"], r["config"]) for r in rows})
    for index, (model, config) in enumerate(keys):
        series = sorted(
            (r for r in rows if (r["model"], r["config"]) == (model, config)),
            key=lambda r: r["context_bp"],
        )
        xs = [r["context_bp"] * 2 ** series_offset(index, len(keys)) for r in series]
        sizes = sorted({r["n"] for r in series})
        line = axes.plot(
            xs,
            [r["pairwise_acc"] for r in series],
            marker=MARKERS[index % len(MARKERS)],
            label=f"{Path(model).name} / {config.removeprefix('perturbation_')} "
            f"(n={'/'.join(map(str, sizes))})",
        )
        axes.fill_between(
            xs,
            [r["bootstrap_95"][0] for r in series],
            [r["bootstrap_95"][1] for r in series],
            alpha=0.15,
            color=line[0].get_color(),
        )
    draw_chance(axes)
    axes.set_xscale("log", base=2)
    lengths = sorted({r["context_bp"] for r in rows})
    axes.set_xticks(lengths, [f"{n:,}" for n in lengths])
    axes.set_xlabel("context around the changes (bp, log scale)")
    axes.set_ylabel("pairwise accuracy")
    axes.set_ylim(0.0, 1.0)
    axes.set_title("Accuracy against context length (bootstrap 95% bands)")
    axes.legend(fontsize="small")
    save_figure(figure, path)

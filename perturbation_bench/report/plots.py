"""The report's figures (PNG, 900 x 500 px): accuracy, accuracy by codons changed, margins,
accuracy against context length, and for labelled variant tasks ROC and precision-recall curves.

Rules every figure keeps:

- accuracy bars rise from 0, with the chance level (0.5) drawn as a line, and carry the Wilson
  95% interval, the same interval the table gives for a proportion (so 0 of 24 is drawn as
  [0, 13.8%], not as a point);
- binned plots write each bin's number of pairs beside its point and join two neighbouring bins
  by a line only when both hold at least :data:`MIN_BIN_PAIRS` pairs;
- series that may coincide get their own marker and a small horizontal offset, so none hides
  another;
- causal log-likelihoods (whole sequences) and masked marginals (the differing positions only)
  are not on one scale: their margins get separate panels.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIZE, DPI = (9, 5), 100
CHANCE = 0.5
MIN_BIN_PAIRS = 10
"""Fewest pairs in a bin for a line to join it to its neighbour."""
MARKERS = "osD^vP*X"
OFFSET = 0.06
"""Horizontal offset between series, in units of the gap between two bins."""


def _save(figure, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def _chance(axes) -> None:
    axes.axhline(CHANCE, color="black", linestyle="--", linewidth=1, label="chance (0.5)")


def _error_bars(rows: list[dict], key: str = "wilson_95") -> list[list[float]]:
    """Matplotlib's ``yerr`` for the ``key`` intervals of ``rows``."""
    return [
        [r["pairwise_acc"] - r[key][0] for r in rows],
        [r[key][1] - r["pairwise_acc"] for r in rows],
    ]


def accuracy(summary: list[dict], path: Path) -> None:
    """Pairwise accuracy per task (groups) and model (bars) from 0, Wilson 95% bars, chance line."""
    tasks = sorted({s["task"] for s in summary})
    models = sorted({s["model"] for s in summary})
    width = 0.8 / len(models)
    figure, axes = plt.subplots(figsize=SIZE)
    for m, model in enumerate(models):
        rows = {s["task"]: s for s in summary if s["model"] == model}
        present = [task for task in tasks if task in rows]
        xs = [tasks.index(task) + (m - (len(models) - 1) / 2) * width for task in present]
        drawn = [rows[task] for task in present]
        axes.bar(xs, [r["pairwise_acc"] for r in drawn], width, label=model,
                 yerr=_error_bars(drawn), capsize=4)  # fmt: skip
    _chance(axes)
    axes.set_xticks(range(len(tasks)), [t.removeprefix("perturbation_") for t in tasks])
    axes.set_ylabel("pairwise accuracy (LL original > LL perturbed)")
    axes.set_xlabel("task")
    axes.set_title("Pairwise accuracy with Wilson 95% intervals")
    axes.set_ylim(0.0, 1.0)
    axes.legend(fontsize="small")
    _save(figure, path)


def _shift(index: int, count: int) -> float:
    """Offset of series ``index`` of ``count``, centred on 0, in units of :data:`OFFSET`."""
    return (index - (count - 1) / 2) * OFFSET


def _binned_series(axes, xs, rows: list[dict], index: int, count: int, label: str) -> None:
    """Series ``index`` of ``count`` of a binned plot: points with Wilson bars and their n, a line
    only between neighbouring bins that both hold :data:`MIN_BIN_PAIRS` pairs (module docstring)."""
    shifted = [x + _shift(index, count) for x in xs]
    marker = MARKERS[index % len(MARKERS)]
    drawn = axes.errorbar(shifted, [r["pairwise_acc"] for r in rows], yerr=_error_bars(rows),
                          marker=marker, linestyle="none", capsize=4, label=label)  # fmt: skip
    colour = drawn[0].get_color()
    for k in range(len(rows) - 1):
        joined = xs[k + 1] - xs[k] == 1 and min(rows[k]["n"], rows[k + 1]["n"]) >= MIN_BIN_PAIRS
        if joined:
            axes.plot(shifted[k : k + 2], [rows[k]["pairwise_acc"], rows[k + 1]["pairwise_acc"]],
                      color=colour)  # fmt: skip
    for x, row in zip(shifted, rows):
        axes.annotate(f"n={row['n']}", (x, row["pairwise_acc"]), textcoords="offset points",
                      xytext=(6, -10 - 9 * index), fontsize="x-small", color=colour)  # fmt: skip


def accuracy_by_codons_changed(strata_rows: list[dict], path: Path) -> None:
    """Accuracy per bin of ``fraction_codons_changed`` (syn tasks), Wilson 95% bars, n per bin."""
    figure, axes = plt.subplots(figsize=SIZE)
    series = sorted({(s["model"], s["task"]) for s in strata_rows})
    bins = sorted({s["value"] for s in strata_rows})
    for index, (model, task) in enumerate(series):
        rows = {s["value"]: s for s in strata_rows if (s["model"], s["task"]) == (model, task)}
        xs = [i for i, b in enumerate(bins) if b in rows]
        _binned_series(axes, xs, [rows[bins[i]] for i in xs], index, len(series),
                       f"{model} / {task.removeprefix('perturbation_')}")  # fmt: skip
    _chance(axes)
    axes.set_xticks(range(len(bins)), bins)
    axes.set_xlabel("share of codons changed (fraction_codons_changed bin)")
    axes.set_ylabel("pairwise accuracy")
    axes.set_ylim(0.0, 1.0)
    axes.set_title(
        f"Accuracy against share of codons changed (Wilson 95%; lines join bins of >= {MIN_BIN_PAIRS} pairs)"
    )
    if series:
        axes.legend(fontsize="small")
    else:
        axes.text(0.5, 0.5, "no syn task in these runs", ha="center", transform=axes.transAxes)
    _save(figure, path)


SCALE_LABELS = {
    "causal": "log-likelihood of the whole sequence",
    "masked": "masked marginal over the differing positions",
}


def margins(pairs, path: Path) -> None:
    """Histograms of LL(original) - LL(perturbed) per model: a row of panels per score scale
    (``pairs["scale"]``: causal or masked), a column per task."""
    tasks = sorted(pairs["task"].unique())
    scales = [s for s in SCALE_LABELS if s in set(pairs["scale"])]
    figure, panels = plt.subplots(len(scales), len(tasks), figsize=(SIZE[0], SIZE[1] * len(scales)),
                                  squeeze=False)  # fmt: skip
    for row, scale in enumerate(scales):
        for axes, task in zip(panels[row], tasks):
            rows = pairs[(pairs["task"] == task) & (pairs["scale"] == scale)]
            if rows.empty:
                axes.set_axis_off()
                continue
            edges = np.histogram_bin_edges(rows["margin"], bins=30)  # shared: models comparable
            for model, group in rows.groupby("model", sort=True):
                axes.hist(group["margin"], bins=edges, alpha=0.5, label=model)
            axes.axvline(0, color="black", linestyle="--", linewidth=1)
            axes.set_title(f"{task.removeprefix('perturbation_')} ({scale})")
            axes.set_xlabel(f"margin (nats; {SCALE_LABELS[scale]})")
            axes.set_ylabel("pairs")
            axes.legend(fontsize="small")
    figure.suptitle(
        "Margins: LL(original) - LL(perturbed) per pair (right of 0: the model prefers the original)"
    )
    _save(figure, path)


def context_sweep(rows: list[dict], path: Path) -> None:
    """Accuracy against context length (log x axis): a line per model and config, each with its
    own marker and a small offset, bootstrap 95% intervals as bands, chance line."""
    figure, axes = plt.subplots(figsize=SIZE)
    keys = sorted({(r["model"], r["config"]) for r in rows})
    for index, (model, config) in enumerate(keys):
        series = sorted((r for r in rows if (r["model"], r["config"]) == (model, config)),
                        key=lambda r: r["context_bp"])  # fmt: skip
        xs = [r["context_bp"] * 2 ** _shift(index, len(keys)) for r in series]
        line = axes.plot(xs, [r["pairwise_acc"] for r in series],
                         marker=MARKERS[index % len(MARKERS)],
                         label=f"{Path(model).name} / {config.removeprefix('perturbation_')}")  # fmt: skip
        axes.fill_between(xs, [r["bootstrap_95"][0] for r in series],
                          [r["bootstrap_95"][1] for r in series], alpha=0.15,
                          color=line[0].get_color())  # fmt: skip
    _chance(axes)
    axes.set_xscale("log", base=2)
    lengths = sorted({r["context_bp"] for r in rows})
    axes.set_xticks(lengths, [f"{n:,}" for n in lengths])
    axes.set_xlabel("context around the changes (bp, log scale)")
    axes.set_ylabel("pairwise accuracy")
    axes.set_ylim(0.0, 1.0)
    axes.set_title("Accuracy against context length (bootstrap 95% bands)")
    axes.legend(fontsize="small")
    _save(figure, path)


def ranking_curves(labelled, roc_path: Path, pr_path: Path) -> None:
    """ROC and precision-recall curves of the labelled variants (``labelled``: rows with
    ``label`` and ``score``): one figure each, a panel per task, a line per model with its
    own marker; chance is the diagonal (ROC) and the share of positives (precision-recall)."""
    from sklearn.metrics import precision_recall_curve, roc_curve

    tasks = sorted(labelled["task"].unique())
    for path, kind in ((roc_path, "roc"), (pr_path, "pr")):
        figure, panels = plt.subplots(1, len(tasks), figsize=SIZE, squeeze=False)
        for axes, task in zip(panels[0], tasks):
            rows = labelled[labelled["task"] == task]
            for index, (model, group) in enumerate(rows.groupby("model", sort=True)):
                if group["label"].nunique() < 2:
                    continue
                if kind == "roc":
                    x, y, _ = roc_curve(group["label"], group["score"])
                else:
                    y, x, _ = precision_recall_curve(group["label"], group["score"])
                axes.plot(x, y, marker=MARKERS[index % len(MARKERS)], markevery=0.1,
                          label=Path(model).name)  # fmt: skip
            if kind == "roc":
                axes.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="chance")
                axes.set_xlabel("false positive rate")
                axes.set_ylabel("true positive rate")
            else:
                axes.axhline(rows["label"].mean(), color="black", linestyle="--", linewidth=1,
                             label=f"chance ({rows['label'].mean():.2f} positive)")  # fmt: skip
                axes.set_xlabel("recall")
                axes.set_ylabel("precision")
            axes.set_xlim(0, 1)
            axes.set_ylim(0, 1.02)
            axes.set_title(task.removeprefix("perturbation_"))
            axes.legend(fontsize="small")
        figure.suptitle("ROC curves" if kind == "roc" else "Precision-recall curves")
        _save(figure, path)


def class_ladder(rows: list[dict], order: list[str], path: Path) -> None:
    """Per consequence class in ``order`` (mildest first): pairwise accuracy with bootstrap 95%
    bars (left, chance line) and the mean margin (right, zero line); a line per model and task,
    each with its own marker and a small offset."""
    keys = sorted({(r["model"], r["task"]) for r in rows})
    figure, (left, right) = plt.subplots(1, 2, figsize=SIZE)
    for index, (model, task) in enumerate(keys):
        series = {r["consequence"]: r for r in rows if (r["model"], r["task"]) == (model, task)}
        present = [c for c in order if c in series]
        xs = [order.index(c) + _shift(index, len(keys)) for c in present]
        drawn = [series[c] for c in present]
        marker = MARKERS[index % len(MARKERS)]
        label = f"{Path(model).name} / {task.removeprefix('perturbation_')}"
        left.errorbar(xs, [r["pairwise_acc"] for r in drawn], marker=marker, capsize=4, label=label,
                      yerr=_error_bars(drawn, "bootstrap_95"))  # fmt: skip
        right.plot(xs, [r["margin_mean"] for r in drawn], marker=marker, label=label)
    _chance(left)
    right.axhline(0, color="black", linestyle="--", linewidth=1)
    for axes in (left, right):
        axes.set_xticks(range(len(order)), [c.removesuffix("_variant") for c in order],
                        rotation=45, ha="right")  # fmt: skip
        axes.set_xlabel("consequence class (mildest first)")
    left.set_ylim(0.0, 1.0)
    left.set_ylabel("pairwise accuracy (reference preferred)")
    right.set_ylabel("mean margin LL(ref) - LL(alt) (nats)")
    left.legend(fontsize="small")
    figure.suptitle("Class ladder (bootstrap 95% intervals)")
    _save(figure, path)


def _bare(chrom) -> str:
    """A chromosome name without its ``chr`` prefix, to match a table to an annotation."""
    text = str(chrom)
    return text[3:] if text.lower().startswith("chr") else text


def saturation_map(rows, region: str, path: Path, features=()) -> None:
    """One region of a saturation scan: a panel per model with positions along x, the four bases
    along y and colour = LLR = LL(alt) - LL(ref) (the reference base left blank), the reference
    sequence as tick labels where it fits, the per-position mean LLR as a track, and the
    annotated CDS exons that overlap (``features``: ``(chrom, start0, end0)``) under it. Written
    as PNG and SVG (``path`` with either suffix)."""
    from matplotlib.colors import TwoSlopeNorm

    rows = rows.assign(llr=-rows["margin"])
    positions = sorted(rows["pos"].unique())
    models = sorted(rows["model"].unique())
    reference = rows.drop_duplicates("pos").set_index("pos")["ref"].reindex(positions)
    limit = float(rows["llr"].abs().max()) or 1.0
    figure, panels = plt.subplots(2 * len(models), 1, figsize=(SIZE[0], 2.6 * len(models) + 0.6),
                                  gridspec_kw={"height_ratios": [3, 1] * len(models)},
                                  squeeze=False)  # fmt: skip
    chrom = str(rows["chrom"].iloc[0])
    for index, model in enumerate(models):
        heat, track = panels[2 * index][0], panels[2 * index + 1][0]
        mine = rows[rows["model"] == model]
        grid = np.full((4, len(positions)), np.nan)
        for pos, alt, llr in zip(mine["pos"], mine["alt"], mine["llr"]):
            grid["ACGT".index(alt), positions.index(pos)] = llr
        image = heat.imshow(grid, aspect="auto", cmap="RdBu_r", interpolation="nearest",
                            norm=TwoSlopeNorm(0.0, -limit, limit))  # fmt: skip
        heat.set_yticks(range(4), list("ACGT"))
        heat.set_title(f"{Path(model).name}: {region}", fontsize="small")
        figure.colorbar(image, ax=heat, label="LLR = LL(alt) - LL(ref)")
        mean = mine.groupby("pos")["llr"].mean().reindex(positions)
        track.bar(range(len(positions)), mean.to_numpy(), color="grey", width=1.0)
        track.axhline(0, color="black", linewidth=0.5)
        track.set_ylabel("mean LLR", fontsize="x-small")
        track.set_xlim(-0.5, len(positions) - 0.5)
        for feature_chrom, start, end in features:
            if _bare(feature_chrom) != _bare(chrom):
                continue
            inside = [i for i, pos in enumerate(positions) if start < pos <= end]  # pos 1-based
            if inside:
                track.axvspan(inside[0] - 0.5, inside[-1] + 0.5, color="orange", alpha=0.25,
                              label="CDS exon" if not track.get_legend_handles_labels()[1] else None)  # fmt: skip
        if track.get_legend_handles_labels()[1]:
            track.legend(fontsize="x-small", loc="upper right")
        ticks = range(len(positions)) if len(positions) <= 120 else range(0, len(positions), max(1, len(positions) // 10))
        labels = [reference[positions[i]] for i in ticks] if len(positions) <= 120 else [f"{positions[i]:,}" for i in ticks]
        track.set_xticks(list(ticks), labels, fontsize="xx-small" if len(positions) > 60 else "small")
        heat.set_xticks([])
    figure.suptitle(f"Saturation map, {chrom}:{positions[0]:,}-{positions[-1]:,} (reference bases below)")
    figure.tight_layout()
    for suffix in (".png", ".svg"):
        figure.savefig(Path(path).with_suffix(suffix), dpi=DPI)
    plt.close(figure)

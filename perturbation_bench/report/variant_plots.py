"""The report's figures of variant tasks: ROC and precision-recall curves of labelled variants
(each model's AUROC or AUPRC in its legend, as ``pairs/ranking.py`` computes them), scatters of
the score against quantitative labels (Spearman's rho in the legend), the class ladder of
mutation scans, and saturation maps; they keep the rules of ``plots.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perturbation_bench.dna import BASES
from perturbation_bench.report.plots import (
    DPI,
    LAYOUT,
    MARKERS,
    SIZE,
    draw_chance,
    error_bars,
    plt,
    save_figure,
    series_offset,
)

REFERENCE_COLOUR = "0.6"
"""The saturation map's reference-base cells: grey, not the white of a change with LLR 0."""


def ranking_curves(labelled, roc_path: Path, pr_path: Path) -> None:
    """ROC and precision-recall curves of the labelled variants (``labelled``: rows with
    ``label`` and ``score``): one figure each, a panel per task, a line per model with its
    own marker; chance is the diagonal (ROC) and the share of positives (precision-recall)."""
    from sklearn.metrics import precision_recall_curve, roc_curve

    from perturbation_bench.pairs.ranking import auprc, auroc

    tasks = sorted(labelled["task"].unique())
    for path, kind in ((roc_path, "roc"), (pr_path, "pr")):
        figure, panels = plt.subplots(1, len(tasks), figsize=SIZE, squeeze=False, layout=LAYOUT)
        for axes, task in zip(panels[0], tasks, strict=True):
            rows = labelled[labelled["task"] == task]
            for index, (model, group) in enumerate(rows.groupby("model", sort=True)):
                if group["label"].nunique() < 2:
                    continue
                if kind == "roc":
                    x, y, _ = roc_curve(group["label"], group["score"])
                    area = f"AUROC {auroc(group['label'], group['score']):.3f}"
                else:
                    y, x, _ = precision_recall_curve(group["label"], group["score"])
                    area = f"AUPRC {auprc(group['label'], group['score']):.3f}"
                axes.plot(
                    x,
                    y,
                    marker=MARKERS[index % len(MARKERS)],
                    markevery=0.1,
                    label=f"{Path(model).name} ({area}; n={len(group)}, "
                    f"{int(group['label'].sum())} positive)",
                )
            if kind == "roc":
                axes.plot(
                    [0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="chance"
                )
                axes.set_xlabel("false positive rate")
                axes.set_ylabel("true positive rate")
            else:
                axes.axhline(
                    rows["label"].mean(),
                    color="black",
                    linestyle="--",
                    linewidth=1,
                    label=f"chance ({rows['label'].mean():.2f} positive)",
                )
                axes.set_xlabel("recall")
                axes.set_ylabel("precision")
            axes.set_xlim(0, 1)
            axes.set_ylim(0, 1.02)
            axes.set_title(task.removeprefix("perturbation_"))
            axes.legend(fontsize="small")
        figure.suptitle("ROC curves" if kind == "roc" else "Precision-recall curves")
        save_figure(figure, path)


def score_against_label(quantitative, path: Path) -> None:
    """The score of each variant against its quantitative label (``quantitative``: rows with
    ``task``, ``model``, ``label`` and ``score``): a panel per task, a marker per model, its
    Spearman's rho (``pairs/ranking.py``) and n in the legend."""
    from perturbation_bench.pairs.ranking import spearman

    tasks = sorted(quantitative["task"].unique())
    figure, panels = plt.subplots(1, len(tasks), figsize=SIZE, squeeze=False, layout=LAYOUT)
    for axes, task in zip(panels[0], tasks, strict=True):
        rows = quantitative[quantitative["task"] == task]
        for index, (model, group) in enumerate(rows.groupby("model", sort=True)):
            axes.scatter(
                group["label"],
                group["score"],
                s=12,
                alpha=0.6,
                marker=MARKERS[index % len(MARKERS)],
                label=f"{Path(model).name} (rho {spearman(group['label'], group['score']):.3f}; "
                f"n={len(group)})",
            )
        axes.set_xlabel("label")
        axes.set_ylabel(
            f"score ({rows['score_kind'].iloc[0]})" if "score_kind" in rows else "score"
        )
        axes.set_title(task.removeprefix("perturbation_"))
        axes.legend(fontsize="small")
    figure.suptitle("Score against quantitative label (Spearman's rho)")
    save_figure(figure, path)


def class_ladder(rows: list[dict], order: list[str], path: Path) -> None:
    """Per consequence class in ``order`` (mildest first): pairwise accuracy with bootstrap 95%
    bars (left, chance line) and the mean margin (right, zero line); a line per model and task,
    each with its own marker and a small offset."""
    keys = sorted({(r["model"], r["task"]) for r in rows})
    figure, (left, right) = plt.subplots(1, 2, figsize=SIZE, layout=LAYOUT)
    for index, (model, task) in enumerate(keys):
        series = {r["consequence"]: r for r in rows if (r["model"], r["task"]) == (model, task)}
        present = [c for c in order if c in series]
        xs = [order.index(c) + series_offset(index, len(keys)) for c in present]
        drawn = [series[c] for c in present]
        marker = MARKERS[index % len(MARKERS)]
        label = f"{Path(model).name} / {task.removeprefix('perturbation_')}"
        points = left.errorbar(
            xs,
            [r["pairwise_acc"] for r in drawn],
            marker=marker,
            capsize=4,
            label=label,
            yerr=error_bars(drawn, "bootstrap_95"),
        )
        for x, r in zip(xs, drawn, strict=True):
            left.annotate(
                f"n={r['n']}",
                (x, r["pairwise_acc"]),
                textcoords="offset points",
                xytext=(6, -10 - 9 * index),
                fontsize="x-small",
                color=points[0].get_color(),
            )
        right.plot(xs, [r["margin_mean"] for r in drawn], marker=marker, label=label)
    draw_chance(left)
    right.axhline(0, color="black", linestyle="--", linewidth=1)
    for axes in (left, right):
        axes.set_xticks(
            range(len(order)), [c.removesuffix("_variant") for c in order], rotation=45, ha="right"
        )
        axes.set_xlabel("consequence class (mildest first)")
    left.set_ylim(0.0, 1.0)
    left.set_ylabel("pairwise accuracy (reference preferred)")
    right.set_ylabel("mean margin LL(ref) - LL(alt) (nats)")
    left.legend(fontsize="small")
    figure.suptitle("Class ladder (bootstrap 95% intervals)")
    save_figure(figure, path)


def _bare(chrom) -> str:
    """A chromosome name without its ``chr`` prefix, to match a table to an annotation."""
    text = str(chrom)
    return text[3:] if text.lower().startswith("chr") else text


def saturation_map(rows, region: str, path: Path, features=()) -> None:
    """One region of a saturation scan: a panel per model with positions along x, the four bases
    along y and colour = LLR = LL(alt) - LL(ref) (the reference base grey, apart from the white of
    a neutral change), the reference
    sequence as tick labels where it fits, the per-position mean LLR as a track, and the
    annotated CDS exons that overlap (``features``: ``(chrom, start0, end0)``) under it. Written
    as PNG and SVG (``path`` with either suffix)."""
    from matplotlib.colors import TwoSlopeNorm

    rows = rows.assign(llr=-rows["margin"])
    positions = sorted(rows["pos"].unique())
    models = sorted(rows["model"].unique())
    reference = rows.drop_duplicates("pos").set_index("pos")["ref"].reindex(positions)
    limit = float(rows["llr"].abs().max()) or 1.0
    figure, panels = plt.subplots(
        2 * len(models),
        1,
        figsize=(SIZE[0], 2.6 * len(models) + 0.6),
        gridspec_kw={"height_ratios": [3, 1] * len(models)},
        squeeze=False,
        layout=LAYOUT,
    )
    chrom = str(rows["chrom"].iloc[0])
    for index, model in enumerate(models):
        heat, track = panels[2 * index][0], panels[2 * index + 1][0]
        mine = rows[rows["model"] == model]
        grid = np.full((4, len(positions)), np.nan)
        for pos, alt, llr in zip(mine["pos"], mine["alt"], mine["llr"], strict=True):
            grid[BASES.index(alt), positions.index(pos)] = llr
        colours = plt.get_cmap("RdBu_r").with_extremes(bad=REFERENCE_COLOUR)
        image = heat.imshow(
            grid,
            aspect="auto",
            cmap=colours,
            interpolation="nearest",
            norm=TwoSlopeNorm(0.0, -limit, limit),
        )
        heat.set_yticks(range(4), list(BASES))
        heat.set_title(
            f"{Path(model).name}: {region}, n={len(mine)} variants (grey: the reference base)",
            fontsize="small",
        )
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
                track.axvspan(
                    inside[0] - 0.5,
                    inside[-1] + 0.5,
                    color="orange",
                    alpha=0.25,
                    label="CDS exon" if not track.get_legend_handles_labels()[1] else None,
                )
        if track.get_legend_handles_labels()[1]:
            track.legend(fontsize="x-small", loc="upper right")
        ticks = (
            range(len(positions))
            if len(positions) <= 120
            else range(0, len(positions), max(1, len(positions) // 10))
        )
        labels = (
            [reference[positions[i]] for i in ticks]
            if len(positions) <= 120
            else [f"{positions[i]:,}" for i in ticks]
        )
        track.set_xticks(
            list(ticks), labels, fontsize="xx-small" if len(positions) > 60 else "small"
        )
        heat.set_xticks([])
    figure.suptitle(
        f"Saturation map, {chrom}:{positions[0]:,}-{positions[-1]:,} (reference bases below)"
    )
    for suffix in (".png", ".svg"):
        figure.savefig(Path(path).with_suffix(suffix), dpi=DPI)
    plt.close(figure)

"""The report's figures (PNG, 900 x 500 px): accuracy, accuracy by codons changed, margins, and
accuracy against context length.

Accuracy axes are drawn from the chance level (0.5): bars rise above it or fall below it.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIZE, DPI = (9, 5), 100
CHANCE = 0.5


def _save(figure, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def accuracy(summary: list[dict], path: Path) -> None:
    """Pairwise accuracy per task (groups) and model (bars), bootstrap 95% bars, chance line."""
    tasks = sorted({s["task"] for s in summary})
    models = sorted({s["model"] for s in summary})
    width = 0.8 / len(models)
    figure, axes = plt.subplots(figsize=SIZE)
    for m, model in enumerate(models):
        rows = {s["task"]: s for s in summary if s["model"] == model}
        present = [task for task in tasks if task in rows]
        xs = [tasks.index(task) + (m - (len(models) - 1) / 2) * width for task in present]
        acc = [rows[task]["pairwise_acc"] for task in present]
        errors = [[a - rows[t]["bootstrap_95"][0] for a, t in zip(acc, present)],
                  [rows[t]["bootstrap_95"][1] - a for a, t in zip(acc, present)]]  # fmt: skip
        axes.bar(xs, [a - CHANCE for a in acc], width, bottom=CHANCE, label=model,
                 yerr=errors, capsize=4)  # fmt: skip
    axes.axhline(CHANCE, color="black", linestyle="--", linewidth=1, label="chance (0.5)")
    axes.set_xticks(range(len(tasks)), [t.removeprefix("perturbation_") for t in tasks])
    axes.set_ylabel("pairwise accuracy (LL original > LL perturbed)")
    axes.set_xlabel("task")
    axes.set_title("Pairwise accuracy with bootstrap 95% intervals")
    bottom = min([CHANCE - 0.05] + [s["bootstrap_95"][0] - 0.02 for s in summary])
    axes.set_ylim(max(0.0, bottom), 1.0)
    axes.legend(fontsize="small")
    _save(figure, path)


def accuracy_by_codons_changed(strata_rows: list[dict], path: Path) -> None:
    """Accuracy per bin of ``fraction_codons_changed`` (syn tasks), Wilson 95% bars."""
    figure, axes = plt.subplots(figsize=SIZE)
    series = sorted({(s["model"], s["task"]) for s in strata_rows})
    bins = sorted({s["value"] for s in strata_rows})
    for model, task in series:
        rows = {s["value"]: s for s in strata_rows if (s["model"], s["task"]) == (model, task)}
        xs = [i for i, b in enumerate(bins) if b in rows]
        acc = [rows[bins[i]]["pairwise_acc"] for i in xs]
        errors = [[a - rows[bins[i]]["wilson_95"][0] for a, i in zip(acc, xs)],
                  [rows[bins[i]]["wilson_95"][1] - a for a, i in zip(acc, xs)]]  # fmt: skip
        axes.errorbar(xs, acc, yerr=errors, marker="o", capsize=4,
                      label=f"{model} / {task.removeprefix('perturbation_')}")  # fmt: skip
    axes.axhline(CHANCE, color="black", linestyle="--", linewidth=1, label="chance (0.5)")
    axes.set_xticks(range(len(bins)), bins)
    axes.set_xlabel("share of codons changed (fraction_codons_changed bin)")
    axes.set_ylabel("pairwise accuracy")
    axes.set_ylim(0.0, 1.0)
    axes.set_title("Accuracy against share of codons changed (Wilson 95% intervals)")
    if series:
        axes.legend(fontsize="small")
    else:
        axes.text(0.5, 0.5, "no syn task in these runs", ha="center", transform=axes.transAxes)
    _save(figure, path)


def margins(pairs, path: Path) -> None:
    """Histograms of LL(original) - LL(perturbed) per model, one panel per task."""
    tasks = sorted(pairs["task"].unique())
    figure, panels = plt.subplots(1, len(tasks), figsize=SIZE, squeeze=False)
    for axes, task in zip(panels[0], tasks):
        rows = pairs[pairs["task"] == task]
        edges = np.histogram_bin_edges(rows["margin"], bins=30)  # shared: models comparable
        for model, group in rows.groupby("model", sort=True):
            axes.hist(group["margin"], bins=edges, alpha=0.5, label=model)
        axes.axvline(0, color="black", linestyle="--", linewidth=1)
        axes.set_title(task.removeprefix("perturbation_"))
        axes.set_xlabel("margin (nats)")
        axes.set_ylabel("pairs")
        axes.legend(fontsize="small")
    figure.suptitle(
        "Margins: LL(original) - LL(perturbed) per pair (right of 0: the model prefers the original)"
    )
    _save(figure, path)


def context_sweep(rows: list[dict], path: Path) -> None:
    """Accuracy against context length (log x axis): a line per model and config, bootstrap 95%
    intervals as bands, chance line."""
    figure, axes = plt.subplots(figsize=SIZE)
    for model, config in sorted({(r["model"], r["config"]) for r in rows}):
        series = sorted((r for r in rows if (r["model"], r["config"]) == (model, config)),
                        key=lambda r: r["context_bp"])  # fmt: skip
        xs = [r["context_bp"] for r in series]
        line = axes.plot(xs, [r["pairwise_acc"] for r in series], marker="o",
                         label=f"{Path(model).name} / {config.removeprefix('perturbation_')}")  # fmt: skip
        axes.fill_between(xs, [r["bootstrap_95"][0] for r in series],
                          [r["bootstrap_95"][1] for r in series], alpha=0.15,
                          color=line[0].get_color())  # fmt: skip
    axes.axhline(CHANCE, color="black", linestyle="--", linewidth=1, label="chance (0.5)")
    axes.set_xscale("log", base=2)
    lengths = sorted({r["context_bp"] for r in rows})
    axes.set_xticks(lengths, [f"{n:,}" for n in lengths])
    axes.set_xlabel("context around the changes (bp, log scale)")
    axes.set_ylabel("pairwise accuracy")
    axes.set_ylim(0.0, 1.0)
    axes.set_title("Accuracy against context length (bootstrap 95% bands)")
    axes.legend(fontsize="small")
    _save(figure, path)

"""A leaderboard over many runs: one row per run identity, one column per task.

Each run folder (an ``lm_eval --output_path``) is read once: its newest ``results_*.json`` only,
never its samples, so hundreds of runs cost hundreds of small reads. Per task the cell is the
task's headline metric as lm-eval wrote it, with the interval ``value -/+ 1.96 x stderr`` when
lm-eval wrote a standard error:

    auprc          variant tasks with binary labels (TraitGym's headline)
    spearman       variant tasks with quantitative labels
    pairwise_acc   every other task

A row is named as the report names it (``run_names.py``: the model and what tells it apart from
the other runs of that model), from the identity the results file records (the lm-eval model,
its arguments, this package's scorer and task settings). Per task the runs are ranked (1 =
best, ties share the best rank; by the value, and by ``|rho|`` for ``spearman``, whose sign
depends on what the label measures); a row's mean rank is over the tasks it ran. Two folders with
one identity are refused: a leaderboard row is one run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.report.run_names import identity, run_names
from perturbation_bench.report.runs import parse_model_args

HEADLINES = ("auprc", "spearman", "pairwise_acc")
"""The headline metric of a task: the first of these its results hold (module docstring)."""
Z = 1.959963984540054


def read_results(folder: str | Path) -> dict:
    """The newest readable ``results_*.json`` below ``folder``.

    Raises:
        DataSourceError: none there, or none readable.
    """
    found = sorted(Path(folder).rglob("results_*.json"), reverse=True)
    for path in found:
        try:
            return json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
    raise DataSourceError(
        f"{folder}: no readable results_*.json (an lm_eval --output_path folder?)"
        if not found
        else f"{folder}: none of its {len(found)} results files is readable JSON"
    )


def headline(results: dict) -> tuple[str, float, float | None] | None:
    """``(metric, value, stderr)`` of one task's results (module docstring); None without any."""
    for metric in HEADLINES:
        value = results.get(f"{metric},pairs")
        if isinstance(value, (int, float)) and not math.isnan(value):
            stderr = results.get(f"{metric}_stderr,pairs")
            numeric = isinstance(stderr, (int, float)) and not math.isnan(stderr)
            return metric, float(value), float(stderr) if numeric else None
    return None


def _run_entry(folder: str | Path) -> dict:
    """What one folder contributes: its name's pieces and its tasks' headline cells."""
    data = read_results(folder)
    config = data.get("config") or {}
    provenance = config.get("perturbation_bench") or {}
    model_args = parse_model_args(config.get("model_args"))
    cells = {
        task: cell
        for task, results in sorted((data.get("results") or {}).items())
        if task.startswith("perturbation_") and (cell := headline(results)) is not None
    }
    if not cells:
        raise DataValidationError(f"{folder}: its results hold no perturbation-bench task")
    base = model_args.get("pretrained") or config.get("model") or Path(folder).name
    return {
        "folder": str(folder),
        "base": str(base),
        "identity": identity(
            config.get("model"),
            model_args,
            provenance.get("settings") or {},
            provenance.get("tasks") or {},
        ),
        "shards": {},
        "cells": cells,
    }


def leaderboard(folders) -> tuple[list[str], list[dict]]:
    """``(tasks, rows)``: every task any run scored, and one row per run (``name``, ``folder``,
    per task ``{metric, value, stderr, low, high, rank}`` or absent, ``mean_rank``), best mean
    rank first.

    Raises:
        DataValidationError: two folders with one identity (naming both).
    """
    from tqdm import tqdm

    entries = [_run_entry(folder) for folder in tqdm(folders, desc="runs", unit="run")]
    names = run_names(entries)
    seen: dict[str, str] = {}
    for entry in entries:
        name = names[entry["folder"]]
        if name in seen:
            raise DataValidationError(
                f"{seen[name]} and {entry['folder']} are the same run identity ({name!r}): a "
                "leaderboard row is one run; pass one of them (shards merge in perturbation-bench "
                "report)"
            )
        seen[name] = entry["folder"]
    tasks = sorted({task for entry in entries for task in entry["cells"]})
    rows = [{"name": names[e["folder"]], "folder": e["folder"], "tasks": {}} for e in entries]
    for task in tasks:
        scored = [
            (row, entry["cells"][task])
            for row, entry in zip(rows, entries)
            if task in entry["cells"]
        ]
        for row, (metric, value, stderr) in scored:
            rank = 1 + sum(_merit(other) > _merit((metric, value)) for _, other in scored)
            half = Z * stderr if stderr is not None else None
            row["tasks"][task] = {
                "metric": metric,
                "value": value,
                "stderr": stderr,
                "low": value - half if half is not None else None,
                "high": value + half if half is not None else None,
                "rank": rank,
            }
    for row in rows:
        ranks = [cell["rank"] for cell in row["tasks"].values()]
        row["mean_rank"] = sum(ranks) / len(ranks)
    rows.sort(key=lambda row: (row["mean_rank"], row["name"]))
    return tasks, rows


def _merit(cell) -> float:
    """What a cell is ranked by (module docstring)."""
    metric, value = cell[0], cell[1]
    return abs(value) if metric == "spearman" else value


def write_leaderboard(tasks: list[str], rows: list[dict], out: str | Path) -> list[Path]:
    """``leaderboard.csv``, ``leaderboard.md`` and ``leaderboard.png`` in ``out``; their paths."""
    import pandas as pd

    from perturbation_bench.report.plots import LAYOUT, PANEL_WIDTH, SIZE, plt, save_figure

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    flat = []
    for row in rows:
        record = {"name": row["name"], "mean_rank": row["mean_rank"], "folder": row["folder"]}
        for task in tasks:
            cell = row["tasks"].get(task) or {}
            for key in ("metric", "value", "low", "high", "rank"):
                record[f"{task}:{key}"] = cell.get(key)
        flat.append(record)
    pd.DataFrame(flat).to_csv(out / "leaderboard.csv", index=False)
    short = [task.removeprefix("perturbation_") for task in tasks]
    lines = [
        "| rank | run | mean rank | " + " | ".join(short) + " |",
        "|---|---|---|" + "---|" * len(tasks),
    ]
    for place, row in enumerate(rows, start=1):
        cells = []
        for task in tasks:
            cell = row["tasks"].get(task)
            if cell is None:
                cells.append("-")
                continue
            interval = (
                f" [{cell['low']:.3f}, {cell['high']:.3f}]" if cell["low"] is not None else ""
            )
            cells.append(f"{cell['metric']} {cell['value']:.3f}{interval} (#{cell['rank']})")
        lines.append(
            f"| {place} | {row['name']} | {row['mean_rank']:.2f} | " + " | ".join(cells) + " |"
        )
    (out / "leaderboard.md").write_text("\n".join(lines) + "\n")
    figure, panels = plt.subplots(
        1,
        len(tasks),
        figsize=(max(SIZE[0], PANEL_WIDTH * len(tasks)), max(SIZE[1], 0.3 * len(rows) + 1)),
        squeeze=False,
        layout=LAYOUT,
    )
    names = [row["name"] for row in rows]
    for axes, task in zip(panels[0], tasks):
        ys = [i for i, row in enumerate(rows) if task in row["tasks"]]
        cells = [rows[i]["tasks"][task] for i in ys]
        values = [cell["value"] for cell in cells]
        errors = [
            [cell["value"] - cell["low"] if cell["low"] is not None else 0 for cell in cells],
            [cell["high"] - cell["value"] if cell["high"] is not None else 0 for cell in cells],
        ]
        axes.errorbar(values, ys, xerr=errors, fmt="o", capsize=3)
        axes.set_yticks(range(len(rows)), names if axes is panels[0][0] else [""] * len(rows))
        axes.invert_yaxis()
        axes.set_title(task.removeprefix("perturbation_"))
        axes.set_xlabel(cells[0]["metric"] if cells else "")
    figure.suptitle(f"Leaderboard: {len(rows)} runs (95% intervals where lm-eval gave a stderr)")
    save_figure(figure, out / "leaderboard.png")
    return [out / "leaderboard.csv", out / "leaderboard.md", out / "leaderboard.png"]

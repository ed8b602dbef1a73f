"""A leaderboard over many runs: one row per run identity, one column per task.

Each run folder (an ``lm_eval --output_path``) is read once: every ``results_*.json`` below it,
never its samples, so hundreds of runs cost hundreds of small reads. A file that is not readable
JSON is refused, naming it. Files of one identity merge into one row (a run whose tasks were
scored in several ``lm_eval`` calls), unless two of them hold one task (a rerun: refused, naming
both); files of different identities (two models written to one ``--output_path``) are rows of
their own. Per task the cell is the task's headline metric as lm-eval wrote it:

    auprc, auprc_macro        variant tasks with binary labels (pooled, or per assay)
    spearman, spearman_macro  variant tasks with quantitative labels
    pairwise_acc              every other task

with its 95% interval: Wilson's for ``pairwise_acc`` (``k = round(acc x n)`` of the ``n``
pairs lm-eval counted, as the report's), else ``value -/+ 1.96 x stderr`` cut to the metric's
range (``[0, 1]``; ``[-1, 1]`` for a correlation) where lm-eval wrote a standard error.

A row is named as the report names it (``run_names.py``: the model and what tells it apart from
the other runs of that model), from the identity the results file records (the lm-eval model,
its arguments, this package's scorer and task settings). Runs are ranked only on the tasks every
run scored (*shared*): per shared task, 1 = best, ties share the best rank, by the value (by
``|rho|`` for a correlation, whose sign depends on what the label measures); a row's mean rank
is over the shared tasks. The other tasks are listed apart with their values and no rank; with
no shared task nothing is ranked. Two folders with one identity are refused: a leaderboard row
is one run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.report.run_names import identity, run_names, short_name
from perturbation_bench.report.runs import parse_model_args
from perturbation_bench.report.statistics import wilson_interval

HEADLINES = ("auprc", "auprc_macro", "spearman", "spearman_macro", "pairwise_acc")
"""The headline metric of a task: the first of these its results hold (module docstring)."""
CORRELATIONS = ("spearman", "spearman_macro")
CHANCE = {"pairwise_acc": 0.5, "spearman": 0.0, "spearman_macro": 0.0}
"""Each headline's value for a model without information (AUPRC's is the positives' share,
which the results do not hold)."""
Z = 1.959963984540054


def read_results(folder: str | Path) -> list[tuple[Path, dict]]:
    """Every ``results_*.json`` below ``folder``, oldest first, each read.

    Raises:
        DataSourceError: none there, or one that is not readable JSON (naming it).
    """
    found = sorted(Path(folder).rglob("results_*.json"))
    if not found:
        raise DataSourceError(f"{folder}: no results_*.json (an lm_eval --output_path folder?)")
    read = []
    for path in found:
        try:
            read.append((path, json.loads(path.read_text())))
        except (OSError, json.JSONDecodeError) as err:
            raise DataSourceError(
                f"{path}: not a readable results file ({err}); remove it or pass another folder"
            ) from None
    return read


def headline(results: dict) -> tuple[str, float, float | None] | None:
    """``(metric, value, stderr)`` of one task's results (module docstring); None without any."""
    for metric in HEADLINES:
        value = results.get(f"{metric},pairs")
        if isinstance(value, (int, float)) and not math.isnan(value):
            stderr = results.get(f"{metric}_stderr,pairs")
            numeric = isinstance(stderr, (int, float)) and not math.isnan(stderr)
            return metric, float(value), float(stderr) if numeric else None
    return None


def interval(metric: str, value: float, stderr: float | None, n: int | None):
    """``(low, high)`` of one cell (module docstring), or ``(None, None)``."""
    if metric == "pairwise_acc" and n:
        return wilson_interval(round(value * n), n)
    if stderr is None:
        return None, None
    floor = -1.0 if metric in CORRELATIONS else 0.0
    return max(floor, value - Z * stderr), min(1.0, value + Z * stderr)


def _run_entries(folder: str | Path) -> list[dict]:
    """What one folder contributes: a row's pieces per identity among its results files."""
    entries: dict[str, dict] = {}
    for path, data in read_results(folder):
        config = data.get("config") or {}
        provenance = config.get("perturbation_bench") or {}
        model_args = parse_model_args(config.get("model_args"))
        counts = data.get("n-samples") or {}
        cells = {
            task: (*cell, (counts.get(task) or {}).get("effective"))
            for task, results in sorted((data.get("results") or {}).items())
            if task.startswith("perturbation_") and (cell := headline(results)) is not None
        }
        if not cells:
            continue
        items = identity(
            config.get("model"),
            model_args,
            provenance.get("settings") or {},
            provenance.get("tasks") or {},
        )
        key = json.dumps(items, sort_keys=True)  # the lm-eval model is one of its items
        base = short_name(model_args, config.get("model"), Path(folder).name)
        entry = entries.setdefault(
            key,
            {
                "folder": str(folder),
                "base": str(base),
                "identity": items,
                "shards": {},
                "cells": {},
                "files": {},
            },
        )
        for task, cell in cells.items():
            if task in entry["cells"]:
                raise DataValidationError(
                    f"{entry['files'][task]} and {path} both hold {task} of one run "
                    f"({entry['base']}): a rerun; remove one of them"
                )
            entry["cells"][task], entry["files"][task] = cell, path
    if not entries:
        raise DataValidationError(f"{folder}: its results hold no perturbation-bench task")
    if len(entries) > 1:  # several runs in one folder: each row told apart by its first file
        for entry in entries.values():
            entry["folder"] = str(min(entry["files"].values()))
    return list(entries.values())


def leaderboard(folders) -> tuple[list[str], list[dict]]:
    """``(tasks, rows)``: every task any run scored, the shared ones first (module docstring),
    and one row per run (``name``, ``folder``, per task ``{metric, value, stderr, n, low, high,
    rank}`` or absent, ``rank`` None for a task not shared, ``mean_rank`` None with no shared
    task), best mean rank first.

    Raises:
        DataValidationError: two folders with one identity (naming both).
    """
    from tqdm import tqdm

    entries = [e for folder in tqdm(folders, desc="runs", unit="run") for e in _run_entries(folder)]
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
    every = sorted({task for entry in entries for task in entry["cells"]})
    shared = [task for task in every if all(task in entry["cells"] for entry in entries)]
    tasks = shared + [task for task in every if task not in shared]
    rows = [{"name": names[e["folder"]], "folder": e["folder"], "tasks": {}} for e in entries]
    for task in tasks:
        scored = [
            (row, entry["cells"][task])
            for row, entry in zip(rows, entries, strict=True)
            if task in entry["cells"]
        ]
        for row, (metric, value, stderr, n) in scored:
            low, high = interval(metric, value, stderr, n)
            better = sum(_merit(other) > _merit((metric, value)) for _, other in scored)
            row["tasks"][task] = {
                "metric": metric,
                "value": value,
                "stderr": stderr,
                "n": n,
                "low": low,
                "high": high,
                "rank": 1 + better if task in shared else None,
            }
    for row in rows:
        ranks = [row["tasks"][task]["rank"] for task in shared]
        row["mean_rank"] = sum(ranks) / len(ranks) if ranks else None
    rows.sort(key=lambda row: (row["mean_rank"] is None, row["mean_rank"] or 0, row["name"]))
    return tasks, rows


def _merit(cell) -> float:
    """What a cell is ranked by (module docstring)."""
    metric, value = cell[0], cell[1]
    return abs(value) if metric in CORRELATIONS else value


def write_leaderboard(tasks: list[str], rows: list[dict], out: str | Path) -> list[Path]:
    """``leaderboard.csv``, ``leaderboard.md`` and ``leaderboard.png`` in ``out``, replacing an
    earlier leaderboard there whole (``output_folder.py``); their paths."""
    from perturbation_bench.report.output_folder import replace_output

    return replace_output(out, lambda folder: _write(tasks, rows, folder))


def _write(tasks: list[str], rows: list[dict], out: Path) -> list[Path]:
    import pandas as pd

    flat = []
    for row in rows:
        record = {"name": row["name"], "mean_rank": row["mean_rank"], "folder": row["folder"]}
        for task in tasks:
            cell = row["tasks"].get(task) or {}
            for key in ("metric", "value", "low", "high", "n", "rank"):
                record[f"{task}:{key}"] = cell.get(key)
        flat.append(record)
    pd.DataFrame(flat).to_csv(out / "leaderboard.csv", index=False)
    (out / "leaderboard.md").write_text("\n".join(markdown(tasks, rows)) + "\n")
    _figure(tasks, rows, out / "leaderboard.png")
    return [out / "leaderboard.csv", out / "leaderboard.md", out / "leaderboard.png"]


def markdown(tasks: list[str], rows: list[dict]) -> list[str]:
    """The ranked table over the shared tasks, then the tasks not every run scored, unranked."""
    shared = ranked_tasks(tasks, rows)
    apart = [task for task in tasks if task not in shared]
    lines = []
    if shared:
        lines += [
            "| rank | run | mean rank | " + " | ".join(map(_short, shared)) + " |",
            "|---|---|---|" + "---|" * len(shared),
        ]
        for place, row in enumerate(rows, start=1):
            cells = [_cell_text(row["tasks"][task]) for task in shared]
            lines.append(
                f"| {place} | {row['name']} | {row['mean_rank']:.2f} | " + " | ".join(cells) + " |"
            )
    else:
        lines.append("No task was scored by every run: nothing is ranked.")
    if apart:
        lines += [
            "",
            "Not ranked (not scored by every run):",
            "",
            "| run | " + " | ".join(map(_short, apart)) + " |",
            "|---|" + "---|" * len(apart),
        ]
        for row in rows:
            cells = [_cell_text(row["tasks"].get(task)) for task in apart]
            lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    return lines


def ranked_tasks(tasks: list[str], rows: list[dict]) -> list[str]:
    """The tasks every row scored, on which the rows are ranked (module docstring)."""
    return [
        task for task in tasks if all((row["tasks"].get(task) or {}).get("rank") for row in rows)
    ]


def _cell_text(cell: dict | None) -> str:
    if cell is None:
        return "-"
    text = f"{cell['metric']} {cell['value']:.3f}"
    if cell["low"] is not None:
        text += f" [{cell['low']:.3f}, {cell['high']:.3f}]"
    if cell["n"]:
        text += f" n={cell['n']}"
    return text + (f" (#{cell['rank']})" if cell["rank"] else "")


def _figure(tasks: list[str], rows: list[dict], path: Path) -> None:
    """A panel per task: each run's value and interval, its n beside it, chance dashed."""
    from perturbation_bench.report.plots import LAYOUT, PANEL_WIDTH, SIZE, plt, save_figure

    figure, panels = plt.subplots(
        1,
        len(tasks),
        figsize=(max(SIZE[0], PANEL_WIDTH * len(tasks)), max(SIZE[1], 0.3 * len(rows) + 1)),
        squeeze=False,
        layout=LAYOUT,
    )
    names = [row["name"] for row in rows]
    ranked = ranked_tasks(tasks, rows)
    for axes, task in zip(panels[0], tasks, strict=True):
        ys = [i for i, row in enumerate(rows) if task in row["tasks"]]
        cells = [rows[i]["tasks"][task] for i in ys]
        values = [cell["value"] for cell in cells]
        errors = [
            [cell["value"] - cell["low"] if cell["low"] is not None else 0 for cell in cells],
            [cell["high"] - cell["value"] if cell["high"] is not None else 0 for cell in cells],
        ]
        axes.errorbar(values, ys, xerr=errors, fmt="o", capsize=3)
        for y, cell in zip(ys, cells, strict=True):
            if cell["n"]:
                axes.annotate(
                    f"n={cell['n']}", (cell["value"], y), xytext=(0, 6),
                    textcoords="offset points", ha="center", fontsize=7,
                )  # fmt: skip
        metric = cells[0]["metric"]
        if metric in CHANCE:
            axes.axvline(CHANCE[metric], color="grey", linestyle="--", linewidth=1)
        axes.set_yticks(range(len(rows)), names if axes is panels[0][0] else [""] * len(rows))
        axes.set_ylim(len(rows) - 0.5, -0.5)
        axes.set_title(_short(task) + ("" if task in ranked else " (not ranked)"))
        axes.set_xlabel(metric + (" (chance dashed)" if metric in CHANCE else ""))
    figure.suptitle(f"Leaderboard: {len(rows)} runs, 95% intervals (Wilson for accuracy)")
    save_figure(figure, path)


def _short(task: str) -> str:
    return task.removeprefix("perturbation_")

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

A floor's row (``families.floor_kind``: a ``kmer-markov`` run, a composition floor; a
``random_init=true`` run, a random-weights floor) is ranked with the others and says which floor
it is (the ``floor`` column), so a model's place reads against them. The headline
(:func:`best_line`) names the best *model*, never a floor: every model tied with it, and every
floor ranked at or above it, which says the models learned nothing those floors lack.

A row is named as the report names it (``run_names.py``: the model and what tells it apart from
the other runs of that model), from the identity the results file records (the lm-eval model,
its arguments, this package's scorer and task settings), or by ``--name FOLDER=LABEL``. Runs
are ranked only on the *shared* tasks: those every run scored, with one metric on one data
identity and all of it (``comparability.apart``, the rule the report compares by: the data is the
``sha256:`` each run's results record for the task; a run with ``--limit`` scored only its first
pairs, so it is apart from runs that scored every pair). Per shared task, 1 = best, ties share the best rank, by
the value (by ``|rho|`` for a correlation, whose sign depends on what the label measures); a
row's mean rank is over the shared tasks. The other tasks are listed apart with their values, no
rank and the reason (the runs that did not score it; each run apart and why); with no shared task
nothing is ranked. Two folders with one identity are refused: a leaderboard row is one run.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from perturbation_bench.errors import DataSourceError, DataValidationError, OptionsError
from perturbation_bench.families import floor_kind
from perturbation_bench.report.comparability import apart, scored_part
from perturbation_bench.report.run_names import identity, labels_by_folder, run_names, short_name
from perturbation_bench.report.runs import parse_model_args, read_results_file
from perturbation_bench.report.statistics import wilson_interval
from perturbation_bench.wording import counted, some

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
        DataSourceError: ``folder`` is not a folder, holds no results file, or one that is not
            a results file (naming it: ``runs.read_results_file``).
    """
    if not Path(folder).is_dir():
        raise DataSourceError(f"{folder}: not a folder")
    found = sorted(Path(folder).rglob("results_*.json"))
    if not found:
        raise DataSourceError(f"{folder}: no results_*.json (an lm_eval --output_path folder?)")
    return [(path, read_results_file(path)) for path in found]


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
        recorded = provenance.get("tasks") or {}
        cells = {
            task: (
                *cell,
                (counts.get(task) or {}).get("effective"),
                (recorded.get(task) or {}).get("data"),
                scored_part(config.get("limit"), counts.get(task)),
            )
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
                "floor": floor_kind(config.get("model"), provenance.get("settings")),
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


def leaderboard(folders, names: dict[str, str] | None = None) -> tuple[list[str], list[dict]]:
    """``(tasks, rows)``: every task any run scored, the shared ones first (module docstring),
    and one row per run (``name``, ``folder``, ``floor`` the kind of floor it is or None, per task ``{metric, value, stderr, n, low, high,
    data, rank, apart}`` or absent, ``rank`` None for a task not shared, ``apart`` the reason a
    cell is not comparable with its column or None, ``mean_rank`` None with no shared task),
    best mean rank first; ``names``: ``folder -> label`` from ``--name``.

    Raises:
        DataValidationError: two folders with one identity (naming both).
        OptionsError: a folder given twice; a ``--name`` folder that is none of ``folders``.
    """
    from tqdm import tqdm

    _check_given_once(folders)
    with tqdm(folders, desc="runs", unit="run") as progress:  # closed (a newline) on a refusal
        entries = [entry for folder in progress for entry in _run_entries(folder)]
    named = run_names(entries, labels_by_folder([e["folder"] for e in entries], names or {}))
    seen: dict[str, str] = {}
    for entry in entries:
        name = named[entry["folder"]]
        if name in seen:
            raise DataValidationError(
                f"{seen[name]} and {entry['folder']} are the same run identity ({name!r}): a "
                "leaderboard row is one run; pass one of them, or name them apart with --name "
                "FOLDER=LABEL (the shards of one run merge in perturbation-bench report)"
            )
        seen[name] = entry["folder"]
    rows = [
        {"name": named[e["folder"]], "folder": e["folder"], "floor": e["floor"], "tasks": {}}
        for e in entries
    ]
    shared = set()
    for task in sorted({task for entry in entries for task in entry["cells"]}):
        scored = {
            id(row): (row, entry["cells"][task])
            for row, entry in zip(rows, entries, strict=True)
            if task in entry["cells"]
        }
        parted = apart({key: (cell[0], cell[4], cell[5]) for key, (_, cell) in scored.items()})
        ranked = len(scored) == len(rows) and not parted
        shared |= {task} if ranked else set()
        for key, (row, (metric, value, stderr, n, data, _)) in scored.items():
            low, high = interval(metric, value, stderr, n)
            better = sum(_merit(other) > _merit((metric, value)) for _, other in scored.values())
            row["tasks"][task] = {
                "metric": metric, "value": value, "stderr": stderr, "n": n, "low": low,
                "high": high, "data": data, "rank": 1 + better if ranked else None,
                "apart": parted.get(key),
            }  # fmt: skip
    for row in rows:
        ranks = [cell["rank"] for task, cell in row["tasks"].items() if task in shared]
        row["mean_rank"] = sum(ranks) / len(ranks) if ranks else None
    rows.sort(key=lambda row: (row["mean_rank"] is None, row["mean_rank"] or 0, row["name"]))
    every = sorted({task for row in rows for task in row["tasks"]})
    return sorted(every, key=lambda task: task not in shared), rows


def _check_given_once(folders) -> None:
    twice = [folder for folder, n in Counter(map(str, folders)).items() if n > 1]
    if twice:
        raise OptionsError(f"{some(twice)}: given more than once; a leaderboard row is one run")


def not_ranked_because(task: str, rows: list[dict]) -> str:
    """Why ``task`` is not ranked (module docstring): the runs that did not score it, and each
    run apart from its column with the reason."""
    missing = [row["name"] for row in rows if task not in row["tasks"]]
    reasons = [f"not scored by {some(missing)}"] if missing else []
    reasons += [
        f"{row['name']} apart: {row['tasks'][task]['apart']}"
        for row in rows
        if (row["tasks"].get(task) or {}).get("apart")
    ]
    return "; ".join(reasons)


def _merit(cell) -> float:
    """What a cell is ranked by (module docstring)."""
    metric, value = cell[0], cell[1]
    return abs(value) if metric in CORRELATIONS else value


def ranked_tasks(tasks: list[str], rows: list[dict]) -> list[str]:
    """The tasks every row scored, on which the rows are ranked (module docstring)."""
    return [
        task for task in tasks if all((row["tasks"].get(task) or {}).get("rank") for row in rows)
    ]


def best_line(rows: list[dict], shared: list[str]) -> str:
    """What is best (module docstring): the model of best mean rank over the ``shared`` tasks,
    never a floor while any model ran; every run tied with it is named, and every floor at or
    above its mean rank."""
    if not shared:
        return "no task scored by every run with one metric on one data: nothing ranked"
    models = [row for row in rows if not row["floor"]] or rows
    top = models[0]["mean_rank"]
    tied = [row["name"] for row in models if row["mean_rank"] == top]
    line = f"best mean rank over {counted(len(shared), 'shared task')}: {some(tied)}"
    line += f" (tied at {top:g})" if len(tied) > 1 else ""
    if models is rows:
        return line + " (every run is a floor)"
    return line + _floors_at_or_above(rows, top)


def _floors_at_or_above(rows: list[dict], mean_rank: float) -> str:
    above = [
        f"{row['name']} ({row['floor']})"
        for row in rows
        if row["floor"] and row["mean_rank"] <= mean_rank
    ]
    return f"; a floor ranks at or above it: {some(above)}" if above else ""

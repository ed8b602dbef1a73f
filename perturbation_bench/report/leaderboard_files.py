"""The leaderboard's files (``leaderboard.py`` computes what they hold): ``leaderboard.csv``,
``leaderboard.md`` and ``leaderboard.png``.

A floor's row (``leaderboard.py``) says which floor it is: ``leaderboard.csv``'s ``floor``
column, its name in the Markdown followed by ``(floor: KIND)``. The Markdown gives the ranked
table over the shared tasks (its ``rank`` 1 + the rows of a smaller mean rank: rows of one mean
rank share it), then the tasks listed apart, each with
the reason it is not ranked (``leaderboard.not_ranked_because``) and a cell per run that scored
it. The figure has a panel per task and metric: a task whose runs hold two metrics is two
panels, so that each axis names the one metric it draws; each run's value and interval, its n
beside it, the chance level dashed where the metric has one; the runs' names on the first
panel's axis, whole.
"""

from __future__ import annotations

from pathlib import Path

from perturbation_bench.report.leaderboard import CHANCE, not_ranked_because, ranked_tasks

CSV_KEYS = ("metric", "value", "low", "high", "n", "rank", "data", "apart")
"""The columns of a task in ``leaderboard.csv``, each ``<task>:<key>``."""
NAME_INCHES = 0.08
"""Width a run name's character takes beside the first panel: the names are drawn whole."""


def write_leaderboard(tasks: list[str], rows: list[dict], out: str | Path) -> list[Path]:
    """``leaderboard.csv``, ``leaderboard.md`` and ``leaderboard.png`` in ``out``, replacing an
    earlier leaderboard there whole (``output_folder.py``); their paths."""
    from perturbation_bench.report.output_folder import replace_output

    return replace_output(out, lambda folder: _write(tasks, rows, folder))


def _write(tasks: list[str], rows: list[dict], out: Path) -> list[Path]:
    import pandas as pd

    flat = []
    for row in rows:
        record = {
            "name": row["name"],
            "mean_rank": row["mean_rank"],
            "folder": row["folder"],
            "floor": row["floor"],
        }
        for task in tasks:
            cell = row["tasks"].get(task) or {}
            record |= {f"{task}:{key}": cell.get(key) for key in CSV_KEYS}
        flat.append(record)
    pd.DataFrame(flat).to_csv(out / "leaderboard.csv", index=False)
    (out / "leaderboard.md").write_text("\n".join(markdown(tasks, rows)) + "\n")
    _figure(tasks, rows, out / "leaderboard.png")
    return [out / "leaderboard.csv", out / "leaderboard.md", out / "leaderboard.png"]


def _place(row: dict, rows: list[dict]) -> int:
    """1 + the rows of a smaller mean rank: rows of one mean rank share their place."""
    return 1 + sum(other["mean_rank"] < row["mean_rank"] for other in rows)


def markdown(tasks: list[str], rows: list[dict]) -> list[str]:
    """The ranked table over the shared tasks, then the tasks listed apart, unranked, each with
    its reason (module docstring)."""
    shared = ranked_tasks(tasks, rows)
    apart = [task for task in tasks if task not in shared]
    lines = []
    if shared:
        lines += [
            "| rank | run | mean rank | " + " | ".join(map(_short, shared)) + " |",
            "|---|---|---|" + "---|" * len(shared),
        ]
        for row in rows:
            place = _place(row, rows)
            cells = [_cell_text(row["tasks"][task]) for task in shared]
            lines.append(
                f"| {place} | {_name(row)} | {row['mean_rank']:.2f} | " + " | ".join(cells) + " |"
            )
    else:
        lines.append("No task was scored by every run with one metric on one data: nothing ranked.")
    if apart:
        lines += [
            "",
            "Not ranked (a ranked column holds one metric on all of one data identity):",
            "",
        ]
        lines += [f"- {_short(task)}: {not_ranked_because(task, rows)}" for task in apart]
        lines += [
            "",
            "| run | " + " | ".join(map(_short, apart)) + " |",
            "|---|" + "---|" * len(apart),
        ]
        for row in rows:
            cells = [_cell_text(row["tasks"].get(task)) for task in apart]
            lines.append(f"| {_name(row)} | " + " | ".join(cells) + " |")
    return lines


def _name(row: dict) -> str:
    """A row's run as the Markdown names it: a floor with its kind."""
    return row["name"] + (f" (floor: {row['floor']})" if row.get("floor") else "")


def _cell_text(cell: dict | None) -> str:
    if cell is None:
        return "-"
    text = f"{cell['metric']} {cell['value']:.3f}"
    if cell["low"] is not None:
        text += f" [{cell['low']:.3f}, {cell['high']:.3f}]"
    if cell["n"]:
        text += f" n={cell['n']}"
    return text + (f" (#{cell['rank']})" if cell["rank"] else "")


def panels(tasks: list[str], rows: list[dict]) -> list[tuple[str, str]]:
    """``(task, metric)`` of each panel of the figure, in the order of ``tasks`` (module
    docstring)."""
    return [
        (task, metric)
        for task in tasks
        for metric in dict.fromkeys(r["tasks"][task]["metric"] for r in rows if task in r["tasks"])
    ]


def _figure(tasks: list[str], rows: list[dict], path: Path) -> None:
    """A panel per task and metric (module docstring)."""
    from perturbation_bench.report.plots import LAYOUT, PANEL_WIDTH, SIZE, plt, save_figure

    drawn = panels(tasks, rows)
    figure, axes_row = plt.subplots(
        1,
        len(drawn),
        figsize=(
            max(SIZE[0], PANEL_WIDTH * len(drawn) + NAME_INCHES * max(len(_name(r)) for r in rows)),
            max(SIZE[1], 0.3 * len(rows) + 1),
        ),
        squeeze=False,
        layout=LAYOUT,
    )
    ranked = ranked_tasks(tasks, rows)
    for place, (axes, (task, metric)) in enumerate(zip(axes_row[0], drawn, strict=True)):
        ys = [
            i
            for i, row in enumerate(rows)
            if (row["tasks"].get(task) or {}).get("metric") == metric
        ]
        _draw_cells(axes, ys, [rows[i]["tasks"][task] for i in ys])
        if metric in CHANCE:
            axes.axvline(CHANCE[metric], color="grey", linestyle="--", linewidth=1)
        names = [_name(row) for row in rows] if place == 0 else [""] * len(rows)
        axes.set_yticks(range(len(rows)), names)
        axes.set_ylim(len(rows) - 0.5, -0.5)
        axes.set_title(_short(task) + ("" if task in ranked else " (not ranked)"))
        axes.set_xlabel(metric + (" (chance dashed)" if metric in CHANCE else ""))
    figure.suptitle(f"Leaderboard: {len(rows)} runs, 95% intervals (Wilson for accuracy)")
    save_figure(figure, path)


def _draw_cells(axes, ys: list[int], cells: list[dict]) -> None:
    """Each cell's value and interval at its row ``y``, its n above it."""
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


def _short(task: str) -> str:
    return task.removeprefix("perturbation_")

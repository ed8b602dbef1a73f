"""The one rule for which runs a column ranks or compares: ``report`` and ``leaderboard`` both
call :func:`apart`.

A ranked column holds one metric on one dataset identity. Per task each run brings its cell's
*metric* (the name of what it holds: ``pairwise_acc``, ``auprc``, ``spearman_macro``, ...; None
where the caller computes one metric for every run from the samples, as the report does) and its
*data* (the ``sha256:`` identity of the files it scored, as the task recorded it in the run's
settings; None where the run recorded none) and its *part* (:func:`scored_part`: the ``--limit``
it ran with where that left pairs of the task unscored; None for every pair, and where the
caller matches the runs' pairs one by one, as the report does). The ``(metric, data, part)`` that most runs share is the column
(on a tie, that of the earliest run given); every other run is *apart*: it is never ranked or
compared against the column, and the caller says so, with the reason this module gives. A run
that recorded no data identity is apart from a column that has one: the same data cannot be
shown.
"""

from __future__ import annotations

from collections import Counter

Cell = tuple[str | None, str | None, float | None]
"""A run's ``(metric, data, part)`` on one task (module docstring)."""


def apart(cells: dict[str, Cell]) -> dict[str, str]:
    """``run -> reason`` for the runs of ``cells`` (``run -> (metric, data, part)``, in the order the
    user gave them) outside the column; empty when every run is comparable (module docstring)."""
    counts = Counter(cells.values())
    column = max(counts, key=counts.__getitem__)  # the first of the most shared: earliest run
    return {run: _reason(cell, column) for run, cell in cells.items() if cell != column}


def _reason(cell: Cell, column: Cell) -> str:
    """Why ``cell`` is not in ``column``: ``another metric (x, not y)``, ``other data (...)``,
    ``another part of it (--limit 8, not every pair)``."""
    reasons = []
    if cell[0] != column[0]:
        reasons.append(f"another metric ({cell[0]}, not {column[0]})")
    if cell[1] != column[1]:
        reasons.append(f"other data ({_data(cell[1])}, not {_data(column[1])})")
    if cell[2] != column[2]:
        reasons.append(f"another part of it ({_part(cell[2])}, not {_part(column[2])})")
    return "; ".join(reasons)


def _part(limit: float | None) -> str:
    """A run's part of the data as a message shows it."""
    return "every pair" if limit is None else f"--limit {limit:g}"


def _data(identity: str | None) -> str:
    """A data identity as a message shows it: ``sha256:`` and its first 12 hex digits."""
    return "no data identity recorded" if identity is None else identity[: len("sha256:") + 12]


def scored_part(limit: float | None, count: dict | None) -> float | None:
    """A run's part of one task's data: its ``--limit`` where lm-eval's ``n-samples`` count of the
    task shows it cut (``effective`` under ``original``), or where no count says otherwise;
    None for a run of every pair (no limit, or one at least the task's pairs)."""
    if limit is None:
        return None
    original, effective = (count or {}).get("original"), (count or {}).get("effective")
    if original is None or effective is None:
        return limit
    return limit if effective < original else None

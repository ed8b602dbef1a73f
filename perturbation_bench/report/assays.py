"""The report's per-assay section: variant tasks whose data has an ``assay`` column.

Each assay is scored apart and never pooled with another (``pairs/assays.py``). For every model
and task with assays, over its labelled variants, for every *subset*: ``all`` variants, and each
value of ``consequence`` and of every ``--by`` column, each assay's *cell*:

- binary labels: ``auroc`` and ``auprc``, n and the positives;
- quantitative labels: ``spearman`` and ``pearson`` of the score with the label oriented by its
  declared direction (``label_direction``; as given where the data declares none), and n;

a cell below the task's gate (``min_per_class``, recorded in its samples) has its n and no
value, and so has one whose metric is undefined (constant labels or scores, non-finite values,
one class: ``pairs/assays.cell``), each with why; an assay of the data without a labelled
variant is named too (``no labelled variant``), so no assay leaves the tables unnamed. Per
model, task and subset, the macro average over the assays with a value, with the assays
averaged and every assay left out named with why. The same variants in the same order (by
``pair_id``) give the same tables, whatever the order of the files' rows.
"""

from __future__ import annotations

import pandas as pd

from perturbation_bench.pairs.assays import (
    ASSAY_METRICS,
    BINARY,
    MIN_PER_CLASS,
    QUANTITATIVE,
    Cell,
    cell,
    gate_text,
    macro,
    no_value_text,
    oriented,
)
from perturbation_bench.report.variant_markdown import number_cell

ALL = "all"
"""The subset of every variant of an assay."""


def oriented_labels(rows: pd.DataFrame) -> list[float]:
    """Each row's label as a float oriented to damaging by the row's declared
    ``label_direction`` (``pairs/assays.oriented``; as given where the data declares none)."""
    directions = rows["label_direction"] if "label_direction" in rows else [None] * len(rows)
    return [oriented(float(x), d) for x, d in zip(rows["label"], directions, strict=True)]


def with_assays(pairs: pd.DataFrame) -> pd.DataFrame:
    """The labelled rows of ``pairs`` that belong to an assay, in ``pair_id`` order, each label
    as its metrics take it (bool, or a float oriented to damaging)."""
    if "assay" not in pairs.columns or "label" not in pairs.columns:
        return pairs.iloc[0:0]
    rows = pairs[pairs["assay"].notna() & pairs["label"].notna()].sort_values(
        "pair_id", kind="stable"
    )
    quantitative = rows["labels"] == QUANTITATIVE
    labels = [
        value if is_quantitative else bool(label)
        for value, label, is_quantitative in zip(
            oriented_labels(rows), rows["label"], quantitative, strict=True
        )
    ]
    return rows.assign(label=labels)


def assay_cells(pairs: pd.DataFrame, by: list[str] = ()) -> list[dict]:
    """Per model, task, subset and assay: n, n_positive, each metric (None without a value) and
    ``why`` a cell has none (``pairs/assays.cell``; an assay of the data with no labelled
    variant is a cell of the ``all`` subset with n 0, ``no labelled variant``)."""
    frame = with_assays(pairs)
    out = []
    for (model, task), group in frame.groupby(["model", "task"], sort=True):
        kind = _kind(group)
        gate = _gate(group)
        for column, value, subset in _subsets(group, by):
            for assay, rows in subset.groupby("assay", sort=True):
                cells = {
                    name: cell(kind, name, rows["label"], rows["score"], gate)
                    for name in ASSAY_METRICS[kind]
                }
                out.append(_cell_row(model, task, kind, (column, value), str(assay), gate, cells))
    for (model, task), group in _assays(pairs).groupby(["model", "task"], sort=True):
        labelled = {c["assay"] for c in out if (c["model"], c["task"]) == (model, task)}
        kind = _kind(group)
        empty = Cell(0, None if kind == QUANTITATIVE else 0, None, "no labelled variant")
        for assay in sorted(set(group["assay"].astype(str)) - labelled):
            cells = dict.fromkeys(ASSAY_METRICS[kind], empty)
            out.append(_cell_row(model, task, kind, (ALL, ALL), assay, _gate(group), cells))
    return out


def _cell_row(model, task, kind, subset: tuple, assay: str, gate: int, cells: dict) -> dict:
    """One row of :func:`assay_cells`."""
    first = next(iter(cells.values()))
    return {
        "model": model,
        "task": task,
        "labels": kind,
        "column": subset[0],
        "value": subset[1],
        "assay": assay,
        "n": first.n,
        "n_positive": first.n_positive,
        "min_per_class": gate,
        **{name: c.value for name, c in cells.items()},
        "why": next((c.why for c in cells.values() if c.why is not None), None),
    }


def _assays(pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``pairs`` that belong to an assay, labelled or not."""
    if "assay" not in pairs.columns or "label" not in pairs.columns:
        return pairs.iloc[0:0]
    return pairs[pairs["assay"].notna()]


def _kind(group: pd.DataFrame) -> str:
    return QUANTITATIVE if group["labels"].iloc[0] == QUANTITATIVE else BINARY


def assay_macros(cells: list[dict]) -> list[dict]:
    """Per model, task and subset: each metric's macro average over the assays with a value,
    the assays averaged, those below the gate (``assays_gated``) and every assay without a
    value with why (``assays_left_out``)."""
    groups: dict = {}
    for row in cells:
        groups.setdefault((row["model"], row["task"], row["column"], row["value"]), []).append(row)
    out = []
    for (model, task, column, value), rows in groups.items():
        names = ASSAY_METRICS[rows[0]["labels"]]
        passed = [r for r in rows if any(r[name] is not None for name in names)]
        left_out = {r["assay"]: r["why"] for r in rows if r not in passed}
        out.append(
            {
                "model": model,
                "task": task,
                "column": column,
                "value": value,
                "assays": len(passed),
                "assays_gated": [a for a, why in left_out.items() if why == "below the gate"],
                "assays_left_out": left_out,
                **{f"{name}_macro": macro(_as_cells(rows, name)) for name in names},
            }
        )
    return out


def markdown(cells: list[dict], macros: list[dict]) -> list[str]:
    """The report.md lines of the section (none without assays)."""
    if not cells:
        return []
    lines = [
        "",
        "## Variant effect per assay",
        "",
        "Each assay scored apart, never pooled; the macro average over the assays with a value "
        f"(the gate: at least {cells[0]['min_per_class']} variants of each class, or variants "
        "for quantitative labels; a cell without a value shows why and its n). Quantitative "
        "labels are oriented by "
        "their declared direction, so a positive correlation means the model ranks variants "
        "as the assay does.",
        "",
        "| model | task | subset | macro | assays averaged | left out (why) |",
        "|---|---|---|---|---|---|",
    ]
    for m in macros:
        values = ", ".join(
            f"{name.removesuffix('_macro')} {number_cell(m[name])}"
            for name in m
            if name.endswith("_macro")
        )
        left_out = ", ".join(f"{a} ({why})" for a, why in m["assays_left_out"].items())
        lines.append(
            f"| {m['model']} | {m['task']} | {_subset(m)} | {values} | {m['assays']} | "
            f"{left_out or 'none'} |"
        )
    lines += ["", "| model | task | subset | assay | n | values |", "|---|---|---|---|---|---|"]
    for c in cells:
        names = ASSAY_METRICS[c["labels"]]
        gated = all(c[name] is None for name in names)
        values = (
            no_value_text(Cell(c["n"], c["n_positive"], None, c["why"]))
            if gated
            else ", ".join(f"{name} {number_cell(c[name])}" for name in names)
        )
        lines.append(
            f"| {c['model']} | {c['task']} | {_subset(c)} | {c['assay']} | {_gate_text(c)} | "
            f"{values} |"
        )
    return lines


def _subsets(group: pd.DataFrame, by: list[str]):
    """``(column, value, rows)``: every variant (``all``), then each value of ``consequence``
    and of each ``by`` column."""
    yield ALL, ALL, group
    for column in dict.fromkeys(("consequence", *by)):
        if column not in group.columns:
            continue
        present = group[group[column].notna()]
        for value, rows in present.groupby(column, sort=True):
            yield column, str(value), rows


def _gate(group: pd.DataFrame) -> int:
    gates = group["min_per_class"].dropna() if "min_per_class" in group else []
    return int(next(iter(gates), MIN_PER_CLASS))


def _as_cells(rows: list[dict], name: str) -> list[Cell]:
    return [Cell(r["n"], r["n_positive"], r[name]) for r in rows]


def _subset(row: dict) -> str:
    return ALL if row["column"] == ALL else f"{row['column']} = {row['value']}"


def _gate_text(row: dict) -> str:
    return gate_text(Cell(row["n"], row["n_positive"], None))

"""The calibration table from runs of a calibration config (``build calibration``): per model,
score, strand rule and window, each cell's mean score over its neutral sites and their count
(``pairs/calibration.py`` states the table and how a calibrated score reads it), written as
``calibration.tsv``, with a summary in ``report.md``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from perturbation_bench.errors import DataSourceError
from perturbation_bench.pairs.calibration import CELL, COLUMNS, MIN_SITES

NAME = "calibration.tsv"
KEYS = ["source", "score_kind", "rc_average", "context_bp", CELL]


def calibration_table(pairs: pd.DataFrame) -> list[dict]:
    """The table's rows (``pairs/calibration.COLUMNS``), one per model, score, strand rule,
    window and cell of the runs' calibration sites; none without such sites."""
    if CELL not in pairs.columns:
        return []
    sites = pairs[pairs[CELL].notna()]
    if sites.empty:
        return []
    grouped = sites.groupby(KEYS, sort=True)["score"].agg(["mean", "size"]).reset_index()
    grouped.columns = ["source", "score", "rc_average", "window_bp", "cell", "mean", "sites"]
    return grouped[list(COLUMNS)].to_dict("records")


def read_calibration(path: str | Path) -> pd.DataFrame:
    """The calibration table a task's ``calibration`` setting names: a table file
    (``calibration.tsv``), a report folder holding one, or the folder of a scored calibration
    run, whose table is computed here as the report computes it (:func:`calibration_table`).

    Raises:
        DataSourceError: no such file or folder, or a run folder without calibration sites.
    """
    from perturbation_bench.report.runs import collect_pairs

    path = Path(path)
    if path.is_dir() and (path / NAME).is_file():
        path = path / NAME
    if path.is_file():
        return pd.read_csv(path, sep="\t", dtype={"source": str, "cell": str})
    if not path.is_dir():
        raise DataSourceError(
            f"calibration {path}: no such table or folder (name the scored calibration run's "
            f"folder, or the {NAME} perturbation-bench report writes from it)"
        )
    rows = calibration_table(collect_pairs([path])[0])
    if not rows:
        raise DataSourceError(
            f"calibration {path}: this run scored no calibration sites (a config of "
            "perturbation-bench build calibration)"
        )
    return pd.DataFrame(rows)[list(COLUMNS)]


def markdown(rows: list[dict]) -> list[str]:
    """Per model, score, strand rule and window: cells, sites (each in three cells, one per
    alternate), and the cells too thin to calibrate with."""
    if not rows:
        return []
    table = pd.DataFrame(rows)
    lines = [
        "",
        "## Calibration by context",
        "",
        f"Mean score per 5-mer and alternate base over the neutral sites, written to `{NAME}` "
        f"(a cell with fewer than {MIN_SITES} sites does not calibrate).",
        "",
        "| model | score | rc_average | window (bp) | cells | sites | thin cells |",
        "|---|---|---|---|---|---|---|",
    ]
    keys = ["source", "score", "rc_average", "window_bp"]
    for (source, score, rc, window), group in table.groupby(keys, sort=True):
        thin = int((group["sites"] < MIN_SITES).sum())
        lines.append(
            f"| {source} | {score} | {rc} | {window:,} | {len(group)} | "
            f"{int(group['sites'].sum()) // 3} | {thin} |"
        )
    return lines


def write(rows: list[dict], out: Path) -> None:
    """``calibration.tsv`` where there are rows."""
    if rows:
        pd.DataFrame(rows)[list(COLUMNS)].to_csv(out / NAME, sep="\t", index=False)

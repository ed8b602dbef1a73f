"""The calibration table from runs of a calibration config (``build calibration``): per model,
score, strand rule and window, each cell's mean score over its neutral sites and their count
(``pairs/calibration.py`` states the table and how a calibrated score reads it), written as
``calibration.tsv``, with a summary in ``report.md``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

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

"""The clusters of pairs a report's intervals resample together (``statistics.cluster_bootstrap``).

Pairs are not independent: a build takes several per gene, and the windows of neighbouring exons
overlap. Each task's pairs get one unit, chosen by ``--cluster`` (:data:`RULES`):

    auto (default)  ``gene_id`` where the task's pairs carry one, else ``overlap`` where they
                    carry their windows, else ``none``
    COLUMN          the pairs' values of that column (``--cluster transcript_id``)
    overlap         the windows on one chromosome that overlap, chained (A overlaps B and B
                    overlaps C: one cluster): windows ``[start, end)`` sorted by start, a window
                    that starts before the furthest end of the cluster so far joins it
    none            the pair: every interval as if the pairs were independent

A pair without a value of its unit (no ``gene_id``, no window) is a cluster of its own. The
window of a pair (:func:`window_of`) is ``chr, [window_genome_start, window_genome_end)`` of a
syn or motif pair and ``chrom, [window_start, window_start + length)`` of a variant's.
:func:`assign_clusters` adds the columns :data:`CLUSTER` (the label: the unit's value, or the
row for a pair of its own) and :data:`UNIT` (the task's unit, as the report prints it); runs of
one task share its labels, so paired comparisons resample the same clusters for both runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perturbation_bench.errors import OptionsError

CLUSTER = "cluster"
UNIT = "cluster_unit"
GENE = "gene_id"
RULES = ("auto", "overlap", "none")
"""The named rules; any other value of ``--cluster`` is a column."""
PAIR_UNIT = "pair"
WINDOW_COLUMNS = ("window_chrom", "window_start", "window_end")
"""The window of each pair, as ``samples.py`` writes it per row."""


def window_of(doc: dict, length: int) -> tuple:
    """``(chromosome, start, end)`` of a pair's window (module docstring); Nones without one."""
    if doc.get("window_genome_start") is not None and doc.get("chr") is not None:
        return doc["chr"], int(doc["window_genome_start"]), int(doc["window_genome_end"])
    if doc.get("window_start") is not None and doc.get("chrom") is not None:
        return doc["chrom"], int(doc["window_start"]), int(doc["window_start"]) + length
    return None, None, None


def cluster_column(rule: str) -> str | None:
    """The column a ``--cluster`` value names (None for a named rule)."""
    return None if rule in RULES else rule


def assign_clusters(pairs: pd.DataFrame, rule: str = "auto") -> pd.DataFrame:
    """``pairs`` with :data:`CLUSTER` and :data:`UNIT` added (module docstring).

    Raises:
        OptionsError: ``--cluster COLUMN`` that no pair has.
    """
    column = cluster_column(rule)
    if column is not None and (column not in pairs or pairs[column].isna().all()):
        raise OptionsError(
            f"--cluster {column}: no pair has this column; give a column of the pair files, "
            f"or one of {', '.join(RULES)}"
        )
    labels = np.array([f"row {i}" for i in range(len(pairs))], dtype=object)
    units = np.full(len(pairs), PAIR_UNIT, dtype=object)
    for positions in pairs.groupby("task", sort=True).indices.values():
        rows = pairs.iloc[positions]
        unit = _unit(rows, rule)
        units[positions] = unit
        if unit == "overlap":
            found = _overlap_labels(rows)
        elif unit != PAIR_UNIT:
            found = (unit + " " + rows[unit].astype(str)).where(rows[unit].notna()).to_numpy()
        else:
            continue
        labels[positions] = np.where(pd.isna(found), labels[positions], found)
    return pairs.assign(**{CLUSTER: labels, UNIT: units})


def _has(rows: pd.DataFrame, column: str) -> bool:
    return column in rows and rows[column].notna().any()


def _unit(rows: pd.DataFrame, rule: str) -> str:
    """The unit of one task's pairs under ``rule``."""
    if rule == "none":
        return PAIR_UNIT
    if rule == "overlap" or (rule == "auto" and not _has(rows, GENE)):
        return "overlap" if all(_has(rows, c) for c in WINDOW_COLUMNS) else PAIR_UNIT
    return GENE if rule == "auto" else rule


def _overlap_labels(rows: pd.DataFrame) -> np.ndarray:
    """Per row, ``overlap CHROM:START`` of its chain of overlapping windows (None without one)."""
    chrom, start, end = (rows[c].to_numpy() for c in WINDOW_COLUMNS)
    out = np.full(len(rows), None, dtype=object)
    placed = ~(pd.isna(chrom) | pd.isna(start) | pd.isna(end))
    current, reach, label = None, None, None
    for i in sorted(np.flatnonzero(placed), key=lambda i: (str(chrom[i]), start[i], end[i])):
        if chrom[i] != current or start[i] >= reach:
            current, reach, label = chrom[i], end[i], f"overlap {chrom[i]}:{int(start[i])}"
        reach = max(reach, end[i])
        out[i] = label
    return out

"""Context-calibrated scores (marin-dna ``pipelines/evals/calibration.py``; GPN-Star's
``calibration.smk``): a variant's score less the mean score of neutral sites of its context.

A site's cell is its 5-mer on the forward strand, the site in the middle, and the alternate
base: ``cell = pentanuc + "_" + alt`` (1,024 x 3 = 3,072 cells). ``perturbation-bench build
calibration`` expands neutral sites to their three alternates with each one's cell
(:data:`CELL`); scored with ``llr`` (or ``marginal_llr``) and with ``entropy``, and read by
``perturbation-bench report``, they give the table ``calibration.tsv``::

    source     the model's pretrained path or hub id (kmer-markov: its FASTA)
    score      the score the calibration run was scored with
    rc_average whether it averaged both strands
    window_bp  the window its sites were scored in
    cell       the cell
    mean       the mean score over the cell's sites
    sites      how many sites the cell holds

and the calibrated scores (``--metadata '{"score": "calibrated_llr", "calibration":
"calibration.tsv"}'``; the setting may also name the report's folder, or the scored calibration
run's folder, whose table is then computed as the report computes it:
``report/calibration.read_calibration``)::

    calibrated_llr       s = LLR - mean(cell),      means of a run scored with llr or marginal_llr
    calibrated_entropy   s = entropy - mean(cell),  means of a run scored with entropy

The rows used are those of the scored run's ``source``, its ``rc_average`` and its window; a
variant whose cell has fewer than :data:`MIN_SITES` sites there is refused by name, and so is a
table without rows of the run's model or window.
"""

from __future__ import annotations

from perturbation_bench.dna import BASES
from perturbation_bench.errors import DataSourceError, OptionsError
from perturbation_bench.pairs.scores import calibrating

CELL = "calibration_cell"
"""The column of a calibration config that names each site's cell."""
FLANK = 2
"""Bases on each side of the site in its cell's 5-mer."""
MIN_SITES = 5
"""The fewest sites of a cell whose mean calibrates a score."""
COLUMNS = ("source", "score", "rc_average", "window_bp", "cell", "mean", "sites")


def cell_of(window: str, site: int, alt: str) -> str | None:
    """The cell of a change to ``alt`` at ``site`` of ``window`` (module docstring); None when
    the site lies within :data:`FLANK` bases of the window's ends or its 5-mer holds a base
    other than A, C, G, T."""
    if site < FLANK or site + FLANK >= len(window):
        return None
    pentanuc = window[site - FLANK : site + FLANK + 1].upper()
    return f"{pentanuc}_{alt.upper()}" if set(pentanuc) <= set(BASES) else None


def cell_means(table, path, score: str, source: str, rc_average: bool, window_bp: int):
    """``{cell: (mean, sites)}`` of ``table`` (a pandas table of :data:`COLUMNS`, read from
    ``path``) for a run of ``source`` scored with the calibrated ``score`` on ``window_bp``
    windows.

    Raises:
        DataSourceError: not a calibration table (columns).
        OptionsError: no rows of that model, strand rule, score and window.
    """
    missing = [name for name in COLUMNS if name not in table.columns]
    if missing:
        raise DataSourceError(
            f"calibration {path}: not a calibration table (no {', '.join(missing)})"
        )
    rows = table[table["score"].isin(calibrating(score))]
    for column, value, what in (
        ("source", source, "model"),
        ("rc_average", rc_average, "rc_average"),
        ("window_bp", window_bp, "window"),
    ):
        kept = rows[rows[column] == value]
        if kept.empty:
            found = ", ".join(sorted({str(v) for v in rows[column]})) or "none"
            raise OptionsError(
                f"calibration {path}: no {' or '.join(calibrating(score))} means for this run's "
                f"{what} {value!r} (the table has {found}); calibrate with the same model, "
                "strands and window"
            )
        rows = kept
    return {
        cell: (float(mean), int(sites))
        for cell, mean, sites in zip(rows["cell"], rows["mean"], rows["sites"], strict=True)
    }


def calibration_offsets(cells: list[str | None], means: dict, path, describe) -> list[float]:
    """The mean of each variant's cell, in order.

    Raises:
        OptionsError: a variant without a cell, or whose cell has fewer than :data:`MIN_SITES`
            sites in the table, naming the first such variant (``describe(index)``) and the
            count.
    """
    thin = [
        i for i, cell in enumerate(cells) if cell is None or means.get(cell, (0, 0))[1] < MIN_SITES
    ]
    if thin:
        first = thin[0]
        cell = cells[first]
        found = (
            "no 5-mer of A, C, G, T around its site"
            if cell is None
            else (f"cell {cell} has {means.get(cell, (0, 0))[1]} site(s) in {path}")
        )
        raise OptionsError(
            f"{len(thin)} of {len(cells)} variants cannot be calibrated (at least {MIN_SITES} "
            f"sites per cell): the first, {describe(first)}: {found}"
        )
    return [means[cell][0] for cell in cells]

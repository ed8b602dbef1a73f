"""``perturbation-bench build calibration``: neutral sites made a variant config for calibrating
scores by context (``pairs/calibration.py``).

Every base of each BED region (0-based, half-open) is a neutral site; each site of A, C, G or T
becomes its three alternates, as ``build saturation`` expands a region, each with its cell
(``calibration_cell``: the 5-mer on the forward strand around it and the alternate base). A
site within two bases of its chromosome's ends has no 5-mer and is left out, as is a site
whose 5-mer holds another letter; both are counted. The variants are then windowed as ``build
variants`` windows them (``--window``, ``--edge``), into the config ``--config``.
"""

from __future__ import annotations

from perturbation_bench.formats.fasta import resolve_chromosome
from perturbation_bench.pairs.calibration import CELL, FLANK, cell_of
from perturbation_bench.pairs.conventions import EDGES
from perturbation_bench.variants.saturation import saturation_rows


def calibration_rows(genome, regions) -> tuple[list[dict], dict]:
    """The sites' variant rows, each with its cell, and a summary (``build saturation``'s, and
    the sites left out without a 5-mer)."""
    rows, summary = saturation_rows(genome, regions)
    kept, contexts = [], {}  # a site's 5-mer, read once for its three alternates
    for row in rows:
        site = (row["chrom"], row["pos"])
        if site not in contexts:
            chrom, start = resolve_chromosome(row["chrom"], genome), row["pos"] - 1 - FLANK
            contexts[site] = genome.fetch(chrom, start, row["pos"] + FLANK) if start >= 0 else ""
        context = contexts[site]
        cell = cell_of(context, FLANK, row["alt"]) if len(context) == 2 * FLANK + 1 else None
        if cell is not None:
            kept.append({**row, CELL: cell})
    summary["left_out_no_five_mer"] = (len(rows) - len(kept)) // 3
    return kept, summary


def add_arguments(parser) -> None:
    """The options of ``build calibration``."""
    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    parser.add_argument(
        "--sites", required=True, help="BED of neutral regions: every base is a site"
    )
    parser.add_argument("--config", required=True, help="config name, e.g. calibration_hg38")
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--window", type=int, default=8192, help="window bp (default %(default)s)")
    parser.add_argument(
        "--edge", choices=EDGES, default="shift", help="at a chromosome end (as build variants)"
    )

"""``perturbation-bench build saturation``: every base of some regions changed to each of the
three other bases, as a variant table for ``build variants``.

Regions come as ``CHROM:START-END`` (1-based, both ends included, as samtools writes them) or
from a BED file (0-based, half-open; its 4th column, if any, names the region). For each region,
in the order given, every position in ascending order and its three alternates in A, C, G, T
order make one row each: ``chrom`` (as given), ``pos`` (1-based), ``ref``, ``alt`` and ``region``
(the BED name, else ``CHROM:START-END``). A position whose base is not A/C/G/T is left out and
counted. Chromosome names match the FASTA with or without ``chr`` (``windows.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from perturbation_bench.dna import BASES
from perturbation_bench.errors import OptionsError
from perturbation_bench.formats.fasta import resolve_chromosome
from perturbation_bench.variants.tables import write_variant_table

REGION = re.compile(r"^(?P<chrom>[^:\s]+):(?P<start>[\d,]+)-(?P<end>[\d,]+)$")


def parse_region(text: str) -> tuple[str, int, int, str]:
    """``(chrom, start0, end0, name)`` of ``CHROM:START-END`` (1-based, closed)."""
    match = REGION.match(text.strip())
    if not match:
        raise OptionsError(f"--region {text!r}: expected CHROM:START-END, e.g. chr1:1000-1200")
    start, end = (int(match[k].replace(",", "")) for k in ("start", "end"))
    if not 1 <= start <= end:
        raise OptionsError(f"--region {text!r}: need 1 <= START <= END (1-based, both included)")
    return match["chrom"], start - 1, end, text.strip()


def saturation_rows(genome, regions) -> tuple[list[dict], dict]:
    """The rows (module docstring) and a summary: positions and rows per region, bases left out."""
    rows, summary = [], {"regions": {}, "left_out_non_acgt": 0}
    for chrom, start, end, name in regions:
        fasta_name = resolve_chromosome(chrom, genome)
        if fasta_name is None:
            raise OptionsError(f"region {name}: chromosome {chrom!r} is not in {genome.path}")
        if end > genome.length(fasta_name):
            raise OptionsError(
                f"region {name}: ends at {end}, past the end of {fasta_name} "
                f"({genome.length(fasta_name)} bp)"
            )
        bases = genome.fetch(fasta_name, start, end)
        left_out = 0
        for offset, ref in enumerate(bases):
            if ref not in BASES:
                left_out += 1
                continue
            rows += [
                {"chrom": chrom, "pos": start + offset + 1, "ref": ref, "alt": alt, "region": name}
                for alt in BASES
                if alt != ref
            ]
        summary["regions"][name] = {
            "bases": end - start,
            "left_out_non_acgt": left_out,
            "rows": 3 * (end - start - left_out),
        }
        summary["left_out_non_acgt"] += left_out
    return rows, summary


def write_saturation(rows: list[dict], summary: dict, out: str | Path, text_columns=()) -> Path:
    """Write the table (parquet) and ``<out>.summary.json``; return the summary's path.
    ``text_columns``: columns of the rows written after the scan's own, as text."""
    import pyarrow as pa

    columns = [
        ("chrom", pa.string()),
        ("pos", pa.int64()),
        ("ref", pa.string()),
        ("alt", pa.string()),
        ("region", pa.string()),
        *((name, pa.string()) for name in text_columns),
    ]
    return write_variant_table(rows, columns, summary, out)


def add_arguments(parser) -> None:
    """The options of ``build saturation``."""
    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    parser.add_argument(
        "--region",
        action="append",
        default=[],
        metavar="CHROM:START-END",
        help="1-based, both ends included (repeatable)",
    )
    parser.add_argument("--bed", help="regions from a BED file (0-based, half-open)")
    parser.add_argument("--out", required=True, help="the variant table to write (.parquet)")

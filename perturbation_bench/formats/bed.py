"""BED regions (saturation scans, control elements): ``chrom``, 0-based ``start``, ``end`` and an
optional name, one region per line; a line that is not one stops with its number."""

from __future__ import annotations

from pathlib import Path

from perturbation_bench.errors import DataValidationError


def read_bed(path: str | Path, numbered: bool = False) -> list[tuple]:
    """The regions of a BED file (``track``/``browser``/``#`` lines skipped), each
    ``(chrom, start0, end0, name)``, or ``(line number, (chrom, start0, end0, name))`` when
    ``numbered``."""
    regions = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip() or line.startswith(("#", "track", "browser")):
            continue
        fields = line.split("\t")
        try:
            chrom, start, end = fields[0], int(fields[1]), int(fields[2])
        except (IndexError, ValueError):
            raise DataValidationError(
                f"{path}: line {number}: expected CHROM<tab>START<tab>END, got {line!r}"
            ) from None
        if not 0 <= start < end:
            raise DataValidationError(f"{path}: line {number}: need 0 <= START < END")
        name = fields[3] if len(fields) > 3 and fields[3] else f"{chrom}:{start + 1}-{end}"
        regions.append(
            (number, (chrom, start, end, name)) if numbered else (chrom, start, end, name)
        )
    return regions

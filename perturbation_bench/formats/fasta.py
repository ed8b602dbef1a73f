"""Random access to a reference genome (FASTA, plain or bgzip) without loading it into memory.

pyfaidx reads only the bytes of each requested window through the ``.fai`` index (built next to
the FASTA on first use; a bgzip file also needs its ``.gzi``, built the same way). Coordinates
are 0-based, half-open: ``fetch(chrom, start, end)`` is bases ``start .. end-1``.
"""

from __future__ import annotations

from pathlib import Path

from perturbation_bench.dna import reverse_complement
from perturbation_bench.errors import DataSourceError


class Genome:
    """An indexed FASTA; sequences come back in upper case."""

    def __init__(self, path: str | Path) -> None:
        import pyfaidx

        self.path = Path(path)
        try:
            self._fasta = pyfaidx.Fasta(str(path), as_raw=True, sequence_always_upper=True)
        except (OSError, ValueError, ImportError, pyfaidx.FastaIndexingError) as err:
            # pyfaidx's UnsupportedCompressionFormat (a gzip that is not bgzip) is an OSError
            raise DataSourceError(f"cannot open FASTA {path}: {err}") from None

    def __contains__(self, chrom: str) -> bool:
        return chrom in self._fasta

    @property
    def names(self) -> list[str]:
        """The sequence names, in file order."""
        return list(self._fasta.keys())

    def length(self, chrom: str) -> int:
        """Length of ``chrom`` in bp."""
        return len(self._fasta[chrom])

    def fetch(self, chrom: str, start: int, end: int, strand: str = "+") -> str:
        """Bases ``[start, end)`` of ``chrom``, reverse-complemented when ``strand`` is ``-``."""
        sequence = self._fasta[chrom][start:end]
        return reverse_complement(sequence) if strand == "-" else sequence


def resolve_chromosome(name: str, fasta_names) -> str | None:
    """The FASTA's name for chromosome ``name`` (with or without ``chr``; ``MT`` = ``chrM``)."""
    bare = name[3:] if name.lower().startswith("chr") else name
    candidates = [name, bare, f"chr{bare}"]
    if bare.upper() in ("M", "MT"):
        candidates += ["MT", "chrM", "M", "chrMT"]
    return next((candidate for candidate in candidates if candidate in fasta_names), None)

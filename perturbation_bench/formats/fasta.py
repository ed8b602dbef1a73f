"""A reference genome (FASTA) read without loading it into memory: random access, or one pass.

:class:`Genome` (plain or bgzip): pyfaidx reads only the bytes of each requested window through
the ``.fai`` index (built next to the FASTA on first use; a bgzip file also needs its ``.gzi``,
built the same way). Coordinates are 0-based, half-open: ``fetch(chrom, start, end)`` is bases
``start .. end-1``.

:func:`stream_fasta` (plain or any gzip, told by its first two bytes): one pass in file order,
each record's bases in pieces of about ``chunk`` bases, with no index and nothing written.
"""

from __future__ import annotations

from collections.abc import Iterator
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


GZIP_MAGIC = b"\x1f\x8b"


def stream_fasta(path: str | Path, chunk: int = 8_000_000) -> Iterator[tuple[int, bytes, int]]:
    """``(record, bases, bytes read so far)`` of ``path`` in file order (module docstring):
    ``record`` the 0-based number of the ``>`` record the bases belong to; each record's pieces
    joined are its sequence, line breaks removed, case kept; ``bytes read so far`` counts the
    file's (compressed) bytes, for a progress bar.

    Raises:
        DataSourceError: the file cannot be read, or holds bases before its first ``>`` header.
    """
    import gzip
    import zlib

    path = Path(path)
    try:
        with path.open("rb") as raw:
            gzipped = raw.read(2) == GZIP_MAGIC
            raw.seek(0)
            handle = gzip.GzipFile(fileobj=raw) if gzipped else raw
            record, pieces, size = -1, [], 0
            for number, line in enumerate(handle, start=1):
                if line.startswith(b">"):
                    if pieces:
                        yield record, b"".join(pieces), raw.tell()
                    record, pieces, size = record + 1, [], 0
                    continue
                line = line.rstrip()
                if not line:
                    continue
                if record < 0:
                    raise DataSourceError(f"{path}: line {number}: bases before the first > header")
                pieces.append(line)
                size += len(line)
                if size >= chunk:
                    yield record, b"".join(pieces), raw.tell()
                    pieces, size = [], 0
            if pieces:
                yield record, b"".join(pieces), raw.tell()
    except (OSError, EOFError, zlib.error) as err:
        raise DataSourceError(f"cannot read FASTA {path}: {err}") from None

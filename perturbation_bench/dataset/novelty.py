"""Novelty against the genome: how many of each window's k-mers a genome lacks.

For every pair of a data dir's pair files, ``perturbation-bench annotate novelty`` counts, per
window (``original_sequence``, ``sequence``), its canonical k-mers absent from a genome and
writes the two counts as the columns ``novel_k<K>_original`` and ``novel_k<K>_perturbed``
(``pairs/fields.novelty_columns``). A window of ``L`` bases has ``L - k + 1`` k-mers, each
counted at its position (a k-mer twice in a window counts twice); a k-mer is novel when neither
it nor its reverse complement occurs anywhere in the genome, so a window found on the minus
strand alone has none. A k-mer holding a letter other than A, C, G, T (``N``) is skipped, in
the windows and in the genome: it is neither novel nor counted. Case is ignored.

How it counts, in memory bounded by the windows' k-mers, not the genome:

1. every window's k-mers as 2-bit codes (A, C, G, T = 0..3, the first base in the highest bits;
   ``k <= 31`` fits a uint64), each replaced by the smaller of its code and its reverse
   complement's (canonical); their distinct values, sorted: the query;
2. one streaming pass over the genome (``formats/fasta.stream_fasta``: plain or gzipped, no
   index), :data:`CHUNK` bases at a time with ``k - 1`` bases carried over within a record: each
   chunk's canonical codes, sorted, and the query are looked up in each other (the smaller by
   binary search in the larger) and the query values found are marked;
3. a window's count: its k-mers among the query values never marked (those alone are searched:
   few, where the original windows come from the genome).

Each file is rewritten whole (to a temporary file beside it, then moved over it): its rows, in
order, and every column it had, less any novelty column of an earlier annotation, plus the two;
rows in equal rows out. The bytes change, so does the data's identity (``pairs/identity.py``):
annotate before scoring, so the runs carry the columns the report reads (``report/novelty.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from perturbation_bench.errors import DataSourceError, OptionsError
from perturbation_bench.pairs.fields import NOVELTY_COLUMN, ORIGINAL, PERTURBED, novelty_columns

MAX_K = 31
"""The longest k whose 2-bit code fits a uint64 (62 bits)."""
CHUNK = 8_000_000
"""Genome bases per step of the pass: the pass holds about 40 bytes per base of one chunk."""
_CODES = np.full(256, 4, dtype=np.uint8)
for _i, _letter in enumerate(b"ACGT"):
    _CODES[_letter] = _CODES[_letter | 0x20] = _i


def check_k(k: int) -> None:
    """Raise :class:`OptionsError` unless ``1 <= k <= MAX_K``."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise OptionsError(f"--k must be a whole number from 1 to {MAX_K}, got {k!r}")


def canonical_kmers(text: bytes, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, starts)``: the canonical codes (uint64) of the k-mers of ``text`` that hold A,
    C, G, T alone (either case), and the 0-based position each starts at (module docstring)."""
    bases = _CODES[np.frombuffer(text, dtype=np.uint8)]
    m = len(bases) - k + 1
    if m <= 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    unknown = np.concatenate([[0], np.cumsum(bases == 4)])
    starts = np.flatnonzero(unknown[k : k + m] == unknown[:m])
    clipped = np.minimum(bases, 3).astype(np.uint64)
    forward = _window_codes(clipped, k, m, reverse=False)
    reverse = _window_codes(np.uint64(3) - clipped, k, m, reverse=True)
    canonical = np.minimum(forward, reverse, out=forward)
    return (canonical if len(starts) == m else canonical[starts]), starts


def _window_codes(codes: np.ndarray, k: int, m: int, reverse: bool) -> np.ndarray:
    """The 2-bit code of the ``k`` bases from each of the first ``m`` positions of ``codes``:
    base ``j`` of a window in bits ``2 (k - 1 - j)`` (forward) or ``2 j`` (``reverse``, of the
    complemented bases: the reverse complement's code). Built by doubling, ``O(log k)`` passes:
    codes of ``2^i`` bases are joined into codes of ``2^(i+1)`` and into the result along the
    bits of ``k``."""
    result, done = None, 0
    piece, size = codes, 1
    while True:
        if k & size:
            if result is None:
                result = piece
            else:
                later = piece[done : done + len(result)]
                result = result[: len(later)]
                if reverse:
                    result = result | (later << np.uint64(2 * done))
                else:
                    result = (result << np.uint64(2 * size)) | later
            done += size
        if done == k:
            return result[:m]
        joined = piece[size:]
        piece = (
            piece[: len(joined)] | (joined << np.uint64(2 * size))
            if reverse
            else (piece[: len(joined)] << np.uint64(2 * size)) | joined
        )
        size *= 2


def window_kmers(windows: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, owner)``: the canonical codes of every window's k-mers and the index of the
    window each belongs to (the windows read as one text, an ``N`` between two: no k-mer spans
    two windows)."""
    text = "N".join(windows).encode("ascii", "replace")
    codes, starts = canonical_kmers(text, k)
    ends = np.cumsum([len(window) + 1 for window in windows])
    return codes, np.searchsorted(ends, starts, side="right")


class GenomeLookup:
    """The query of step 1 (module docstring), and which of its values the genome holds."""

    def __init__(self, query: np.ndarray, k: int) -> None:
        self.query, self.k = query, k
        self.found = np.zeros(len(query), bool)

    def scan(self, fasta: str | Path, progress=None) -> int:
        """Step 2 over ``fasta``; ``progress(bytes_read)`` after each chunk. Returns the genome's
        bases read.

        Raises:
            DataSourceError: the FASTA holds fewer bases than one k-mer.
        """
        from perturbation_bench.formats.fasta import stream_fasta

        carried, record, total = b"", None, 0
        for number, bases, position in stream_fasta(fasta, CHUNK):
            text = (carried if number == record else b"") + bases
            self._mark(np.sort(canonical_kmers(text, self.k)[0]))
            carried, record, total = text[len(text) - self.k + 1 :], number, total + len(bases)
            if progress is not None:
                progress(position)
        if total < self.k:  # nothing to count against: every window would read as novel
            raise DataSourceError(
                f"--fasta {fasta}: {total} bases read, fewer than one {self.k}-mer (an empty or "
                "header-only FASTA?); no pair file was changed"
            )
        return total

    def _mark(self, codes: np.ndarray) -> None:
        """Mark the query values among ``codes`` (sorted), searching the smaller array in the
        larger."""
        if len(codes) == 0 or len(self.query) == 0:
            return
        if len(codes) < len(self.query):
            index = np.minimum(np.searchsorted(self.query, codes), len(self.query) - 1)
            self.found[index[self.query[index] == codes]] = True
        else:
            index = np.minimum(np.searchsorted(codes, self.query), len(codes) - 1)
            self.found |= codes[index] == self.query

    _absent: np.ndarray | None = None

    def novel(self, windows: list[str]) -> np.ndarray:
        """Step 3: each window's number of novel k-mers (int64), looked up among the query
        values the genome lacks (after the scan: few, where the originals come from it)."""
        if self._absent is None:
            self._absent = self.query[~self.found]
        codes, owner = window_kmers(windows, self.k)
        if len(self._absent) == 0:
            return np.zeros(len(windows), np.int64)
        index = np.minimum(np.searchsorted(self._absent, codes), len(self._absent) - 1)
        missing = self._absent[index] == codes
        return np.bincount(owner[missing], minlength=len(windows)).astype(np.int64)


def pair_windows(batch) -> list[str]:
    """A batch's windows, the originals then the perturbed copies."""
    return [*batch.column(ORIGINAL).to_pylist(), *batch.column(PERTURBED).to_pylist()]


def query_of(files: list[Path], k: int) -> np.ndarray:
    """Step 1 over every pair of ``files`` (checked as the tasks check them)."""
    from perturbation_bench.pairs.files import iter_pair_batches

    parts = [distinct(window_kmers(pair_windows(b), k)[0]) for b, _ in iter_pair_batches(files)]
    return distinct(np.concatenate(parts)) if parts else np.zeros(0, np.uint64)


def distinct(codes: np.ndarray) -> np.ndarray:
    """The distinct values of ``codes``, sorted (a sort and a comparison: faster than
    ``np.unique`` on uint64 here)."""
    ordered = np.sort(codes)
    return (
        ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered
    )


def annotate_file(path: Path, lookup: GenomeLookup) -> int:
    """Rewrite ``path`` with its two novelty columns (module docstring); its number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from perturbation_bench.pairs.files import iter_pair_batches

    names = novelty_columns(lookup.k)
    temporary = path.with_name(f".{path.name}.novelty")
    writer, rows = None, 0
    try:
        for batch, _ in iter_pair_batches([path]):
            kept = [c for c in batch.schema.names if not NOVELTY_COLUMN.match(c)]
            counts = lookup.novel(pair_windows(batch)).reshape(2, -1)
            table = pa.Table.from_batches([batch.select(kept)])
            for name, column in zip(names, counts, strict=True):
                table = table.append_column(name, pa.array(column, pa.int64()))
            if writer is None:
                writer = pq.ParquetWriter(temporary, table.schema)
            writer.write_table(table)
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    os.replace(temporary, path)
    return rows


def pair_files_to_annotate(fasta: str | Path, data: str | Path, k: int) -> list[Path]:
    """The pair files below ``data``, after refusing, before anything is read: ``k`` out of
    range, a missing genome, a missing data dir or one without pair files."""
    from perturbation_bench.pairs.layout import PARQUET_GLOB

    check_k(k)
    if not Path(fasta).is_file():
        raise DataSourceError(f"--fasta {fasta}: no such file")
    if not Path(data).is_dir():
        raise DataSourceError(f"--data {data}: no such folder")
    files = sorted(Path(data).rglob(PARQUET_GLOB))
    if not files:
        raise DataSourceError(f"--data {data}: no pair files ({PARQUET_GLOB}) below it")
    return files

"""Read parquet files of pairs and check the rules every pair must pass, defined once.

Used by the tasks when they load data and by ``perturbation-bench validate``, so a dataset that
passes one passes the other. Contract, checked on every file before any scoring, with the file,
the 0-based row within that file and the reason in the error:

- the file is a readable parquet file and has rows;
- it has the string columns ``original_sequence`` (the real window) and ``sequence`` (the
  perturbed one); the further sequences its kind declares (``shape.py``: a footprint file's
  ``background_sequence``), held to the rules of ``sequence``;
- no value is null, empty or shorter than one k-mer (``kmer_size``, the k-mer size in use);
- every sequence of a row has the same length;
- letters are A, C, G, T or N, in either case.

A kind whose documents are requests (``shape.py``: ``requests``, the recall kind) holds its
requests' columns in place of the pair's: the same rules, its contexts of one length per row;
and the columns its task reads (no other task reads such a file).

Nothing is dropped: rows in equal rows out.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from perturbation_bench.dna import LETTERS, first_foreign_letter
from perturbation_bench.errors import DataValidationError
from perturbation_bench.pairs.changes import Spans, changed_spans, changed_text, string_bytes
from perturbation_bench.pairs.fields import ORIGINAL, PERTURBED, SEQUENCE_COLUMNS
from perturbation_bench.pairs.kinds import KIND, copies, kind_of, shape_of_file
from perturbation_bench.pairs.shape import Copy, DocumentShape


def read_pair_file(path: Path, kmer_size: int = 1, columns: list[str] | None = None) -> pa.Table:
    """Read one parquet file (all columns, or ``columns`` plus those its kind's file check reads:
    ``shape.DocumentShape.checked_columns``) and check it.

    Raises:
        DataValidationError: the file is unreadable or breaks the contract (module docstring).
    """
    try:
        available = pq.read_schema(path).names
        shape = shape_of_file(available)
        if columns is not None:
            columns = [*columns, *shape.checked_columns]
        wanted = None if columns is None else [c for c in dict.fromkeys(columns) if c in available]
        table = pq.read_table(path, columns=wanted)
    except (pa.ArrowException, OSError) as err:
        raise DataValidationError(f"{path}: not a readable parquet file ({err})") from None
    if shape.requests is None:
        check_pairs(table, path, kmer_size)
    else:
        check_requests(table, shape, path, kmer_size)
    return table


BATCH_ROWS = 256
"""Rows per batch when the tasks stream a file: memory holds one batch of Arrow data at a time."""


def iter_pair_batches(
    files: list[Path], kmer_size: int = 1, select=None
) -> Iterator[tuple[pa.RecordBatch, PairScan]]:
    """Every row of ``files``, in file order, as checked record batches of :data:`BATCH_ROWS`,
    each with its :class:`PairScan` (:func:`check_pairs`). ``select(batch)``, given each batch
    as read, returns the indices of the rows to keep: only those are checked and yielded, and
    a batch that keeps none is skipped (a process checks the pairs it scores).

    Each batch is checked as it is read (one thread: memory holds one batch, and the reader's
    buffers go back to the system after each file); on the first bad batch the whole file is read and
    checked again, so the error names the same row and counts the same rows like it as
    :func:`read_pair_file` does.

    Raises:
        DataValidationError: a file is unreadable or breaks the contract (module docstring).
    """
    for path in files:
        try:
            reader = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        except (pa.ArrowException, OSError) as err:
            raise DataValidationError(f"{path}: not a readable parquet file ({err})") from None
        if reader.metadata.num_rows == 0:
            check_pairs(reader.schema_arrow.empty_table(), path, kmer_size)
        try:
            for batch in reader.iter_batches(batch_size=BATCH_ROWS, use_threads=False):
                if select is not None:
                    rows = select(batch)
                    if len(rows) == 0:
                        continue
                    if len(rows) < batch.num_rows:
                        batch = batch.take(pa.array(rows))
                try:
                    scan = check_pairs(batch, path, kmer_size)
                except DataValidationError:
                    read_pair_file(path, kmer_size)  # raises with the whole file's row numbers
                    raise
                yield batch, scan
        except (pa.ArrowException, OSError) as err:
            raise DataValidationError(f"{path}: not a readable parquet file ({err})") from None
        pa.default_memory_pool().release_unused()  # the reader's buffers, back to the system


class PairScan(NamedTuple):
    """What checking a table found, per row: whether any sequence has lower-case (soft-masked)
    letters, the perturbed sequence's changed span, and that span's text; and those of each
    further sequence the table holds (``shape.Copy``, in the order of ``kinds.copies``)."""

    soft_masked: np.ndarray
    spans: Spans
    changes: pa.Array
    copies: tuple[tuple[Copy, Spans, pa.Array], ...] = ()


def check_pairs(
    table: pa.Table | pa.RecordBatch, source: Path | str, kmer_size: int = 1
) -> PairScan:
    """Raise :class:`DataValidationError` naming ``source``, the first bad row and the reason;
    return the rows' :class:`PairScan`.

    The perturbed sequence equals the original outside its changed span, so its letters are
    checked within the span only (``sequence`` outside it is ``original_sequence``, checked whole).
    A further sequence's column (``shape.Copy``), where there is one, is checked by the rules
    of ``sequence``.
    """
    if table.num_rows == 0:
        raise DataValidationError(f"{source}: empty file (0 rows)")
    _check_columns(table, SEQUENCE_COLUMNS, source)
    original_length = _check_strings(table, ORIGINAL, source, kmer_size)
    original = _one_array(table.column(ORIGINAL))
    foreign, lower = _letter_rows(original)
    _fail_foreign(foreign, original, ORIGINAL, source)
    spans, changes, changed_lower = _check_copy(
        table, PERTURBED, original, original_length, source, kmer_size
    )
    soft_masked, held = lower | changed_lower, []
    for copy in copies():
        if copy.column in table.column_names:
            *found, copy_lower = _check_copy(
                table, copy.column, original, original_length, source, kmer_size
            )
            soft_masked |= copy_lower
            held.append((copy, *found))
    return PairScan(soft_masked, spans, changes, tuple(held))


def check_requests(table: pa.Table, shape: DocumentShape, source, kmer_size: int = 1) -> None:
    """Raise :class:`DataValidationError` naming ``source``, the first bad row and the reason,
    for a file of a kind whose documents are requests (module docstring)."""
    if table.num_rows == 0:
        raise DataValidationError(f"{source}: empty file (0 rows)")
    _check_columns(table, shape.checked_columns, source)
    first, *others = shape.contexts
    lengths = {name: _check_strings(table, name, source, kmer_size) for name in shape.contexts}
    for name in others:
        _fail_where(
            pc.not_equal(lengths[first], lengths[name]),
            source,
            f"{first} and {name} differ in length",
            detail=lambda row, name=name: f" ({lengths[first][row]} vs {lengths[name][row]} bp)",
        )
    continuation = shape.requests[0].continuation
    _check_strings(table, continuation, source, kmer_size)
    for name in shape.sequence_columns:
        column = _one_array(table.column(name))
        _fail_foreign(_letter_rows(column)[0], column, name, source)


def _check_columns(table, names, source) -> None:
    """Fail on the sequence columns of ``names`` that ``table`` lacks, naming the task of the
    kind the file is where it is a kind's of its own (``kinds.KINDS``)."""
    missing = [c for c in names if c not in table.column_names]
    if not missing:
        return
    found = KIND.get(kind_of(table.column_names))
    task = f" (a {found.name} file: its task is {found.task})" if found else ""
    raise DataValidationError(
        f"{source}: missing column(s) {', '.join(missing)}; "
        f"found: {', '.join(table.column_names) or 'none'}{task}"
    )


def _check_strings(table, name: str, source, kmer_size: int):
    """Fail on the first row of column ``name`` that is not a string, null, empty or shorter
    than one k-mer; return its lengths."""
    column = table.column(name)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise DataValidationError(
            f"{source}: row 0: column {name!r} holds {column.type} values, expected strings"
        )
    _fail_where(column.is_null(), source, f"{name!r} is null")
    lengths = pc.utf8_length(column)
    _fail_where(pc.equal(lengths, 0), source, f"{name!r} is empty")
    _fail_where(
        pc.less(lengths, kmer_size),
        source,
        f"{name!r} is shorter than one {kmer_size}-mer",
        detail=lambda row: f" ({lengths[row]} bp)",
    )
    return lengths


def _check_copy(table, name: str, original: pa.Array, original_length, source, kmer_size: int):
    """Check column ``name``, a copy of the original changed in one span (``sequence``,
    ``background_sequence``): strings of the original's length, letters of LETTERS within its
    changed span. Return the span, its text and the rows with lower-case letters there."""
    length = _check_strings(table, name, source, kmer_size)
    _fail_where(
        pc.not_equal(original_length, length),
        source,
        f"{ORIGINAL} and {name} differ in length",
        detail=lambda row: f" ({original_length[row]} vs {length[row]} bp)",
    )
    copy = _one_array(table.column(name))
    if not np.array_equal(string_bytes(original)[1], string_bytes(copy)[1]):
        _fail_foreign(_letter_rows(copy)[0], copy, name, source)  # not ASCII
    spans = changed_spans(original, copy)
    changes = changed_text(copy, spans)
    foreign, changed_lower = _letter_rows(changes)
    _fail_foreign(foreign, copy, name, source)
    return spans, changes, changed_lower


def _one_array(column) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _fail_foreign(rows: np.ndarray, column: pa.Array, name: str, source) -> None:
    _fail_where(
        pa.array(rows),
        source,
        f"{name!r} has letters outside {LETTERS}",
        detail=lambda row: f" (first: {first_foreign_letter(column[row].as_py())})",
    )


_UPPER_CASE_BIT = 0xDF
"""Cleared, it turns an ASCII lower-case letter into its upper case (and leaves upper case)."""
_LETTER_CODES = np.frombuffer(LETTERS.encode(), np.uint8)


def _letter_rows(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Per row: whether it holds a letter outside LETTERS (either case), and a lower-case one."""
    data, offsets = string_bytes(column)
    folded = data & _UPPER_CASE_BIT
    known = np.zeros(data.shape, bool)
    for code in _LETTER_CODES:
        known |= folded == code

    def rows_with(hits: np.ndarray) -> np.ndarray:
        rows = np.zeros(len(column), bool)
        rows[np.searchsorted(offsets, np.flatnonzero(hits), side="right") - 1] = True
        return rows

    return rows_with(~known), rows_with(known & (data != folded))


def _fail_where(mask, source, reason, detail=None) -> None:
    """Raise for the first row where ``mask`` is true; ``detail(row)`` adds to the message."""
    bad = pc.indices_nonzero(pc.fill_null(mask, False))
    if len(bad) == 0:
        return
    row = bad[0].as_py()
    more = f"; {len(bad) - 1} more row(s) like it" if len(bad) > 1 else ""
    raise DataValidationError(f"{source}: row {row}: {reason}{detail(row) if detail else ''}{more}")

"""The documents of a task, read from its parquet files in one streaming pass.

One document per pair: a dict of the file's columns, except that the perturbed sequence is kept
as its changed span (``pairs/changes.py``: ``scoring_change_start``, ``scoring_change``; a
further sequence its kind declares the same way, ``pairs/shape.py``), so a window is held once, not twice or three times; ``scoring_soft_masked`` says whether the pair has lower-case
letters; with a crop (context-length tasks) also ``scoring_crop_start``; and ``scoring_task``,
the task's settings, one object for all (``pairs/fields.py`` names every field).
The files are read :data:`~perturbation_bench.pairs.files.BATCH_ROWS` rows at a time; the rows a
process keeps are checked (``pairs/files.py``) and turned into dicts, so memory holds the
documents and one batch (``perturbation-bench validate`` checks every row of a dataset).

Under data parallelism lm-eval gives rank ``r`` of ``W`` the documents at positions ``r, r + W,
...``. When the scoring model is one of this package's, it says which rank it is
(``active_models.py``) and a process holds only its own documents and the first one (lm-eval
checks the task on it); the other positions read as :data:`NOT_HELD`, which raises if lm-eval
ever reads a field of it. Other models get every document.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from perturbation_bench.errors import PairingError
from perturbation_bench.pairs.changes import changed_spans
from perturbation_bench.pairs.fields import (
    CHANGE,
    CHANGE_START,
    CROP_START,
    PERTURBED,
    SEQUENCE_COLUMNS,
    SOFT_MASKED,
    TASK,
)
from perturbation_bench.pairs.files import PairScan, iter_pair_batches
from perturbation_bench.pairs.settings import TaskSettings


class _NotHeld(dict):
    """The document of another process: reading any of its fields raises."""

    def __missing__(self, key):
        raise PairingError(
            "lm-eval asked this process for a pair that another process scores: with several "
            "processes each one holds only its own share of the pairs, as lm-eval shares them "
            "out (--samples is not supported with several processes)"
        )


NOT_HELD = _NotHeld()


class TaskDocuments(Sequence):
    """The documents, in file order, as lm-eval reads a split: ``len``, ``[i]``, iteration,
    and ``features`` (column name -> arrow type, None for the fields the tasks add); a position
    this process does not hold reads as :data:`NOT_HELD`."""

    def __init__(self, held: dict[int, dict], length: int, features: dict) -> None:
        self._held, self._length = held, length
        self.features = features

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> dict:
        if not -self._length <= index < self._length:
            raise IndexError(f"document {index} of {self._length}")
        return self._held.get(index % self._length, NOT_HELD)

    def __iter__(self) -> Iterator[dict]:
        return (self._held.get(position, NOT_HELD) for position in range(self._length))

    @property
    def held(self) -> list[dict]:
        """The documents this process holds, in file order."""
        return list(self._held.values())


@dataclass
class Reading:
    """What one pass over the files found: the documents and the counts the task logs."""

    documents: TaskDocuments
    total_rows: int
    lower_case_rows: int
    overflowing_crops: int


class _Selection:
    """Chooses the rows a process keeps, batch by batch as the files are read: the shard's rows
    (row ``I`` modulo ``N`` over the files), and of those the positions ``rank`` modulo
    ``world_size`` and position 0."""

    def __init__(self, shard: tuple[int, int] | None, share: tuple[int, int]) -> None:
        self.shard, (self.rank, self.world_size) = shard, share
        self.total_rows = self.positions = 0
        self.held_positions = np.zeros(0, np.int64)

    def __call__(self, batch: pa.RecordBatch) -> np.ndarray:
        """The indices of the rows of ``batch`` to keep; their positions in ``held_positions``."""
        first_row, self.total_rows = self.total_rows, self.total_rows + batch.num_rows
        kept = np.arange(batch.num_rows)
        if self.shard is not None:
            index, count = self.shard
            kept = np.arange((index - first_row) % count, batch.num_rows, count)
        positions = self.positions + np.arange(kept.size)
        self.positions += kept.size
        held = (positions % self.world_size == self.rank) | (positions == 0)
        self.held_positions = positions[held]
        return kept[held]


def read_documents(
    files: list[Path],
    settings: TaskSettings,
    shard: tuple[int, int] | None = None,
    share: tuple[int, int] = (0, 1),
) -> Reading:
    """Read, check and convert the pairs of ``files`` this process keeps (module docstring):
    only those are checked and made documents.

    Every held document refers to ``settings`` (its k-mer size is the shortest sequence allowed,
    its ``context_bp`` the crop). ``shard = (I, N)`` keeps the rows whose 0-based row over the
    files is ``I`` modulo ``N``; ``share = (rank, world_size)`` is the process's share of what
    is kept.
    """
    select = _Selection(shard, share)
    held: dict[int, dict] = {}
    columns: dict = {}
    lower_case_rows = overflowing_crops = 0
    context_bp = settings.context_bp
    for batch, scan in iter_pair_batches(files, settings.formatting.kmer_size, select):
        lower_case_rows += int(scan.soft_masked.sum())
        crops = None
        if context_bp is not None:
            crops, overflows = _crops(batch, scan, context_bp)
            overflowing_crops += int(overflows.sum())
        batch = _documents_batch(batch, scan, crops)
        columns.update({column.name: column.type for column in batch.schema})
        for position, document in zip(
            select.held_positions.tolist(), batch.to_pylist(), strict=True
        ):
            document[TASK] = settings
            held[position] = document
    documents = TaskDocuments(held, select.positions, {**columns, TASK: None})
    for document in held.values():  # files with other columns: theirs are null here
        if len(document) < len(documents.features):
            for name in columns:
                document.setdefault(name, None)
    return Reading(documents, select.total_rows, lower_case_rows, overflowing_crops)


def _documents_batch(batch: pa.RecordBatch, scan: PairScan, crops: np.ndarray | None):
    """``batch`` as documents store it: ``sequence`` (and each further sequence its kind
    declares) replaced by its changed span (start and text), the soft-masked flag, and the crop
    starts (with a crop)."""
    batch = (
        batch.drop_columns([PERTURBED])
        .append_column(CHANGE_START, pa.array(scan.spans.starts))
        .append_column(CHANGE, scan.changes)
        .append_column(SOFT_MASKED, pa.array(scan.soft_masked))
    )
    for copy, spans, changes in scan.copies:
        batch = (
            batch.drop_columns([copy.column])
            .append_column(copy.start, pa.array(spans.starts))
            .append_column(copy.change, changes)
        )
    return batch if crops is None else batch.append_column(CROP_START, pa.array(crops))


def _crops(batch: pa.RecordBatch, scan: PairScan, context_bp: int) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's crop start, and whether its changes (compared in upper case) overflow it.

    Without lower-case letters in the batch the upper-case spans are the exact spans the check
    found (``scan``); only a batch with soft-masked pairs is compared again, case folded.
    """
    from perturbation_bench.tasks.crop import crop_starts

    original, perturbed = (batch.column(name) for name in SEQUENCE_COLUMNS)
    spans = scan.spans
    if scan.soft_masked.any():
        spans = changed_spans(original, perturbed, ignore_case=True)
    return crop_starts(pc.utf8_length(original).to_numpy(), spans, context_bp)

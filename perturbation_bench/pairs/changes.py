"""Where the two sequences of each pair differ, for whole Arrow columns at once.

A pair's sequences have equal lengths, so their two string columns have the same offsets and
their bytes can be compared position by position over a whole batch (no loop over rows). For
each row, the changed span ``[s, e)`` runs from the first to the last differing character;
an identical pair has ``s = e = 0`` and ``changed = False``.

The tasks store a pair as its original and the changed span of the perturbed copy
(``fields.CHANGE_START``, ``fields.CHANGE``, compared exactly, case included; a further
sequence a kind declares likewise, ``shape.Copy``), so::

    sequence = original[:s] + change + original[s + len(change):]      (perturbed_sequence)

:func:`changed_span` is the same rule for one pair (``dna-mlm`` masks what differs), computed by
the same code on one-row columns.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from perturbation_bench.pairs.fields import CHANGE, CHANGE_START, ORIGINAL, PERTURBED
from perturbation_bench.pairs.shape import Copy

_CASE_BIT = 0x20
"""Upper and lower case of a letter differ in this bit only (ASCII)."""


class Spans(NamedTuple):
    """Per row: the changed span's start and end, and whether the pair differs at all."""

    starts: np.ndarray
    ends: np.ndarray
    changed: np.ndarray


def string_bytes(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The characters of a (large) string array without nulls as one uint8 array, and the row
    offsets into it (``len(array) + 1`` of them, from 0). No copy."""
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets = np.frombuffer(array.buffers()[1], dtype=offset_type)
    offsets = offsets[array.offset : array.offset + len(array) + 1].astype(np.int64)
    data = array.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return data[offsets[0] : offsets[-1]], offsets - offsets[0]


def changed_spans(original: pa.Array, perturbed: pa.Array, ignore_case: bool = False) -> Spans:
    """The changed span of every row (module docstring); the rows must have equal lengths.

    ``ignore_case`` compares letters in upper case (a base is the same base in either case),
    as the crop of the context-length tasks does.
    """
    a, offsets = string_bytes(original)
    b, other = string_bytes(perturbed)
    if not np.array_equal(offsets, other):
        raise ValueError("changed_spans needs pairs of equal length")
    differ = (a | _CASE_BIT) != (b | _CASE_BIT) if ignore_case else a != b
    positions = np.flatnonzero(differ)
    rows = np.searchsorted(offsets, positions, side="right") - 1
    starts = np.zeros(len(original), np.int64)
    ends = np.zeros(len(original), np.int64)
    changed = np.zeros(len(original), bool)
    if positions.size:
        present, first = np.unique(rows, return_index=True)
        last = np.append(first[1:], positions.size) - 1
        starts[present] = positions[first] - offsets[present]
        ends[present] = positions[last] + 1 - offsets[present]
        changed[present] = True
    return Spans(starts, ends, changed)


def changed_span(a: str, b: str) -> tuple[int, int] | None:
    """The changed span ``[s, e)`` of two equal-length strings compared in upper case (a base is
    the same base in either case), or None if they are equal."""
    spans = changed_spans(pa.array([a]), pa.array([b]), ignore_case=True)
    return (int(spans.starts[0]), int(spans.ends[0])) if spans.changed[0] else None


def changed_text(perturbed: pa.Array, spans: Spans) -> pa.Array:
    """Each row's characters in its changed span, ``perturbed[s:e]``, as a string array
    (gathered from the column's bytes at once)."""
    data, offsets = string_bytes(perturbed)
    sizes = spans.ends - spans.starts
    new_offsets = np.concatenate([[0], np.cumsum(sizes)])
    within = np.arange(new_offsets[-1]) - np.repeat(new_offsets[:-1], sizes)
    gathered = data[np.repeat(offsets[:-1] + spans.starts, sizes) + within]
    return pa.LargeStringArray.from_buffers(
        len(perturbed), pa.py_buffer(new_offsets.astype(np.int64)), pa.py_buffer(gathered)
    ).cast(pa.string())


def perturbed_sequence(doc: dict) -> str:
    """A document's perturbed sequence: its ``sequence``, or rebuilt from its changed span."""
    if PERTURBED in doc:
        return doc[PERTURBED]
    return _patched(doc[ORIGINAL], doc[CHANGE_START], doc[CHANGE])


def copy_sequence(doc: dict, copy: Copy) -> str | None:
    """A document's further sequence ``copy`` (a footprint's background), rebuilt from its
    changed span as the perturbed copy is; None for a document without it."""
    if doc.get(copy.change) is None:
        return None
    return _patched(doc[ORIGINAL], doc[copy.start], doc[copy.change])


def _patched(original: str, start: int, change: str) -> str:
    """``original`` with ``change`` in place of its characters from ``start`` (module
    docstring)."""
    return original[:start] + change + original[start + len(change) :]

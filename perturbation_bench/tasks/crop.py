"""Cropping a pair to a shorter context around its changes (the context-length tasks).

The rule, pinned so that results are comparable across tools. For a pair of length ``n`` and a
context of ``L`` bp, let ``[s, e)`` span the first to the last base where the two sequences
differ (compared in upper case), then::

    c     = (s + e) // 2
    start = min(max(0, c - L // 2), n - L)          (pairs/windows.py)
    both sequences become seq[start : start + L]

``L >= n`` leaves the pair as it is (``start = 0``). A pair whose differing span is longer than
``L`` keeps only the centre of its changes (counted and logged by the caller). An identical pair
has no differing base: it is cropped around the window's centre (``c = n // 2``) and stays
identical, a tie. The preset's formatting (upper case, k-mer trimming on the right) applies to
the crop afterwards.
"""

from __future__ import annotations

import numpy as np

from perturbation_bench.pairs.changes import Spans
from perturbation_bench.pairs.windows import centred_start


def crop_starts(lengths: np.ndarray, spans: Spans, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: where the ``length`` bp crop starts, and whether its changes overflow it.

    ``lengths`` are the pairs' lengths ``n``, ``spans`` their changed spans compared in upper
    case (``pairs.changes.changed_spans(..., ignore_case=True)``).
    """
    lengths = np.asarray(lengths, np.int64)
    centres = np.where(spans.changed, (spans.starts + spans.ends) // 2, lengths // 2)
    starts = centred_start(centres, length, lengths)
    cropped = lengths > length
    overflows = cropped & spans.changed & (spans.ends - spans.starts > length)
    return np.where(cropped, starts, 0), overflows

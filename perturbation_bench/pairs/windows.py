"""Where a window of ``L`` bases lies on a sequence of ``n`` bases, defined once.

The crops of the context-length tasks, ``dna-mlm``'s token windows, the variant windows and the
dataset builders all place a window the same way: at its ideal start, shifted inwards where it
would run past either end::

    start = min(max(0, ideal), n - L)                    clamped_start
    start = min(max(0, c - L // 2), n - L)               centred_start (centred on position c)

Both take Python integers (and return one) or numpy arrays (elementwise, for whole batches).
"""

from __future__ import annotations

import numpy as np


def clamped_start(ideal, length, total):
    """The window's start: ``ideal``, shifted inwards to lie within ``[0, total)``."""
    start = np.minimum(np.maximum(0, ideal), np.subtract(total, length))
    return int(start) if np.ndim(start) == 0 else start


def centred_start(centre, length, total):
    """The start of the ``length``-long window centred on ``centre`` (``centre - length // 2``),
    shifted inwards to lie within ``[0, total)``."""
    return clamped_start(np.subtract(centre, length // 2), length, total)

"""Cropping a pair to a shorter context around its changes (the context-length tasks).

The rule, pinned so that results are comparable across tools. For a pair of length ``n`` and a
context of ``L`` bp, let ``[s, e)`` span the first to the last base where the two sequences
differ (compared in upper case), then::

    c     = (s + e) // 2
    start = min(max(0, c - L // 2), n - L)
    both sequences become seq[start : start + L]

``L >= n`` leaves the pair as it is (``start = 0``). A pair whose differing span is longer than
``L`` keeps only the centre of its changes (counted and logged by the caller). An identical pair
has no differing base: it is cropped around the window's centre (``c = n // 2``) and stays
identical, a tie. The preset's formatting (upper case, k-mer trimming on the right) applies to
the crop afterwards.
"""

from __future__ import annotations

from perturbation_bench.dna import changed_span


def crop_start(original: str, perturbed: str, length: int) -> tuple[int, bool]:
    """Where the ``length`` bp crop of the pair starts, and whether its changes overflow it."""
    n = len(original)
    if length >= n:
        return 0, False
    span = changed_span(original, perturbed)
    start, end = span if span is not None else (n // 2, n // 2)
    centre = (start + end) // 2
    return min(max(0, centre - length // 2), n - length), end - start > length

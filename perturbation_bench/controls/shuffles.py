"""Shuffles of an element that keep its composition, each seeded per element.

- ``dinucleotide``: the Altschul-Erickson shuffle of the ``dinuc_shuf`` package (by DART-Eval's
  authors): the element's dinucleotide counts exactly, its first and last base kept;
- ``mononucleotide``: a uniform permutation of its bases (base counts kept);
- ``kmer:K`` (K = 1 to 6): the exact K-let shuffle of ``klet.py``: every K-mer count of the
  element kept, its first and last ``K - 1`` bases too (``kmer:1`` is a permutation).

The generator of one element is seeded by ``sha256(repr((seed, chrom, start, end)))`` mod 2**128,
DART-Eval's rule, so an element's control does not depend on which other elements are built.
"""

from __future__ import annotations

import numpy as np

from perturbation_bench.controls.klet import klet_shuffle
from perturbation_bench.dna import BASES, SHUFFLE_ORDERS
from perturbation_bench.pairs.identity import keyed_rng

SHUFFLES = tuple(SHUFFLE_ORDERS)
"""The shuffle kinds, each keeping the K-mer counts of ``dna.SHUFFLE_ORDERS``."""
STRANDS = ("forward", "both", "random")
"""``--strands``: the orientations a control is written in (``build.py``)."""


def element_rng(seed: int, chrom: str, start: int, end: int) -> np.random.Generator:
    """The generator of one element (module docstring)."""
    return keyed_rng(seed, chrom, start, end)


def shuffle(sequence: str, kind: str, rng: np.random.Generator) -> str:
    """``sequence`` (A/C/G/T only) shuffled by ``kind`` (:data:`SHUFFLES`)."""
    if kind.startswith("kmer:") and kind in SHUFFLE_ORDERS:
        return klet_shuffle(sequence, SHUFFLE_ORDERS[kind], rng)
    codes = np.frombuffer(sequence.encode(), dtype=np.uint8)
    index = np.searchsorted(np.frombuffer(BASES.encode(), dtype=np.uint8), codes)
    if kind == "mononucleotide":
        shuffled = rng.permutation(index)
    elif kind == "dinucleotide":
        import dinuc_shuf

        one_hot = np.eye(len(BASES), dtype=np.uint8)[index][None]
        shuffled = dinuc_shuf.shuffle(one_hot, rng=rng)[0].argmax(axis=1)
    else:
        raise ValueError(f"unknown shuffle {kind!r}; shuffles: {', '.join(SHUFFLES)}")
    return "".join(BASES[i] for i in shuffled)

"""The DNA alphabet, the reverse complement and k-mer counts, shared by the tasks and the
dataset tools; and which k-mer counts each shuffle of a paired control keeps.

A benchmark sequence is made of ``A``, ``C``, ``G``, ``T`` and ``N`` (unknown base); the tasks
upper-case soft-masked (lower-case) input before scoring, so either case is accepted on input.
"""

from __future__ import annotations

import random
import re
from collections import Counter

BASES = "ACGT"
"""The four bases."""
LETTERS = "ACGTN"
"""Letters a sequence may hold (in either case)."""
ACGT_ONLY = re.compile("^[ACGT]+$")
"""A sequence of the four bases alone, in upper case."""


_COMPLEMENT = str.maketrans("ACGTNacgtn", "TGCANtgcan")


def reverse_complement(sequence: str) -> str:
    """The reverse complement, case kept (``N`` stays ``N``)."""
    return sequence.translate(_COMPLEMENT)[::-1]


_FOREIGN = re.compile(f"[^{LETTERS}{LETTERS.lower()}]")
"""A letter outside :data:`LETTERS`, in either case."""


def first_foreign_letter(sequence: str) -> str:
    """Describe the first letter outside :data:`LETTERS` (either case), e.g. ``'X' at position
    29``; ``none`` when every letter is one of them."""
    found = _FOREIGN.search(sequence)
    return f"{found.group()!r} at position {found.start()}" if found else "none"


def random_dna(rng: random.Random, length: int) -> str:
    """``length`` uniform random bases from ``rng``."""
    return "".join(rng.choice(BASES) for _ in range(length))


def kmer_counts(sequence: str, k: int) -> Counter:
    """How often each ``k``-mer occurs in ``sequence`` (overlapping; empty if shorter than k)."""
    return Counter(sequence[i : i + k] for i in range(len(sequence) - k + 1))


SHUFFLE_ORDERS = {"mononucleotide": 1, "dinucleotide": 2} | {f"kmer:{k}": k for k in range(1, 7)}
"""Shuffle kind -> the ``K`` whose K-mer counts (and first and last ``K - 1`` bases) it keeps."""

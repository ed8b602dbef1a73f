"""The DNA alphabet and the reverse complement, shared by the tasks and the dataset tools.

A benchmark sequence is made of ``A``, ``C``, ``G``, ``T`` and ``N`` (unknown base); the tasks
upper-case soft-masked (lower-case) input before scoring, so either case is accepted on input.
"""

from __future__ import annotations

import random

BASES = "ACGT"
"""The four bases."""
LETTERS = "ACGTN"
"""Letters a sequence may hold (in either case)."""


_COMPLEMENT = str.maketrans("ACGTNacgtn", "TGCANtgcan")


def reverse_complement(sequence: str) -> str:
    """The reverse complement, case kept (``N`` stays ``N``)."""
    return sequence.translate(_COMPLEMENT)[::-1]


def first_foreign_letter(sequence: str) -> str:
    """Describe the first letter outside :data:`LETTERS` (either case), e.g. ``'X' at position 29``."""
    for position, letter in enumerate(sequence):
        if letter.upper() not in LETTERS:
            return f"{letter!r} at position {position}"
    return "none"


def random_dna(rng: random.Random, length: int) -> str:
    """``length`` uniform random bases from ``rng``."""
    return "".join(rng.choice(BASES) for _ in range(length))

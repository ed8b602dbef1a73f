"""The exact K-let shuffle (``controls/klet.py``): every K-mer count and both ends kept, counted
independently here; every sequence with those counts and ends drawn, and equally often."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest

from perturbation_bench.controls.klet import klet_shuffle


def kmers(sequence: str, k: int) -> Counter:
    counts = Counter()
    for i in range(len(sequence) - k + 1):
        counts[sequence[i : i + k]] += 1
    return counts


@pytest.mark.parametrize("k", range(1, 7))
def test_every_k_mer_count_and_both_ends_are_kept(k):
    rng, draws = random.Random(k), np.random.default_rng(k)
    changed = 0
    for length in (k, k + 1, 40, 300):
        for _ in range(20):
            sequence = "".join(rng.choice("ACGT") for _ in range(length))
            shuffled = klet_shuffle(sequence, k, draws)
            assert len(shuffled) == len(sequence)
            assert kmers(shuffled, k) == kmers(sequence, k)
            if k > 1:
                assert shuffled[: k - 1] == sequence[: k - 1]
                assert shuffled[-(k - 1) :] == sequence[-(k - 1) :]
            changed += shuffled != sequence
    assert changed >= 15  # the long sequences move


@pytest.mark.parametrize("sequence, k", [("ACACAGAGA", 2), ("ACAACATAA", 2), ("AAAGAAAGA", 3)])
def test_each_sequence_with_the_same_counts_and_ends_is_drawn_equally_often(sequence, k):
    """All distinct rearrangements with the same K-mer counts and ends, enumerated by brute force,
    are drawn, each within 5 standard deviations of its uniform share."""
    arrangements = {"".join(p) for p in itertools.permutations(sequence)}  # distinct ones
    same = {
        s
        for s in arrangements
        if kmers(s, k) == kmers(sequence, k)
        and s[: k - 1] == sequence[: k - 1]
        and s[len(sequence) - k + 1 :] == sequence[len(sequence) - k + 1 :]
    }
    assert len(same) > 2
    draws, n = np.random.default_rng(0), 6000
    seen = Counter(klet_shuffle(sequence, k, draws) for _ in range(n))
    assert set(seen) == same
    share = n / len(same)
    sd = (share * (1 - 1 / len(same))) ** 0.5
    assert all(abs(count - share) < 5 * sd for count in seen.values()), seen


def test_a_sequence_with_one_arrangement_comes_back_unchanged():
    draws = np.random.default_rng(1)
    assert klet_shuffle("ACGT", 2, draws) == "ACGT"  # each dinucleotide once: one trail
    assert klet_shuffle("AAAA", 3, draws) == "AAAA"

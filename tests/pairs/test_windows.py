"""The centre-and-clamp window rule (``pairs/windows.py``), against its definition."""

from __future__ import annotations

import random

import numpy as np

from perturbation_bench.pairs.windows import centred_start, clamped_start


def test_a_window_starts_at_its_ideal_start_shifted_inwards_only_as_far_as_needed():
    rng = random.Random(5)
    for _ in range(2000):
        total = rng.randrange(1, 300)
        length = rng.randrange(1, total + 1)
        ideal = rng.randrange(-400, 400)
        start = clamped_start(ideal, length, total)
        assert isinstance(start, int) and 0 <= start <= total - length
        if 0 <= ideal <= total - length:
            assert start == ideal
        else:  # shifted to the nearer end, no further
            assert start == (0 if ideal < 0 else total - length)


def test_a_centred_window_holds_its_centre_with_length_over_two_bases_before_it():
    rng = random.Random(6)
    for _ in range(2000):
        total = rng.randrange(2, 300)
        length = rng.randrange(1, total + 1)
        centre = rng.randrange(total)
        start = centred_start(centre, length, total)
        assert start <= centre < start + length
        if length // 2 <= centre <= total - length + length // 2:
            assert centre - start == length // 2


def test_arrays_are_placed_elementwise_as_the_scalars_are():
    rng = np.random.default_rng(7)
    ideal, total = rng.integers(-50, 150, 500), rng.integers(40, 100, 500)
    starts = clamped_start(ideal, 40, total)
    assert isinstance(starts, np.ndarray)
    assert starts.tolist() == [
        clamped_start(int(i), 40, int(t)) for i, t in zip(ideal, total, strict=True)
    ]
    centres = rng.integers(0, 40, 500)
    assert centred_start(centres, 31, total).tolist() == [
        centred_start(int(c), 31, int(t)) for c, t in zip(centres, total, strict=True)
    ]

"""The footprint build's own rules (``kinds/footprints/builder.py``), on inputs written here; the
build from MEME file to report is ``test_footprints.py``'s."""

from __future__ import annotations

import numpy as np

from perturbation_bench.kinds.footprints.builder import control_insert


class Draws:
    """A generator whose permutations are the given orders of the input, one per call."""

    def __init__(self, *orders: list[int]) -> None:
        self.orders, self.calls = list(orders), 0

    def permutation(self, values):
        order = self.orders[self.calls]
        self.calls += 1
        return [values[i] for i in order]


def test_a_control_insert_drawn_as_the_identity_is_drawn_again():
    """The first permutation drawn leaves the consensus as it is: the control is the second."""
    draws = Draws([0, 1, 2, 3], [0, 1, 3, 2])
    assert control_insert("ACGT", draws) == "ACTG" and draws.calls == 2


def test_a_control_insert_differs_from_its_consensus_whatever_the_seed():
    """A consensus of two bases has one other arrangement, drawn half the time: every seed
    gives it, though the first draw of about half of them is the identity."""
    identity_first = 0
    for seed in range(40):
        first = "".join(np.random.default_rng(seed).permutation(list("AC")))
        identity_first += first == "AC"
        assert control_insert("AC", np.random.default_rng(seed)) == "CA"
    assert 10 < identity_first < 30

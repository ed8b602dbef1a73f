"""Downstream JSD (models/jsd_scoring.py, score: jsd) against scipy's Jensen-Shannon distance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon

from perturbation_bench.models.jsd_scoring import downstream_jsd

BASES = [3, 4, 5, 6]


def _direct(logits_ref, logits_alt, site) -> float:
    """scipy's JS distance squared (natural log) per position, the mean over positions."""

    def softmax(row):
        e = np.exp(row - row.max())
        return e / e.sum()

    values = [
        jensenshannon(softmax(logits_ref[t, BASES]), softmax(logits_alt[t, BASES])) ** 2
        for t in range(site, len(logits_ref) - 1)
    ]
    return float(np.mean(values))


def test_the_jsd_is_scipys_mean_over_the_positions_after_the_site():
    generator = torch.Generator().manual_seed(0)
    ref, alt = (torch.randn(12, 9, generator=generator) * 3 for _ in range(2))
    for site in (1, 5, 10):
        expected = _direct(ref.numpy().astype(np.float64), alt.numpy().astype(np.float64), site)
        assert downstream_jsd(ref, alt, site, BASES) == pytest.approx(expected, abs=1e-6)
    assert downstream_jsd(ref, ref, 4, BASES) == pytest.approx(0.0, abs=1e-7)
    far = torch.full((3, 9), -50.0)
    near = far.clone()
    far[:, 3], near[:, 4] = 50.0, 50.0  # all mass on A against all on C: log 2
    assert downstream_jsd(far, near, 0, BASES) == pytest.approx(math.log(2), abs=1e-6)

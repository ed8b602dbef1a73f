"""Downstream JSD (models/jsd_scoring.py, score: jsd) against scipy's Jensen-Shannon distance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon

from perturbation_bench.models.jsd_scoring import downstream_jsd

BASES = [3, 4, 5, 6]


def _direct(logits_ref, logits_alt, rows) -> float:
    """scipy's JS distance squared (natural log) per row, the mean over rows."""

    def softmax(row):
        e = np.exp(row - row.max())
        return e / e.sum()

    values = [
        jensenshannon(softmax(logits_ref[t, BASES]), softmax(logits_alt[t, BASES])) ** 2
        for t in rows
    ]
    return float(np.mean(values))


def test_the_jsd_is_scipys_mean_over_the_rows_it_reads():
    generator = torch.Generator().manual_seed(0)
    ref, alt = (torch.randn(12, 9, generator=generator) * 3 for _ in range(2))
    for rows in ([1, 2, 3], [5, 6, 7, 8, 9, 10], [10], [0, 11]):
        expected = _direct(ref.numpy().astype(np.float64), alt.numpy().astype(np.float64), rows)
        assert downstream_jsd(ref, alt, rows, BASES) == pytest.approx(expected, abs=1e-6)
    assert downstream_jsd(ref, ref, [4, 5, 6], BASES) == pytest.approx(0.0, abs=1e-7)
    far = torch.full((3, 9), -50.0)
    near = far.clone()
    far[:, 3], near[:, 4] = 50.0, 50.0  # all mass on A against all on C: log 2
    assert downstream_jsd(far, near, [0, 1, 2], BASES) == pytest.approx(math.log(2), abs=1e-6)


def test_pairs_are_batched_by_shared_prefix_or_else_by_window_length(tiny_models):
    """With sharing, the tokens before the variant (``shared_bucket``) group pairs whatever
    their lengths (the remainders are right-padded); without (or for a model without a reusable
    cache), only windows of one length."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from perturbation_bench.models.causal_batches import shared_bucket
    from perturbation_bench.models.jsd_scoring import JSDScorer

    path = tiny_models["char"]
    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    windows = [([1] * 40, [1] * 40, list(range(20, 39))), ([1] * 50, [1] * 50, list(range(20, 49)))]
    windows.append(([1] * 50, [1] * 50, list(range(3, 49))))

    def groups(share: bool) -> dict:
        scorer = JSDScorer(
            model, tokenizer, "cpu", 8, 512, None, causal=True, name="t", share=share
        )
        return scorer._groups(windows)

    assert groups(True) == {(shared_bucket(20), 0): [0, 1], (shared_bucket(3), 0): [2]}
    assert groups(False) == {(0, 40): [0], (0, 50): [1, 2]}
    model.config.use_cache = False  # a model whose cache cannot be reused: whole windows
    assert groups(True) == groups(False)

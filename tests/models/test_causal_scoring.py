"""Shared computation in dna-hf: scores with shared prefixes and reused windows equal plain
scoring within |dLL| <= 1e-6 |LL| + 1e-3 nats, for every tokenizer kind, with rc_average, with
sliding windows, with batches mixing prefix lengths, and under two processes."""

from __future__ import annotations

import logging
import re

import pytest

from dna_fixtures import evaluate, two_processes_match_one
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.models.causal_plan import (
    Piece,
    predicted_speedup,
    shared_inputs,
    worth_sharing,
)
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"


def agree(got: float, expected: float) -> bool:
    return abs(got - expected) <= 1e-6 * abs(expected) + 1e-3


def shared_and_plain(path, data, metadata=None, **model_args):
    metadata = {"data_dir": str(data), **(metadata or {})}
    runs = {}
    for share in (True, False):
        runs[share] = evaluate(
            path, [TASK], metadata, model="dna-hf", share_prefix=share, **model_args
        )
    shared, plain = (logged_pairs(runs[s], TASK) for s in (True, False))
    assert len(shared) == len(plain)
    for a, b in zip(shared, plain, strict=True):
        assert all(agree(x, y) for x, y in zip(a, b)), (a, b)
    assert (
        runs[True]["results"][TASK]["pairwise_acc,pairs"]
        == runs[False]["results"][TASK]["pairwise_acc,pairs"]
    )
    return runs


def sharing_counts(text: str) -> tuple[int, int]:
    shared = sum(int(n) for n in re.findall(r"(\d+) piece groups share a prefix", text))
    reused = sum(int(n) for n in re.findall(r"(\d+) identical pieces scored once", text))
    return shared, reused


@pytest.fixture(scope="module")
def long_pairs(tmp_path_factory):
    """24 pairs of 240 bp with 3 bp changes spread over the window: prefix fractions 0-1 mixed."""
    root = tmp_path_factory.mktemp("long")
    write_parquet(random_pairs(24, 240, seed=8, patch=3), root, "syn_human")
    return root


@pytest.mark.parametrize(
    "kind, metadata",
    [("char", {}), ("kmer6", {"preset": "carbon"}), ("bpe", {}), ("char", {"rc_average": True})],
)
def test_shared_prefixes_score_as_plain(tiny_models, long_pairs, kind, metadata, caplog):
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench"):
        shared_and_plain(tiny_models[kind], long_pairs, metadata)
    assert sharing_counts(caplog.text)[0] > 0  # sharing really happened


def test_reused_windows_score_as_plain(tiny_models, long_pairs, caplog):
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench"):
        shared_and_plain(tiny_models["char"], long_pairs, max_length=64, window_stride=32)
    shared, reused = sharing_counts(caplog.text)
    assert reused > 0 and shared > 0


@pytest.mark.slow
def test_two_processes_with_sharing_match_one(tiny_models, long_pairs, tmp_path):
    two_processes_match_one(tiny_models["char"], long_pairs, tmp_path, "dna-hf")


def test_the_cost_rule():
    a = Piece(tuple(range(100)), 1)
    b = Piece(tuple(range(60)) + (0,) * 40, 1)
    assert shared_inputs(a, b) == 60
    assert shared_inputs(a, a) == 99  # all inputs; the last token is only a target
    # linear-dominated (wide model, short pieces): the ideal 2 / (2 - p), and sharing pays
    assert predicted_speedup(60, a, b, hidden_size=4096) == pytest.approx(
        2 / (2 - 60 / 99), rel=0.01
    )
    assert worth_sharing(60, a, b, hidden_size=4096) and not worth_sharing(
        10, a, b, hidden_size=4096
    )
    # attention-dominated (8,192 tokens, width 256): attending to the cache costs the saving
    long_a, long_b = Piece((1,) * 8193, 1), Piece((1,) * 4096 + (2,) * 4097, 1)
    assert not worth_sharing(4096, long_a, long_b, hidden_size=256)
    assert worth_sharing(4096, long_a, long_b, hidden_size=4096)

"""Shared computation in dna-hf: scores with shared prefixes and reused windows equal plain
scoring within |dLL| <= 1e-6 |LL| + 1e-3 nats, for every tokenizer kind, with rc_average, with
sliding windows, with batches mixing prefix lengths, and under two processes."""

from __future__ import annotations

import logging
import re
from types import SimpleNamespace

import pytest

from dna_fixtures import evaluate, two_processes_match_one
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.models.causal_plan import (
    CostModel,
    Piece,
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
        assert all(agree(x, y) for x, y in zip(a, b, strict=True)), (a, b)
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
def test_shared_prefixes_score_as_plain(
    tiny_models, long_pairs, kind, metadata, caplog, sharing_pays
):
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench"):
        shared_and_plain(tiny_models[kind], long_pairs, metadata)
    assert sharing_counts(caplog.text)[0] > 0  # sharing really happened


def test_reused_windows_score_as_plain(tiny_models, long_pairs, caplog, sharing_pays):
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench"):
        shared_and_plain(tiny_models["char"], long_pairs, max_length=64, window_stride=32)
    shared, reused = sharing_counts(caplog.text)
    assert reused > 0 and shared > 0
    plainly = sum(int(n) for n in re.findall(r"(\d+) pieces scored plainly", caplog.text))
    assert reused < plainly  # windows holding a change have one owner each


@pytest.mark.slow
def test_two_processes_with_sharing_match_one(tiny_models, long_pairs, tmp_path):
    two_processes_match_one(tiny_models["char"], long_pairs, tmp_path, "dna-hf")


def test_the_cost_rule():
    a = Piece(tuple(range(100)), 1)
    b = Piece(tuple(range(60)) + (0,) * 40, 1)
    assert shared_inputs(a, b) == 60
    assert shared_inputs(a, a) == 99  # all inputs; the last token is only a target
    # linear layers alone: the ideal 2 / (2 - p), and sharing pays
    linear = CostModel(attention=0.0, output=0.0, per_pass=0.0)
    assert linear.speedup(60, a, b) == pytest.approx(2 / (2 - 60 / 99))
    assert worth_sharing(60, a, b, cost=linear) and not worth_sharing(10, a, b, cost=linear)
    # every term, by hand: 99 inputs and 99 scored positions per piece, prefix 60, batch 4
    cost = CostModel(attention=0.01, output=0.5, per_pass=20.0, batch_size=4)
    plain = 99 + 0.01 * 99 * 99 / 2 + 0.5 * 99 + 20 / 4
    shared = 60 + 0.01 * 60 * 60 / 2 + 0.5 * 59  # the prefix and the targets it predicts, once
    shared += 2 * (39 * (1 + 0.01 * 99) + 0.5 * 40 + 2 * 20 / 4)  # each remainder, two passes
    assert cost.speedup(60, a, b) == pytest.approx(2 * plain / shared)
    # attention-dominated (8,192 tokens, width 256): attending to the cache costs the saving
    long_a, long_b = Piece((1,) * 8193, 1), Piece((1,) * 6144 + (2,) * 2049, 1)
    assert not worth_sharing(4096, long_a, long_b, cost=CostModel.of(config(256, 4, 11)))
    assert worth_sharing(6144, long_a, long_b, cost=CostModel.of(config(4096, 32, 11)))
    # a pass's fixed cost: a short piece at batch 1 on a small model does not pay
    short_a, short_b = Piece((1,) * 60, 1), Piece((1,) * 40 + (2,) * 20, 1)
    assert not worth_sharing(39, short_a, short_b, cost=CostModel.of(config(256, 4, 11), 1))
    assert worth_sharing(39, short_a, short_b, cost=CostModel(0.0, 0.0, 0.0))


def config(hidden: int, layers: int, vocabulary: int) -> SimpleNamespace:
    return SimpleNamespace(hidden_size=hidden, num_hidden_layers=layers, vocab_size=vocabulary)


def test_the_384_pair_plan_has_few_passes_few_of_batch_one_and_less_padding():
    """The shape of the GPU run (docs/benchmarks.md): 384 random-patch pairs of 8,196 bp as
    6-mers after a prefix token (1,366 inputs), a 2.84 B Llama, batch 32. Counted from the plan:
    at most twice plain's passes, at most 2 of batch 1, at most 0.9 of plain's padded tokens."""
    from perturbation_bench.bench.sharing import Scenario, scenario_pairs, token_layout
    from perturbation_bench.models.causal_batches import passes
    from perturbation_bench.models.causal_plan import plan

    scenario = Scenario("gpu", "6-mer", 3072, 28, 8196, None, patch=12)
    pieces, pairs = [], []
    for index, pair in enumerate(scenario_pairs(scenario, 384)):
        a, b, first = token_layout(scenario, pair["patch_start_in_seq"], index)
        pairs.append((len(pieces), len(pieces) + 1))
        pieces += [[Piece(tuple(a), first)], [Piece(tuple(b), first)]]
    weights = 28 * (2 * 3072 * 3072 + 2 * 3072 * 1024 + 3 * 3072 * 8192)  # GQA 24/8, MLP 8,192
    cost = CostModel.of(config(3072, 28, 4102), 32, layer_weights=weights)
    plain = passes(plan(pieces, [], cost, dedupe=True), 32)
    shared = passes(plan(pieces, pairs, cost, dedupe=True), 32)
    assert plain == [(32, 1366)] * 24
    assert len(shared) <= 2 * len(plain)
    assert sum(rows == 1 for rows, _ in shared) <= 2
    padded = sum(rows * width for rows, width in shared)
    assert padded <= 0.9 * sum(rows * width for rows, width in plain)


@pytest.fixture(scope="module")
def bf16_case(tmp_path_factory):
    """A 6-layer random Llama of width 128 read as 6-mers, and 48 pairs of 2,046 bp (342
    tokens), each with a 12 bp change of its own place in the last half of the window (so that
    every pair shares a prefix, each of another length)."""
    from perturbation_bench.fixtures.random_models import kmer_tokenizer, save_random_llama

    root = tmp_path_factory.mktemp("bf16")
    model = save_random_llama(
        root / "model", kmer_tokenizer(6), layers=6, hidden=128, max_positions=400
    )
    pairs = [random_pairs(1, 2046, seed, 12, at=0.5 + 0.45 * seed / 47)[0] for seed in range(48)]
    write_parquet(pairs, root / "data", "syn_human")
    return str(model), root / "data"


def test_bf16_sharing_stays_as_close_to_float32_as_plain_scoring(bf16_case, caplog, sharing_pays):
    """In bf16 the default path (shared prefixes, batched across pairs of different change
    places) moves no sum further from the float32 result than 1.5x plain scoring does."""
    model, data = bf16_case
    metadata = {"data_dir": str(data), "preset": "carbon"}
    runs = {}
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench"):
        for name, dtype, share in (
            ("float32", "float32", False),
            ("plain", "bfloat16", False),
            ("shared", "bfloat16", True),
        ):
            caplog.clear()
            result = evaluate(
                model,
                [TASK],
                metadata,
                model="dna-hf",
                dtype=dtype,
                share_prefix=share,
                batch_size=8,
            )
            runs[name] = [x for pair in logged_pairs(result, TASK) for x in pair]
            if name == "shared":
                assert sharing_counts(caplog.text)[0] == 48  # every pair shared its prefix

    def distances(name):
        return [abs(x - y) for x, y in zip(runs[name], runs["float32"], strict=True)]

    plain, shared = distances("plain"), distances("shared")
    assert 0 < max(plain)  # bf16 really rounds
    assert max(shared) <= 1.5 * max(plain), (max(shared), max(plain))
    assert sum(shared) <= 1.5 * sum(plain), (sum(shared), sum(plain))  # and on average


def test_shared_buckets_give_up_at_most_an_eighth_of_a_prefix():
    from perturbation_bench.models.causal_batches import shared_bucket

    for shared in range(1, 5000):
        bucket = shared_bucket(shared)
        assert shared - shared / 8 <= bucket <= shared
        assert shared_bucket(bucket) == bucket  # a bucket is its own
    assert shared_bucket(15) == 15 and shared_bucket(700) == 640 and shared_bucket(1230) == 1152


def test_the_plans_passes_are_the_passes_the_scorer_makes(tiny_models, sharing_pays):
    """``causal_batches.passes`` (the device-free count) equals the decoder passes the scorer
    runs, counted by a forward hook on the input embedding, shared and plain batches mixed."""
    import random

    from transformers import AutoModelForCausalLM

    from perturbation_bench.models.causal_batches import passes
    from perturbation_bench.models.causal_plan import plan
    from perturbation_bench.models.causal_scoring import CausalScorer

    model = AutoModelForCausalLM.from_pretrained(tiny_models["char"]).eval()
    rng = random.Random(0)
    pieces, pairs = [], []
    for _ in range(9):
        a = [rng.randrange(5, 9) for _ in range(rng.randrange(40, 80))]
        at = rng.randrange(1, len(a))
        b = a[:at] + [rng.randrange(5, 9) for _ in a[at:]]
        pairs.append((len(pieces), len(pieces) + 1))
        pieces += [[Piece(tuple(a), 1)], [Piece(tuple(b), 1)]]
    shapes = []
    model.get_input_embeddings().register_forward_hook(
        lambda module, args, output: shapes.append(tuple(args[0].shape))
    )
    scorer = CausalScorer(model, "cpu", 4, share=True, dedupe=True)
    scorer.score(pieces, pairs)
    work = plan(pieces, pairs, CostModel.of(model.config, 4, scorer._layer_weights()), dedupe=True)
    assert work.shared and work.singles  # both kinds of batch
    assert shapes == passes(work, 4)

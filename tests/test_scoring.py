"""Per-pair log-likelihoods from the tasks against an independent fp32 computation in torch."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dna_fixtures import evaluate
from perturbation_bench.tasks.pairing import logged_pairs

TOLERANCE = 1e-3  # nats, on sums of ~120 fp32 log-probs


def reverse_complement(sequence: str) -> str:
    return "".join(
        {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N"}[b] for b in reversed(sequence)
    )


def reference_ll(model, tokenizer, prefix: str, sequence: str) -> float:
    """sum_t log p(x_t | x_<t) over the sequence's tokens, fp32, conditioned on the prefix tokens
    (the BOS token when the prefix is empty)."""
    if prefix:
        context = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    else:
        context = [tokenizer.bos_token_id]
    continuation = tokenizer(sequence, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context + continuation])
    with torch.no_grad():
        logits = model(ids).logits[0].float()
    log_probs = torch.log_softmax(logits[:-1], dim=-1)
    targets = ids[0, 1:]
    per_token = log_probs.gather(1, targets[:, None])[:, 0]
    return per_token[len(context) - 1 :].sum().item()


@pytest.mark.parametrize(
    "kind, metadata, prefix, kmer",
    [
        ("char", {}, "", 1),
        ("kmer6", {"preset": "carbon"}, "<dna>", 6),
        ("kmer6", {"preset": "generator"}, "<s>", 6),
        ("bpe", {}, "", 1),
        ("bpe", {"dna_prefix": "<dna>"}, "<dna>", 1),
    ],
)
def test_logged_pairs_match_independent_fp32_reference(
    tiny_models, pair_data, kind, metadata, prefix, kmer
):
    check_against_reference(tiny_models[kind], pair_data, metadata, prefix, kmer)


@pytest.mark.parametrize(
    "kind, metadata, prefix, kmer",
    [("char", {}, "", 1), ("kmer6", {"preset": "carbon"}, "<dna>", 6)],
)
def test_rc_average_is_the_mean_over_both_strands(
    tiny_models, pair_data, kind, metadata, prefix, kmer
):
    check_against_reference(
        tiny_models[kind], pair_data, {**metadata, "rc_average": True}, prefix, kmer
    )


def check_against_reference(path, pair_data, metadata, prefix, kmer):
    result = evaluate(path, ["perturbation_syn_human"], {"data_dir": str(pair_data), **metadata})
    got = logged_pairs(result, "perturbation_syn_human")

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    assert len(got) == len(rows)
    strands = [str, reverse_complement] if metadata.get("rc_average") else [str]

    def expected(sequence):
        scored = sequence[: len(sequence) - len(sequence) % kmer]
        return sum(reference_ll(model, tokenizer, prefix, f(scored)) for f in strands) / len(
            strands
        )

    for (ll_original, ll_perturbed), row in zip(got, rows):
        assert ll_original == pytest.approx(expected(row["original_sequence"]), abs=TOLERANCE)
        assert ll_perturbed == pytest.approx(expected(row["sequence"]), abs=TOLERANCE)

    scores = result["results"]["perturbation_syn_human"]
    assert scores["pairwise_acc,pairs"] == sum(a > b for a, b in got) / len(got)
    assert scores["margin,pairs"] == pytest.approx(sum(a - b for a, b in got) / len(got))
    assert result["configs"]["perturbation_syn_human"]["metadata"]["preset"] == metadata.get(
        "preset", "default"
    )

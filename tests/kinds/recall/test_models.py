"""The package's models on recall requests: each LL against an independent fp32 computation
(``dna-hf``: the target's tokens after the whole context; ``dna-mlm``: the whole target masked in
one pass), ``kmer-markov`` exactly 0 beyond its order, a window past the model's positions
refused, and one target's tokens the same after both contexts under the 1-nt and 6-mer presets."""

from __future__ import annotations

import pytest
import torch

from dna_fixtures import build_tokenizer, evaluate
from perturbation_bench.errors import OptionsError
from perturbation_bench.fixtures.random_models import (
    as_masked_lm_tokenizer,
    save_random_bert,
    save_random_llama,
)

from .recall_doubles import build, per_document

CONTEXTS = ("context_repeat", "context_control")
TOLERANCE = 1e-4
"""nats per LL: float32 forward passes of the same inputs, batched or not."""


def causal_ll(model, tokenizer, context: str, target: str) -> float:
    """sum over the target's tokens of log p(token | every token before it), fp32."""
    context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    target_ids = tokenizer(target, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context_ids + target_ids])
    with torch.no_grad():
        log_probs = torch.log_softmax(model(ids).logits[0].float(), dim=-1)
    n = len(context_ids)
    return sum(log_probs[n + i - 1, t].item() for i, t in enumerate(target_ids))


def masked_ll(model, tokenizer, context: str, target: str) -> float:
    """sum over the target's tokens of log p(token | the framed text, every target token
    masked), fp32."""
    encoding = tokenizer(context + target, return_special_tokens_mask=True)
    ids = list(encoding["input_ids"])
    own = [i for i, special in enumerate(encoding["special_tokens_mask"]) if not special]
    scored = own[len(tokenizer(context, add_special_tokens=False)["input_ids"]) :]
    truth = [ids[i] for i in scored]
    for i in scored:
        ids[i] = tokenizer.mask_token_id
    with torch.no_grad():
        log_probs = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
    return sum(log_probs[i, t].item() for i, t in zip(scored, truth, strict=True))


def assert_matches(result: dict, reference, model, folder) -> None:
    """Each logged pair of LLs equals ``reference(model, tokenizer, context, target)`` of its
    two contexts, within :data:`TOLERANCE`."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    for doc in per_document(result):
        contexts = (doc["context_repeat"], doc["context_control"])
        expected = [reference(model.eval(), tokenizer, c, doc["target"]) for c in contexts]
        assert doc["lls"] == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("share_prefix", [True, False])
def test_dna_hf_scores_the_target_after_the_whole_context(tmp_path, share_prefix):
    from transformers import AutoModelForCausalLM

    data, _, _ = build(tmp_path)
    folder = save_random_llama(tmp_path / "m", build_tokenizer("char"), max_positions=1024)
    metadata = {"config": "rc", "data_dir": str(data)}
    result = evaluate(str(folder), ["perturbation_recall"], metadata, model="dna-hf",
                      share_prefix=share_prefix)  # fmt: skip
    assert_matches(
        result, causal_ll, AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32), folder
    )


def test_dna_hf_refuses_a_window_past_its_positions(tmp_path):
    data, _, _ = build(tmp_path)
    folder = save_random_llama(tmp_path / "m", build_tokenizer("char"), max_positions=1024)
    with pytest.raises(OptionsError, match=r"1023 tokens, more than dna-hf's max_length=512"):
        evaluate(str(folder), ["perturbation_recall"], {"config": "rc", "data_dir": str(data)},
                 model="dna-hf", max_length=512)  # fmt: skip


def test_dna_mlm_masks_the_whole_target_in_one_pass(tmp_path):
    from transformers import AutoModelForMaskedLM

    data, _, _ = build(tmp_path)
    tokenizer = as_masked_lm_tokenizer(build_tokenizer("char"))
    folder = save_random_bert(tmp_path / "m", tokenizer, max_positions=1100)
    metadata = {"config": "rc", "data_dir": str(data)}
    result = evaluate(str(folder), ["perturbation_recall"], metadata, model="dna-mlm")
    assert_matches(
        result, masked_ll, AutoModelForMaskedLM.from_pretrained(folder, dtype=torch.float32), folder
    )
    with pytest.raises(OptionsError, match="1026 tokens, more than dna-mlm's max_length=600"):
        evaluate(str(folder), ["perturbation_recall"], metadata, model="dna-mlm", max_length=600)


def test_kmer_markov_scores_exactly_zero_beyond_its_order(tmp_path):
    data, _, _ = build(tmp_path, copy="exact", distances=(64, 256))
    result = evaluate(str(tmp_path / "g.fa"), ["perturbation_recall"],
                      {"config": "rc", "data_dir": str(data)}, model="kmer-markov", order=5)  # fmt: skip
    values = result["results"]["perturbation_recall"]
    assert values["copy_advantage,pairs"] == 0.0
    assert values["tie_rate,pairs"] == 1.0
    lls = [doc["lls"] for doc in per_document(result)]
    assert all(a == b for a, b in lls) and all(a < 0 for a, _ in lls)


@pytest.mark.parametrize(("tokenizer", "align"), [("char", 1), ("kmer6", 6)])
def test_the_target_has_the_same_tokens_after_both_contexts(tmp_path, tokenizer, align):
    """Tokenized as one text, context and target (HFLM's encoding of a pair), the target's
    tokens are the target's own after either context: the 1-nt preset on any build, the 6-mer
    preset on a build with ``--align 6``."""
    _, rows, _ = build(tmp_path, align=align)
    tok = build_tokenizer(tokenizer)

    def encode(text: str) -> list[int]:
        return tok(text, add_special_tokens=False)["input_ids"]

    for row in rows:
        own = encode(row["target"])
        for context in (row["context_repeat"], row["context_control"]):
            whole = encode(context + row["target"])
            assert whole[len(encode(context)) :] == own


def test_check_tokenizes_a_recall_task_s_contexts_and_its_target(tmp_path, capsys):
    """``perturbation-bench check`` builds a recall task and tokenizes each request as lm-eval
    makes it: a context, then the target (a task of several inputs)."""
    from perturbation_bench.cli import main

    data, rows, _ = build(tmp_path)
    folder = save_random_llama(tmp_path / "m", build_tokenizer("char"), max_positions=1024)
    status = main(["check", "--model", "dna-hf", "--tasks", "perturbation_recall",
                   "--metadata", f'{{"config": "rc", "data_dir": "{data}"}}',
                   "--model_args", f"pretrained={folder}", "--sample", "2"])  # fmt: skip
    out = capsys.readouterr().out
    lengths = sorted(
        len(row[context]) + len(row["target"])
        for row in rows[:2]
        for context in ("context_repeat", "context_control")
    )
    assert status == 0
    assert f"{lengths[0]}-{lengths[-1]} tokens per sequence in the first 2 pairs" in out


def test_check_refuses_a_recall_window_past_dna_hf_s_positions_before_any_weight(
    tmp_path, capsys, no_weights_read
):
    from perturbation_bench.cli import main

    data, rows, _ = build(tmp_path)
    folder = save_random_llama(tmp_path / "m", build_tokenizer("char"), max_positions=1024)
    arguments = [
        "check",
        "--model",
        "dna-hf",
        "--tasks",
        "perturbation_recall",
        "--metadata",
        f'{{"config": "rc", "data_dir": "{data}"}}',
        "--model_args",
    ]
    assert main([*arguments, f"pretrained={folder},max_length=512"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    longest = max(len(row[c]) + len(row["target"]) for row in rows for c in CONTEXTS)
    assert err.endswith(
        f": its context and continuation are {longest} tokens, more than dna-hf's max_length=512;"
        " a context that is part of the question is never cropped: rebuild without the distances"
        " past the model's positions"
    )
    assert main([*arguments, f"pretrained={folder}"]) == 0  # 1,024 positions hold them

"""Model families as their users load them (``replicas.py``), each scored end to end against an
independent fp32 computation: overlapping k-mers (DNABERT, masked and causal), Nucleotide
Transformer's EsmTokenizer (N windows included), Mistral-DNA, a character tokenizer that appends
a separator, and a model folder with its own code."""

from __future__ import annotations

import random

import pytest
import torch
from replicas import save_dnabert
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import evaluate, reference_ll, reverse_complement
from perturbation_bench.dna import random_dna
from perturbation_bench.fixtures.random_pairs import write_parquet
from perturbation_bench.pairs.requests import Formatting
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"
TOLERANCE = 1e-4
"""nats: float32 models, sums of a few dozen log-probs."""


def changed_pairs(length: int = 48, seed: int = 30) -> list[dict]:
    """Every changed-base pattern the overlapping-k-mer rule must hold on: an SNV in the middle,
    at the first and at the last base, a codon change (3 adjacent bases), two SNVs closer than
    k, and a CAG x 4 motif inserted in frame (the rest shifted, the window cut to length)."""
    rng = random.Random(seed)
    original = random_dna(rng, length)
    other = lambda b: "ACGT"[("ACGT".index(b) + 1) % 4]  # noqa: E731

    def substitute(sequence: str, *positions: int) -> str:
        return "".join(other(b) if i in positions else b for i, b in enumerate(sequence))

    perturbed = [substitute(original, 20), substitute(original, 0), substitute(original, length - 1),
                 substitute(original, 21, 22, 23), substitute(original, 10, 13),
                 (original[:24] + "CAG" * 4 + original[24:])[:length]]  # fmt: skip
    return [{"benchmark_id": f"pattern_{i}", "original_sequence": original, "sequence": p}
            for i, p in enumerate(perturbed)]  # fmt: skip


@pytest.fixture(scope="module")
def pattern_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("patterns")
    write_parquet(changed_pairs(), root, "syn_human")
    return root


def test_overlapping_kmers_are_one_word_per_base_position_after_the_reverse_complement():
    formatting = Formatting(kmer_size=3, kmer_overlap=True, rc_average=True)
    o, p, rc_o, rc_p = formatting.continuations("ACGTAcg", "ACGTTCG")
    assert (o, p) == ("ACG CGT GTA TAC ACG", "ACG CGT GTT TTC TCG")  # upper case, no trimming
    assert rc_o == " ".join(reverse_complement("ACGTACG")[i : i + 3] for i in range(5))
    assert Formatting(kmer_size=6).continuations("ACGTACGT", "ACGTACGA") == ["ACGTAC", "ACGTAC"]


def masked_log_probs(model, ids: list[int], masked: set[int], mask_id: int) -> torch.Tensor:
    """log P(. | ids with ``masked`` masked), float32, one row per position."""
    inputs = torch.tensor([[mask_id if i in masked else t for i, t in enumerate(ids)]])
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=inputs).logits[0].float(), dim=-1)


def covering_tokens(bases: set[int], k: int, n_words: int) -> set[int]:
    """Word positions (0-based, before the [CLS] shift) whose k-mer holds one of ``bases``."""
    return {i for i in range(n_words) if any(i <= b <= i + k - 1 for b in bases)}


@pytest.mark.parametrize("k", [3, 6])
def test_dnabert_masks_every_token_covering_a_changed_base(pattern_data, tmp_path, k):
    """LL(o) = sum over the masked tokens of log P(o's k-mer | o's k-mers, those masked), LL(p)
    likewise with p's k-mers, the masked tokens found from the changed BASES."""
    path = save_dnabert(tmp_path / f"dnabert{k}", k)
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(str(path), [TASK], {"data_dir": str(pattern_data), "preset": "dnabert",
                                          "kmer_size": k}, model="dna-mlm")  # fmt: skip
    for (ll_o, ll_p), pair in zip(logged_pairs(result, TASK), changed_pairs(), strict=True):
        o, p = pair["original_sequence"], pair["sequence"]
        words = [[s[i : i + k] for i in range(len(s) - k + 1)] for s in (o, p)]
        ids_o, ids_p = ([tokenizer.cls_token_id, *tokenizer.convert_tokens_to_ids(w), tokenizer.sep_token_id]
                        for w in words)  # fmt: skip
        changed = {j for j in range(len(o)) if o[j] != p[j]}
        masked = {i + 1 for i in covering_tokens(changed, k, len(words[0]))}
        assert masked == {i for i, (a, b) in enumerate(zip(ids_o, ids_p)) if a != b}
        table = masked_log_probs(model, ids_o, masked, tokenizer.mask_token_id)
        assert ll_o == pytest.approx(sum(table[i, ids_o[i]].item() for i in masked), abs=TOLERANCE)
        assert ll_p == pytest.approx(sum(table[i, ids_p[i]].item() for i in masked), abs=TOLERANCE)
        assert len(masked) == len(covering_tokens(changed, k, len(words[0])))


def test_dnabert_pll_masks_the_tokens_covering_each_base_in_turn(pattern_data, tmp_path):
    k = 3
    path = save_dnabert(tmp_path / "dnabert3", k)
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(str(path), [TASK], {"data_dir": str(pattern_data), "preset": "dnabert",
                                          "kmer_size": k}, model="dna-mlm", scoring="pll")  # fmt: skip
    for (ll_o, ll_p), pair in zip(logged_pairs(result, TASK), changed_pairs(), strict=True):
        for got, sequence in ((ll_o, pair["original_sequence"]), (ll_p, pair["sequence"])):
            words = [sequence[i : i + k] for i in range(len(sequence) - k + 1)]
            ids = [tokenizer.cls_token_id, *tokenizer.convert_tokens_to_ids(words), tokenizer.sep_token_id]
            expected = 0.0
            for base in range(len(sequence)):
                masked = {i + 1 for i in covering_tokens({base}, k, len(words))}
                table = masked_log_probs(model, ids, masked, tokenizer.mask_token_id)
                expected += sum(table[i, ids[i]].item() for i in masked)
            assert got == pytest.approx(expected, abs=TOLERANCE)


def test_a_causal_model_scores_overlapping_kmers_as_any_tokens(pattern_data, tmp_path):
    from replicas import kmers
    from tokenizers import Tokenizer, models, pre_tokenizers

    from perturbation_bench.fixtures.random_models import (
        SPECIAL_TOKENS,
        save_random_llama,
        wrap_tokenizer,
    )

    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS + kmers(3))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<oov>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = save_random_llama(tmp_path / "causal3", wrap_tokenizer(core))
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(str(path), [TASK], {"data_dir": str(pattern_data), "kmer_overlap": True,
                                          "kmer_size": 3}, model="dna-hf")  # fmt: skip
    for (ll_o, _), pair in zip(logged_pairs(result, TASK), changed_pairs(), strict=True):
        text = Formatting(kmer_size=3, kmer_overlap=True).as_text(pair["original_sequence"])
        assert len(tokenizer(text, add_special_tokens=False)["input_ids"]) == 46
        assert ll_o == pytest.approx(reference_ll(model, tokenizer, "", text), abs=TOLERANCE)


def test_overlapping_kmers_are_refused_by_the_markov_floor(pattern_data, tmp_path):
    from perturbation_bench.errors import OptionsError

    fasta = tmp_path / "g.fa"
    fasta.write_text(">g\n" + random_dna(random.Random(1), 400) + "\n")
    with pytest.raises(OptionsError, match="kmer-markov reads bases, not overlapping k-mers"):
        evaluate(str(fasta), [TASK], {"data_dir": str(pattern_data), "preset": "dnabert"},
                 model="kmer-markov")  # fmt: skip

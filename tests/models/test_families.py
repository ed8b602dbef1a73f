"""Model families as their users load them (``replicas.py``), each scored end to end against an
independent fp32 computation: overlapping k-mers (DNABERT, masked and causal), Nucleotide
Transformer's EsmTokenizer (N windows included), Mistral-DNA, a character tokenizer that appends
a separator, and a model folder with its own code."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import pytest
import torch
from replicas import save_dnabert
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import build_tokenizer, evaluate, reference_ll, reverse_complement
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

    perturbed = [
        substitute(original, 20),
        substitute(original, 0),
        substitute(original, length - 1),
        substitute(original, 21, 22, 23),
        substitute(original, 10, 13),
        (original[:24] + "CAG" * 4 + original[24:])[:length],
    ]
    return [
        {"benchmark_id": f"pattern_{i}", "original_sequence": original, "sequence": p}
        for i, p in enumerate(perturbed)
    ]


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
    assert (
        Formatting(kmer_size=3, kmer_overlap=True).trim("acgtA") == "ACGTA"
    )  # upper-cased by default


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
    result = evaluate(
        str(path),
        [TASK],
        {"data_dir": str(pattern_data), "preset": "dnabert", "kmer_size": k},
        model="dna-mlm",
    )
    for (ll_o, ll_p), pair in zip(logged_pairs(result, TASK), changed_pairs(), strict=True):
        o, p = pair["original_sequence"], pair["sequence"]
        words = [[s[i : i + k] for i in range(len(s) - k + 1)] for s in (o, p)]
        ids_o, ids_p = (
            [tokenizer.cls_token_id, *tokenizer.convert_tokens_to_ids(w), tokenizer.sep_token_id]
            for w in words
        )
        changed = {j for j in range(len(o)) if o[j] != p[j]}
        masked = {i + 1 for i in covering_tokens(changed, k, len(words[0]))}
        assert masked == {i for i, (a, b) in enumerate(zip(ids_o, ids_p, strict=True)) if a != b}
        table = masked_log_probs(model, ids_o, masked, tokenizer.mask_token_id)
        assert ll_o == pytest.approx(sum(table[i, ids_o[i]].item() for i in masked), abs=TOLERANCE)
        assert ll_p == pytest.approx(sum(table[i, ids_p[i]].item() for i in masked), abs=TOLERANCE)
        assert len(masked) == len(covering_tokens(changed, k, len(words[0])))


def test_dnabert_pll_masks_the_tokens_covering_each_base_in_turn(pattern_data, tmp_path):
    k = 3
    path = save_dnabert(tmp_path / "dnabert3", k)
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        str(path),
        [TASK],
        {"data_dir": str(pattern_data), "preset": "dnabert", "kmer_size": k},
        model="dna-mlm",
        scoring="pll",
    )
    for (ll_o, ll_p), pair in zip(logged_pairs(result, TASK), changed_pairs(), strict=True):
        for got, sequence in ((ll_o, pair["original_sequence"]), (ll_p, pair["sequence"])):
            words = [sequence[i : i + k] for i in range(len(sequence) - k + 1)]
            ids = [
                tokenizer.cls_token_id,
                *tokenizer.convert_tokens_to_ids(words),
                tokenizer.sep_token_id,
            ]
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
    result = evaluate(
        str(path),
        [TASK],
        {"data_dir": str(pattern_data), "kmer_overlap": True, "kmer_size": 3},
        model="dna-hf",
    )
    for (ll_o, _), pair in zip(logged_pairs(result, TASK), changed_pairs(), strict=True):
        text = Formatting(kmer_size=3, kmer_overlap=True).as_text(pair["original_sequence"])
        assert len(tokenizer(text, add_special_tokens=False)["input_ids"]) == 46
        assert ll_o == pytest.approx(reference_ll(model, tokenizer, "", text), abs=TOLERANCE)


def test_overlapping_kmers_are_refused_by_the_markov_floor(pattern_data, tmp_path):
    from perturbation_bench.errors import OptionsError

    fasta = tmp_path / "g.fa"
    fasta.write_text(">g\n" + random_dna(random.Random(1), 400) + "\n")
    with pytest.raises(OptionsError, match="kmer-markov reads bases, not overlapping k-mers"):
        evaluate(
            str(fasta),
            [TASK],
            {"data_dir": str(pattern_data), "preset": "dnabert"},
            model="kmer-markov",
        )


def literal_offsets_of(tokenizer, ids: list[int]) -> list[tuple[int, int]]:
    """Written out for the test: each non-special token's characters, laid end to end."""
    offsets, position = [], 0
    for token_id, token in zip(ids, tokenizer.convert_ids_to_tokens(ids), strict=True):
        if token_id in tokenizer.all_special_ids:
            offsets.append((0, 0))
        else:
            offsets.append((position, position + len(token)))
            position += len(token)
    return offsets


def nt_reference(model, tokenizer, original: str, perturbed: str, max_length: int):
    """The masked-marginal definition for Nucleotide Transformer's slow tokenizer: equal token
    counts mask the differing tokens (one input); otherwise each sequence masks the tokens
    overlapping the changed characters, located by the tokens' own lengths."""
    from dna_fixtures import masked_sum

    ids = [tokenizer(s)["input_ids"] for s in (original, perturbed)]
    if len(ids[0]) == len(ids[1]):
        diff = {i for i, (a, b) in enumerate(zip(*ids, strict=True)) if a != b}
        return tuple(masked_sum(model, tokenizer, ids[0], diff, ids, max_length))
    start = next(i for i, (a, b) in enumerate(zip(original, perturbed, strict=True)) if a != b)
    end = len(original) - next(
        i for i, (a, b) in enumerate(zip(original[::-1], perturbed[::-1], strict=True)) if a != b
    )
    out = []
    for sequence_ids in ids:
        span = {
            i
            for i, (s, e) in enumerate(literal_offsets_of(tokenizer, sequence_ids))
            if e > s and s < end and e > start
        }
        out += masked_sum(model, tokenizer, sequence_ids, span, [sequence_ids], max_length)
    return tuple(out)


def test_nucleotide_transformer_scores_the_demo_data_n_window_included(tmp_path):
    """EsmForMaskedLM with NT's EsmTokenizer (6-mers, then single letters; 6-mers again after
    each N) on the demo motif config (8,192 bp windows, one holding N) and on a pair whose N
    moves, so its two sequences tokenize to different lengths."""
    import pandas as pd
    from replicas import save_nucleotide_transformer

    from perturbation_bench.paths import demo_data_dir

    path = save_nucleotide_transformer(tmp_path / "nt")
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert type(tokenizer).__name__ == "EsmTokenizer" and not tokenizer.is_fast
    demo = pd.read_parquet(next((demo_data_dir() / "motif_human").glob("*.parquet")))
    rng = random.Random(8)
    base = random_dna(rng, 200)
    with_n = lambda *at: "".join("N" if i in at else b for i, b in enumerate(base))  # noqa: E731
    moved = {
        "benchmark_id": "n_moves",
        "original_sequence": with_n(40, 70),
        "sequence": with_n(42, 70),
    }  # 6-mers restart after each N: the counts differ
    rows = [*demo.to_dict("records"), moved]
    write_parquet(rows, tmp_path / "data", "syn_human")
    result = evaluate(
        str(path),
        [TASK],
        {"data_dir": str(tmp_path / "data"), "preset": "nucleotide_transformer"},
        model="dna-mlm",
    )
    pairs = logged_pairs(result, TASK)
    n_pairs = [i for i, r in enumerate(rows) if "N" in r["original_sequence"]]
    assert len(pairs) == 25 and len(n_pairs) == 2
    unequal = 0
    for (ll_o, ll_p), row in zip(pairs, rows, strict=True):
        o, p = (
            Formatting(kmer_size=6).trim(s) for s in (row["original_sequence"], row["sequence"])
        )
        unequal += len(tokenizer(o)["input_ids"]) != len(tokenizer(p)["input_ids"])
        expected = nt_reference(model, tokenizer, o, p, 512)
        assert (ll_o, ll_p) == pytest.approx(expected, abs=TOLERANCE), row["benchmark_id"]
    assert unequal == 1
    tokens = tokenizer.convert_ids_to_tokens(
        tokenizer(rows[n_pairs[0]]["original_sequence"][70:100])["input_ids"]
    )
    assert "N" in tokens and any(len(t) == 1 and t in "ACGT" for t in tokens)  # letters before N


def test_mistral_dna_scores_as_an_independent_fp32_computation(pair_data, tmp_path):
    from replicas import save_mistral

    path = save_mistral(tmp_path / "mistral", build_tokenizer("bpe"))
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    assert type(model).__name__ == "MistralForCausalLM"
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(str(path), [TASK], {"data_dir": str(pair_data)}, model="dna-hf")
    import pandas as pd

    rows = pd.read_parquet(pair_data / "syn_human")
    for (ll_o, ll_p), (_, row) in zip(logged_pairs(result, TASK), rows.iterrows(), strict=True):
        assert ll_o == pytest.approx(
            reference_ll(model, tokenizer, "", row["original_sequence"]), abs=TOLERANCE
        )
        assert ll_p == pytest.approx(
            reference_ll(model, tokenizer, "", row["sequence"]), abs=TOLERANCE
        )


def test_a_trailing_separator_is_never_scored(pair_data, tmp_path):
    """HyenaDNA's character tokenizer appends [SEP]: a causal model scores the bases only (the
    continuation is encoded without special tokens), a masked model's PLL the bases only."""
    import pandas as pd
    from replicas import with_trailing_separator

    from perturbation_bench.fixtures.random_models import save_random_bert, save_random_llama

    tokenizer = with_trailing_separator(build_tokenizer("char"))
    assert tokenizer("ACG")["input_ids"][-1] == tokenizer.eos_token_id
    rows = pd.read_parquet(pair_data / "syn_human")
    causal = save_random_llama(tmp_path / "hyena-like", tokenizer)
    model = AutoModelForCausalLM.from_pretrained(causal, dtype=torch.float32).eval()
    result = evaluate(str(causal), [TASK], {"data_dir": str(pair_data)}, model="dna-hf")
    for (ll_o, _), (_, row) in zip(logged_pairs(result, TASK), rows.iterrows(), strict=True):
        assert ll_o == pytest.approx(
            reference_ll(model, tokenizer, "", row["original_sequence"]), abs=TOLERANCE
        )
    masked = save_random_bert(
        tmp_path / "sep-mlm", with_trailing_separator(build_tokenizer("char"))
    )
    mlm = AutoModelForMaskedLM.from_pretrained(masked, dtype=torch.float32).eval()
    mask_tokenizer = AutoTokenizer.from_pretrained(masked)
    short = tmp_path / "short"
    write_parquet(
        [
            {
                "benchmark_id": "s",
                "original_sequence": r["original_sequence"][:30],
                "sequence": r["sequence"][:30],
            }
            for r in rows.to_dict("records")[:2]
        ],
        short,
        "syn_human",
    )
    result = evaluate(str(masked), [TASK], {"data_dir": str(short)}, model="dna-mlm", scoring="pll")
    for (ll_o, _), row in zip(logged_pairs(result, TASK), rows.to_dict("records")[:2], strict=True):
        ids = mask_tokenizer(row["original_sequence"][:30])["input_ids"]
        assert len(ids) == 31  # 30 bases and the separator
        expected = sum(
            masked_log_probs(mlm, ids, {i}, mask_tokenizer.mask_token_id)[i, ids[i]].item()
            for i in range(30)
        )
        assert ll_o == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_a_model_with_its_own_code_runs_with_trust_remote_code_and_says_so_without(
    pair_data, tmp_path, kind
):
    from replicas import save_remote_code

    from perturbation_bench.errors import OptionsError
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer

    tokenizer = build_tokenizer("char")
    if kind == "masked":
        tokenizer = as_masked_lm_tokenizer(tokenizer)
    path = save_remote_code(tmp_path / "remote", tokenizer, kind)
    model_type = "dna-hf" if kind == "causal" else "dna-mlm"
    with pytest.raises(
        OptionsError,
        match="ships its own model code .auto_map in its config.json.; pass trust_remote_code=True",
    ):
        evaluate(str(path), [TASK], {"data_dir": str(pair_data)}, model=model_type)
    remote = evaluate(
        str(path), [TASK], {"data_dir": str(pair_data)}, model=model_type, trust_remote_code=True
    )
    plain = evaluate(
        str(path.with_name("remote-plain")), [TASK], {"data_dir": str(pair_data)}, model=model_type
    )
    flat = [[ll for pair in logged_pairs(run, TASK) for ll in pair] for run in (remote, plain)]
    assert len(flat[0]) == 16 and flat[0] == pytest.approx(flat[1], abs=1e-6)
    loaded = (AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM).from_pretrained(
        path, trust_remote_code=True
    )
    assert type(loaded).__name__ == "TinyDnaModel"


def test_a_hub_models_refusal_of_its_own_code_is_one_line():
    from perturbation_bench.arguments import loading_errors
    from perturbation_bench.errors import OptionsError

    with pytest.raises(OptionsError, match="^org/model ships its own model code"):
        with loading_errors("org/model"):
            raise ValueError(
                "The repository org/model contains custom code ... Please pass the "
                "argument `trust_remote_code=True` to allow custom code to be run."
            )
    with pytest.raises(ValueError, match="another"):
        with loading_errors("org/model"):
            raise ValueError("another")


def test_a_fast_tokenizers_own_offsets_are_used_and_literal_ones_only_without_them():
    """Token strings are not always the text (WordPiece's ``##``): offsets come from the
    tokenizer where it gives them, and are read off literal tokens only where it does not."""
    from replicas import save_nucleotide_transformer

    from perturbation_bench.models.masked_inputs import literal_offsets
    from perturbation_bench.models.masked_scoring import MaskedScorer

    scorer = MaskedScorer(None, None, "cpu", 1, 512, False, None)
    assert scorer._offsets({"input_ids": [7, 8], "offset_mapping": [(0, 0), (3, 9)]}, "xx") == [
        (0, 0),
        (3, 9),
    ]
    path = save_nucleotide_transformer(Path(tempfile.mkdtemp()) / "nt")
    tokenizer = AutoTokenizer.from_pretrained(path)
    text = "ACGTAN" + "CCCGGG" + "T"
    ids = tokenizer(text)["input_ids"]
    assert literal_offsets(tokenizer, ids, text) == [
        (0, 0),
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 12),
        (12, 13),
        (0, 0),
    ]
    from perturbation_bench.errors import OptionsError

    with pytest.raises(OptionsError, match="token '<unk>' is not the text at character 0"):
        literal_offsets(tokenizer, tokenizer("acgtac")["input_ids"], "acgtac")


def test_a_local_folder_with_its_own_code_is_refused_before_transformers_is_asked(tmp_path):
    """Without trust_remote_code transformers would prompt on a terminal; the folder's
    config.json says enough."""
    import json

    from perturbation_bench.arguments import check_remote_code
    from perturbation_bench.errors import OptionsError

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    check_remote_code(str(folder), False)
    (folder / "config.json").write_text(json.dumps({"auto_map": {"AutoConfig": "c.C"}}))
    for trust in (True, "True", "true"):
        check_remote_code(str(folder), trust)
    for trust in (False, None, "False"):
        with pytest.raises(OptionsError, match=f"^{folder} ships its own model code"):
            check_remote_code(str(folder), trust)

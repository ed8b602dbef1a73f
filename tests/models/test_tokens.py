"""Unknown tokens: k-mers holding N are scored like any other token and counted; unknown k-mers of
A/C/G/T alone stop the run, naming the preset and the k-mer.

The demo's motif_human pair 8 (``T5:exon3``) has 12 N bases at 75-86, which a 6-mer tokenizer
reads as 3 unknown tokens per sequence (the k-mers starting at 72, 78 and 84)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import evaluate, reference_ll, reference_pair
from perturbation_bench.errors import TokenizationError
from perturbation_bench.fixtures.random_models import (
    as_masked_lm_tokenizer,
    kmer_tokenizer,
    save_random_bert,
    save_random_llama,
)
from perturbation_bench.models.tokens import unknown_tokens
from perturbation_bench.paths import demo_data_dir
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_motif_human"
N_PAIR = 8


@pytest.fixture(scope="module")
def kmer_models(tmp_path_factory):
    """6-mer causal and masked models long enough for a whole 8,192 bp demo window."""
    root = tmp_path_factory.mktemp("kmer-long")
    causal = save_random_llama(root / "causal", kmer_tokenizer(6), max_positions=1400)
    masked = save_random_bert(
        root / "masked", as_masked_lm_tokenizer(kmer_tokenizer(6)), max_positions=1400
    )
    return str(causal), str(masked)


@pytest.fixture(scope="module")
def demo_rows():
    return pq.read_table(next((demo_data_dir() / "motif_human").glob("*.parquet"))).to_pylist()


def test_the_demo_n_pair_is_what_this_test_says(demo_rows):
    row = demo_rows[N_PAIR]
    assert row["benchmark_id"] == "motif_human:T5:exon3"
    assert [i for i, b in enumerate(row["original_sequence"].upper()) if b == "N"] == list(
        range(75, 87)
    )


def test_dna_hf_scores_the_n_pair_exactly_and_counts_it(kmer_models, demo_rows):
    causal, _ = kmer_models
    result = evaluate(causal, [TASK], {"data_dir": "demo", "preset": "carbon"}, model="dna-hf")
    lls = logged_pairs(result, TASK)
    assert len(lls) == len(demo_rows) == 24
    model = AutoModelForCausalLM.from_pretrained(causal).float().eval()
    tokenizer = AutoTokenizer.from_pretrained(causal)
    row = demo_rows[N_PAIR]
    expected = [
        reference_ll(model, tokenizer, "<dna>", row[column].upper()[:8190])
        for column in ("original_sequence", "sequence")
    ]
    assert lls[N_PAIR] == pytest.approx(expected, rel=1e-6, abs=1e-3)
    assert result["config"]["unknown_tokens"] == {
        "pairs": 1,
        "tokens": 6,
        "first_pair": f"{TASK} doc {N_PAIR} (benchmark_id='motif_human:T5:exon3')",
    }


def test_dna_mlm_scores_the_n_pair_exactly_and_counts_it(kmer_models, demo_rows):
    _, masked = kmer_models
    metadata = {"data_dir": "demo", "preset": "nucleotide_transformer"}
    result = evaluate(masked, [TASK], metadata, model="dna-mlm")
    lls = logged_pairs(result, TASK)
    assert len(lls) == 24
    model = AutoModelForMaskedLM.from_pretrained(masked).float().eval()
    tokenizer = AutoTokenizer.from_pretrained(masked)
    row = demo_rows[N_PAIR]
    pair = [row[column].upper()[:8190] for column in ("original_sequence", "sequence")]
    expected = reference_pair(model, tokenizer, *pair, max_length=1400)
    assert lls[N_PAIR] == pytest.approx(expected, abs=1e-4)
    assert result["config"]["unknown_tokens"]["pairs"] == 1
    assert result["config"]["unknown_tokens"]["tokens"] == 6


def test_an_acgt_kmer_read_as_unknown_stops_the_run_naming_preset_and_kmer(kmer_models):
    """Without the carbon preset's trimming the 2-base tail of 8,192 bp is an unknown 'GA'."""
    causal, _ = kmer_models
    with pytest.raises(TokenizationError) as err:
        evaluate(causal, [TASK], {"data_dir": "demo", "kmer_size": 1}, model="dna-hf")
    message = str(err.value)
    assert "preset 'default', kmer_size=1" in message
    assert "the k-mer" in message and "at bases 8190-8192 has only A/C/G/T bases" in message


class SlowKmerTokenizer:
    """A tokenizer without offsets (``is_fast`` False), non-overlapping 3-mers, 'NNN'-free vocab."""

    is_fast = False
    unk_token_id, unk_token, name_or_path = 0, "<unk>", "slow"

    def __call__(self, text, add_special_tokens=False):
        import itertools

        vocab = {"".join(k): i + 1 for i, k in enumerate(itertools.product("ACGT", repeat=3))}
        return {"input_ids": [vocab.get(text[i : i + 3], 0) for i in range(0, len(text), 3)]}


@pytest.mark.parametrize(
    "sequence, expected",
    [
        ("ACGTTT", 0),
        ("ACGNNNTTT", 2),  # 'NNN' is unknown; the test appends a second unknown id
        ("ACGTTTA", "stop"),  # the tail 'A'
        ("ACNTTTA", "stop"),  # an N k-mer and an ACGT tail: the tail decides
    ],
)
@pytest.mark.parametrize("fast", [True, False])
def test_unknown_tokens_are_told_apart_by_their_bases(sequence, expected, fast):
    tokenizer = kmer_tokenizer(3) if fast else SlowKmerTokenizer()
    ids = tokenizer(sequence, add_special_tokens=False)["input_ids"]
    if expected == "stop":
        with pytest.raises(TokenizationError, match="has only A/C/G/T bases"):
            unknown_tokens(tokenizer, sequence, ids)
        return
    given = ids + [tokenizer.unk_token_id] if expected else ids  # a second unknown from elsewhere
    assert unknown_tokens(tokenizer, sequence, given) == expected


def test_a_pair_seen_on_two_ranks_counts_once(monkeypatch):
    """lm-eval pads a short rank with a copy of another rank's request: the run-wide summary
    counts each pair once, with the tokens one rank counted for it."""
    import torch.distributed
    from lm_eval.api.instance import Instance

    from perturbation_bench.models.tokens import UnknownTokenCounter

    def request(doc_id):
        return Instance(
            "loglikelihood",
            {"benchmark_id": f"b{doc_id}"},
            ("", "ACNT"),
            0,
            metadata=(TASK, doc_id, 1),
        )

    ranks = [UnknownTokenCounter("m"), UnknownTokenCounter("m")]
    for rank, doc_ids in zip(ranks, ([0, 1], [2, 1]), strict=True):  # doc 1 on both ranks
        for doc_id in doc_ids:
            rank.add(request(doc_id), 2)  # the pair's two requests: 2 unknown tokens in one,
            rank.add(request(doc_id), 1)  # 1 in the other

    def gather(out, _mine):
        out[:] = [(r.by_pair, r.names) for r in ranks]

    monkeypatch.setattr(torch.distributed, "all_gather_object", gather)
    summary = ranks[0].summary(world_size=2)
    assert summary == {"pairs": 3, "tokens": 9, "first_pair": f"{TASK} doc 0 (benchmark_id='b0')"}


class SlowWordTokenizer:
    """A slow tokenizer of space-separated 3-mers (DNABERT's overlapping k-mers as text)."""

    is_fast = False
    unk_token_id, unk_token, name_or_path = 0, "<unk>", "slow-words"

    def __call__(self, text, add_special_tokens=False):
        import itertools

        vocab = {"".join(k): i + 1 for i, k in enumerate(itertools.product("ACGT", repeat=3))}
        return {"input_ids": [vocab.get(word, 0) for word in text.split()]}


def test_the_spaces_between_overlapping_k_mers_are_not_read_as_bases():
    """A window with an N gives unknown k-mers that hold the N, which are counted; the spaces
    that separate the words must not become bases when the slow check re-reads the text."""
    tokenizer = SlowWordTokenizer()
    text = "ACG CGN GNT NTA TAC"
    ids = tokenizer(text)["input_ids"]
    assert ids.count(0) == 3 and unknown_tokens(tokenizer, text, ids) == 3
    with pytest.raises(
        TokenizationError,
        match=r"has only A/C/G/T bases, so the tokenizer does not fit the data as formatted "
        r"\(preset unknown\)\. .* or a DNA prefix the tokenizer expects \(dna_prefix\)\.$",
    ):  # no setting given; the message ends with the last fix it proposes
        unknown_tokens(tokenizer, "ACG CGT GTAC", tokenizer("ACG CGT GTAC")["input_ids"])


def test_overlapping_kmers_stop_a_run_whose_tokenizer_reads_no_kmer_words(tiny_models, tmp_path):
    """A single-nucleotide tokenizer reads the spaces between the dnabert preset's k-mer words
    as tokens: the run stops at its first pair instead of scoring the spaces (either model)."""
    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet

    write_parquet(random_pairs(3, 60, seed=2), tmp_path / "data", "syn_human")
    masked = save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer("char")))
    metadata = {"data_dir": str(tmp_path / "data"), "preset": "dnabert", "kmer_size": 4}
    for path, model in ((str(masked), "dna-mlm"), (tiny_models["char"], "dna-hf")):
        with pytest.raises(TokenizationError, match="does not read space-separated k-mers"):
            evaluate(path, ["perturbation_syn_human"], metadata, model=model)


def test_three_k_mer_words_read_as_three_unknown_tokens_are_refused():
    """A tokenizer of 3-mer words reads three 4-mer words as three tokens, each the unknown
    token: three tokens are not enough, they must be known; three 3-mer words pass."""
    from perturbation_bench.models.tokens import check_kmer_words

    tokenizer = SlowWordTokenizer()
    assert tokenizer("ACGT CGTA GTAC")["input_ids"] == [0, 0, 0]
    with pytest.raises(TokenizationError) as refused:
        check_kmer_words(tokenizer, 4, "preset 'dnabert'")
    assert str(refused.value).startswith(
        "slow-words: overlapping k-mers (preset 'dnabert') reach the model as words separated by "
        "spaces, and this tokenizer reads the three words 'ACGT CGTA GTAC' as 3 tokens (3 "
        "unknown): it does not read space-separated k-mers"
    )
    check_kmer_words(tokenizer, 3)  # 'ACG CGT GTA': three known tokens

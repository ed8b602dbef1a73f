"""How a pair becomes requests and its answers a pair again (``pairs/requests.py``,
``tasks/document_requests.py``): per-pair log-likelihoods against an independent fp32
computation in torch, the strand average, ``reduction: mean``, and the grouping of a model's
requests into pairs."""

from __future__ import annotations

import types

import pyarrow.parquet as pq
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dna_fixtures import evaluate, reference_ll, reverse_complement
from perturbation_bench.errors import UnsupportedTaskError
from perturbation_bench.pairs.requests import document_pairs
from perturbation_bench.tasks.pairing import logged_pairs

TOLERANCE = 1e-3  # nats, on sums of ~120 fp32 log-probs


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

    for (ll_original, ll_perturbed), row in zip(got, rows, strict=True):
        assert ll_original == pytest.approx(expected(row["original_sequence"]), abs=TOLERANCE)
        assert ll_perturbed == pytest.approx(expected(row["sequence"]), abs=TOLERANCE)

    scores = result["results"]["perturbation_syn_human"]
    assert scores["pairwise_acc,pairs"] == sum(a > b for a, b in got) / len(got)
    assert scores["margin,pairs"] == pytest.approx(sum(a - b for a, b in got) / len(got))
    assert result["configs"]["perturbation_syn_human"]["metadata"]["preset"] == metadata.get(
        "preset", "default"
    )


def test_reduction_mean_divides_each_sequence_by_its_scored_tokens(tiny_models, pair_data):
    path = tiny_models["bpe"]
    metadata = {"data_dir": str(pair_data), "reduction": "mean"}
    result = evaluate(path, ["perturbation_syn_human"], metadata, model="dna-hf")
    got = logged_pairs(result, "perturbation_syn_human")
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    counts = []
    for (ll_original, ll_perturbed), row in zip(got, rows, strict=True):
        pair_counts = []
        for ll, sequence in (
            (ll_original, row["original_sequence"]),
            (ll_perturbed, row["sequence"]),
        ):
            n = len(tokenizer(sequence, add_special_tokens=False)["input_ids"])
            assert ll == pytest.approx(reference_ll(model, tokenizer, "", sequence) / n, abs=1e-5)
            pair_counts.append(n)
        counts.append(pair_counts)
    assert any(a != b for a, b in counts)  # BPE: mean and sum can rank a pair differently
    assert result["configs"]["perturbation_syn_human"]["metadata"]["reduction"] == "mean"


def request(task: str, doc: int, idx: int, continuation: str):
    return types.SimpleNamespace(task_name=task, doc_id=doc, idx=idx, args=("", continuation))


def test_pairs_never_cross_tasks_that_share_a_doc_id():
    """Mutant: documents keyed by ``doc_id`` alone."""
    requests = [
        request("a", 0, 0, "AAAA"),
        request("b", 0, 0, "CC"),
        request("a", 0, 1, "AAAT"),
        request("b", 0, 1, "CG"),
    ]
    pairs = document_pairs(requests, strict=True)
    assert sorted(pairs) == [(0, 2), (1, 3)]


def test_strict_pairing_refuses_a_pair_of_unequal_lengths():
    """Mutant: the length comparison dropped (two requests: no odd count to raise first)."""
    requests = [request("a", 0, 0, "ACGT"), request("a", 0, 1, "AC")]
    with pytest.raises(UnsupportedTaskError, match=r"continuations of \[4, 2\] characters"):
        document_pairs(requests, strict=True)
    assert document_pairs(requests, strict=False) == []


def test_a_document_whose_requests_have_two_contexts_is_not_a_pair():
    """The one-context rule: two choices after different contexts (a multiple-choice question)
    are two questions, not a pair of sequences scored alike."""
    requests = [request("a", 0, 0, "ACGT"), request("a", 0, 1, "ACGA")]
    requests[1].args = ("<dna>", "ACGA")
    with pytest.raises(UnsupportedTaskError, match="task 'a' document 0 has 2 request"):
        document_pairs(requests, strict=True)
    assert document_pairs(requests, strict=False) == []
    requests[1].args = ("", "ACGA")
    assert document_pairs(requests, strict=True) == [(0, 1)]


def test_the_comparisons_of_a_document_are_linked_strand_by_strand():
    """A marginal document's four alleles and a footprint's three windows form one group per
    strand: each later comparison's first request of a strand linked to the first's."""
    from perturbation_bench.pairs.fields import TASK
    from perturbation_bench.pairs.requests import comparison_links
    from perturbation_bench.pairs.settings import TaskSettings

    def document(doc: int, n: int, rc: bool, first: int = 0):
        settings = TaskSettings(rc_average=rc)
        made = [request("t", doc, idx, "ACGT") for idx in range(n)]
        for item in made:
            item.doc = {TASK: settings}
        return made

    plain, stranded = document(0, 4, rc=False), document(1, 8, rc=True)
    shuffled = [stranded[5], *plain, stranded[0], *stranded[1:5], *stranded[6:]]
    links = comparison_links(shuffled)
    index = {id(r): i for i, r in enumerate(shuffled)}
    assert sorted(links) == sorted(
        [
            (index[id(plain[0])], index[id(plain[2])]),
            (index[id(stranded[0])], index[id(stranded[4])]),
            (index[id(stranded[2])], index[id(stranded[6])]),
        ]
    )
    assert comparison_links(document(2, 2, rc=False)) == []
    assert comparison_links([request("other", 0, i, "AC") for i in range(4)]) == []

"""pairwise_acc, tie_rate and margin: definitions, known answers and the pairing filter."""

from __future__ import annotations

import logging
import math

import pytest

from dna_fixtures import evaluate, pair_document
from perturbation_bench.errors import PairingError
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.tasks.metrics import pair_metrics
from perturbation_bench.tasks.pairing import LLPair, PairFilter, logged_pairs, process_results


def test_pair_metrics_is_strict():
    assert pair_metrics(-10.0, -11.0) == {"pairwise_acc": 1.0, "tie_rate": 0.0, "margin": 1.0}
    assert pair_metrics(-11.0, -10.0) == {"pairwise_acc": 0.0, "tie_rate": 0.0, "margin": -1.0}
    assert pair_metrics(-10.0, -10.0) == {"pairwise_acc": 0.0, "tie_rate": 1.0, "margin": 0.0}


@pytest.mark.parametrize(
    "model, level, says, not_said",
    [
        (None, "WARNING", "softmax_dtype=float32", "as expected"),
        ("dna-hf", "WARNING", "dna-hf takes every log-softmax in float32", "softmax_dtype"),
        ("kmer-markov", "INFO", "as expected of kmer-markov", "softmax_dtype"),
    ],
)
def test_ties_are_reported_once_per_task_naming_it_with_the_models_reading(
    monkeypatch, caplog, model, level, says, not_said
):
    """3 of 101 pairs tie: one record naming the config and the count, read for the model that
    scored them; 1 of 101 (under 1%): none."""
    from perturbation_bench.pairs.fields import TASK
    from perturbation_bench.pairs.settings import TaskSettings

    monkeypatch.setattr("perturbation_bench.active_models._scoring", (model, None))
    settings = TaskSettings(config="syn_zebrafish")
    for tied, expected in ((3, 1), (1, 0)):
        docs = [pair_document(benchmark_id=str(i)) | {TASK: settings} for i in range(101)]
        resps = []
        for i in range(101):
            resps += [[(-1.0, False)], [(-1.0 if i < tied else -2.0, False)]]
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench.tasks.metrics"):
            PairFilter().apply(resps, [doc for doc in docs for _ in range(2)])
        records = [r for r in caplog.records if "tie" in r.getMessage()]
        assert len(records) == expected
        if expected:
            (record,) = records
            assert record.levelname == level
            message = record.getMessage()
            assert message.startswith(
                f"perturbation-bench syn_zebrafish: {tied} of 101 pairs tie (LL(original) == "
                "LL(perturbed) exactly)"
            )
            assert says in message and not_said not in message


def test_filter_pairs_consecutive_responses_of_one_document():
    docs = [pair_document(benchmark_id="a"), pair_document(benchmark_id="b")]
    resps = [[(-1.0, False)], [(-2.0, False)], [(-5.0, True)], [(-4.0, False)]]
    paired = PairFilter().apply(resps, [docs[0], docs[0], docs[1], docs[1]])
    assert paired == [LLPair(-1.0, -2.0)] * 2 + [LLPair(-5.0, -4.0)] * 2
    assert process_results(docs[1], paired[2:]) == pair_metrics(-5.0, -4.0)


def test_filter_averages_strands_with_rc_average():
    doc = pair_document(rc_average=True, benchmark_id="a")
    resps = [[(-1.0, False)], [(-2.0, False)], [(-3.0, False)], [(-8.0, False)]]
    paired = PairFilter().apply(resps, [doc] * 4)
    assert paired == [LLPair(-2.0, -5.0)] * 4
    assert process_results(doc, paired) == pair_metrics(-2.0, -5.0)


@pytest.mark.parametrize(
    "resps, docs, message",
    [
        (
            [[(-1.0, False)]] * 3,
            [pair_document(benchmark_id="a")] * 3,
            "expected 2 consecutive .* 2..2 of 3",
        ),
        (
            [[(-1.0, False)]] * 2,
            [pair_document(benchmark_id="a"), pair_document(benchmark_id="b")],
            "expected 2 consecutive",
        ),
        ([[(-1.0, False)]] * 2, [pair_document(rc_average=True)] * 2, "expected 4 consecutive"),
        (
            [[(math.nan, False)], [(-1.0, False)]],
            [pair_document(benchmark_id="a")] * 2,
            r"NaN log-likelihood .*; the weights or the dtype overflowed \(try dtype=float32 or "
            r"bfloat16 instead of float16\)$",
        ),
    ],
)
def test_filter_rejects_what_cannot_be_paired(resps, docs, message):
    with pytest.raises(PairingError, match=message):
        PairFilter().apply(resps, docs)


@pytest.fixture(scope="module")
def identical_and_swapped(tmp_path_factory, tiny_models):
    """Three tasks' worth of data from the same pairs: as made, swapped, and original == perturbed."""
    rows = random_pairs(10, 90, seed=11)
    swapped = [
        dict(r, original_sequence=r["sequence"], sequence=r["original_sequence"]) for r in rows
    ]
    identical = [dict(r, sequence=r["original_sequence"]) for r in rows]
    root = tmp_path_factory.mktemp("known")
    write_parquet(rows, root / "as_made", "syn_human")
    write_parquet(swapped, root / "swapped", "syn_human")
    write_parquet(identical, root / "identical", "syn_human")
    return {
        name: evaluate(
            tiny_models["char"], ["perturbation_syn_human"], {"data_dir": str(root / name)}
        )
        for name in ("as_made", "swapped", "identical")
    }


def scores(result):
    return result["results"]["perturbation_syn_human"]


def test_identical_pairs_all_tie_and_all_count_as_wrong(identical_and_swapped):
    s = scores(identical_and_swapped["identical"])
    assert (s["pairwise_acc,pairs"], s["tie_rate,pairs"], s["margin,pairs"]) == (0.0, 1.0, 0.0)


def test_swapping_the_pair_mirrors_the_scores(identical_and_swapped):
    made, swapped = (
        scores(identical_and_swapped["as_made"]),
        scores(identical_and_swapped["swapped"]),
    )
    assert made["tie_rate,pairs"] == swapped["tie_rate,pairs"] == 0.0
    assert 0.0 < made["pairwise_acc,pairs"] < 1.0
    assert made["pairwise_acc,pairs"] + swapped["pairwise_acc,pairs"] == 1.0
    assert swapped["margin,pairs"] == pytest.approx(-made["margin,pairs"], abs=1e-4)
    lls = logged_pairs(identical_and_swapped["as_made"], "perturbation_syn_human")
    assert logged_pairs(identical_and_swapped["swapped"], "perturbation_syn_human") == [
        pytest.approx((b, a), abs=1e-4) for a, b in lls
    ]


def test_stderr_of_pairwise_acc_is_the_binomial_standard_error(identical_and_swapped):
    s = scores(identical_and_swapped["as_made"])
    p, n = s["pairwise_acc,pairs"], s["sample_len"]
    assert s["pairwise_acc_stderr,pairs"] == pytest.approx(math.sqrt(p * (1 - p) / (n - 1)))


def test_under_data_parallelism_each_process_says_its_own_ties(monkeypatch, caplog):
    from perturbation_bench.tasks.metrics import report_ties

    monkeypatch.setattr("perturbation_bench.active_models._share", (1, 2))
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench.tasks.metrics"):
        report_ties("syn_human", 5, 50)
    assert "perturbation-bench syn_human: 5 of 50 pairs held by this process tie (" in caplog.text
    caplog.clear()
    monkeypatch.setattr("perturbation_bench.active_models._share", (0, 1))
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench.tasks.metrics"):
        report_ties("syn_human", 5, 50)
    assert "5 of 50 pairs tie (" in caplog.text and "held by" not in caplog.text

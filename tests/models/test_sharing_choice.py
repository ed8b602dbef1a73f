"""``share_prefix=auto``: the first shared batch timed both ways, the faster kept for the run,
every rank taking rank 0's choice, the choice and its times in the provenance but not in the
store's key; scores equal plain scoring within |dLL| <= 1e-6 |LL| + 1e-3 nats either way."""

from __future__ import annotations

import logging

import pytest

from perturbation_bench.errors import OptionsError
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.models import sharing_choice
from perturbation_bench.models.sharing_choice import SharingChoice, sharing_mode


def clock(*durations: float):
    """A clock whose successive intervals (start, stop) last ``durations`` seconds."""
    now, ticks = 0.0, []
    for duration in durations:
        ticks += [now, now + duration]
        now += duration
    values = iter(ticks)
    return lambda: next(values)


def ways(shared_total: float, plain_total: float):
    """Two ways of scoring one batch of requests 0 and 1, and how often each ran."""
    calls = {"shared": 0, "plain": 0}

    def way(name: str, total: float):
        def run():
            calls[name] += 1
            return [([0], (total, True)), ([1], (2 * total, False))]

        return run

    return way("shared", shared_total), way("plain", plain_total), calls


def test_share_prefix_reads_auto_true_and_false_and_refuses_anything_else():
    assert sharing_mode("auto") == sharing_mode(" AUTO ") == "auto"
    assert sharing_mode("true") is True and sharing_mode(False) is False
    with pytest.raises(OptionsError, match="share_prefix must be auto, true or false, got 'x'"):
        sharing_mode("x")


@pytest.mark.parametrize(
    "shared_seconds, plain_seconds, chosen", [(1.0, 2.0, "shared"), (3.0, 2.0, "plain")]
)
def test_the_faster_way_is_kept_and_its_results_serve_the_batch(
    shared_seconds, plain_seconds, chosen
):
    choice = SharingChoice("auto", clock(shared_seconds, plain_seconds))
    shared, plain, calls = ways(-10.0, -10.0005)
    results = choice.settle(shared, plain)
    assert choice.shares is (chosen == "shared") and not choice.undecided
    assert results[0][1][0] == (-10.0 if chosen == "shared" else -10.0005)
    assert calls == {"shared": 1, "plain": 1}
    record = choice.record()["share_prefix"]
    assert record["chosen"] == chosen and record["agree"]
    assert record["seconds"] == {"shared": shared_seconds, "plain": plain_seconds}
    assert record["max_abs_dll"] == pytest.approx(0.001)  # request 1: -20 vs -20.001


def test_ways_that_disagree_beyond_the_bound_score_plainly_with_a_warning(caplog):
    choice = SharingChoice("auto", clock(1.0, 2.0))  # shared faster, but wrong
    shared, plain, _ = ways(-10.0, -10.1)
    with caplog.at_level(logging.WARNING):
        results = choice.settle(shared, plain)
    assert choice.shares is False and results[0][1][0] == -10.1
    assert "beyond the bound" in caplog.text
    # in bf16 the bound is wider (1e-3 |LL| + 0.5 nats): the same difference agrees
    assert SharingChoice("auto", clock(1.0, 2.0)).settle(*ways(-10.0, -10.1)[:2], exact=False)


def test_every_rank_takes_rank_zeros_choice_without_timing_its_own(monkeypatch):
    record = {"chosen": "plain", "seconds": {"shared": 2.0, "plain": 1.0}}
    monkeypatch.setattr(sharing_choice, "rank_zero", lambda: False)
    monkeypatch.setattr(sharing_choice, "from_rank_zero", lambda value: record)
    choice = SharingChoice("auto")
    shared, plain, calls = ways(-10.0, -10.0)
    assert choice.settle(shared, plain) is None
    assert calls == {"shared": 0, "plain": 0} and choice.shares is False
    assert choice.record() == {"share_prefix": record}


def test_nothing_timed_leaves_the_choice_open_and_forced_ways_record_nothing():
    choice = SharingChoice("auto")
    assert choice.settle() is None and choice.undecided and choice.plans_sharing
    assert choice.record() == {"share_prefix": {"chosen": None}}
    assert SharingChoice(True).record() == {} and SharingChoice(False).plans_sharing is False


@pytest.fixture(scope="module")
def spread_pairs(tmp_path_factory):
    """24 pairs of 240 bp with 3 bp changes over the whole window."""
    root = tmp_path_factory.mktemp("spread")
    write_parquet(random_pairs(24, 240, seed=8, patch=3), root, "syn_human")
    return root


def scored(model_path, data, share_prefix=None, durations=None):
    """``(LL pairs, model)`` of a dna-hf run on the CPU at batch 4; ``durations`` rig the clock
    of ``share_prefix=auto``."""
    from lm_eval import simple_evaluate

    from perturbation_bench.bench.measuring import lm_eval_model
    from perturbation_bench.tasks.pairing import logged_pairs

    metadata = {"data_dir": str(data), "config": "syn_human"}
    model_args = {} if share_prefix is None else {"share_prefix": share_prefix}
    lm, manager = lm_eval_model("dna-hf", model_path, "cpu", "float32", "4", metadata, model_args)
    if durations:
        lm._sharing.clock = clock(*durations)
    result = simple_evaluate(
        model=lm, tasks=["perturbation_custom"], task_manager=manager, log_samples=True
    )
    return logged_pairs(result, "perturbation_custom"), lm


@pytest.mark.parametrize(
    "durations, chosen", [((1.0, 2.0, 1.0), "shared"), ((3.0, 2.0, 3.0), "plain")]
)
def test_auto_scores_as_plain_either_way_and_records_its_choice_outside_the_settings(
    tiny_models, spread_pairs, sharing_pays, durations, chosen
):
    """Shared chosen: the rest of the run shares; plain chosen after a plan that shared: the
    remaining shared jobs' pieces are scored plainly. Every LL equals plain scoring's."""
    plain, _ = scored(tiny_models["char"], spread_pairs, share_prefix=False)
    auto, lm = scored(tiny_models["char"], spread_pairs, durations=durations)
    for got, expected in zip(auto, plain, strict=True):
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-3)
    provenance = lm.get_model_info()["perturbation_bench"]
    assert provenance["settings"]["share_prefix"] == "auto"  # as given: what keys a store
    measured = provenance["measured"]["share_prefix"]
    assert measured["chosen"] == chosen
    assert measured["seconds"] == {"shared": durations[0], "plain": 2.0}
    assert "chosen" not in str(lm._provenance.scorer_settings())


def test_a_call_with_fewer_shared_batches_than_worth_timing_leaves_the_plan_to_decide(
    tiny_models, tmp_path, sharing_pays
):
    """2 pairs at batch 4: fewer than MIN_TIMED_BATCHES shared batches, nothing timed (one
    extra batch would cost more than a wrong choice could), the scores still plain scoring's."""
    write_parquet(random_pairs(2, 240, seed=8, patch=3), tmp_path, "syn_human")
    plain, _ = scored(tiny_models["char"], tmp_path, share_prefix=False)
    auto, lm = scored(tiny_models["char"], tmp_path, durations=(1.0, 2.0))
    for got, expected in zip(auto, plain, strict=True):
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-3)
    assert lm._sharing.undecided
    assert lm.get_model_info()["perturbation_bench"]["measured"] == {
        "share_prefix": {"chosen": None}
    }

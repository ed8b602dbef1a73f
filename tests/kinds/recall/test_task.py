"""The recall task (``kinds/recall/task.py``) through lm-eval with test doubles: its requests,
its metrics, and what a model that does or does not read distant context scores."""

from __future__ import annotations

import math

import pytest

from perturbation_bench.errors import DataValidationError, OptionsError

from .recall_doubles import InductionLM, UniformLM, build, per_document, run

METRICS = ("copy_advantage", "pairwise_acc", "tie_rate", "margin")


def metric(result: dict, name: str) -> float:
    return result["results"]["perturbation_recall"][f"{name},pairs"]


def test_each_row_asks_its_target_after_the_repeat_then_the_control_context(tmp_path):
    data, rows, _ = build(tmp_path)
    model = UniformLM()
    run(model, data)
    expected = [
        (row[context], row["target"])
        for row in rows
        for context in ("context_repeat", "context_control")
    ]
    assert sorted(model.asked) == sorted(expected)
    assert len(model.asked) == 2 * len(rows)


def test_a_uniform_model_scores_exactly_zero_and_ties_every_row(tmp_path, caplog):
    """The tie log names the two log-likelihoods as the recall shape does, not as a pair's."""
    data, _, _ = build(tmp_path, copy="revcomp", control="foreign")
    with caplog.at_level("WARNING", logger="lm_eval.perturbation_bench.tasks.metrics"):
        result = run(UniformLM(), data)
    (said,) = [r.getMessage() for r in caplog.records if "pairs tie" in r.getMessage()]
    assert ": 6 of 6 pairs tie (LL(A | repeat) == LL(A | control) exactly)" in said
    assert "original" not in said
    assert metric(result, "copy_advantage") == 0.0
    assert metric(result, "margin") == 0.0
    assert metric(result, "tie_rate") == 1.0
    assert metric(result, "pairwise_acc") == 0.0  # strict: a tie is wrong


def test_an_induction_model_recalls_exact_copies_and_not_reverse_complements(tmp_path):
    """Exact copies: each target base after the first k is predicted from the copy,
    log(0.97 / 0.25) ~ 1.36 nats per base on (64 - 12) of 64 bases, about 1.1 nats/bp; reverse
    complements hold no forward k-mer of the target: about 0."""
    data, rows, _ = build(tmp_path / "exact")
    exact = run(InductionLM(), data)
    assert metric(exact, "copy_advantage") > 1.0
    assert metric(exact, "pairwise_acc") == 1.0
    for doc in per_document(exact):  # the metric is the pair's margin per target base
        ll_repeat, ll_control = doc["lls"]
        assert doc["copy"] == "exact"
        assert (ll_repeat - ll_control) / 64 == pytest.approx(
            (52 / 64) * math.log(0.97 / 0.25), abs=0.05
        )
    data, _, _ = build(tmp_path / "revcomp", copy="revcomp")
    revcomp = run(InductionLM(), data)
    assert abs(metric(revcomp, "copy_advantage")) < 0.05


def test_a_row_the_preset_cannot_tokenize_whole_is_refused_naming_file_and_row(tmp_path):
    """A 6-mer preset on a build not aligned to 6 (64-base targets): refused before scoring."""
    data, _, _ = build(tmp_path)
    with pytest.raises(
        DataValidationError, match=r"test-00000-of-00001.parquet: row 0: .*--align 6"
    ):
        run(UniformLM(), data, preset="nucleotide_transformer")


@pytest.mark.parametrize(
    ("metadata", "refused"),
    [({"rc_average": True}, "rc_average"), ({"context_bp": 512}, "context_bp")],
)
def test_settings_a_context_cannot_take_are_refused(tmp_path, metadata, refused):
    data, _, _ = build(tmp_path)
    with pytest.raises(OptionsError, match=f"perturbation_recall does not take {refused}"):
        run(UniformLM(), data, **metadata)


@pytest.mark.parametrize("scoring", ["pll", "embedding"])
def test_a_scoring_that_reads_whole_windows_is_refused_when_the_task_loads(tmp_path, scoring):
    """dna-mlm's pll and embedding read windows, not a target after a context: refused when the
    task loads (as ``check`` loads it), before any request is scored."""
    from perturbation_bench.active_models import as_scoring

    data, _, _ = build(tmp_path)
    with (
        as_scoring("dna-mlm", scoring),
        pytest.raises(OptionsError, match=f"scoring={scoring}"),
    ):
        run(UniformLM(), data)

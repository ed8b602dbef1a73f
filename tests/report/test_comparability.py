"""The one comparability rule (``report/comparability.py``): a column holds one metric on one
data identity, the one most runs share (the earliest run's on a tie); every other run is apart,
with its reason."""

from __future__ import annotations

import pytest

from dna_fixtures import write_run
from perturbation_bench.errors import DataValidationError
from perturbation_bench.pairs.settings import TaskSettings
from perturbation_bench.report.comparability import apart
from perturbation_bench.report.make import make_report

AUPRC_AA = ("auprc", "sha256:" + "a" * 64, None)


def test_runs_of_one_metric_on_one_data_are_one_column():
    assert apart({"a": AUPRC_AA, "b": AUPRC_AA, "c": AUPRC_AA}) == {}
    assert apart({"a": (None, None, None), "b": (None, None, None)}) == {}


def test_the_column_is_what_most_runs_share_and_the_others_say_why():
    cells = {"x": ("spearman", "sha256:" + "c" * 64, 8.0), "a": AUPRC_AA, "b": AUPRC_AA}
    assert apart(cells) == {
        "x": f"another metric (spearman, not auprc); other data (sha256:{'c' * 12}, "
        f"not sha256:{'a' * 12}); another part of it (--limit 8, not every pair)"
    }


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_a_tie_keeps_the_earliest_runs_column(order):
    cells = {"a": AUPRC_AA, "b": ("auprc", "sha256:" + "b" * 64, None)}
    first, second = order
    assert list(apart({run: cells[run] for run in order})) == [second]
    assert first not in apart({run: cells[run] for run in order})


def test_a_run_that_recorded_no_data_is_apart_from_one_that_did():
    assert apart({"a": AUPRC_AA, "b": AUPRC_AA, "old": ("auprc", None, None)}) == {
        "old": f"other data (no data identity recorded, not sha256:{'a' * 12})"
    }


def test_the_report_refuses_by_the_same_rule_naming_the_run_apart(tmp_path):
    """Two runs on data aa and one on bb: the report names bb's run as the one apart."""
    runs = [
        write_run(
            tmp_path / name,
            "perturbation_syn_human",
            [(-1.0, -2.0)] * 4,
            model_args={"order": order},
            settings=TaskSettings(data=data),
        )  # fmt: skip
        for name, order, data in (
            ("a", 2, "sha256:aa"),
            ("b", 3, "sha256:aa"),
            ("c", 4, "sha256:bb"),
        )
    ]
    with pytest.raises(DataValidationError) as refused:
        make_report(runs, tmp_path / "report", n_boot=20)
    assert (
        "kmer-markov order=4 syn_human:data=bb is apart: other data (sha256:bb, not sha256:aa)"
        in (str(refused.value))
    )


@pytest.mark.parametrize(
    "limit, count, part",
    [
        (None, {"original": 24, "effective": 24}, None),
        (8, {"original": 24, "effective": 8}, 8),
        (100, {"original": 24, "effective": 24}, None),  # every pair scored
        (0.5, {"original": 24, "effective": 12}, 0.5),
        (8, None, 8),  # no count: the limit stands
    ],
)
def test_a_limit_is_a_part_of_the_data_only_where_it_left_pairs_unscored(limit, count, part):
    from perturbation_bench.report.comparability import scored_part

    assert scored_part(limit, count) == part

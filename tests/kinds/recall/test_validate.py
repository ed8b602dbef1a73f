"""A recall config under the core's file check and ``validate`` (``pairs/files.py``,
``kinds/recall/invariants.py``): its requests' columns are its sequences, each invariant is
held by every built row and caught on a row broken on purpose."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perturbation_bench.dataset.validate import report, validate
from perturbation_bench.dna import reverse_complement
from perturbation_bench.errors import DataValidationError
from perturbation_bench.kinds.recall.invariants import copy_span
from perturbation_bench.pairs.files import read_pair_file
from perturbation_bench.tasks.loading import load_pairs

from .recall_doubles import build

RECALL_CHECKS = {"window_as_built", "contexts_differ_in_copy", "copy_as_named"}


@pytest.mark.parametrize(
    "options", [{}, {"copy": "revcomp", "control": "foreign"}, {"copy": "mutate:0.3"}]
)
def test_a_built_config_passes_every_recall_invariant_on_every_row(tmp_path, options):
    data, rows, _ = build(tmp_path, **options)
    checks, n_rows = validate(data)
    assert n_rows == len(rows) == 6
    ran = {c.name: c for c in checks if c.checked}
    assert set(ran) == {"pair_rules", "distinct_pairs", *RECALL_CHECKS}, report(checks, n_rows)
    assert all(ran[name].checked == 6 and not ran[name].broken for name in RECALL_CHECKS)


def _flip(base: str) -> str:
    return "A" if base != "A" else "C"


def _with_base_flipped(text: str, at: int) -> str:
    return text[:at] + _flip(text[at]) + text[at + 1 :]


def _break(row: dict, how: str) -> None:
    start, end = copy_span(row)
    if how == "window_bp":
        row["window_bp"] += 1
    elif how == "align 0":
        row["align"] = 0
    elif how == "a base of D":  # the control's only
        row["context_control"] = _with_base_flipped(row["context_control"], end)
    elif how == "control = repeat":  # copy advantage 0 by construction
        row["context_control"] = row["context_repeat"]
    elif how == "revcomp label":  # on an exact copy
        assert row["context_repeat"][start:end] != reverse_complement(row["target"])
        row["copy"] = "revcomp"
    elif how == "a base of the copy":
        row["context_repeat"] = _with_base_flipped(row["context_repeat"], start)
    else:
        row["copy" if how == "copy mutate:banana" else "control"] = how.split()[-1]


BREAKS = {
    "window_bp": "window_as_built",
    "align 0": "window_as_built",
    "a base of D": "contexts_differ_in_copy",
    "control = repeat": "contexts_differ_in_copy",
    "revcomp label": "copy_as_named",
    "a base of the copy": "copy_as_named",
    "copy mutate:banana": "copy_as_named",
    "control foo": "copy_as_named",
}
"""A row broken on purpose -> the invariant it breaks."""


@pytest.mark.parametrize(("how", "invariant"), sorted(BREAKS.items()))
def test_a_row_broken_on_purpose_breaks_its_invariant_only(tmp_path, how, invariant):
    data, rows, _ = build(tmp_path)
    _break(rows[4], how)
    path = data / "rc" / "broken.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    checks, _ = validate(path)
    broken = {c.name: c.first for c in checks if c.broken}
    assert list(broken) == [invariant]
    assert broken[invariant].endswith("row 4")


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("context_control", "ACGT", "row 2: context_repeat and context_control differ in length"),
        ("target", None, "row 2: 'target' is null"),
        ("context_repeat", "X", "row 2: 'context_repeat' has letters outside ACGTN"),
    ],
)
def test_the_core_file_check_reads_the_requests_columns(tmp_path, column, value, reason):
    """What a pair file is held to, a recall file is held to on its contexts and target."""
    data, rows, _ = build(tmp_path)
    if value == "X":
        value = "X" + rows[2][column][1:]
    rows[2][column] = value
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(DataValidationError, match=f"bad.parquet: {reason}"):
        read_pair_file(path)
    checks, _ = validate(path)
    assert checks[0].name == "pair_rules" and reason in checks[0].first


def test_a_pair_task_given_a_recall_config_names_the_recall_task(tmp_path):
    data, _, _ = build(tmp_path)
    with pytest.raises(
        DataValidationError, match=r"a recall file: its task is perturbation_recall"
    ):
        load_pairs("rc", task_data_dir=str(data))


def test_a_recall_file_without_a_column_its_task_reads_fails_the_file_check(tmp_path):
    """No SKIP for a file the task would refuse: validate fails it, naming the column."""
    _, rows, _ = build(tmp_path)
    path = tmp_path / "no_distance.parquet"
    pq.write_table(pa.Table.from_pylist(rows).drop_columns(["distance"]), path)
    checks, _ = validate(path)
    assert checks[0].broken == 1 and "missing column(s) distance" in checks[0].first


def test_the_file_check_holds_a_recall_file_to_the_preset_s_k_mer(tmp_path):
    """A 3-base target is shorter than one 6-mer; the file is read with only the columns asked
    for and those its check reads."""
    data, rows, _ = build(tmp_path)
    rows[1]["target"] = "ACG"
    path = tmp_path / "short.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert read_pair_file(path, kmer_size=3, columns=[]).column_names == [
        "context_repeat", "context_control", "target", "distance", "copy", "control", "trial"
    ]  # fmt: skip
    with pytest.raises(DataValidationError, match="row 1: 'target' is shorter than one 6-mer"):
        read_pair_file(path, kmer_size=6)


def test_a_recall_task_given_a_file_without_a_column_names_its_build_not_a_pair_task(tmp_path):
    from perturbation_bench.errors import OptionsError

    from .recall_doubles import UniformLM, run

    data, rows, _ = build(tmp_path)
    (path,) = (data / "rc").glob("*.parquet")
    pq.write_table(pa.Table.from_pylist(rows).drop_columns(["trial"]), path)
    with pytest.raises(
        OptionsError,
        match=r"'perturbation-bench build recall'; this file has no trial column\(s\)$",
    ):
        run(UniformLM(), data)


def test_a_repeated_recall_row_fails_distinct_pairs_naming_both_rows(tmp_path):
    """Its pair is the target after two contexts, named by its ``benchmark_id``: a row written
    twice would count one trial twice; a trial of another distance (another id) is no repeat."""
    data, rows, _ = build(tmp_path)
    path = next(data.rglob("*.parquet"))
    table = pq.read_table(path)
    pq.write_table(pa.Table.from_pylist([*rows, rows[4]], schema=table.schema), path)
    checks, n_rows = validate(data)
    distinct = next(c for c in checks if c.name == "distinct_pairs")
    assert (distinct.checked, distinct.broken, n_rows) == (7, 1, 7)
    assert distinct.first == f"{path} row 6 repeats the pair of {path} row 4"

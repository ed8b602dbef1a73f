"""The on-disk layout of pair data (``pairs/layout.py``): what a build writes, and where."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.layout import (
    EXCLUDED_NAME,
    PARQUET_NAME,
    REPORT_NAME,
    WRITE_ROWS,
    config_folder,
    unique_pairs,
    write_excluded,
    write_pairs,
    write_report,
)


def rows(n: int) -> list[dict]:
    return [{"original_sequence": "ACGT", "sequence": "ACGA", "i": i} for i in range(n)]


def test_pairs_are_written_in_row_groups_as_they_come_rows_in_equal_rows_out(tmp_path):
    folder = config_folder(tmp_path / "out", "syn_x")
    seen = []

    def table_of(batch, written):
        seen.append((len(batch), written))
        return pa.Table.from_pylist(batch)

    path, written = write_pairs(folder, iter(rows(2 * WRITE_ROWS + 76)), table_of)
    assert path == tmp_path / "out" / "syn_x" / PARQUET_NAME and written == 2 * WRITE_ROWS + 76
    assert seen == [(WRITE_ROWS, 0), (WRITE_ROWS, WRITE_ROWS), (76, 2 * WRITE_ROWS)]
    metadata = pq.ParquetFile(path).metadata
    assert [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)] == [
        WRITE_ROWS,
        WRITE_ROWS,
        76,
    ]
    assert pq.read_table(path).column("i").to_pylist() == list(range(written))


def test_the_first_batch_s_schema_is_every_batch_s_and_no_row_writes_no_file(tmp_path):
    folder = config_folder(tmp_path, "c")
    batches = rows(WRITE_ROWS) + [{"original_sequence": "A", "sequence": "C", "i": None}] * 3
    path, written = write_pairs(folder, batches)
    assert written == WRITE_ROWS + 3
    assert pq.read_table(path).column("i").to_pylist()[-3:] == [None] * 3
    empty = config_folder(tmp_path, "empty")
    assert write_pairs(empty, []) == (empty / PARQUET_NAME, 0)
    assert not (empty / PARQUET_NAME).exists()


def test_the_report_and_the_exclusions_sit_beside_the_pairs(tmp_path):
    folder = config_folder(tmp_path, "c")
    report = write_report(folder, {"written": 2, "excluded": {"n_in_window": 1}})
    assert report.name == REPORT_NAME and json.loads(report.read_text())["written"] == 2
    excluded = write_excluded(folder, ("chrom", "pos", "reason"), [("chr1", 5, "n_in_window")])
    assert excluded.name == EXCLUDED_NAME
    assert excluded.read_text() == "chrom\tpos\treason\nchr1\t5\tn_in_window\n"
    assert REPORT_NAME.startswith("_") and EXCLUDED_NAME.startswith("_")  # readers skip them


def test_a_repeated_pair_is_a_duplicate_when_its_labels_agree_and_a_conflict_when_not():
    """Labels agree when equal or both missing (None or NaN, either way round)."""
    from collections import Counter

    nan = float("nan")
    cases = [
        (1, 1, "duplicate_pair"),
        (None, None, "duplicate_pair"),
        (nan, nan, "duplicate_pair"),
        (None, nan, "duplicate_pair"),
        (0, 1, "conflicting_label"),
        (1, nan, "conflicting_label"),
        (None, 0, "conflicting_label"),
    ]
    for first, second, reason in cases:
        repeated = [
            {"original_sequence": "AC", "sequence": "AG", "label": label}
            for label in (first, second)
        ]
        excluded, conflicts = Counter(), []

        def on_conflict(row, earlier, found=conflicts):
            found.append(earlier)

        kept = list(unique_pairs(iter(repeated), excluded, "variants", None, on_conflict))
        assert (len(kept), dict(excluded)) == (1, {reason: 1}), (first, second)
        assert len(conflicts) == (reason == "conflicting_label")


@pytest.mark.parametrize("config", ["bad/name", "a b", "../up", "", ".hidden"])
def test_a_config_name_that_is_not_one_plain_folder_name_is_refused(tmp_path, config):
    with pytest.raises(OptionsError, match=r"^--config .*: a config name is letters, digits"):
        config_folder(tmp_path, config)
    assert list(tmp_path.iterdir()) == []
    assert config_folder(tmp_path, "syn_human-2.v1") == tmp_path / "syn_human-2.v1"

"""Reading pair files and the rules every pair passes (``pairs/files.py``): rows in equal rows
out over files and batches, and each rule's error naming the file, the row and the reason."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perturbation_bench.errors import DataValidationError
from perturbation_bench.fixtures.random_pairs import random_pairs
from perturbation_bench.pairs.files import (
    BATCH_ROWS,
    check_pairs,
    iter_pair_batches,
    read_pair_file,
)


def write(path, rows) -> str:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_every_row_of_every_file_comes_out_once_in_file_order(tmp_path):
    first = random_pairs(BATCH_ROWS + 44, 30, seed=1)
    second = random_pairs(7, 30, seed=2)
    files = [write(tmp_path / "a.parquet", first), write(tmp_path / "b.parquet", second)]
    batches = list(iter_pair_batches(files))
    assert [batch.num_rows for batch, _ in batches] == [BATCH_ROWS, 44, 7]
    read = [row for batch, _ in batches for row in batch.column("original_sequence").to_pylist()]
    assert read == [row["original_sequence"] for row in first + second]


def test_a_selection_keeps_only_its_rows_and_skips_batches_left_empty(tmp_path):
    rows = random_pairs(BATCH_ROWS + 10, 30, seed=3)
    files = [write(tmp_path / "a.parquet", rows)]
    kept = list(
        iter_pair_batches(files, select=lambda batch: [0, 2] if batch.num_rows > 10 else [])
    )
    assert len(kept) == 1 and kept[0][0].column("sequence").to_pylist() == [
        rows[0]["sequence"],
        rows[2]["sequence"],
    ]


def test_the_scan_finds_soft_masked_rows_and_each_changed_span(tmp_path):
    rows = [
        {"original_sequence": "ACGTACGT", "sequence": "ACCCACGT"},
        {"original_sequence": "acgtACGT", "sequence": "acgtACGA"},
    ]
    scan = check_pairs(pa.Table.from_pylist(rows), "x")
    assert scan.soft_masked.tolist() == [False, True]
    assert scan.changes.to_pylist() == ["CC", "A"]


@pytest.mark.parametrize(
    "rows, message",
    [
        ([{"original_sequence": "ACGT"}], "missing column.s. sequence"),
        ([{"original_sequence": "ACGTAC", "sequence": s} for s in ("ACGTAC", None, None)], "row 1: 'sequence' is null; 1 more"),
        ([{"original_sequence": "", "sequence": ""}], "row 0: 'original_sequence' is empty"),
        ([{"original_sequence": "ACG", "sequence": "ACC"}], "row 0: 'original_sequence' is shorter than one 6-mer .3 bp."),
        ([{"original_sequence": "ACGTACG", "sequence": "ACGTAC"}], "row 0: original_sequence and sequence differ in length .7 vs 6 bp."),
        ([{"original_sequence": "ACGTAC", "sequence": "ACGTAC"}, {"original_sequence": "ACGTXC", "sequence": "ACGTAC"}], "row 1: 'original_sequence' has letters outside ACGTN .first: 'X' at position 4."),
        ([{"original_sequence": "ACGTAC", "sequence": "ACGTRC"}], "row 0: 'sequence' has letters outside ACGTN .first: 'R' at position 4."),
        ([{"original_sequence": "ACGTAC", "sequence": s} for s in ("ACGTAA", "ACGTÅC")], "row 1: 'sequence' has letters outside ACGTN .first: 'Å' at position 4."),
        ([{"original_sequence": "ACGTAC", "sequence": "ACGTAA", "background_sequence": "ACGTAµ"}], "row 0: 'background_sequence' has letters outside ACGTN .first: 'µ' at position 5."),
        ([{"original_sequence": "ACGTACGT", "sequence": "ACGTACGA", "background_sequence": b} for b in ("ACGTACGG", "ACGTACG")], "row 1: original_sequence and background_sequence differ in length .8 vs 7 bp."),
        ([{"original_sequence": "ACGTAC", "sequence": "ACGTAA", "background_sequence": "ACGTAR"}], "row 0: 'background_sequence' has letters outside ACGTN .first: 'R' at position 5."),
        ([{"original_sequence": "ACGTAC", "sequence": "ACGTAA", "background_sequence": b} for b in ("ACGTAA", None)], "row 1: 'background_sequence' is null"),
    ],
)  # fmt: skip
def test_each_rule_names_the_file_the_first_bad_row_and_the_reason(tmp_path, rows, message):
    path = write(tmp_path / "bad.parquet", rows)
    with pytest.raises(DataValidationError, match=f"^{path}: .*{message}"):
        read_pair_file(path, kmer_size=6)
    with pytest.raises(DataValidationError, match=f"^{path}: .*{message}"):
        read_pair_file(path, kmer_size=6, columns=[])  # the sequences are read all the same
    with pytest.raises(DataValidationError, match=f"^{path}: .*{message}"):
        list(iter_pair_batches([path], kmer_size=6))


def test_a_bad_row_past_the_first_batch_is_named_by_its_row_in_the_file(tmp_path):
    rows = random_pairs(BATCH_ROWS + 5, 30, seed=5)
    rows[BATCH_ROWS + 3]["sequence"] = rows[BATCH_ROWS + 3]["sequence"][:-1]
    path = write(tmp_path / "a.parquet", rows)
    with pytest.raises(DataValidationError, match=f"row {BATCH_ROWS + 3}: original_sequence and"):
        list(iter_pair_batches([path]))


def test_an_empty_or_unreadable_file_is_refused_by_name(tmp_path):
    empty = tmp_path / "empty.parquet"
    pq.write_table(
        pa.table(
            {"original_sequence": pa.array([], pa.string()), "sequence": pa.array([], pa.string())}
        ),
        empty,
    )
    with pytest.raises(DataValidationError, match=f"^{empty}: empty file .0 rows."):
        list(iter_pair_batches([empty]))
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(DataValidationError, match=f"^{junk}: not a readable parquet file"):
        list(iter_pair_batches([junk]))

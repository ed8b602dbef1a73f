"""Validating built datasets (dataset/validate.py, dataset/invariants.py): each invariant caught, the same verdict as the task loaders."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dna_fixtures import TOY_WINDOW
from perturbation_bench.cli import main
from perturbation_bench.dataset.validate import report, validate
from perturbation_bench.errors import DataValidationError
from perturbation_bench.tasks.loading import load_pairs


@pytest.mark.parametrize("kind", ["syn", "motif"])
def test_built_dataset_passes_validate_against_the_genome(built, genome_files, kind):
    checks, n_rows = validate(built[kind], fasta=genome_files[0])
    assert n_rows > 10
    assert not [c.name for c in checks if c.broken], report(checks, n_rows)
    skipped = {c.name for c in checks if not c.checked}
    others = {c.name for c in checks[1:] if kind not in c.kinds}  # other kinds' invariants
    assert {"flanks_identical", "insert_at_centre", "copy_as_named"} <= others
    assert skipped == ({"patch_is_repeat"} if kind == "syn" else {"synonymous_only"}) | others
    lines = report(checks, n_rows).splitlines()
    not_applicable = {c.name for c in checks if not c.applicable}
    assert not_applicable == others | (
        {"patch_is_repeat"} if kind == "syn" else {"synonymous_only"}
    )
    assert not [line for line in lines if line.split(":")[0].split()[-1] in not_applicable]
    assert lines[-2] == "n/a (no rows of their kinds): " + ", ".join(
        c.name for c in checks if c.name in not_applicable
    )
    assert lines[-1] == f"{n_rows} rows checked"


def break_row(table_rows, invariant, row):
    r = table_rows[row]
    start, end = r["patch_start_in_seq"], r["patch_end_in_seq"]

    def swap(seq, at, base):
        return seq[:at] + base + seq[at + 1 :]

    other = lambda b: "A" if b != "A" else "C"  # noqa: E731
    if invariant == "window_size":
        r["window_size_bp"] += 1
    elif invariant == "diff_in_patch":
        r["sequence"] = swap(r["sequence"], end + 1, other(r["sequence"][end + 1]))
    elif invariant == "codon_aligned":
        r["patch_start_in_seq"] -= 1
    elif invariant == "synonymous_only":  # the second codon becomes a stop codon
        r["sequence"] = r["sequence"][: start + 3] + "TAA" + r["sequence"][start + 6 :]
    elif invariant == "patch_is_repeat":
        r["sequence"] = swap(r["sequence"], start, "T")
    elif invariant == "matches_genome":  # same change in both: still a valid pair, wrong genome
        base = other(r["original_sequence"][0])
        r["original_sequence"], r["sequence"] = (
            swap(r["original_sequence"], 0, base),
            swap(r["sequence"], 0, base),
        )


@pytest.mark.parametrize(
    "kind, invariant",
    [
        ("syn", "window_size"),
        ("syn", "diff_in_patch"),
        ("syn", "codon_aligned"),
        ("syn", "synonymous_only"),
        ("motif", "patch_is_repeat"),
        ("motif", "matches_genome"),
    ],
)
def test_validate_catches_one_broken_row_per_invariant(
    built, genome_files, tmp_path, kind, invariant
):
    table = pq.read_table(built[kind])
    rows = table.to_pylist()
    break_row(rows, invariant, 3)
    broken = tmp_path / "broken.parquet"
    pq.write_table(table.from_pylist(rows, schema=table.schema), broken)
    checks, _ = validate(broken, fasta=genome_files[0])
    failing = {c.name: c for c in checks if c.broken}
    assert failing[invariant].broken == 1 and f"{broken} row 3" in failing[invariant].first
    if invariant == "synonymous_only":  # names the codon and the amino acids
        start = rows[3]["patch_start_in_seq"] + 3
        codon = rows[3]["original_sequence"][start : start + 3].upper()
        assert f"row 3: codon at {start}: {codon} (" in failing[invariant].first
        assert failing[invariant].first.endswith(") -> TAA (*)")
    elif invariant == "matches_genome":  # the base changed in both sequences
        assert failing[invariant].first.endswith(
            "row 3: original_sequence differs from the genome's window first at base 0"
        )
    else:
        assert failing[invariant].first.endswith("row 3")
    assert main(["validate", str(broken), "--fasta", str(genome_files[0])]) == 1


def damage(path: Path, how: str) -> None:
    """Break one rule of the pair contract in the parquet file at ``path`` (row 3 where a row)."""
    table = pq.read_table(path)
    rows = table.to_pylist()
    if how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return
    if how == "empty":
        rows = []
    elif how == "null":
        rows[3]["sequence"] = None
    elif how == "no_sequence_column":
        table = table.drop_columns(["sequence"])
        rows = table.to_pylist()
    elif how == "foreign_letter":
        rows[3]["sequence"] = rows[3]["sequence"][:100] + "X" + rows[3]["sequence"][101:]
    elif how == "unequal_length":
        rows[3]["sequence"] = rows[3]["sequence"][:-1]
    pq.write_table(table.from_pylist(rows, schema=table.schema), path)


@pytest.mark.parametrize(
    "how, message",
    [
        ("truncated", "not a readable parquet file"),
        ("empty", r"empty file \(0 rows\)"),
        ("null", "row 3: 'sequence' is null"),
        ("no_sequence_column", r"missing column\(s\) sequence"),
        (
            "foreign_letter",
            "row 3: 'sequence' has letters outside ACGTN .first: 'X' at position 100",
        ),
        (
            "unequal_length",
            r"row 3: original_sequence and sequence differ in length \(400 vs 399 bp\)",
        ),
    ],
)
def test_validate_and_task_loading_apply_the_same_pair_rules(built, tmp_path, capsys, how, message):
    data = tmp_path / "syn_human"
    data.mkdir()
    broken = data / "test.parquet"
    shutil.copy(built["syn"], broken)
    damage(broken, how)
    assert main(["validate", str(broken)]) == 1
    lines = capsys.readouterr().out.splitlines()
    line = next(text for text in lines if "pair_rules" in text)
    assert line.startswith(f"FAIL pair_rules: 1 of 1 files break it (first: {broken}: ")
    assert re.search(message, line)
    assert "SKIP window_size: not checked (no rows: every file failed pair_rules)" in lines
    assert not any(text.endswith("()") for text in lines)
    with pytest.raises(DataValidationError, match=message):
        load_pairs("syn_human", data_dir=str(tmp_path))


def soft_mask(row: dict, start: int, end: int) -> None:
    """Lower-case ``[start, end)`` of both sequences, as a repeat-masked genome writes them."""
    for name in ("original_sequence", "sequence"):
        seq = row[name]
        row[name] = seq[:start] + seq[start:end].lower() + seq[end:]


@pytest.mark.parametrize("kind", ["syn", "motif"])
@pytest.mark.parametrize("where", ["patch", "flank", "window"])
def test_soft_masked_rows_get_the_same_verdict_from_validate_and_the_tasks(
    built, genome_files, tmp_path, kind, where
):
    """The tasks score soft-masked bases as bases; validate must accept the same rows."""
    table = pq.read_table(built[kind])
    rows = table.to_pylist()
    for row in rows[::2]:
        start, end = row["patch_start_in_seq"], row["patch_end_in_seq"]
        span = {"patch": (start, end), "flank": (0, start), "window": (0, TOY_WINDOW)}[where]
        soft_mask(row, *span)
    data = tmp_path / f"{kind}_human"
    data.mkdir()
    pq.write_table(table.from_pylist(rows, schema=table.schema), data / "test.parquet")
    checks, n_rows = validate(data, fasta=genome_files[0])
    assert n_rows == len(rows)
    assert {c.name: c.broken for c in checks if c.checked} == {
        c.name: 0 for c in checks if c.checked
    }
    assert {c.name for c in checks if c.checked} >= {
        "pair_rules",
        "diff_in_patch",
        "matches_genome",
    }
    assert len(load_pairs(f"{kind}_human", data_dir=str(tmp_path))["test"]) == len(rows)


def test_validate_without_fasta_skips_the_genome_check(built, capsys):
    assert main(["validate", str(built["motif"])]) == 0
    out = capsys.readouterr().out
    assert "SKIP matches_genome: not checked (no --fasta given)" in out
    assert "PASS pair_rules: 0 of 1 files break it" in out


def test_a_window_whose_genome_end_is_off_by_one_does_not_match_the_genome(
    built, genome_files, tmp_path
):
    """``matches_genome`` reads the genome up to ``window_genome_end`` as given, not as far as
    the window's length: an end one base too far is a window the genome does not hold there."""
    table = pq.read_table(built["syn"])
    rows = table.to_pylist()
    rows[2]["window_genome_end"] += 1
    rows[2]["window_size_bp"] += 1
    broken = tmp_path / "broken.parquet"
    pq.write_table(table.from_pylist(rows, schema=table.schema), broken)
    checks, _ = validate(broken, fasta=genome_files[0])
    failing = {c.name: c.first for c in checks if c.broken}
    assert set(failing) == {"window_size", "matches_genome"}
    length = len(rows[2]["original_sequence"])
    assert failing["matches_genome"] == (
        f"{broken} row 2: the genome's window is {length + 1} bp, original_sequence {length} bp"
    )


def test_a_row_on_a_sequence_the_fasta_lacks_says_so(built, genome_files, tmp_path):
    table = pq.read_table(built["motif"])
    rows = table.to_pylist()
    rows[1]["chr"] = "chrUn_nowhere"
    broken = tmp_path / "broken.parquet"
    pq.write_table(table.from_pylist(rows, schema=table.schema), broken)
    checks, _ = validate(broken, fasta=genome_files[0])
    (genome,) = [c for c in checks if c.name == "matches_genome"]
    assert genome.broken == 1
    assert genome.first.startswith(
        f"{broken} row 1: chr 'chrUn_nowhere' is not a sequence of the FASTA ("
    )


@pytest.mark.parametrize("kind", ["syn", "motif"])
def test_a_pair_repeated_within_a_config_fails_distinct_pairs_and_across_configs_passes(
    built, tmp_path, capsys, kind
):
    """The builds drop a repeated pair (``duplicate_pair``); validate holds a dataset made by
    hand to the same rule, per config: one task reads a config whole, so a repeat counts one
    pair twice, while two configs may share a pair."""
    table = pq.read_table(built[kind])
    rows = table.to_pylist()
    repeated = tmp_path / "one" / kind / "test.parquet"
    repeated.parent.mkdir(parents=True)
    pq.write_table(table.from_pylist([*rows, dict(rows[2])], schema=table.schema), repeated)
    assert main(["validate", str(tmp_path / "one")]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "distinct_pairs" in x)
    assert line == (
        f"FAIL distinct_pairs: 1 of {len(rows) + 1} rows break it (first: {repeated} row "
        f"{len(rows)} repeats the pair of {repeated} row 2)"
    )
    for config in ("a", "b"):
        shared = tmp_path / "two" / config / "test.parquet"
        shared.parent.mkdir(parents=True)
        pq.write_table(table, shared)
    checks, n_rows = validate(tmp_path / "two")
    distinct = next(c for c in checks if c.name == "distinct_pairs")
    assert (distinct.checked, distinct.broken, n_rows) == (2 * len(rows), 0, 2 * len(rows))


def test_a_path_that_does_not_exist_is_named_as_such_and_an_empty_folder_as_empty(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nowhere")]) == 2
    assert f"{tmp_path / 'nowhere'}: no such file or folder" in capsys.readouterr().err
    assert main(["validate", str(tmp_path)]) == 2
    assert f"no parquet files at {tmp_path}" in capsys.readouterr().err


def test_an_invariant_whose_columns_the_file_lacks_is_skipped_naming_them(built, tmp_path):
    table = pq.read_table(built["syn"]).drop_columns(["phase_gtf"])
    data = tmp_path / "syn_human"
    data.mkdir()
    pq.write_table(table, data / "test.parquet")
    checks, _ = validate(data)
    (codons,) = [c for c in checks if c.name == "codon_aligned"]
    assert (codons.checked, codons.skipped_because) == (0, "missing columns: phase_gtf")

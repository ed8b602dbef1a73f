"""Check that a dataset in the perturbation-bench schema has the properties the benchmark claims.

First every file must pass the rules the tasks apply when they load data (``pair_rules``, from
:mod:`perturbation_bench.pairs.files`: readable, not empty, both sequence columns, no nulls, equal
lengths, letters ACGTN; a kind whose documents are requests holds its requests' sequences in
place of the pair's); a file that breaks them is reported with its row and reason, and its rows
are not checked further. Then each invariant is checked on every row (files are streamed in
record batches), and no row may repeat an earlier row's pair in its config (``distinct_pairs``);
one line per invariant says how many rows break it, with the first such row. An
invariant whose columns a dataset lacks, or that needs a FASTA that was not given, is reported
as skipped, never as passed; an invariant of kinds the dataset holds no row of is listed once
as not applicable (a syn dataset has no recall rows to check). Positions are 0-based, half-open. Sequences are compared in upper
case, as the tasks read them: a soft-masked (lower-case) base is a base.

The invariants and their rules are in ``invariants.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq

from perturbation_bench.dataset.invariants import Invariant, invariants
from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.pairs.files import read_pair_file
from perturbation_bench.pairs.kinds import KIND, KINDS, kind_of
from perturbation_bench.pairs.layout import PARQUET_GLOB


def parquet_files(path: str | Path) -> list[Path]:
    """``path`` itself, or every ``*.parquet`` below it."""
    path = Path(path)
    if not path.exists():
        raise DataSourceError(f"{path}: no such file or folder")
    files = [path] if path.is_file() else sorted(path.rglob(PARQUET_GLOB))
    if not files:
        raise DataSourceError(f"no parquet files at {path}")
    return files


def sequence_fields() -> tuple[str, ...]:
    """Columns read in upper case (module docstring): every kind's sequence columns
    (``pairs/shape.py``: the pair's, its further copies, a kind's requests) and a motif pair's
    repeat."""
    columns = (name for kind in KINDS for name in kind.document.sequence_columns)
    return (*dict.fromkeys(columns), "actual_motif")


def _rows(files: list[Path]) -> Iterator[tuple[Path, int, set[str], dict]]:
    for path in files:
        parquet = pq.ParquetFile(path)
        columns = set(parquet.schema_arrow.names)
        row = 0
        for batch in parquet.iter_batches(batch_size=256):
            for record in batch.to_pylist():
                for name in sequence_fields():
                    if isinstance(record.get(name), str):
                        record[name] = record[name].upper()
                yield path, row, columns, record
                row += 1


def check_pair_rules(files: list[Path]) -> tuple[Invariant, list[Path]]:
    """Apply the tasks' pair rules to each file; return the per-file result and the files that pass."""
    rules = Invariant("pair_rules", (), None, unit="files")
    passing = []
    for path in files:
        rules.checked += 1
        try:
            read_pair_file(path, columns=[])
        except DataValidationError as err:
            rules.broken += 1
            rules.first = rules.first or str(err)
        else:
            passing.append(path)
    return rules, passing


def validate(path: str | Path, fasta: str | Path | None = None) -> tuple[list[Invariant], int]:
    """Check every file and row of the dataset at ``path``; return the checks (with counts) and
    the number of rows checked against the row invariants."""
    from tqdm import tqdm

    rules, passing = check_pair_rules(parquet_files(path))
    checks, n_rows, kinds_seen = invariants(fasta), 0, set()
    distinct = DistinctPairs()
    for path_, row, columns, record in tqdm(_rows(passing), desc="validating", unit="row"):
        n_rows += 1
        kind = kind_of(columns)
        kinds_seen.add(kind)
        pair = (path_.parent, KIND[kind].document.row_pair_id(record))
        distinct.count(pair, f"{path_} row {row}")
        for check in checks:
            _apply(check, kind, columns, record, f"{path_} row {row}")
    checks = [distinct, *checks]
    for check in checks:
        check.applicable = not n_rows or bool(kinds_seen.intersection(check.kinds))
        if not check.checked and not check.skipped_because:
            check.skipped_because = (
                "no rows: every file failed pair_rules" if rules.broken else "no rows"
            )
    return [rules, *checks], n_rows


def _apply(check: Invariant, kind: str, columns: set[str], record: dict, where: str) -> None:
    """Check one row against ``check`` where its kind and columns allow, counting the result."""
    if check.holds is None:
        return
    missing = [c for c in check.columns if c not in columns]
    if kind not in check.kinds:
        check.skipped_because = f"applies to {'/'.join(check.kinds)} datasets only"
        return
    if missing:
        check.skipped_because = f"missing columns: {', '.join(missing)}"
        return
    check.checked += 1
    if not check.holds(record):
        check.broken += 1
        if check.first is None:
            detail = f": {check.explain(record)}" if check.explain else ""
            check.first = f"{where}{detail}"


class DistinctPairs(Invariant):
    """``distinct_pairs``: no row repeats an earlier row's pair (its id,
    ``shape.DocumentShape.row_pair_id``, the rule the builds drop a ``duplicate_pair`` by)
    within its config (the folder of its file, which one task reads whole); a repeat would count
    one pair twice. Memory: an id per distinct pair."""

    def __init__(self):
        super().__init__("distinct_pairs", (), None, kinds=tuple(k.name for k in KINDS))
        self.seen: dict[tuple[Path, str], str] = {}

    def count(self, pair: tuple[Path, str], where: str) -> None:
        """Count the row at ``where`` whose ``(config folder, pair id)`` is ``pair``."""
        self.checked += 1
        if pair not in self.seen:
            self.seen[pair] = where
            return
        self.broken += 1
        self.first = self.first or f"{where} repeats the pair of {self.seen[pair]}"


def report(checks: list[Invariant], n_rows: int) -> str:
    """One line per applicable check, then one naming the checks of kinds the dataset lacks."""
    lines = []
    for check in (c for c in checks if c.applicable):
        if check.checked == 0:
            lines.append(f"SKIP {check.name}: not checked ({check.skipped_because})")
        elif check.broken:
            lines.append(
                f"FAIL {check.name}: {check.broken} of {check.checked} {check.unit} break it "
                f"(first: {check.first})"
            )
        else:
            lines.append(f"PASS {check.name}: 0 of {check.checked} {check.unit} break it")
    elsewhere = [c.name for c in checks if not c.applicable]
    if elsewhere:
        lines.append(f"n/a (no rows of their kinds): {', '.join(elsewhere)}")
    lines.append(f"{n_rows} rows checked")
    return "\n".join(lines)

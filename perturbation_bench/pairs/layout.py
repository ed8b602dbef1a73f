"""The on-disk layout of pair data (the Hugging Face hub's), for every builder and every reader.

    DIR/<config>/*.parquet                 the pairs of one config (the files a task reads)
    DIR/<config>/test-00000-of-00001.parquet   what ``perturbation-bench build`` writes there
    DIR/<config>/_build_report.json        what a build read, wrote and excluded, and its settings
    DIR/<config>/_excluded.tsv             each excluded item and the reason
    DIR/perturbation_<config>.yaml         the built config's task (``tasks/task_yaml.py``)

A name that starts with ``_`` is skipped by parquet dataset readers. A build writes its pairs in
row groups of :data:`WRITE_ROWS` as they are made, so it holds one batch, never the dataset.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.kinds import KIND

PARQUET_GLOB = "*.parquet"
PARQUET_NAME = "test-00000-of-00001.parquet"
REPORT_NAME = "_build_report.json"
EXCLUDED_NAME = "_excluded.tsv"
WRITE_ROWS = 512
"""Rows per parquet row group a build writes: about 8 MB of 8 kb pairs."""


CONFIG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""A config's name: one folder name, and part of its task's name (``perturbation_<config>``)."""


def config_folder(out: str | Path, config: str) -> Path:
    """``out/<config>``, made if missing.

    Raises:
        OptionsError: ``config`` is not a name of :data:`CONFIG_NAME` (a path, a space).
    """
    if not CONFIG_NAME.fullmatch(str(config)):
        raise OptionsError(
            f"--config {config!r}: a config name is letters, digits, '_', '.' and '-', starting "
            "with a letter or digit (it names a folder and the task perturbation_<config>)"
        )
    folder = Path(out) / config
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_pairs(
    folder: Path, rows: Iterable[dict], table_of: Callable[[list[dict], int], object] | None = None
) -> tuple[Path, int]:
    """Write ``rows`` to ``folder/test-00000-of-00001.parquet`` in row groups of
    :data:`WRITE_ROWS`; return the path and the number of rows written. No file is written
    when there is no row.

    ``table_of(batch, written)`` makes each batch's arrow table (``written``: the rows before
    it); by default the first batch's inferred schema is every batch's.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path, rows, written, writer = folder / PARQUET_NAME, iter(rows), 0, None
    try:
        while batch := list(itertools.islice(rows, WRITE_ROWS)):
            if table_of is not None:
                table = table_of(batch, written)
            else:
                table = pa.Table.from_pylist(batch, schema=writer.schema if writer else None)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
            written += len(batch)
    finally:
        if writer is not None:
            writer.close()
    return path, written


def write_report(folder: Path, report: dict) -> Path:
    """``folder/_build_report.json``: ``report`` as indented JSON."""
    path = folder / REPORT_NAME
    path.write_text(json.dumps(report, indent=2) + "\n")
    return path


def write_excluded(folder: Path, columns: tuple[str, ...], rows: Iterable[tuple]) -> Path:
    """``folder/_excluded.tsv``: a header of ``columns`` (the last one ``reason``), a line each."""
    path = folder / EXCLUDED_NAME
    lines = ["\t".join(columns)] + ["\t".join(map(str, row)) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def unique_pairs(
    rows: Iterator[dict], excluded: Counter, kind: str, on_duplicate=None, on_conflict=None
):
    """``rows`` of pairs of ``kind`` less the repeats of an earlier row's pair (its id,
    ``shape.DocumentShape.row_pair_id``: ``original_sequence``, ``sequence`` and what else the
    kind declares, a variant's ``assay``), the first kept: ``duplicate_pair``
    (e.g. isoforms of two genes sharing the changed exon), handed to ``on_duplicate(row)``, or
    ``conflicting_label`` where its ``label`` differs from the earlier row's (a missing label
    agrees with a missing one only), handed to ``on_conflict(row, earlier_label)``; counted in
    ``excluded``. Memory: an id and a label per distinct pair."""
    seen: dict = {}
    shape = KIND[kind].document
    for row in rows:
        digest = shape.row_pair_id(row)
        if digest not in seen:
            seen[digest] = row.get("label")
            yield row
            continue
        same = _labels_agree(seen[digest], row.get("label"))
        excluded["duplicate_pair" if same else "conflicting_label"] += 1
        if same and on_duplicate is not None:
            on_duplicate(row)
        elif not same and on_conflict is not None:
            on_conflict(row, seen[digest])


def _labels_agree(earlier, label) -> bool:
    """Whether two labels of one pair agree: equal, or both missing (None or NaN)."""
    missing = [x is None or x != x for x in (earlier, label)]
    return all(missing) or (not any(missing) and earlier == label)

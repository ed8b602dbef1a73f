"""``perturbation-bench build variants``: a variant file and a genome become a pair dataset.

Each variant of the file (``formats/variant_files.py``; one per ALT) becomes one row whose
``original_sequence`` is its reference window and ``sequence`` its alternate window
(``windows.py``), so every task and model of this package scores it as a pair. Columns, in order::

    chrom pos ref alt variant_id [label] window_start variant_offset is_clamped window_edge
    <every other column of the file> original_sequence sequence

``window_edge`` is the edge rule the windows were cut with (``windows.py``: shift, pad, truncate).
The file's other columns include ``assay`` and ``label_direction`` where it has them or they are
named (``formats/variant_files.py``). A MaveDB score table reads its variants from HGVS
(``formats/mavedb.py``, ``formats/hgvs.py``); its excluded variants are named with their HGVS first.
NABench's assay files make their pairs without a genome (:func:`build_nabench_dataset`,
``formats/nabench.py``: the wild type and each measured sequence, ``window_edge`` ``construct``).

``chrom`` is written as the file names it; ``variant_id`` is the file's (VCF ID, or a
``variant_id`` column) or else ``chrom:pos:ref:alt``. Variants that cannot make a pair are
excluded and counted per reason (``windows.py``), and so is one whose pair repeats an earlier
one's within its assay (``pairs/layout.unique_pairs``): ``duplicate_pair`` (the same record
twice), or ``conflicting_label`` where their labels differ (both named); the counts are printed and written to
``<config>/_build_report.json``, each excluded variant is named in ``<config>/_excluded.tsv``
(chrom, pos, ref, alt, reason), and variants read = rows written + excluded. Rows stream to
the parquet file in batches in file order; same inputs, same bytes.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa

from perturbation_bench import __version__
from perturbation_bench.errors import DataValidationError
from perturbation_bench.formats.fasta import resolve_chromosome
from perturbation_bench.formats.mavedb import read_mavedb
from perturbation_bench.formats.nabench import EXCLUDED_COLUMNS as NABENCH_EXCLUDED
from perturbation_bench.formats.nabench import nabench_rows, read_wild_types
from perturbation_bench.formats.variant_files import read_variants
from perturbation_bench.pairs.layout import (
    config_folder,
    unique_pairs,
    write_excluded,
    write_pairs,
    write_report,
)
from perturbation_bench.variants.windows import allele_problem, check_positions, variant_windows
from perturbation_bench.wording import tally

VARIANT_KEYS = ("chrom", "pos", "ref", "alt")
FIXED_TYPES = {
    "chrom": pa.string(),
    "pos": pa.int64(),
    "ref": pa.string(),
    "alt": pa.string(),
    "variant_id": pa.string(),
    "window_start": pa.int64(),
    "variant_offset": pa.int64(),
    "is_clamped": pa.int64(),
    "window_edge": pa.string(),
    "assay": pa.string(),
    "label_direction": pa.string(),
    "original_sequence": pa.string(),
    "sequence": pa.string(),
}


def variant_rows(
    variants,
    genome,
    window: int,
    excluded: Counter,
    named: list | None = None,
    edge: str = "shift",
    named_by: tuple[str, ...] = (),
):
    """Rows (module docstring) for ``variants``, windows cut by the ``edge`` rule; the excluded
    ones counted in ``excluded`` and, with ``named``, listed there as ``(*named_by fields, chrom,
    pos, ref, alt, reason)``."""
    for variant in variants:
        problem = variant.problem or allele_problem(variant.ref, variant.alt)
        chrom = resolve_chromosome(variant.chrom, genome)
        if problem is None and chrom is None:
            problem = "chromosome_not_in_fasta"
        windows = problem or variant_windows(
            genome, chrom, variant.pos, variant.ref, variant.alt, window, edge
        )
        if isinstance(windows, str):
            excluded[windows] += 1
            if named is not None:
                named.append(
                    (
                        *(_shown(variant.extra.get(name)) for name in named_by),
                        variant.chrom,
                        variant.pos or "",
                        variant.ref,
                        variant.alt,
                        windows,
                    )
                )
            continue
        yield _row(variant, windows, edge)


def _row(variant, windows, edge: str) -> dict:
    """A variant's row: its alleles, its ``variant_id`` (``chrom:pos:ref:alt`` where the file
    gives none), its label where it has one, its windows and its file's other columns."""
    extra = dict(variant.extra)
    label = {"label": extra.pop("label")} if "label" in extra else {}
    variant_id = extra.pop("variant_id", None) or (
        f"{variant.chrom}:{variant.pos}:{variant.ref}:{variant.alt}"
    )
    return {
        "chrom": variant.chrom,
        "pos": variant.pos,
        "ref": variant.ref,
        "alt": variant.alt,
        "variant_id": str(variant_id),
        **label,
        "window_start": windows.window_start,
        "variant_offset": windows.variant_offset,
        "is_clamped": int(windows.is_clamped),
        "window_edge": edge,
        **extra,
        "original_sequence": windows.reference,
        "sequence": windows.alternate,
    }


def _namers(named: list, fields):
    """``unique_pairs``' two callbacks: each names its row in ``named`` as ``(*fields(row),
    reason)``, a conflict with both labels, the one written first."""
    return (
        lambda row: named.append((*fields(row), "duplicate_pair")),
        lambda row, earlier: named.append(
            (
                *fields(row),
                f"conflicting_label (label {row['label']}; an earlier record of the same pair, "
                f"which is written, has {earlier})",
            )
        ),
    )


def _shown(value) -> str:
    """A field as an excluded row names it: empty for a missing value (None, NaN)."""
    return "" if value is None or value != value else str(value)


def row_schema(first: dict, carried: pa.Schema) -> pa.Schema:
    """The schema of every row, in the order of ``first``: fixed types for this module's
    columns, the file's own types for the carried ones (``label``: bool, or float64 for
    quantitative labels, ``formats/variant_files.py``)."""
    return pa.schema(
        [pa.field(name, FIXED_TYPES.get(name) or carried.field(name).type) for name in first]
    )


def build_variant_dataset(
    variants_path: str | Path,
    genome,
    config: str,
    out: str | Path,
    window: int = 8192,
    edge: str = "shift",
    columns: dict | None = None,
    mavedb: dict | None = None,
) -> tuple[Path, int, Counter, int]:
    """Write ``out/<config>/test-00000-of-00001.parquet`` and ``_build_report.json``.

    ``columns``: ``label_column``, ``assay_column``, ``label_direction`` of the table
    (``formats/variant_files.py``); ``mavedb``: ``hgvs_column`` and ``chrom`` to read ``variants_path`` as a
    MaveDB score table (``mavedb.read_mavedb``).

    Returns:
        The parquet path, rows written, exclusion counts, and variants read.
    """
    columns = columns or {}
    excluded: Counter = Counter()
    named: list[tuple] = []
    named_by: tuple[str, ...] = ()
    if mavedb is None:
        carried, variants = read_variants(variants_path, **columns)
    else:
        carried, variants = read_mavedb(variants_path, genome, **mavedb, **columns)
        named_by = (mavedb.get("hgvs_column", "hgvs_nt"),)
    counted = _Counted(variants)
    rows = unique_pairs(
        variant_rows(counted, genome, window, excluded, named, edge, named_by),
        excluded,
        "variants",
        *_namers(named, lambda row: (*(row[k] for k in named_by), *(row[k] for k in VARIANT_KEYS))),
    )
    settings = {
        "variants": str(variants_path),
        "fasta": str(genome.path),
        "config": config,
        "window": window,
        "edge": edge,
        **{k: v for k, v in {**columns, **(mavedb or {})}.items() if v is not None},
    }
    path, written = _write_config(
        out,
        config,
        rows,
        carried,
        variants_path,
        excluded,
        settings,
        lambda: counted.count,
        check=lambda: check_positions(variants_path, genome, named, counted.count),
    )
    write_excluded(path.parent, (*named_by, *VARIANT_KEYS, "reason"), named)
    return path, written, excluded, counted.count


def build_nabench_dataset(
    paths, config: str, out: str | Path, metadata: str | Path | None = None
) -> tuple[Path, int, Counter, int]:
    """:func:`build_variant_dataset` for NABench's assay files (``formats/nabench.py``): one assay per
    file; ``metadata``: NABench's ``metadata.csv``, the wild types of assays without a
    wild-type row."""
    excluded: Counter = Counter()
    named: list[tuple] = []
    seen: Counter = Counter()
    rows = unique_pairs(
        nabench_rows(paths, read_wild_types(metadata), excluded, named, seen),
        excluded,
        "variants",
        *_namers(named, lambda row: (row["assay"], "", row["mutant"])),
    )
    settings = {
        "nabench": [str(p) for p in paths],
        "nabench_metadata": metadata and str(metadata),
        "config": config,
    }
    carried = pa.schema(
        [
            ("label", pa.float64()),
            ("assay", pa.string()),
            ("label_direction", pa.string()),
            ("mutant", pa.string()),
        ]
    )
    path, written = _write_config(
        out,
        config,
        rows,
        carried,
        ", ".join(map(str, paths)),
        excluded,
        settings,
        lambda: seen["read"],
        {"wild_type_rows": lambda: seen["wild_type"]},
    )
    write_excluded(path.parent, NABENCH_EXCLUDED, named)
    return path, written, excluded, seen["read"]


def _write_config(
    out, config, rows, carried, source, excluded, settings, read, counts=None, check=None
) -> tuple[Path, int]:
    """Stream ``rows`` to the config's parquet file, each batch in one schema (the first
    row's order, :func:`row_schema`), and write ``_build_report.json`` with ``settings``
    (``read()``: the variants read, once the rows are spent; ``counts``: more counts by name;
    ``check()``: a refusal of the whole file, once the rows are spent). A build that stops (a
    refused record, no pair, the check) removes the config folder it made."""
    fresh = not (Path(out) / config).exists()
    folder = config_folder(out, config)
    schema = None  # the first batch's, for every batch

    def table_of(batch: list[dict], written: int):
        nonlocal schema
        schema = schema or row_schema(batch[0], carried)
        return _batch_table(batch, schema, source, written)

    try:
        path, written = write_pairs(folder, rows, table_of)
        if check is not None:
            check()
        if not written:
            raise DataValidationError(
                f"{source}: no variant could be made into a pair (excluded: "
                f"{tally(excluded, 'none read')})"
            )
    except Exception:
        if fresh:
            shutil.rmtree(folder)
        raise
    report = {
        "read": read(),
        **{name: count() for name, count in (counts or {}).items()},
        "written": written,
        "excluded": dict(sorted(excluded.items())),
        "settings": {**settings, "script_version": f"perturbation-bench {__version__}"},
    }
    write_report(folder, report)
    return path, written


def _batch_table(batch: list[dict], schema: pa.Schema, source, first_row: int) -> pa.Table:
    try:
        return pa.Table.from_pylist(batch, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise DataValidationError(
            f"{source}: a value among output rows {first_row}-{first_row + len(batch) - 1} does "
            f"not fit its column's type ({err})"
        ) from None


class _Counted:
    """An iterator that counts what it yields."""

    def __init__(self, items) -> None:
        self.items, self.count = iter(items), 0

    def __iter__(self):
        for item in self.items:
            self.count += 1
            yield item

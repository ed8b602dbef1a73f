"""MaveDB score tables as variants (``build variants --from mavedb``): each record's variant from
its HGVS ``g.`` change (``hgvs.py``) on a chromosome of the genome, its ``score`` the label; the
table is otherwise read as ``variant_files.py`` reads a variant table (label and assay columns,
carried fields). A record whose HGVS cannot be read becomes a variant with a ``problem``,
excluded and counted by the build.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.formats.variant_files import (
    REQUIRED,
    Variant,
    carried_fields,
    carried_schema,
    load_table,
    named_columns,
    table_variants,
)

if TYPE_CHECKING:
    import pyarrow as pa


def read_mavedb(
    path: str | Path,
    genome,
    hgvs_column: str = "hgvs_nt",
    chrom: str | None = None,
    label_column: str | None = None,
    assay_column: str | None = None,
    label_direction: str | None = None,
) -> tuple[pa.Schema, Iterator[Variant]]:
    """:func:`read_variants` of a MaveDB score table: each record's variant from its
    ``hgvs_column`` on ``chrom`` (else its accession) of ``genome`` (``hgvs.py``); the table's
    ``score`` (or ``label_column``) is the label."""
    path = Path(path)
    if not path.is_file():
        raise DataSourceError(f"no MaveDB score table at {path}")
    table = load_table(path)
    if label_column is None and "label" not in table.columns and "score" in table.columns:
        label_column = "score"
    table = named_columns(path, table, label_column, assay_column, label_direction)
    if hgvs_column not in table.columns:
        raise DataValidationError(
            f"{path}: no {hgvs_column!r} column (the variants in HGVS g. notation; name another "
            "with --hgvs-column)"
        )
    schema, quantitative = carried_schema(path, table, REQUIRED)
    carried = carried_fields(table, REQUIRED)
    variants = table_variants(
        path, table, carried, quantitative, _hgvs_reader(path, hgvs_column, chrom, genome)
    )
    return schema, variants


def _hgvs_reader(path: Path, column: str, chrom: str | None, genome):
    """``row -> (chrom, pos, ref, alt) | (chrom, reason)`` reading ``row[column]``; a chromosome
    (``chrom``, else the accession) that names no FASTA sequence stops the build, naming it
    and ``--chrom``."""
    from perturbation_bench.formats.fasta import resolve_chromosome
    from perturbation_bench.formats.hgvs import hgvs_alleles, split_accession

    def read(row: dict):
        text = row[column]
        if not isinstance(text, str) or not text.strip():
            return chrom or "", "hgvs_missing"
        accession, change = split_accession(text.strip())
        name = chrom or accession
        if name is None:
            return "", "hgvs_without_chromosome"
        fasta_name = resolve_chromosome(name, genome)
        if fasta_name is None:
            raise DataValidationError(
                f"{path}: {column} {text.strip()!r}: "
                + (f"--chrom {chrom!r}" if chrom else f"the accession {name!r}")
                + f" names no sequence of the FASTA {genome.path}; give its name there with "
                "--chrom (e.g. --chrom chr17 for NC_000017.10)"
            )
        alleles = hgvs_alleles(change, lambda a, b: genome.fetch(fasta_name, a, b).upper())
        return (name, *alleles) if isinstance(alleles, tuple) else (name, alleles)

    return read

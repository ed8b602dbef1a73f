"""Reading variant files: VCF (``.vcf``, ``.vcf.gz``, through pysam) or a table (parquet, csv, tsv).
MaveDB score tables are read in ``mavedb.py``, NABench's assay files in ``nabench.py``, BED regions
in ``bed.py``; genomes (FASTA) in ``fasta.py``, annotations (GTF, GFF3) in ``annotation.py``.

Every record comes out as a :class:`Variant` with ``chrom``, ``pos`` (1-based, as in a VCF),
``ref``, ``alt`` and the record's other fields (``extra``):

- VCF: one variant per ALT of a record (a multi-allelic record gives several), ``variant_id``
  from the ID column where it is set; INFO and samples are not read.
- table: the columns ``chrom``, ``pos``, ``ref``, ``alt`` are required; ``label`` and every other
  column are carried into ``extra``. A ``label`` is binary (bool, the numbers 1/0, or
  true/false/1/0 in text) unless the column is numeric with a value other than 0 and 1: then it
  is quantitative (a deep mutational scan's or saturation genome editing's score), kept as a
  float. An empty cell is no label. An ``alt`` holding
  commas is split like a multi-allelic VCF record. TraitGym's ``test.parquet`` reads as it is.

A table may name its label and assay columns otherwise (``--label-column``, ``--assay-column``:
read as ``label`` and ``assay``); an ``assay`` (one functional screen, scored apart,
``pairs/assays.py``) must be set on every record. The direction of a quantitative label is
declared by a ``label_direction`` column or ``--label-direction`` (``damaging`` or
``functional``), written on every record.

A record that cannot be read (a missing or non-integer ``pos``, an empty ``chrom``, ``ref`` or
``alt``, a label that is neither a truth value nor a finite number (``labels.py``, which also
refuses a ``score`` column beside no label column), an empty assay, an unknown direction) stops with a
:class:`DataValidationError` naming the file, the 0-based record and the reason. Alleles are upper-cased; what a window can be built
from is decided later (``variants/windows.py``), where exclusions are counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perturbation_bench.errors import DataSourceError, DataValidationError, OptionsError
from perturbation_bench.formats.labels import check_label_column, number, truth

if TYPE_CHECKING:
    import pyarrow as pa

REQUIRED = ("chrom", "pos", "ref", "alt")


@dataclass
class Variant:
    """One allele of one record: 1-based ``pos``; ``record``: its 0-based index in the file."""

    chrom: str
    pos: int
    ref: str
    alt: str
    record: int
    extra: dict = field(default_factory=dict)
    problem: str | None = None
    """Why the record gives no variant (an HGVS that cannot be read); None for a variant."""


def is_vcf(path: str | Path) -> bool:
    """Whether ``path`` is named as a VCF (``.vcf``, ``.vcf.gz``, ``.vcf.bgz``)."""
    name = Path(path).name.lower()
    return name.endswith((".vcf", ".vcf.gz", ".vcf.bgz"))


def read_variants(
    path: str | Path,
    label_column: str | None = None,
    assay_column: str | None = None,
    label_direction: str | None = None,
) -> tuple[pa.Schema, Iterator[Variant]]:
    """The types of the carried fields, and the variants of ``path`` in file order (module
    docstring)."""
    import pyarrow as pa

    path = Path(path)
    if not path.is_file():
        raise DataSourceError(f"no variant file at {path}")
    if is_vcf(path):
        if label_column or assay_column or label_direction:
            raise OptionsError(
                f"{path}: a VCF has no label or assay column; --label-column, --assay-column and "
                "--label-direction apply to tables"
            )
        return pa.schema([("variant_id", pa.string())]), _read_vcf(path)
    table = named_columns(path, load_table(path), label_column, assay_column, label_direction)
    missing = [name for name in REQUIRED if name not in table.columns]
    if missing:
        raise DataValidationError(
            f"{path}: missing column(s) {', '.join(missing)}; a variant table needs "
            f"{', '.join(REQUIRED)} (pos 1-based), optionally label and any other columns"
        )
    schema, quantitative = carried_schema(path, table, REQUIRED)
    return schema, table_variants(path, table, carried_fields(table, REQUIRED), quantitative)


def named_columns(path: Path, table, label_column, assay_column, label_direction):
    """``table`` with its label and assay columns named ``label`` and ``assay``, and the
    declared ``label_direction`` on every record, checked (module docstring)."""
    table = _renamed(path, table, label_column, assay_column)
    check_label_column(path, table, label_column)
    if "assay" in table.columns:
        empty = table["assay"].isna() | (table["assay"].astype(str).str.strip() == "")
        if empty.any():
            raise DataValidationError(
                f"{path}: record {int(empty.to_numpy().argmax())}: the assay is empty; every "
                f"variant of a table with assays belongs to one ({int(empty.sum())} without)"
            )
        table["assay"] = table["assay"].astype(str)
    return _with_direction(path, table, label_direction)


def _renamed(path: Path, table, label_column, assay_column):
    """``table`` with ``label_column`` named ``label`` and ``assay_column`` named ``assay``."""
    renames = {}
    for option, name, given in (
        ("--label-column", "label", label_column),
        ("--assay-column", "assay", assay_column),
    ):
        if given is None or given == name:
            continue
        if given not in table.columns:
            raise DataValidationError(f"{path}: no column {given!r} ({option})")
        if name in table.columns:
            raise DataValidationError(
                f"{path}: has a {name!r} column already; {option} {given} would replace it"
            )
        renames[given] = name
    return table.rename(columns=renames)


def _with_direction(path: Path, table, label_direction):
    """``table`` with the declared ``label_direction`` on every record, and every record's
    direction checked."""
    from perturbation_bench.pairs.assays import DIRECTIONS

    if label_direction is not None:
        if "label_direction" in table.columns:
            raise DataValidationError(
                f"{path}: has a label_direction column already; --label-direction would replace it"
            )
        if "label" not in table.columns or not is_quantitative(table["label"]):
            raise OptionsError(
                f"{path}: --label-direction declares what a higher quantitative label means; "
                "this table's labels are not quantitative"
            )
        table["label_direction"] = label_direction
    if "label_direction" in table.columns:
        unknown = ~table["label_direction"].isin(DIRECTIONS)
        if unknown.any():
            record = int(unknown.to_numpy().argmax())
            raise DataValidationError(
                f"{path}: record {record}: label_direction "
                f"{table['label_direction'].iloc[record]!r} is not one of {', '.join(DIRECTIONS)}"
            )
    return table


def carried_fields(table, taken) -> list[str]:
    """The columns of ``table`` carried into each variant's ``extra``: all but ``taken``."""
    return [name for name in table.columns if name not in taken]


def carried_schema(path: Path, table, taken) -> tuple[pa.Schema, bool]:
    """The arrow types of the columns a table carries beside ``taken`` (``label``: float64 for
    quantitative labels, else bool), and whether its labels are quantitative."""
    import pyarrow as pa

    carried = carried_fields(table, taken)
    try:
        schema = pa.Schema.from_pandas(table[carried], preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise DataValidationError(f"{path}: a column mixes types ({err})") from None
    quantitative = "label" in table.columns and is_quantitative(table["label"])
    label_type = pa.float64() if quantitative else pa.bool_()
    schema = pa.schema(  # pandas' string columns arrive as large_string
        [
            (
                f.name,
                label_type
                if f.name == "label"
                else pa.string()
                if pa.types.is_large_string(f.type)
                else f.type,
            )
            for f in schema
        ]
    )
    return schema, quantitative


def is_quantitative(labels) -> bool:
    """Whether a label column (pandas) holds scores: numeric, not bool, with a value other than
    0 and 1 (module docstring)."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(labels) or not pd.api.types.is_numeric_dtype(labels):
        return False
    return bool((~labels.dropna().isin([0, 1])).any())


def _read_vcf(path: Path) -> Iterator[Variant]:
    import pysam

    try:
        vcf = pysam.VariantFile(str(path))
    except (OSError, ValueError) as err:
        raise DataSourceError(f"cannot read VCF {path}: {err}") from None
    try:
        yield from _vcf_variants(path, vcf)
    finally:
        try:
            vcf.close()
        except OSError:  # htslib fails to close a damaged stream; the read error says why
            pass


def _vcf_variants(path: Path, vcf) -> Iterator[Variant]:
    """One variant per ALT of each record; a record htslib cannot read stops the build with the
    file, the record's number and htslib's reason."""
    records, record_index = iter(vcf), 0
    while True:
        try:
            record = next(records)
        except StopIteration:
            return
        except (OSError, ValueError) as err:  # htslib's reason: truncated file, bad field
            raise DataValidationError(
                f"{path}: record {record_index + 1} (after {record_index} read): cannot be read "
                f"({err})"
            ) from None
        extra = {"variant_id": record.id} if record.id else {}
        for alt in record.alts or (".",):  # "." (no ALT) is excluded and counted later
            yield _variant(path, record_index, record.chrom, record.pos, record.ref, alt, extra)
        record_index += 1


def table_variants(
    path: Path, table, carried: list[str], quantitative: bool, hgvs=None
) -> Iterator[Variant]:
    for index, row in enumerate(table.to_dict("records")):
        extra = {name: row[name] for name in carried}
        if "label" in extra:
            label = extra["label"]
            read = number if quantitative else truth
            extra["label"] = read(path, index, label)
        if hgvs is not None:
            read = hgvs(row)
            if len(read) == 2:  # (chrom, reason): the record gives no variant
                yield Variant(read[0], 0, "", "", index, extra, problem=read[1])
                continue
            yield _variant(path, index, *read, extra)
            continue
        alts = row["alt"].split(",") if isinstance(row["alt"], str) else [row["alt"]]
        for alt in alts:
            yield _variant(path, index, row["chrom"], row["pos"], row["ref"], alt, extra)


def load_table(path: Path):
    import pandas as pd

    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
        if name.endswith((".csv", ".csv.gz")):
            return pd.read_csv(path, dtype={"chrom": str})
        if name.endswith((".tsv", ".tsv.gz", ".txt")):
            return pd.read_csv(path, sep="\t", dtype={"chrom": str})
    except Exception as err:  # pyarrow and pandas raise many kinds for an unreadable file
        raise DataSourceError(f"cannot read variant table {path}: {err}") from None
    raise DataSourceError(
        f"{path}: unknown variant file type; expected .vcf(.gz), .parquet, .csv or .tsv"
    )


def _variant(path: Path, index: int, chrom, pos, ref, alt, extra: dict) -> Variant:
    """A checked :class:`Variant` (module docstring), or a one-line error naming the record."""
    import math

    for name, value in (("chrom", chrom), ("ref", ref), ("alt", alt)):
        if not isinstance(value, str) or not value.strip():
            raise DataValidationError(
                f"{path}: record {index}: {name} is empty or missing ({value!r})"
            )
    if isinstance(pos, float) and (math.isnan(pos) or pos != int(pos)):
        raise DataValidationError(f"{path}: record {index}: pos is not a whole number ({pos!r})")
    try:
        position = int(pos)
    except (TypeError, ValueError):
        raise DataValidationError(
            f"{path}: record {index}: pos is not a whole number ({pos!r})"
        ) from None
    if position < 1:
        raise DataValidationError(
            f"{path}: record {index}: pos must be 1-based (>= 1), got {position}"
        )
    return Variant(
        chrom.strip(), position, ref.strip().upper(), alt.strip().upper(), index, dict(extra)
    )

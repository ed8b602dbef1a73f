"""Reading the inputs of the builds by format: variant files, VCF (``.vcf``, ``.vcf.gz``, through
pysam) or a table (parquet, csv, tsv), and BED regions (:func:`read_bed`; saturation scans,
control elements). Genomes (FASTA) and annotations (GTF, GFF3) are read in ``dataset/``.

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

A record that cannot be read (a missing or non-integer ``pos``, an empty ``chrom``, ``ref`` or
``alt``, a label that is not a truth value) stops with a :class:`DataValidationError` naming the
file, the 0-based record and the reason. Alleles are upper-cased; what a window can be built
from is decided later (``windows.py``), where exclusions are counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perturbation_bench.arguments import truth_word
from perturbation_bench.errors import DataSourceError, DataValidationError

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


def is_vcf(path: str | Path) -> bool:
    """Whether ``path`` is named as a VCF (``.vcf``, ``.vcf.gz``, ``.vcf.bgz``)."""
    name = Path(path).name.lower()
    return name.endswith((".vcf", ".vcf.gz", ".vcf.bgz"))


def read_variants(path: str | Path) -> tuple["pa.Schema", Iterator[Variant]]:
    """The types of the carried fields, and the variants of ``path`` in file order (module
    docstring)."""
    import pyarrow as pa

    path = Path(path)
    if not path.is_file():
        raise DataSourceError(f"no variant file at {path}")
    if is_vcf(path):
        return pa.schema([("variant_id", pa.string())]), _read_vcf(path)
    table = _load_table(path)
    missing = [name for name in REQUIRED if name not in table.columns]
    if missing:
        raise DataValidationError(
            f"{path}: missing column(s) {', '.join(missing)}; a variant table needs "
            f"{', '.join(REQUIRED)} (pos 1-based), optionally label and any other columns"
        )
    carried = [name for name in table.columns if name not in REQUIRED]
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
    return schema, _table_variants(path, table, carried, quantitative)


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


def _table_variants(path: Path, table, carried: list[str], quantitative: bool) -> Iterator[Variant]:
    for index, row in enumerate(table.to_dict("records")):
        extra = {name: row[name] for name in carried}
        if "label" in extra:
            label = extra["label"]
            if quantitative:
                extra["label"] = None if label != label else float(label)
            else:
                extra["label"] = _truth(path, index, label)
        alts = row["alt"].split(",") if isinstance(row["alt"], str) else [row["alt"]]
        for alt in alts:
            yield _variant(path, index, row["chrom"], row["pos"], row["ref"], alt, extra)


def _load_table(path: Path):
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


def _truth(path: Path, index: int, value) -> bool | None:
    """A label as a bool; None stays None (an unlabelled variant)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, (int, float)) and value in (0, 1):  # 1.0/0.0 of a column with gaps
        return bool(value)
    read = truth_word(str(value))
    if read is not None:
        return read
    raise DataValidationError(
        f"{path}: record {index}: label {value!r} is not a truth value (true/false, 1/0)"
    )


def read_bed(path: str | Path, numbered: bool = False) -> list[tuple]:
    """The regions of a BED file (``track``/``browser``/``#`` lines skipped), each
    ``(chrom, start0, end0, name)``, or ``(line number, (chrom, start0, end0, name))`` when
    ``numbered``."""
    regions = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip() or line.startswith(("#", "track", "browser")):
            continue
        fields = line.split("\t")
        try:
            chrom, start, end = fields[0], int(fields[1]), int(fields[2])
        except (IndexError, ValueError):
            raise DataValidationError(
                f"{path}: line {number}: expected CHROM<tab>START<tab>END, got {line!r}"
            ) from None
        if not 0 <= start < end:
            raise DataValidationError(f"{path}: line {number}: need 0 <= START < END")
        name = fields[3] if len(fields) > 3 and fields[3] else f"{chrom}:{start + 1}-{end}"
        regions.append(
            (number, (chrom, start, end, name)) if numbered else (chrom, start, end, name)
        )
    return regions

"""Locate, read and validate the benchmark's parquet files.

Layout (the hub's, and the one ``data_dir`` must follow)::

    DIR/<config>/*.parquet        config in syn_human, syn_mouse, motif_human (or any other name)

Contract checked on every file before any scoring, with the file, the 0-based row within that
file and the reason in the error: the file is readable and has rows; it has the string columns
``original_sequence`` (the real window) and ``sequence`` (the perturbed one); no value is null,
empty or shorter than the k-mer size in use; both members of a pair have the same length;
letters are A, C, G, T or N in either case.
Nothing is dropped: rows in equal rows out.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from perturbation_bench.errors import DataSourceError, DataValidationError

HUB_DATASET_ID = "HuggingFaceBio/perturbation-bench"
SEQUENCE_COLUMNS = ("original_sequence", "sequence")
DNA_PATTERN = "^[ACGTNacgtn]*$"


def local_parquet_files(data_dir: str | Path, config: str) -> list[Path]:
    """Return ``data_dir/config/*.parquet``, sorted; raise if there are none."""
    folder = Path(data_dir).expanduser() / config
    if not folder.is_dir():
        raise DataSourceError(
            f"data_dir {str(data_dir)!r} has no folder {config!r}: expected the hub layout "
            f"{Path(data_dir) / config / '*.parquet'}"
        )
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise DataSourceError(f"no *.parquet file in {folder}")
    return files


def hub_parquet_files(config: str, revision: str | None = None) -> list[Path]:
    """Fetch (or find in the Hugging Face cache) the parquet files of one hub config.

    Raises:
        DataSourceError: the hub cannot be reached and nothing is cached, or the repository or
            config does not exist; the message says how to use local files instead.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        snapshot = snapshot_download(
            HUB_DATASET_ID,
            repo_type="dataset",
            revision=revision,
            allow_patterns=[f"{config}/*.parquet"],
        )
    except (HfHubHTTPError, OSError) as err:
        raise DataSourceError(
            f"cannot load {HUB_DATASET_ID} config {config!r} from the Hugging Face hub "
            f"({type(err).__name__}: {str(err).splitlines()[0]}). To run offline, download "
            f"the parquet files elsewhere and pass their folder: "
            f'--metadata \'{{"data_dir": "/path/to/perturbation-bench"}}\' '
            f"(layout: /path/to/perturbation-bench/{config}/*.parquet)"
        ) from None
    files = sorted((Path(snapshot) / config).glob("*.parquet"))
    if not files:
        raise DataSourceError(
            f"{HUB_DATASET_ID} has no parquet files for config {config!r} "
            f"(revision {revision or 'main'})"
        )
    return files


def read_pairs(files: list[Path], min_length: int = 1) -> pa.Table:
    """Read and validate parquet files into one table (all rows, file order kept).

    ``min_length``: shortest sequence accepted (the k-mer size, so trimming never empties one).
    """
    tables = []
    for path in files:
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as err:
            raise DataValidationError(f"{path}: not a readable parquet file ({err})") from None
        check_pairs(table, path, min_length)
        tables.append(table)
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except pa.ArrowException as err:
        raise DataValidationError(
            f"the files {', '.join(map(str, files))} have incompatible columns ({err})"
        ) from None


def check_pairs(table: pa.Table, source: Path | str, min_length: int = 1) -> None:
    """Raise :class:`DataValidationError` naming ``source``, the first bad row and the reason."""
    if table.num_rows == 0:
        raise DataValidationError(f"{source}: empty file (0 rows)")
    missing = [c for c in SEQUENCE_COLUMNS if c not in table.column_names]
    if missing:
        raise DataValidationError(
            f"{source}: missing column(s) {', '.join(missing)}; "
            f"found: {', '.join(table.column_names)}"
        )
    lengths = {}
    for name in SEQUENCE_COLUMNS:
        column = table.column(name)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            raise DataValidationError(
                f"{source}: row 0: column {name!r} holds {column.type} values, expected strings"
            )
        _fail_where(column.is_null(), source, f"{name!r} is null")
        lengths[name] = pc.utf8_length(column)
        _fail_where(pc.equal(lengths[name], 0), source, f"{name!r} is empty")
        _fail_where(
            pc.less(lengths[name], min_length),
            source,
            f"{name!r} is shorter than one {min_length}-mer",
            detail=lambda row, n=lengths[name]: f" ({n[row]} bp)",
        )
        valid = pc.match_substring_regex(column, DNA_PATTERN)
        _fail_where(
            pc.invert(valid),
            source,
            f"{name!r} has letters outside ACGTN",
            detail=lambda row, col=column: f" (first: {_first_non_dna(col[row].as_py())})",
        )
    unequal = pc.not_equal(*lengths.values())
    _fail_where(
        unequal,
        source,
        "original_sequence and sequence differ in length",
        detail=lambda row: (
            f" ({lengths['original_sequence'][row]} vs {lengths['sequence'][row]} bp)"
        ),
    )


def _fail_where(mask, source, reason, detail=None) -> None:
    """Raise for the first row where ``mask`` is true; ``detail(row)`` adds to the message."""
    bad = pc.indices_nonzero(pc.fill_null(mask, False))
    if len(bad) == 0:
        return
    row = bad[0].as_py()
    more = f"; {len(bad) - 1} more row(s) like it" if len(bad) > 1 else ""
    raise DataValidationError(f"{source}: row {row}: {reason}{detail(row) if detail else ''}{more}")


def _first_non_dna(sequence: str) -> str:
    for position, letter in enumerate(sequence):
        if letter not in "ACGTNacgtn":
            return f"{letter!r} at position {position}"
    return "none"

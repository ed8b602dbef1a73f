"""NABench's sequence-level DNA assays as variant pairs (``build variants --from nabench``).

An NABench assay file (mrzzmrzz/NABench ``data/<DMS_ID>.csv``) has the columns ``mutant``,
``DMS_score`` and ``sequence``: one measured sequence per row, its substitutions against the
wild type in ``mutant`` (``A12G``, several joined by commas, 1-based positions), the wild type
the row(s) whose ``mutant`` is empty. Each file is one assay, named by the file's stem (its
``DMS_ID``); each other row is one pair::

    original_sequence = the wild type        sequence = the row's sequence
    label = DMS_score (float; NaN: no label)  label_direction = functional (a fitness score)
    assay = DMS_ID    mutant = the row's     variant_id = DMS_ID:mutant
    chrom = DMS_ID    pos = 1 + the first changed index    ref, alt = the wild type's and
    the row's bases from the first to the last changed index (one block)

The wild type is the sequence of the rows with an empty ``mutant`` (several such rows are the
wild type measured several times: their sequences must agree), or, for an assay without one
(e.g. ``Shai_2015_promoter``), the ``RAW_CONSTRUCT_SEQ`` of its ``DMS_ID`` in NABench's
``metadata.csv`` (``--nabench-metadata``). A row is excluded, counted per reason and named
(assay, 0-based record, mutant, reason) when its ``mutant`` cannot be read
(``mutant_unreadable``), names a base the wild type does not have there (``mutant_ref_differs``),
its sequence has another length than the wild type (``length_differs``: a pair's windows have
one length), has a letter other than A/C/G/T (``non_acgt_sequence``), does not equal the wild
type with the mutant applied (``sequence_differs_from_mutant``) or equals the wild type
(``no_change``). A file without the three columns, without a wild type, or whose wild-type rows
disagree stops the build, naming the file, and so does a measured row whose ``DMS_score`` is
neither empty nor a finite number (``labels.py``: the file, the record and the value).

Each file is its own assay, so two files that measure the same pairs (replicates ``..._R1_...``
and ``..._R2_...``, assays that share a wild type) give a pair each (``pairs/identity.py``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from perturbation_bench.dna import ACGT_ONLY
from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.formats.labels import number

COLUMNS = ("mutant", "DMS_score", "sequence")
EXCLUDED_COLUMNS = ("assay", "record", "mutant", "reason")
SUBSTITUTION = re.compile(r"^([ACGT])([1-9][0-9]*)([ACGT])$")


def read_wild_types(metadata: str | Path | None) -> dict[str, str]:
    """``DMS_ID -> RAW_CONSTRUCT_SEQ`` of NABench's ``metadata.csv`` (empty without one)."""
    if metadata is None:
        return {}
    table = _read_csv(Path(metadata), ("DMS_ID", "RAW_CONSTRUCT_SEQ"))
    return {
        str(name): str(sequence).upper()
        for name, sequence in zip(table["DMS_ID"], table["RAW_CONSTRUCT_SEQ"], strict=True)
        if isinstance(sequence, str)
    }


def nabench_rows(paths, wild_types: dict, excluded: Counter, named: list, seen: Counter):
    """The pair rows (module docstring) of every assay file in ``paths``, in file order; the
    excluded rows counted in ``excluded`` and listed in ``named``; ``seen["read"]`` counts the
    measured rows, ``seen["wild_type"]`` the wild-type rows."""
    files: dict[str, Path] = {}
    for path in map(Path, paths):
        assay = path.name.removesuffix(".gz").removesuffix(".csv")
        if files.setdefault(assay, path) != path:
            raise DataValidationError(
                f"{path}: its assay name {assay!r} (the file's name) is {files[assay]}'s too; "
                "each assay file is named by its own DMS_ID"
            )
        table = _read_csv(path, COLUMNS)
        wild_type = _wild_type(path, assay, table, wild_types)
        for record, (mutant, score, sequence) in enumerate(
            zip(table["mutant"], table["DMS_score"], table["sequence"], strict=True)
        ):
            if not isinstance(mutant, str) or not mutant.strip():
                seen["wild_type"] += 1
                continue
            seen["read"] += 1
            label = number(path, record, score, "DMS_score")
            mutant = mutant.strip()
            sequence = str(sequence).strip().upper() if isinstance(sequence, str) else ""
            reason = mutant_problem(wild_type, mutant, sequence)
            if reason is not None:
                excluded[reason] += 1
                named.append((assay, record, mutant, reason))
                continue
            yield _row(assay, mutant, label, wild_type, sequence)


def mutant_problem(wild_type: str, mutant: str, sequence: str) -> str | None:
    """Why ``sequence`` with its ``mutant`` cannot be a pair against ``wild_type`` (module
    docstring), or None."""
    changed = list(wild_type)
    for token in mutant.split(","):
        match = SUBSTITUTION.match(token.strip().upper())
        if match is None:
            return "mutant_unreadable"
        before, position, after = match[1], int(match[2]), match[3]
        if position > len(wild_type) or wild_type[position - 1] != before:
            return "mutant_ref_differs"
        changed[position - 1] = after
    if len(sequence) != len(wild_type):
        return "length_differs"
    if not ACGT_ONLY.match(sequence):
        return "non_acgt_sequence"
    if sequence != "".join(changed):
        return "sequence_differs_from_mutant"
    if sequence == wild_type:
        return "no_change"
    return None


def _row(assay: str, mutant: str, score: float | None, wild_type: str, sequence: str) -> dict:
    differ = [i for i, (a, b) in enumerate(zip(wild_type, sequence, strict=True)) if a != b]
    first, last = differ[0], differ[-1] + 1
    return {
        "chrom": assay,
        "pos": first + 1,
        "ref": wild_type[first:last],
        "alt": sequence[first:last],
        "variant_id": f"{assay}:{mutant}",
        "label": score,
        "window_start": 0,
        "variant_offset": first,
        "is_clamped": 0,
        "window_edge": "construct",
        "assay": assay,
        "label_direction": "functional",
        "mutant": mutant,
        "original_sequence": wild_type,
        "sequence": sequence,
    }


def _wild_type(path: Path, assay: str, table, wild_types: dict) -> str:
    """The assay's wild type (module docstring)."""
    empty = table["mutant"].isna() | (table["mutant"].astype(str).str.strip() == "")
    sequences = {str(s).strip().upper() for s in table.loc[empty, "sequence"]}
    if len(sequences) > 1:
        records = ", ".join(map(str, table.index[empty][:5]))
        raise DataValidationError(
            f"{path}: the wild-type rows (empty mutant; records {records}) hold "
            f"{len(sequences)} different sequences; an assay has one wild type"
        )
    wild_type = next(iter(sequences), None) or wild_types.get(assay)
    if wild_type is None:
        raise DataValidationError(
            f"{path}: no wild type: no row with an empty mutant, and no RAW_CONSTRUCT_SEQ for "
            f"{assay!r} (give NABench's metadata.csv with --nabench-metadata)"
        )
    if not ACGT_ONLY.match(wild_type):
        raise DataValidationError(
            f"{path}: the wild type of {assay!r} has a letter other than ACGT"
        )
    return wild_type


def _read_csv(path: Path, columns: tuple[str, ...]):
    import pandas as pd

    if not path.is_file():
        raise DataSourceError(f"no NABench file at {path}")
    try:
        table = pd.read_csv(path, dtype={"mutant": "string", "sequence": "string"})
    except Exception as err:  # pandas raises many kinds for an unreadable file
        raise DataSourceError(f"cannot read NABench file {path}: {err}") from None
    missing = [name for name in columns if name not in table.columns]
    if missing:
        raise DataValidationError(
            f"{path}: missing column(s) {', '.join(missing)}; NABench's files have "
            f"{', '.join(columns)}"
        )
    return table.astype(object).where(table.notna(), None)

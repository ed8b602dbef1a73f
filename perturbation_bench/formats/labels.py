"""Labels of variant records as the variant readers take them (``variant_files.py``, ``mavedb.py``,
``nabench.py``): a truth value (binary labels) or a finite number (quantitative labels); an
empty cell is no label (None).

Anything else stops the build with a :class:`DataValidationError` naming the file, the 0-based
record, the column and the value: text in a column of numbers, an infinite number, a label that
is not a truth value. A table's labels are read from its ``label`` column (or the one
``--label-column`` names); a ``score`` column beside no label column is refused, since a user
who names a column ``score`` expects it read as the label and the build would read none.
"""

from __future__ import annotations

import math
from pathlib import Path

from perturbation_bench.arguments import truth_word
from perturbation_bench.errors import DataValidationError


def check_label_column(path: Path, table, label_column: str | None) -> None:
    """Refuse a ``score`` column beside no label column, and a label column that mixes numbers
    with text (module docstring)."""
    import pandas as pd

    if "label" not in table.columns and "score" in table.columns and label_column is None:
        raise DataValidationError(
            f"{path}: has a 'score' column but no 'label' column: labels are read from the "
            "column 'label'; give --label-column score to read score as the label (or rename "
            "the column to carry it as a field)"
        )
    if "label" not in table.columns or pd.api.types.is_numeric_dtype(table["label"]):
        return
    labels = table["label"]
    numbers = pd.to_numeric(labels, errors="coerce")
    if not (numbers.notna() & ~numbers.isin([0, 1])).any():
        return  # truth values: read one by one (truth)
    text = labels.notna() & numbers.isna()
    record = int(text.to_numpy().argmax())
    raise DataValidationError(
        f"{path}: record {record}: label {labels.iloc[record]!r} is not a number, in a label "
        "column of numbers (quantitative labels); an empty cell is no label"
    )


def number(path: Path, record: int, value, column: str = "label") -> float | None:
    """A quantitative label: a finite float, or None for an empty cell (module docstring)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, str) and not value.strip():
        return None
    try:
        read = float(value)
    except (TypeError, ValueError):
        read = math.nan
    if not math.isfinite(read):
        raise DataValidationError(
            f"{path}: record {record}: {column} {value!r} is not a finite number"
        )
    return read


def truth(path: Path, record: int, value) -> bool | None:
    """A binary label as a bool; None stays None (an unlabelled variant)."""
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
        f"{path}: record {record}: label {value!r} is not a truth value (true/false, 1/0)"
    )

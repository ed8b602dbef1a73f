"""Writing variant tables, the input of ``build variants``, with their summary beside them."""

from __future__ import annotations

import json
from pathlib import Path


def write_variant_table(rows: list[dict], columns: list[tuple], summary: dict, out) -> Path:
    """Write ``rows`` as parquet with ``columns`` (``(name, pyarrow type)``) to ``out`` and
    ``summary`` to ``<out>.summary.json``; return the summary's path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(columns)), out)
    path = out.with_name(out.name + ".summary.json")
    path.write_text(json.dumps(summary, indent=2) + "\n")
    return path

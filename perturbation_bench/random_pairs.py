"""Random pairs in the benchmark's layout, for the throughput benchmark and the tests.

A pair is a random window and a copy of it with one random patch; the rows carry the columns the
tasks need (and a few the report reads). Random sequences measure speed and exactness only.
"""

from __future__ import annotations

import random
from pathlib import Path

from perturbation_bench.dna import random_dna


def random_pairs(
    n: int, length: int, seed: int = 0, patch: int = 12, at: float | None = None
) -> list[dict]:
    """``n`` rows with the columns the tasks need: a random window and a copy with one random
    patch of ``patch`` bp, at a random place or starting at the fraction ``at`` of the window."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        original = random_dna(rng, length)
        start = rng.randrange(0, length - patch) if at is None else int(at * (length - patch))
        perturbed = original[:start] + random_dna(rng, patch) + original[start + patch :]
        rows.append(
            {
                "benchmark_id": f"pair_{seed}_{i}",
                "gene_name": f"GENE{i}",
                "strand": rng.choice("+-"),
                "original_sequence": original,
                "sequence": perturbed,
                "patch_start_in_seq": start,
            }
        )
    return rows


def write_parquet(
    rows: list[dict], data_dir: Path, config: str, name: str = "test-00000-of-00001.parquet"
) -> Path:
    """Write ``rows`` to ``data_dir/config/name`` (the hub layout); return the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(data_dir) / config / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path

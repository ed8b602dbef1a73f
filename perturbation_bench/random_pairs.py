"""Random pairs in the benchmark's layout, for the throughput benchmark and the tests.

A pair is a random window and a copy of it with one random patch; the rows carry the columns the
tasks need (and a few the report reads). Random sequences measure speed and exactness only.
"""

from __future__ import annotations

import random
from pathlib import Path

from perturbation_bench.dna import BASES, random_dna


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


def random_pair_table(n: int, length: int, seed: int = 0, patch: int = 12):
    """:func:`random_pairs` at scale, drawn with numpy: the same columns (ids, gene, strand, both
    sequences, patch start) as a pyarrow table, ``n`` windows of ``length`` bp with one random
    ``patch`` bp patch each."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    letters = np.frombuffer(BASES.encode(), np.uint8)
    original = letters[rng.integers(0, 4, (n, length))]
    starts = rng.integers(0, length - patch, n)
    perturbed = original.copy()
    columns = starts[:, None] + np.arange(patch)
    perturbed[np.arange(n)[:, None], columns] = letters[rng.integers(0, 4, (n, patch))]

    def strings(codes):
        offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int64) * length).tobytes())
        return pa.LargeStringArray.from_buffers(n, offsets, pa.py_buffer(codes.tobytes())).cast(
            pa.string()
        )

    return pa.table({
        "benchmark_id": [f"pair_{seed}_{i}" for i in range(n)],
        "gene_name": [f"GENE{i}" for i in range(n)],
        "strand": np.where(rng.random(n) < 0.5, "+", "-"),
        "original_sequence": strings(original),
        "sequence": strings(perturbed),
        "patch_start_in_seq": starts,
    })  # fmt: skip


def write_random_genome(path: Path, length: int, seed: int = 0) -> Path:
    """A one-chromosome FASTA of ``length`` uniform random bases, 80 per line."""
    import numpy as np

    codes = np.frombuffer(BASES.encode(), np.uint8)[np.random.default_rng(seed).integers(0, 4, length)]
    text = codes.tobytes().decode()
    lines = [text[i : i + 80] for i in range(0, length, 80)]
    Path(path).write_text(">random\n" + "\n".join(lines) + "\n")
    return Path(path)

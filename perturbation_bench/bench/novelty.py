"""``perturbation-bench bench --novelty``: what ``annotate novelty`` costs per Gb of genome and per
10,000 pairs, and its peak memory.

A random genome of ``--novelty-genome-mb`` Mb (default 200; records of 50 Mb, 60 bases a line,
plain FASTA) and ``--novelty-pairs`` pairs of ``--novelty-bp`` bases (defaults 2,000 and 8,192)
are written to a temporary folder, deleted afterwards: each original window a random piece of
the first record, its perturbed copy with a random 12 bp patch (as a syn or motif pair: the
original in the genome, the perturbed copy's k-mers over the patch novel). ``annotate novelty`` at ``--novelty-k`` (21) then runs in a
fresh process, its three steps timed apart (``dataset/novelty.py``):

- ``query``: every window's canonical k-mers, their distinct values sorted;
- ``scan``: the one pass over the genome;
- ``write``: each pair's counts, the files rewritten.

The table gives each step's seconds, the scan's seconds per Gb, the query's and the write's per
10,000 pairs (scaled linearly from the pairs run), the distinct k-mers of the query, its bytes,
and the process's peak resident memory (imports included). GRCh38's 3.1 Gb follows as
``3.1 x scan s/Gb + (pairs / 10,000) x (query + write s/10k)``, its memory as the chunk's
working set plus 8 bytes per distinct query k-mer (with a boolean each), at most about twice
that while the query is merged.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from perturbation_bench.bench.measuring import in_fresh_process
from perturbation_bench.bench.options import at_least, count
from perturbation_bench.dataset.novelty import MAX_K

RECORD_MB = 50
LINE = 60


def add_arguments(parser) -> None:
    """The ``bench --novelty`` options."""
    parser.add_argument(
        "--novelty",
        action="store_true",
        help="instead: annotate novelty's time and memory (perturbation_bench/bench/novelty.py)",
    )
    parser.add_argument(
        "--novelty-genome-mb", type=count, default=200, help="genome Mb (%(default)s)"
    )
    parser.add_argument("--novelty-pairs", type=count, default=2000, help="pairs (%(default)s)")
    parser.add_argument("--novelty-bp", type=count, default=8192, help="window bp (%(default)s)")
    parser.add_argument("--novelty-k", type=at_least(1, MAX_K), default=21, help="k (%(default)s)")


def write_genome(path: Path, megabases: int, seed: int = 0):
    """A random genome of ``megabases`` Mb at ``path`` (module docstring); its bases, and the
    first record's letters (uint8)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACGT", np.uint8)
    total, first = 0, None
    with path.open("wb") as handle:
        for record, start in enumerate(range(0, megabases, RECORD_MB)):
            n = min(RECORD_MB, megabases - start) * 1_000_000
            lines = letters[rng.integers(0, 4, (n // LINE, LINE), dtype=np.uint8)]
            ends = np.full((n // LINE, 1), ord("\n"), np.uint8)
            handle.write(f">chr{record + 1}\n".encode())
            handle.write(np.hstack([lines, ends]).tobytes())
            total += n // LINE * LINE
            first = lines.reshape(-1) if first is None else first
    return total, first


def genome_pairs(bases, n: int, length: int, patch: int = 12, seed: int = 1):
    """``n`` pairs of ``length`` bases (module docstring) from ``bases`` (uint8 letters)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(bases) - length, n)
    original = bases[starts[:, None] + np.arange(length)]
    perturbed = original.copy()
    at = rng.integers(0, length - patch, n)[:, None] + np.arange(patch)
    perturbed[np.arange(n)[:, None], at] = np.frombuffer(b"ACGT", np.uint8)[
        rng.integers(0, 4, (n, patch))
    ]
    return pa.table(
        {
            "original_sequence": [row.tobytes().decode() for row in original],
            "sequence": [row.tobytes().decode() for row in perturbed],
        }
    )


def measured(fasta: str, data: str, k: int) -> dict:
    """The three steps of the module docstring in this process: seconds each, the query's
    size, and the peak resident memory."""
    import resource

    from perturbation_bench.dataset.novelty import (
        GenomeLookup,
        annotate_file,
        pair_files_to_annotate,
        query_of,
    )

    files = pair_files_to_annotate(fasta, data, k)
    clock = time.perf_counter()
    lookup = GenomeLookup(query_of(files, k), k)
    query = time.perf_counter() - clock
    bases = lookup.scan(fasta)
    scan = time.perf_counter() - clock - query
    for path in files:
        annotate_file(path, lookup)
    write = time.perf_counter() - clock - query - scan
    return {
        "query": query,
        "scan": scan,
        "write": write,
        "bases": bases,
        "distinct": len(lookup.query),
        "query_bytes": lookup.query.nbytes + lookup.found.nbytes,
        "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def run(args) -> int:
    """Write the inputs, measure, print the table."""
    import os

    import pyarrow.parquet as pq

    from perturbation_bench.pairs.layout import PARQUET_NAME, config_folder

    with tempfile.TemporaryDirectory(prefix="pb-novelty-") as folder:
        root = Path(folder)
        written, first = write_genome(root / "genome.fa", args.novelty_genome_mb)
        table = genome_pairs(first, args.novelty_pairs, args.novelty_bp)
        del first
        pq.write_table(table, config_folder(root / "data", "bench") / PARQUET_NAME)
        got = in_fresh_process(
            measured, str(root / "genome.fa"), str(root / "data"), args.novelty_k
        )
    gb, per_10k = got["bases"] / 1e9, args.novelty_pairs / 10_000
    print(
        f"annotate novelty, k={args.novelty_k}: {written / 1e6:.0f} Mb genome, "
        f"{args.novelty_pairs:,} pairs of {args.novelty_bp:,} bp; load {os.getloadavg()[0]:.1f}"
    )
    print("| step | seconds | per unit |")
    print("|---|---|---|")
    print(f"| query | {got['query']:.1f} | {got['query'] / per_10k:.1f} s per 10,000 pairs |")
    print(f"| scan | {got['scan']:.1f} | {got['scan'] / gb:.1f} s per Gb |")
    print(f"| write | {got['write']:.1f} | {got['write'] / per_10k:.1f} s per 10,000 pairs |")
    print(
        f"distinct query k-mers: {got['distinct']:,} ({got['query_bytes'] / 2**20:.0f} MiB with "
        f"their flags); peak resident memory: {got['peak_bytes'] / 2**30:.2f} GiB"
    )
    grch38 = 3.1 * got["scan"] / gb + (got["query"] + got["write"]) / per_10k
    print(f"GRCh38 (3.1 Gb) with 10,000 such pairs: about {grch38 / 60:.0f} min")  # fmt: skip
    return 0

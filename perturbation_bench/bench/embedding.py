"""``perturbation-bench bench --embedding``: what ``scoring=embedding`` costs next to the plainest
loop of forward passes over the same windows.

The saturation scan of ``bench --saturation`` (``--embedding-bp`` bases, default 100: 300
variants, 1,024 bp windows read as 6-mers by a random BERT of width 512 and 4 layers), scored by
the flattened euclidean distance (gpn's ``euclidean_distance``). Both methods run in a fresh
process on the CPU at the same batch size (``--embedding-batch-size``, default 8):

- ``loop``: both windows of every pair, in order, through ``AutoModel`` in batches of that many
  windows, ``||R - A||`` of each pair's ``last_hidden_state``; nothing else;
- ``dna-mlm``: the whole lm-eval run of ``perturbation_variants`` with ``scoring=embedding``
  (reading the pairs, tokenizing, checking unknown tokens, each distinct window once, scoring,
  filtering).

The table gives pairs/s of each, their ratio (``dna-mlm`` / ``loop``: the target is at least
0.9x), the windows each runs per pair (the loop 2; ``dna-mlm`` 4/3, a position's reference once
for its three alternates) and the largest score difference. Exit status 1 if the scores differ by
more than the benchmarks' tolerance.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from perturbation_bench.bench.measuring import Measurement, compare_lls, in_fresh_process, measure
from perturbation_bench.bench.options import count
from perturbation_bench.bench.saturation_scan import CONFIG, TASK, prepare

PRESET, KMER = "nucleotide_transformer", 6
ARGUMENTS = {"scoring": "embedding", "distance": "euclidean", "pooling": "flatten"}


def add_arguments(parser) -> None:
    """The ``bench --embedding`` options."""
    parser.add_argument(
        "--embedding",
        action="store_true",
        help="instead: dna-mlm scoring=embedding against a plain loop (perturbation_bench/bench/embedding.py)",
    )
    parser.add_argument(
        "--embedding-bp",
        type=count,
        default=100,
        help="with --embedding: bases scanned (%(default)s)",
    )
    parser.add_argument(
        "--embedding-batch-size",
        type=count,
        default=8,
        help="with --embedding: batch size (%(default)s)",
    )


def plain_loop(model_path: str, data: str, batch_size: int) -> Measurement:
    """The ``loop`` method of the module docstring, timed from reading the pairs."""
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(model_path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    start = time.perf_counter()
    rows = pq.read_table(Path(data) / CONFIG).to_pylist()
    windows = [
        tokenizer(sequence[: len(sequence) - len(sequence) % KMER])["input_ids"]
        for row in rows
        for sequence in (row["original_sequence"], row["sequence"])
    ]
    states = []
    with torch.no_grad():
        for first in range(0, len(windows), batch_size):
            batch = torch.tensor(windows[first : first + batch_size])
            states += list(model(input_ids=batch).last_hidden_state.double())
    scores = [
        (float(torch.linalg.vector_norm(states[2 * i] - states[2 * i + 1])), 0.0)
        for i in range(len(rows))
    ]
    return Measurement("loop", scores, time.perf_counter() - start, 0)


def run(args: argparse.Namespace) -> int:
    """Measure both methods; print the table; 1 if their scores disagree."""
    with tempfile.TemporaryDirectory(prefix="pb-embedding-") as scratch:
        models, data = prepare(Path(scratch), args.embedding_bp)
        model, pairs = str(models["dna-mlm"]), 3 * args.embedding_bp
        print("measuring the plain loop ...", flush=True)
        loop = in_fresh_process(plain_loop, model, str(data), args.embedding_batch_size)
        print("measuring dna-mlm scoring=embedding ...", flush=True)
        scored = in_fresh_process(
            measure,
            "dna-mlm",
            model,
            {"data_dir": str(data), "config": CONFIG, "preset": PRESET},
            pairs,
            "cpu",
            "float32",
            str(args.embedding_batch_size),
            ARGUMENTS,
            TASK,
        )
    diff, agree = compare_lls(scored, loop)
    n = len(loop.lls)
    print(
        "| pairs | windows per pair: loop | dna-mlm | loop pairs/s | dna-mlm pairs/s | dna-mlm / loop | max abs dscore |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {n} | 2 | {4 / 3:.2f} | {n / loop.seconds:.2f} | {n / scored.seconds:.2f} | "
        f"{loop.seconds / scored.seconds:.2f}x | {diff:.1e} |"
    )
    if not agree:
        print("MISMATCH: dna-mlm and the loop differ by more than 1e-6 |score| + 1e-3")
    return 0 if agree else 1

"""Throughput benchmark: one model, one set of pairs, four ways of scoring them.

    perturbation-bench bench [--model PATH] [--pairs 24] [--length 8192] [--device cpu] ...

Methods, each run in a fresh process so that its peak memory is its own (``measuring.py``
states how each scores):

- ``naive``: a standalone scorer's loop, one sequence at a time with transformers;
- ``hf``: lm-eval's HFLM with a float32 log-softmax;
- ``dna-hf``: this package's causal model;
- ``dna-mlm``: this package's masked-LM model, on a masked model of the same size
  (``--masked-model``, or a random BERT with the random Llama's layers and width). Its scores
  are masked-marginal sums over the differing positions, not full-sequence LLs, so it is left
  out of the accuracy and LL agreement checks; its row shows what one masked forward pass per
  pair costs next to scoring both sequences causally.

Each method scores both sequences of the first ``--pairs`` pairs of one config (``--config``,
default ``syn_human``) of ``--data-dir`` (without ``--data-dir``: random pairs written as parquet
to a temporary folder). The table reports pairs/s, tokens/s (scored tokens, prefix excluded),
peak memory, the speed relative to ``naive``, accuracy, and the largest difference of any LL
from ``naive``'s. Exit status 1 if the causal methods' accuracies differ.

Without ``--model`` it builds a random single-nucleotide Llama (4 layers, hidden 256) and random
pairs: the numbers then say how fast, never how good. The random model and pairs are made in
``inputs.py``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from perturbation_bench.bench.inputs import (
    KMER_LENGTH,
    LENGTH,
    random_causal_model,
    random_data,
    random_masked_model,
)
from perturbation_bench.bench.measuring import Measurement, in_fresh_process, measure
from perturbation_bench.bench.options import batch_size, count
from perturbation_bench.pairs.outcome import pairwise_accuracy

CAUSAL_METHODS = ("naive", "hf", "dna-hf")
METHODS = (*CAUSAL_METHODS, "dna-mlm")


def add_arguments(parser) -> None:
    """The throughput benchmark's options (``bench`` without another benchmark's flag); the
    model and device options serve the other benchmarks too."""
    parser.add_argument("--model", help="model folder or hub id (default: a random 4-layer Llama)")
    parser.add_argument(
        "--masked-model",
        help="masked LM for the dna-mlm row (default: a random BERT of the random Llama's size; "
        "left out when --model is given without it)",
    )
    parser.add_argument(
        "--pairs", type=count, default=24, help="number of pairs (default %(default)s)"
    )
    parser.add_argument(
        "--length",
        type=count,
        help=f"bp per sequence (default {LENGTH}; {KMER_LENGTH} for --protocol's random 6-mer "
        "pairs, whole 6-mers)",
    )
    parser.add_argument("--data-dir", help="score these pairs (hub layout) instead of random ones")
    parser.add_argument(
        "--config", default="syn_human", help="config of --data-dir to score (default %(default)s)"
    )
    parser.add_argument(
        "--preset", default="default", help="formatting preset (default: %(default)s)"
    )
    parser.add_argument(
        "--device", default="cpu", help="cpu, cuda, cuda:1, ... (default %(default)s)"
    )
    parser.add_argument("--dtype", default="float32", help="weight dtype (default %(default)s)")
    parser.add_argument(
        "--batch-size",
        type=batch_size,
        default="4",
        help="lm-eval batch size, or auto (default %(default)s)",
    )
    parser.add_argument(
        "--layers", type=count, default=4, help="random model: layers (default %(default)s)"
    )
    parser.add_argument(
        "--hidden", type=count, default=256, help="random model: width (default %(default)s)"
    )


def run(args: argparse.Namespace) -> int:
    """Prepare models and data, measure each method, print the table; 1 if the causal methods'
    accuracies differ."""
    args.length = args.length or LENGTH
    with tempfile.TemporaryDirectory(prefix="pb-bench-") as scratch:
        model = args.model or str(random_causal_model(Path(scratch) / "model", args))
        masked = args.masked_model or (
            None if args.model else str(random_masked_model(Path(scratch) / "masked", args))
        )
        data_dir = args.data_dir or str(random_data(Path(scratch) / "data", args))
        metadata = {"data_dir": data_dir, "config": args.config, "preset": args.preset}
        measurements = []
        for method in METHODS if masked else CAUSAL_METHODS:
            print(f"measuring {method} ...", flush=True)
            measurements.append(
                in_fresh_process(
                    measure,
                    method,
                    masked if method == "dna-mlm" else model,
                    metadata,
                    args.pairs,
                    args.device,
                    args.dtype,
                    args.batch_size,
                )
            )
    print(format_table(measurements, measurements[0].scored_tokens, args.device))
    accuracies = {
        m.method: pairwise_accuracy(m.lls) for m in measurements if m.method in CAUSAL_METHODS
    }
    if len(set(accuracies.values())) > 1:
        print(f"MISMATCH: the causal methods disagree on accuracy: {accuracies}")
        return 1
    print(f"the three causal methods give accuracy {accuracies['naive']:.4f}")
    return 0


def format_table(measurements: list[Measurement], tokens: int, device: str) -> str:
    """A markdown table of the measurements (see the module docstring for the columns)."""
    naive = measurements[0]
    memory = "peak GPU memory" if device.startswith("cuda") else "peak RSS"
    lines = [
        f"| method | pairs/s | tokens/s | {memory} | speed vs naive | accuracy | max abs LL diff vs naive |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in measurements:
        if m.method in CAUSAL_METHODS:
            diff = max(
                abs(x - y)
                for a, b in zip(m.lls, naive.lls, strict=True)
                for x, y in zip(a, b, strict=True)
            )
            diff_cell = f"{diff:.2e}"
        else:
            diff_cell = "n/a (masked-marginal score)"
        lines.append(
            f"| {m.method} | {len(m.lls) / m.seconds:.2f} | {tokens / m.seconds:,.0f} "
            f"| {m.peak_bytes / 2**20:,.0f} MiB | {naive.seconds / m.seconds:.2f}x "
            f"| {pairwise_accuracy(m.lls):.4f} | {diff_cell} |"
        )
    return "\n".join(lines)

"""Throughput benchmark: one model, one set of pairs, three ways of scoring them.

    perturbation-bench bench [--model PATH] [--pairs 24] [--length 8192] [--device cpu] ...

Methods, each run in a fresh process so that its peak memory is its own:

- ``naive``: a standalone scorer's loop, one sequence at a time with transformers:
  ``LL = sum_t log_softmax(logits.float())[t]`` over the sequence's tokens;
- ``hf``: lm-eval's HFLM with ``softmax_dtype=float32`` (batched, length-sorted);
- ``dna-hf``: this package's causal model;
- ``dna-mlm``: this package's masked-LM model, on a masked model of the same size
  (``--masked-model``, or a random BERT with the random Llama's layers and width). Its scores
  are masked-marginal sums over the differing positions, not full-sequence LLs, so it is left
  out of the accuracy and LL agreement checks; its row shows what one masked forward pass per
  pair costs next to scoring both sequences causally.

Each method scores both sequences of the first ``--pairs`` pairs of one config (``--config``,
default ``syn_human``) of ``--data-dir``, through the ``perturbation_custom`` task (without
``--data-dir``: random pairs written as parquet to a temporary folder); the clock runs from reading the pairs to the
last score, model loading excluded. The table reports pairs/s, tokens/s (scored tokens,
prefix excluded), peak memory (GPU: ``torch.cuda.max_memory_allocated``; CPU: the process's
peak resident set, imports included), the speed relative to ``naive``, accuracy, and the largest
difference of any LL from ``naive``'s. Exit status 1 if the causal methods' accuracies differ.

Without ``--model`` it builds a random single-nucleotide Llama (4 layers, hidden 256) and random
pairs: the numbers then say how fast, never how good.

The four methods, their options and the table stay together, so that one file shows that every
method scores the same pairs the same way; the random model and pairs are made in ``inputs.py``.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from perturbation_bench.bench.inputs import random_causal_model, random_data, random_masked_model
from perturbation_bench.pairs.outcome import pairwise_accuracy

CAUSAL_METHODS = ("naive", "hf", "dna-hf")
METHODS = (*CAUSAL_METHODS, "dna-mlm")
TASK = "perturbation_custom"  # reads any config of a data_dir


@dataclass
class Measurement:
    """What one method produced: LL pairs in document order, seconds of the whole evaluation,
    peak bytes, (naive only, which tokenizes every sequence itself) the number of tokens
    scored, and (lm-eval models) the seconds spent in the model's ``loglikelihood``."""

    method: str
    lls: list[tuple[float, float]]
    seconds: float
    peak_bytes: int
    scored_tokens: int | None = None
    scoring_bytes: int = 0  # how far scoring raised the peak above its level before scoring
    model_seconds: float | None = None


TOLERANCE = (1e-6, 1e-3)
"""Two ways of scoring the same pairs agree when every LL is within 1e-6 |LL| + 1e-3 nats."""


def in_fresh_process(function, *args):
    """``function(*args)`` in a new (spawned) process, so that its peak memory is its own."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def compare_lls(first: Measurement, second: Measurement) -> tuple[float, bool]:
    """The largest |LL difference| between two measurements of the same pairs, and whether
    every LL agrees within :data:`TOLERANCE`."""
    relative, absolute = TOLERANCE
    pairs = [
        (x, y)
        for p, q in zip(first.lls, second.lls, strict=True)
        for x, y in zip(p, q, strict=True)
    ]
    largest = max((abs(x - y) for x, y in pairs), default=0.0)
    return largest, all(abs(x - y) <= relative * abs(y) + absolute for x, y in pairs)


def add_arguments(parser) -> None:
    """The throughput benchmark's options (``bench`` without another benchmark's flag); the
    model and device options serve the other benchmarks too."""
    parser.add_argument("--model", help="model folder or hub id (default: a random 4-layer Llama)")
    parser.add_argument(
        "--masked-model",
        help="masked LM for the dna-mlm row (default: a random BERT of the random Llama's size; "
        "left out when --model is given without it)",
    )
    parser.add_argument("--pairs", type=int, default=24, help="number of pairs (default 24)")
    parser.add_argument("--length", type=int, default=8192, help="bp per sequence (default 8192)")
    parser.add_argument("--data-dir", help="score these pairs (hub layout) instead of random ones")
    parser.add_argument(
        "--config", default="syn_human", help="config of --data-dir to score (default syn_human)"
    )
    parser.add_argument("--preset", default="default", help="formatting preset (default: default)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ... (default cpu)")
    parser.add_argument("--dtype", default="float32", help="weight dtype (default float32)")
    parser.add_argument("--batch-size", default="4", help="lm-eval batch size (default 4)")
    parser.add_argument("--layers", type=int, default=4, help="random model: layers (default 4)")
    parser.add_argument("--hidden", type=int, default=256, help="random model: width (default 256)")


def run(args: argparse.Namespace) -> int:
    """Prepare models and data, measure each method, print the table; 1 if the causal methods'
    accuracies differ."""
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


def measure(
    method: str,
    model: str,
    metadata: dict,
    pairs: int,
    device: str,
    dtype: str,
    batch_size: str,
    model_args: dict | None = None,
    task: str | None = None,
) -> Measurement:
    """Run one method in this process (called in a fresh child process by :func:`run`);
    ``model_args`` go to the lm-eval model (e.g. ``share_prefix``); ``task``: default the
    custom task."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    tokens, before = None, {"model_seconds": None}
    if method == "naive":
        lls, seconds, tokens = _score_naive(model, metadata, pairs, device, dtype)
    else:
        lls, seconds = _score_lm_eval(
            method,
            model,
            metadata,
            pairs,
            device,
            dtype,
            batch_size,
            model_args or {},
            before,
            task or TASK,
        )
    peak = _peak_bytes(device)
    scoring = peak - before.get("peak", peak)
    return Measurement(method, lls, seconds, peak, tokens, scoring, before["model_seconds"])


def _peak_bytes(device: str) -> int:
    """Peak memory so far: GPU memory allocated, or the process's resident set."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _score_naive(model_path: str, metadata: dict, pairs: int, device: str, dtype: str):
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM

    from perturbation_bench.tasks.loading import load_pairs

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=getattr(torch, dtype)).to(device)
    model.eval()
    encode = _encoder(model_path)
    start = time.perf_counter()
    docs = list(itertools.islice(load_pairs(**metadata)["test"], pairs))
    lls, tokens = [], 0
    for doc in tqdm(docs, desc="naive: scoring pairs"):
        pair = []
        for context, continuation in encode(doc):
            ids = torch.tensor([context + continuation], device=device)
            with torch.no_grad():
                log_probs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
            per_token = log_probs.gather(1, ids[0, 1:, None])[len(context) - 1 :, 0]
            pair.append(per_token.sum().item())
            tokens += len(continuation)
        lls.append(tuple(pair))
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return lls, time.perf_counter() - start, tokens


def _score_lm_eval(
    method: str,
    model_path: str,
    metadata: dict,
    pairs: int,
    device: str,
    dtype: str,
    batch_size: str,
    model_args: dict,
    before: dict,
    task: str = TASK,
):
    """Score with an lm-eval model; ``before["peak"]`` is the peak memory just before scoring,
    ``before["model_seconds"]`` the time spent in the model's ``loglikelihood``."""
    from lm_eval import simple_evaluate

    from perturbation_bench.tasks.pairing import logged_pairs

    lm, manager = lm_eval_model(method, model_path, device, dtype, batch_size, metadata, model_args)
    scoring = lm.loglikelihood
    before["model_seconds"] = 0.0

    def timed(requests, *args, **kwargs):  # this instance's method only
        start = time.perf_counter()
        try:
            return scoring(requests, *args, **kwargs)
        finally:
            before["model_seconds"] += time.perf_counter() - start

    lm.loglikelihood = timed
    before["peak"] = _peak_bytes(device)
    start = time.perf_counter()
    result = simple_evaluate(
        model=lm, tasks=[task], task_manager=manager, log_samples=True, limit=pairs
    )
    seconds = time.perf_counter() - start
    return logged_pairs(result, task), seconds


def lm_eval_model(method, model_path, device, dtype, batch_size, metadata, model_args):
    """``(lm, task manager)``: lm-eval's ``hf`` (float32 log-softmax), ``dna-hf`` or ``dna-mlm``
    loaded with ``model_args``, and a task manager of this package's tasks alone."""
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from perturbation_bench.models.dna_hf import DnaHFLM
    from perturbation_bench.models.dna_mlm import DnaMaskedLM
    from perturbation_bench.paths import tasks_dir

    model_class, extra = {
        "hf": (HFLM, {"softmax_dtype": "float32"}),
        "dna-hf": (DnaHFLM, {}),
        "dna-mlm": (DnaMaskedLM, {}),
    }[method]
    lm = model_class(
        pretrained=model_path,
        device=device,
        dtype=dtype,
        batch_size=batch_size,
        **extra,
        **model_args,
    )
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    return lm, manager


def _encoder(model_path: str):
    """doc -> [(context_ids, continuation_ids)] for both sequences, as the standalone scorer builds them."""
    from transformers import AutoTokenizer

    from perturbation_bench.tasks.document_requests import doc_to_context, doc_to_sequences

    tokenizer = AutoTokenizer.from_pretrained(model_path)

    def encode(doc):
        prefix = doc_to_context(doc)
        context = (
            tokenizer(prefix, add_special_tokens=False)["input_ids"]
            if prefix
            else [tokenizer.bos_token_id]
        )
        return [
            (context, tokenizer(s, add_special_tokens=False)["input_ids"])
            for s in doc_to_sequences(doc)
        ]

    return encode


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

"""``perturbation-bench bench --protocol gpu``: scoring throughput measured as marin-dna's
inference benchmark measures it (``pipelines/evals/inference_benchmark.py``).

Rows, each in a fresh process, on the same model and pairs (``--model``, ``--data-dir`` or
random ones, as the throughput benchmark takes them):

- ``bare loop``: batches of equal-length sequences through the model's forward pass in
  ``--dtype``, a float32 log-softmax, the targets' log-probabilities summed (tokenized before
  the clock starts): plain scoring with nothing around it;
- ``hf``: lm-eval's HFLM with ``softmax_dtype=float32``;
- ``dna-hf share_prefix=False`` and ``dna-hf`` (the default, shared prefixes);
- ``dna-hf batch auto``: the default with ``--batch_size auto``;
- ``float32``: ``dna-hf share_prefix=False`` with float32 weights, the reference of the
  agreement columns, timed in one pass without a warm-up (it is there for its numbers).

``--rows LABEL`` (repeatable) runs only those rows; without the float32 row the agreement
columns say n/a.

Per row: one warm-up pass over the first batch of pairs, timed apart (CUDA start-up, kernel
choice, batch-size detection); then ``--repeats`` (3) passes over every pair, each timed whole
(reading the pairs, scoring, metrics) and the median reported; peak memory allocated and
reserved over the timed passes (CUDA; reset after the warm-up; on a CPU the process's peak
resident set in both columns); below the table, each lm-eval row's decoder passes in its last
pass and the way ``share_prefix=auto`` chose, with both times. pairs/s; variants/s, a variant being REF and ALT on both strands
(two pairs); MFU = the FLOPs of scoring every sequence plainly (:func:`sequence_flops`) /
(median seconds x ``--peak-tflops``), so a row that shares work shows an MFU above what the
hardware did; agreement with the float32 row: the largest |LL difference| and the number of
pairs whose decision ``LL(o) > LL(p)`` differs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from perturbation_bench.bench.inputs import random_data, random_kmer_model, sequence_length
from perturbation_bench.bench.measuring import (
    TASK,
    counting_passes,
    encoder,
    in_fresh_process,
    lm_eval_model,
    passes_line,
    peak_bytes,
)
from perturbation_bench.bench.options import count

PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "A10G": 125.0}
"""Dense bf16 peak (TFLOP/s, no sparsity) by a word in the CUDA device's name."""


@dataclass(frozen=True)
class Row:
    """One row: its label, the method, the weight dtype (None: ``--dtype``) and model arguments."""

    label: str
    method: str
    dtype: str | None = None
    batch_size: str | None = None
    model_args: tuple = ()
    reference: bool = False  # the float32 row: one pass, no warm-up


ROWS = [
    Row("bare loop", "bare"),
    Row("hf softmax_dtype=float32", "hf", model_args=(("add_bos_token", False),)),
    Row("dna-hf share_prefix=False", "dna-hf", model_args=(("share_prefix", False),)),
    Row("dna-hf", "dna-hf"),
    Row("dna-hf batch auto", "dna-hf", batch_size="auto"),
    Row("float32", "dna-hf", "float32", None, (("share_prefix", False),), reference=True),
]
REFERENCE = "float32"


@dataclass
class Timing:
    """What one row measured: LL pairs in document order, the warm-up and the timed passes
    (seconds), peak memory allocated and reserved over the timed passes (bytes), the decoder
    passes of the last and what ``share_prefix=auto`` chose (``measuring.counting_passes``)."""

    lls: list[tuple[float, float]]
    warmup: float
    passes: list[float]
    allocated: int
    reserved: int
    shapes: list | None = None
    measured: dict | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.passes)


def sequence_flops(config, parameters: int, tokens: int) -> float:
    """Forward FLOPs of one sequence of ``tokens`` inputs: ``2 N n + 2 L d n^2`` (``N`` the
    parameters a token goes through: every weight but the input embeddings, the output layer
    included; ``L`` layers of width ``d``; causal attention's ``QK^T`` and ``AV`` at
    ``n^2 d`` each, halved by the mask)."""
    layers, width = config.num_hidden_layers, config.hidden_size
    return 2.0 * parameters * tokens + 2.0 * layers * width * tokens**2


def matmul_parameters(model) -> int:
    """``N`` of :func:`sequence_flops`: every parameter but the input embeddings, plus the
    output layer's when it shares them."""
    embeddings = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    total = sum(p.numel() for p in model.parameters()) - embeddings.numel()
    return total + (embeddings.numel() if head is not None and head.weight is embeddings else 0)


READS_OPTIONS_OF = ("throughput",)
"""The benchmarks whose options this one reads too (``commands/bench.py``)."""


def add_arguments(parser) -> None:
    """The ``bench --protocol`` options (the model, data, device, dtype and batch size are the
    throughput benchmark's)."""
    parser.add_argument(
        "--protocol",
        choices=["gpu"],
        help="instead: marin-dna's inference protocol over bare loop, hf and dna-hf rows "
        "(perturbation_bench/bench/protocol.py)",
    )
    parser.add_argument(
        "--repeats",
        type=count,
        default=3,
        help="with --protocol: timed passes per row (%(default)s)",
    )
    parser.add_argument(
        "--rows",
        action="append",
        choices=[row.label for row in ROWS],
        help="with --protocol: only this row (repeatable; default every row)",
    )
    parser.add_argument(
        "--peak-tflops",
        type=float,
        help="with --protocol: the device's dense bf16 peak for MFU (default: known for "
        + ", ".join(PEAK_TFLOPS)
        + ")",
    )


def run(args: argparse.Namespace) -> int:
    """Measure every row and print the table; 1 if a row's decisions differ from float32's on
    more than 5% of the pairs."""
    args.length = sequence_length(args)
    with tempfile.TemporaryDirectory(prefix="pb-protocol-") as scratch:
        model = args.model or str(random_kmer_model(Path(scratch) / "model", args))
        data_dir = args.data_dir or str(random_data(Path(scratch) / "data", args))
        preset = args.preset if args.model or args.preset != "default" else "carbon"
        metadata = {"data_dir": data_dir, "config": args.config, "preset": preset}
        timings = {}
        for row in [row for row in ROWS if not args.rows or row.label in args.rows]:
            print(f"measuring {row.label} ...", flush=True)
            timings[row.label] = in_fresh_process(measure_row, row, model, metadata, args)
        flops, peak = in_fresh_process(_work_and_peak, model, metadata, args)
    print(format_table(timings, flops, peak, args.device))
    print("\n".join(passes_line(label, t.shapes, t.measured) for label, t in timings.items()))
    if REFERENCE not in timings:
        return 0
    reference = timings[REFERENCE].lls
    worst = max(_decisions_differing(t.lls, reference) for t in timings.values())
    return 0 if worst <= 0.05 * len(reference) else 1


def measure_row(row: Row, model: str, metadata: dict, args: argparse.Namespace) -> Timing:
    """One row in this process: the warm-up, then ``args.repeats`` timed passes (the reference
    row: one pass, no warm-up)."""
    import torch

    dtype = row.dtype or args.dtype
    batch_size = row.batch_size or args.batch_size
    cuda = args.device.startswith("cuda")
    if row.method == "bare":
        score = _bare_loop(model, metadata, args.pairs, args.device, dtype, int(batch_size))
    else:
        score = _lm_eval_passes(row, model, metadata, args.pairs, args.device, dtype, batch_size)
    warm_pairs = int(batch_size) if batch_size.isdigit() else 1
    start = time.perf_counter()
    if not row.reference:
        score(min(warm_pairs, args.pairs))
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    warmup = time.perf_counter() - start
    passes = []
    for _ in range(1 if row.reference else args.repeats):
        start = time.perf_counter()
        lls = score(args.pairs)
        if cuda:
            torch.cuda.synchronize()
        passes.append(time.perf_counter() - start)
    if cuda:
        allocated, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    else:
        allocated = reserved = peak_bytes(args.device)
    return Timing(lls, warmup, passes, allocated, reserved, *getattr(score, "seen", (None, None)))


def _lm_eval_passes(row, model, metadata, pairs, device, dtype, batch_size):
    """``n -> LL pairs of the first n pairs`` through an lm-eval model loaded once."""
    from lm_eval import simple_evaluate

    from perturbation_bench.tasks.pairing import logged_pairs

    model_args = dict(row.model_args)
    lm, manager = lm_eval_model(row.method, model, device, dtype, batch_size, metadata, model_args)

    def score(n: int):
        with counting_passes(lm) as seen:
            result = simple_evaluate(
                model=lm, tasks=[TASK], task_manager=manager, log_samples=True, limit=n
            )
        score.seen = seen["passes"], seen["measured"]
        return logged_pairs(result, TASK)

    return score


def _encoded_sequences(model_path: str, metadata: dict, pairs: int) -> list[tuple[list, list]]:
    """``(context ids, sequence ids)`` of both sequences of each of the first ``pairs`` pairs,
    as the standalone scorer tokenizes them."""
    import itertools

    from perturbation_bench.tasks.loading import load_pairs

    encode = encoder(model_path)
    docs = itertools.islice(load_pairs(**metadata)["test"], pairs)
    return [encoded for doc in docs for encoded in encode(doc)]


def _bare_loop(model_path, metadata, pairs, device, dtype, batch_size):
    """``n -> LL pairs of the first n pairs``: equal-length sequences batched through the
    forward pass, float32 log-softmax, targets summed (tokenized here, before any clock)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=getattr(torch, dtype))
    model.to(device).eval()
    sequences = [
        (context + sequence, len(context))
        for context, sequence in _encoded_sequences(model_path, metadata, pairs)
    ]

    @torch.no_grad()
    def score(n: int):
        totals = [0.0] * (2 * n)
        by_length: dict = {}
        for index, (tokens, first) in enumerate(sequences[: 2 * n]):
            by_length.setdefault((len(tokens), first), []).append(index)
        for (_, first), members in by_length.items():
            for start in range(0, len(members), batch_size):
                batch = members[start : start + batch_size]
                ids = torch.tensor([sequences[i][0] for i in batch], device=device)
                log_probs = torch.log_softmax(model(ids).logits[:, first - 1 : -1].float(), -1)
                picked = log_probs.gather(-1, ids[:, first:, None])[..., 0]
                for i, total in zip(
                    batch, picked.sum(-1, dtype=torch.float64).tolist(), strict=True
                ):
                    totals[i] = total
        return list(zip(totals[0::2], totals[1::2], strict=True))

    return score


def _work_and_peak(model_path: str, metadata: dict, args: argparse.Namespace):
    """The FLOPs of scoring every sequence plainly, and the device's peak (TFLOP/s, or None);
    the parameters are counted on the meta device, no weight read."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model_path)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    parameters = matmul_parameters(model)
    flops = sum(
        sequence_flops(config, parameters, len(context) + len(sequence) - 1)
        for context, sequence in _encoded_sequences(model_path, metadata, args.pairs)
    )
    peak = args.peak_tflops
    if peak is None and args.device.startswith("cuda"):
        name = torch.cuda.get_device_name(torch.device(args.device))
        peak = next((value for word, value in PEAK_TFLOPS.items() if word in name), None)
    return flops, peak


def _decisions_differing(lls, reference) -> int:
    return sum((o > p) != (ro > rp) for (o, p), (ro, rp) in zip(lls, reference, strict=True))


def format_table(timings: dict, flops: float, peak: float | None, device: str) -> str:
    """The protocol's table (module docstring for the columns)."""
    reference = timings[REFERENCE].lls if REFERENCE in timings else None
    bare = timings["bare loop"].median if "bare loop" in timings else None
    lines = [
        "| row | warm-up s | median s (of passes) | pairs/s | variants/s | vs bare loop "
        "| MFU | peak allocated / reserved | max abs dLL vs float32 | decisions differing |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, t in timings.items():
        n = len(t.lls)
        mfu = f"{flops / t.median / (peak * 1e12):.2f}" if peak else "n/a"
        speed = f"{bare / t.median:.2f}x" if bare else "n/a"
        if reference is None:
            diff = differing = "n/a"
        else:
            diff = f"{max(abs(x - y) for a, b in zip(t.lls, reference, strict=True) for x, y in zip(a, b, strict=True)):.2e}"
            differing = f"{_decisions_differing(t.lls, reference)} of {n}"
        lines.append(
            f"| {label} | {t.warmup:.1f} | {t.median:.2f} ({', '.join(f'{s:.2f}' for s in t.passes)}) "
            f"| {n / t.median:.2f} | {n / 2 / t.median:.2f} | {speed} | {mfu} "
            f"| {t.allocated / 2**30:.2f} / {t.reserved / 2**30:.2f} GiB | {diff} | {differing} |"
        )
    peak_note = f"{peak:.0f} TFLOP/s dense bf16" if peak else "no --peak-tflops"
    memory = "CUDA" if device.startswith("cuda") else "CPU: peak resident set in both"
    lines.append(f"\nMFU against {peak_note}; memory: {memory}.")
    return "\n".join(lines)

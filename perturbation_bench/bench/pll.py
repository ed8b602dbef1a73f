"""``perturbation-bench bench --pll``: what ``dna-mlm scoring=pll`` costs next to the plainest
loop over the same masked inputs.

Pairs shaped like paired controls (``build controls``): ``--pll-pairs`` random windows of
``--pll-bp`` bases (defaults 16 and 350) whose middle 3/7 differ (150 of 350 bp), read by a random single-nucleotide BERT (width 256, 4
layers). Both methods run in a fresh process on the CPU at the same batch size
(``--pll-batch-size``, default 32):

- ``loop``: for each sequence, one input per non-special token with that token masked, batched in
  order, ``log_softmax(logits.float())`` read at the masked token and summed; nothing else;
- ``dna-mlm``: the whole lm-eval run of ``perturbation_custom`` with ``scoring=pll`` (reading the
  pairs, tokenizing, checking unknown tokens, building the inputs, scoring, filtering).

The table gives pairs/s of each, their ratio (``dna-mlm`` / ``loop``; the overhead of lm-eval and
this package's bookkeeping), the forward passes per pair (tokens of both sequences) and the
largest LL difference. Exit status 1 if the LLs differ by more than the benchmarks' tolerance.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from perturbation_bench.bench.measuring import Measurement, compare_lls, in_fresh_process, measure
from perturbation_bench.bench.options import count

CONFIG, LENGTH, PATCH, HIDDEN, LAYERS = "controls", 350, 150, 256, 4


def add_arguments(parser) -> None:
    """The ``bench --pll`` options."""
    parser.add_argument(
        "--pll",
        action="store_true",
        help="instead: dna-mlm scoring=pll against a plain loop (perturbation_bench/bench/pll.py)",
    )
    parser.add_argument(
        "--pll-pairs", type=count, default=16, help="with --pll: pairs (%(default)s)"
    )
    parser.add_argument(
        "--pll-bp", type=count, default=LENGTH, help="with --pll: window bp (%(default)s)"
    )
    parser.add_argument(
        "--pll-batch-size", type=count, default=32, help="with --pll: batch size (%(default)s)"
    )


def plain_loop(model_path: str, data: str, pairs: int, batch_size: int) -> Measurement:
    """The ``loop`` method of the module docstring, timed from reading the pairs."""
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(model_path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    start = time.perf_counter()
    rows = pq.read_table(Path(data) / CONFIG).to_pylist()[:pairs]
    lls = []
    for row in rows:
        pair = []
        for sequence in (row["original_sequence"], row["sequence"]):
            encoding = tokenizer(sequence, return_special_tokens_mask=True)
            ids = torch.tensor(encoding["input_ids"])
            positions = [
                i for i, special in enumerate(encoding["special_tokens_mask"]) if not special
            ]
            total = 0.0
            for first in range(0, len(positions), batch_size):
                batch = positions[first : first + batch_size]
                inputs = ids.repeat(len(batch), 1)
                inputs[range(len(batch)), batch] = tokenizer.mask_token_id
                with torch.no_grad():
                    logits = model(input_ids=inputs).logits[range(len(batch)), batch]
                total += (
                    torch.log_softmax(logits.float(), -1)[range(len(batch)), ids[batch]]
                    .sum()
                    .item()
                )
            pair.append(total)
        lls.append(tuple(pair))
    return Measurement("loop", lls, time.perf_counter() - start, 0)


def run(args: argparse.Namespace) -> int:
    """Measure both methods; print the table; 1 if their LLs disagree."""
    from perturbation_bench.fixtures.random_models import (
        as_masked_lm_tokenizer,
        save_random_bert,
        single_nucleotide_tokenizer,
    )
    from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet

    with tempfile.TemporaryDirectory(prefix="pb-pll-") as scratch:
        model = save_random_bert(
            Path(scratch) / "model",
            as_masked_lm_tokenizer(single_nucleotide_tokenizer()),
            layers=LAYERS,
            hidden=HIDDEN,
            max_positions=args.pll_bp + 2,
        )
        patch = args.pll_bp * PATCH // LENGTH
        write_parquet(
            random_pairs(args.pll_pairs, args.pll_bp, seed=0, patch=patch, at=0.5),
            Path(scratch) / "data",
            CONFIG,
        )
        data = str(Path(scratch) / "data")
        print("measuring the plain loop ...", flush=True)
        loop = in_fresh_process(plain_loop, str(model), data, args.pll_pairs, args.pll_batch_size)
        print("measuring dna-mlm scoring=pll ...", flush=True)
        scored = in_fresh_process(
            measure,
            "dna-mlm",
            str(model),
            {"data_dir": data, "config": CONFIG},
            args.pll_pairs,
            "cpu",
            "float32",
            str(args.pll_batch_size),
            {"scoring": "pll"},
        )
    diff, agree = compare_lls(scored, loop)
    n = len(loop.lls)
    print(
        "| pairs | bp | passes per pair | loop pairs/s | dna-mlm pairs/s | dna-mlm / loop | max abs dLL |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {n} | {args.pll_bp} | {2 * args.pll_bp} | {n / loop.seconds:.2f} | {n / scored.seconds:.2f} | "
        f"{loop.seconds / scored.seconds:.2f}x | {diff:.1e} |"
    )
    if not agree:
        print("MISMATCH: dna-mlm and the loop differ by more than 1e-6 |LL| + 1e-3 nats")
    return 0 if agree else 1

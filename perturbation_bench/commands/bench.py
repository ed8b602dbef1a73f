"""``perturbation-bench bench``: benchmarks that print tables (never timed tests).

Each benchmark is a module of :mod:`perturbation_bench.bench` that owns its options
(``add_arguments``) and its run (``run(args)``); all but the throughput benchmark are chosen by
their flag:

    bench                 throughput.py: a naive loop, lm-eval hf, dna-hf and dna-mlm
    bench --sharing       sharing.py: what computing a pair's shared pieces once buys
    bench --saturation    saturation_scan.py: what scoring each distinct input once buys
    bench --scale         scale.py: per-stage time and peak memory of large runs
    bench --pll           pll.py: dna-mlm's pseudo-log-likelihood against a plain loop
    bench --embedding     embedding.py: embedding scores against a plain loop of forward passes
    bench --novelty       novelty.py: annotate novelty's time per Gb and per 10,000 pairs, memory
    bench --protocol gpu  protocol.py: marin-dna's inference protocol (warm-up apart, median of
                          passes, memory, MFU, agreement with float32) over bare loop, hf, dna-hf
"""

from __future__ import annotations

import argparse
import importlib

FLAGGED = {
    "sharing": "sharing",
    "saturation": "saturation_scan",
    "scale": "scale",
    "pll": "pll",
    "embedding": "embedding",
    "protocol": "protocol",
    "novelty": "novelty",
}
"""Flag (``--sharing``, ...) -> the benchmark module it runs; no flag runs ``throughput``."""


def _module(name: str):
    return importlib.import_module(f"perturbation_bench.bench.{name}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every benchmark's options, each benchmark's in a group of its own."""
    _module("throughput").add_arguments(parser.add_argument_group("throughput (no flag)"))
    for flag, name in FLAGGED.items():
        _module(name).add_arguments(parser.add_argument_group(f"--{flag}"))


def run(args: argparse.Namespace) -> int:
    """Run the benchmark the flags choose; return its exit status."""
    chosen = [name for flag, name in FLAGGED.items() if getattr(args, flag)]
    return _module(chosen[0] if chosen else "throughput").run(args)

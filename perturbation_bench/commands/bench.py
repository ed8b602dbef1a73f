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

One benchmark runs at a time: two flags, or an option of a benchmark other than the one
chosen (changed from its default), are refused before anything is measured, never ignored. A
benchmark module that reads another's options names it in ``READS_OPTIONS_OF``.
"""

from __future__ import annotations

import argparse
import importlib

from perturbation_bench.errors import OptionsError

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


class _Recorded:
    """An argument group that keeps the actions added to it."""

    def __init__(self, group):
        self.group, self.actions = group, []

    def add_argument(self, *names, **options):
        action = self.group.add_argument(*names, **options)
        self.actions.append(action)
        return action


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every benchmark's options, each benchmark's in a group of its own."""
    groups = {"throughput": "throughput (no flag)"}
    groups.update((name, f"--{flag}") for flag, name in FLAGGED.items())
    owned = {}
    for name, title in groups.items():
        group = _Recorded(parser.add_argument_group(title))
        _module(name).add_arguments(group)
        owned[name] = group.actions
    parser.set_defaults(bench_options=owned)


def chosen_benchmark(args: argparse.Namespace) -> str:
    """The module the flags choose; OptionsError for two flags, or for an option of another
    benchmark set away from its default."""
    flags = [flag for flag in FLAGGED if getattr(args, flag)]
    if len(flags) > 1:
        given = " and ".join(f"--{flag}" for flag in flags)
        raise OptionsError(f"bench runs one benchmark at a time; {given} were given")
    chosen = FLAGGED[flags[0]] if flags else "throughput"
    stray = _stray_options(args, chosen)
    if stray:
        said = ", ".join(f"{option} (an option of {_named(name)})" for option, name in stray)
        raise OptionsError(
            f"{_named(chosen)} does not read {said}; drop each, or run the benchmark it belongs to"
        )
    return chosen


def _stray_options(args: argparse.Namespace, chosen: str) -> list[tuple[str, str]]:
    """``(option, its benchmark)`` for each option set away from its default that ``chosen``
    does not read (its own, and those of the benchmarks it names in ``READS_OPTIONS_OF``)."""
    read = {chosen, *getattr(_module(chosen), "READS_OPTIONS_OF", ())}
    return [
        (action.option_strings[0], name)
        for name, actions in args.bench_options.items()
        if name not in read
        for action in actions
        if getattr(args, action.dest) != action.default
    ]


def _named(name: str) -> str:
    flags = [f"bench --{flag}" for flag, module in FLAGGED.items() if module == name]
    return flags[0] if flags else "the throughput benchmark (bench without a flag)"


def run(args: argparse.Namespace) -> int:
    """Run the benchmark the flags choose (:func:`chosen_benchmark`); return its exit status."""
    return _module(chosen_benchmark(args)).run(args)

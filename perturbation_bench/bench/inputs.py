"""The benchmarks' inputs when none are given: random models and random pairs, saved where the
benchmark's scratch folder says (the numbers they give say how fast, never how good)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import OptionsError

LENGTH, KMER_LENGTH = 8192, 8196
"""``--length`` when not given: of random pairs; of random pairs read as 6-mers."""


def random_causal_model(folder: Path, args: argparse.Namespace) -> Path:
    """A random single-nucleotide Llama of ``args.layers`` and ``args.hidden``, long enough for
    ``args.length`` bp, saved to ``folder``."""
    from perturbation_bench.fixtures.random_models import (
        save_random_llama,
        single_nucleotide_tokenizer,
    )

    return save_random_llama(
        folder,
        single_nucleotide_tokenizer(),
        layers=args.layers,
        hidden=args.hidden,
        max_positions=args.length + 1,
    )


def random_kmer_model(folder: Path, args: argparse.Namespace) -> Path:
    """A random Llama read as 6-mers (``args.layers``, ``args.hidden``), long enough for
    ``args.length`` bp, saved to ``folder`` (``bench --protocol`` without ``--model``)."""
    from perturbation_bench.fixtures.random_models import kmer_tokenizer, save_random_llama

    return save_random_llama(
        folder,
        kmer_tokenizer(6),
        layers=args.layers,
        hidden=args.hidden,
        max_positions=args.length // 6 + 8,
    )


def random_masked_model(folder: Path, args: argparse.Namespace) -> Path:
    """A random single-nucleotide BERT of the same size, saved to ``folder``."""
    from perturbation_bench.fixtures.random_models import (
        as_masked_lm_tokenizer,
        save_random_bert,
        single_nucleotide_tokenizer,
    )

    return save_random_bert(
        folder,
        as_masked_lm_tokenizer(single_nucleotide_tokenizer()),
        layers=args.layers,
        hidden=args.hidden,
        max_positions=args.length + 2,
    )


def random_data(folder: Path, args: argparse.Namespace) -> Path:
    """``args.pairs`` random pairs of ``args.length`` bp as config ``args.config`` of ``folder``."""
    from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet

    write_parquet(random_pairs(args.pairs, args.length, seed=0), folder, args.config)
    return folder


def sequence_length(args: argparse.Namespace) -> int:
    """``--length``, or when not given its default: whole 6-mers for the random pairs of a run
    without ``--model``, which reads them as 6-mers.

    Raises:
        OptionsError: a ``--length`` of no whole 6-mers without ``--model``.
    """
    length = args.length or (LENGTH if args.model else KMER_LENGTH)
    if not args.model and length % 6:
        raise OptionsError(
            f"--protocol without --model reads random pairs as 6-mers: --length must be a "
            f"multiple of 6 (e.g. {KMER_LENGTH}), got {length}"
        )
    return length

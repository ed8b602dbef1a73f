"""``perturbation-bench validate PATH``: check a dataset's invariants (``dataset/validate.py``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``validate`` subcommand's options."""
    parser.add_argument("path", help="a parquet file or a folder of them")
    parser.add_argument("--fasta", help="also check original_sequence against this genome")


def run(args: argparse.Namespace) -> int:
    """Print every invariant's result; 1 if one is broken, else 0."""
    from perturbation_bench.dataset.validate import report, validate

    checks, n_rows = validate(args.path, args.fasta)
    print(report(checks, n_rows))
    return 1 if any(check.broken for check in checks) else 0

"""``perturbation-bench build calibration``: neutral sites, each to its three alternates with
its context cell, as a variant config (``variants/calibration_sites.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.wording import counted, say_excluded


def run(args: argparse.Namespace) -> str | None:
    """Build the calibration config; print what was written and excluded; return the config
    whose task YAML to write."""
    from perturbation_bench.formats.bed import read_bed
    from perturbation_bench.formats.fasta import Genome
    from perturbation_bench.pairs.calibration import CELL
    from perturbation_bench.variants.build import build_variant_dataset
    from perturbation_bench.variants.calibration_sites import calibration_rows
    from perturbation_bench.variants.saturation import write_saturation

    if args.window < 5:
        raise OptionsError(f"--window must hold a site's 5-mer (at least 5 bp), got {args.window}")
    genome = Genome(args.fasta)
    rows, summary = calibration_rows(genome, read_bed(args.sites))
    if not rows:
        raise DataValidationError(f"{args.sites}: no site of A, C, G, T with a 5-mer around it")
    table = Path(args.out) / f"{args.config}_sites.parquet"
    write_saturation(rows, summary, table, text_columns=[CELL])
    path, written, excluded, read = build_variant_dataset(
        table, genome, args.config, Path(args.out), args.window, args.edge
    )
    print(
        f"{counted(len(rows) // 3, 'site')} ({summary['left_out_no_five_mer']} without a 5-mer, "
        f"{summary['left_out_non_acgt']} not A, C, G, T left out); wrote "
        f"{counted(written, 'pair')} of {read} to {path}"
    )
    say_excluded(excluded)
    return args.config

"""``perturbation-bench build variants``: reference/alternate windows of a variant file, a MaveDB
score table or NABench's assay files (``variants/build.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import OptionsError
from perturbation_bench.wording import counted, say_excluded


def run(args: argparse.Namespace) -> str | None:
    """Build the variant pairs; print what was written and excluded; return the config whose task YAML to write."""
    from perturbation_bench.pairs.layout import EXCLUDED_NAME
    from perturbation_bench.variants import build

    if args.window < 2:
        raise OptionsError(f"--window must be at least 2 bp, got {args.window}")
    path, written, excluded, read = _variant_build(args, build)
    print(f"read {counted(read, 'variant')}; wrote {counted(written, 'pair')} to {path}")
    say_excluded(excluded)
    if excluded:
        print(f"excluded variants, each with its reason: {path.parent / EXCLUDED_NAME}")
    return args.config


def _variant_build(args: argparse.Namespace, build):
    """The build of ``--from``'s format, its options checked before any file is read."""
    from perturbation_bench.formats.fasta import Genome

    _check_format_options(args)
    if args.source_format == "nabench":
        table_options = ("label_column", "assay_column", "label_direction")
        if args.fasta or any(getattr(args, name) for name in table_options):
            raise OptionsError(
                "--from nabench makes each file one assay of wild type and measured sequences: "
                "no --fasta, --label-column, --assay-column or --label-direction"
            )
        return build.build_nabench_dataset(
            args.variants, args.config, Path(args.out), args.nabench_metadata
        )
    if args.fasta is None:
        raise OptionsError(f"--from {args.source_format} needs --fasta (the genome)")
    if len(args.variants) > 1:
        raise OptionsError(
            f"--variants takes one file with --from {args.source_format} "
            f"(got {len(args.variants)}); several files are for --from nabench"
        )
    columns = {
        "label_column": args.label_column,
        "assay_column": args.assay_column,
        "label_direction": args.label_direction,
    }
    mavedb = None
    if args.source_format == "mavedb":
        mavedb = {"hgvs_column": args.hgvs_column, "chrom": args.chrom}
    return build.build_variant_dataset(
        args.variants[0],
        Genome(args.fasta),
        args.config,
        Path(args.out),
        args.window,
        args.edge,
        columns,
        mavedb,
    )


def _check_format_options(args: argparse.Namespace) -> None:
    """Refuse an option of one ``--from`` format given with another."""
    for option, source_format, given in (
        ("--hgvs-column", "mavedb", args.hgvs_column != "hgvs_nt"),
        ("--chrom", "mavedb", args.chrom is not None),
        ("--nabench-metadata", "nabench", args.nabench_metadata is not None),
    ):
        if given and source_format != args.source_format:
            raise OptionsError(f"{option} goes with --from {source_format}")

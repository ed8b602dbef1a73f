"""``perturbation-bench build saturation``: every base of regions to each other base
(``variants/saturation.py``)."""

from __future__ import annotations

import argparse

from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.variants import saturation
from perturbation_bench.wording import counted


def run(args: argparse.Namespace) -> str | None:
    """Build the variant table; print what was written and excluded; return None (a variant table has no task)."""
    from perturbation_bench.formats.bed import read_bed
    from perturbation_bench.formats.fasta import Genome

    regions = [saturation.parse_region(text) for text in args.region]
    regions += read_bed(args.bed) if args.bed else []
    if not regions:
        raise OptionsError("build saturation needs --region CHROM:START-END or --bed FILE")
    rows, summary = saturation.saturation_rows(Genome(args.fasta), regions)
    if not rows:
        raise DataValidationError(
            f"no variant to write: the {len(regions)} region(s) hold only non-ACGT bases "
            f"({summary['left_out_non_acgt']} left out)"
        )
    summary_path = saturation.write_saturation(rows, summary, args.out)
    print(
        f"wrote {counted(len(rows), 'variant')} of {counted(len(regions), 'region')} to {args.out} "
        f"(summary: {summary_path}); {summary['left_out_non_acgt']} non-ACGT bases left out"
    )
    return None

"""``perturbation-bench build mutations``: a variant table of mutations by consequence class
(``variants/mutations.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.variants import mutations
from perturbation_bench.wording import counted, some, tally


def run(args: argparse.Namespace) -> str | None:
    """Build the variant table; print what was written and excluded; return None (a variant table has no task)."""
    from perturbation_bench.formats.annotation import exons_of
    from perturbation_bench.formats.fasta import Genome

    def class_list(text, default):
        names = tuple(n.strip() for n in text.split(",") if n.strip()) if text else default
        unknown = sorted(set(names) - set(mutations.CLASSES))
        if unknown:
            raise OptionsError(
                f"unknown class(es) {', '.join(unknown)}; classes: {', '.join(mutations.CLASSES)}"
            )
        return names

    classes = class_list(args.classes, mutations.CLASSES)
    positive = class_list(args.positive, mutations.POSITIVE)
    if args.per_class < 1 or args.per_gene < 1:
        raise OptionsError("--per-class and --per-gene must be at least 1")
    exons = exons_of(args.gtf, args.gff3)
    genome = Genome(args.fasta)
    chosen, summary = mutations.scan(
        genome, exons, classes, args.per_class, args.per_gene, args.seed, positive
    )
    if not chosen:
        raise DataValidationError(
            f"no mutation to write: {summary['transcripts_scanned']} transcripts scanned, "
            f"excluded {tally(summary['excluded'])}; the annotation's chromosomes "
            f"{some(sorted({exon.chrom for exon in exons}))}, the FASTA's {some(genome.names)}"
        )
    summary_path = mutations.write_table(chosen, summary, Path(args.out), positive)
    print(f"wrote {counted(len(chosen), 'variant')} to {args.out} (summary: {summary_path})")
    for consequence, count in summary["counts"].items():
        print(f"  {consequence}: {count} of {summary['candidates'][consequence]} candidates")
    for reason, count in summary["excluded"].items():
        print(f"  excluded {count} ({reason})")
    for note in summary["notes"]:
        print(f"  {note}")
    return None

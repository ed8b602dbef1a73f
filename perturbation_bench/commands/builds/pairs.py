"""``perturbation-bench build syn`` and ``build motif``: the benchmark's pairs from a genome and an
annotation (``dataset/build.py``; settings and their rules in ``dataset/settings.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.wording import counted, say_excluded


def run(args: argparse.Namespace) -> str | None:
    """Build the pairs; print what was written and excluded; return the config whose task YAML to write."""
    from perturbation_bench.dataset.build import build_dataset
    from perturbation_bench.dataset.codons import load_codon_table
    from perturbation_bench.dataset.settings import BuildSettings, check_settings
    from perturbation_bench.formats.annotation import exons_of
    from perturbation_bench.formats.fasta import Genome

    extra = (
        {"optimization_rate": args.optimization_rate, "recode": args.recode}
        if args.kind == "syn"
        else {"motif": args.motif.upper(), "repeats": args.repeats, "offset": args.offset}
    )
    settings = BuildSettings(
        kind=args.kind,
        species=args.species,
        config=args.config
        or "_".join(
            [
                args.kind,
                *(["shuffle"] if getattr(args, "recode", "") == "shuffle" else []),
                args.species,
            ]
        ),
        annotation_source=args.annotation_source or Path(args.gtf or args.gff3).name,
        genome_assembly=args.assembly or Path(args.fasta).name,
        window=args.window,
        flank=args.flank,
        seed=args.seed,
        max_pairs=args.max_pairs,
        **extra,
    )
    check_settings(settings, getattr(args, "allow_stop_or_frameshift", False))
    table = load_codon_table(args.species, args.codon_table) if args.kind == "syn" else None
    genome = Genome(args.fasta)
    path, written, excluded = build_dataset(
        genome,
        exons_of(args.gtf, args.gff3),
        settings,
        table,
        Path(args.out),
    )
    print(f"wrote {counted(written, 'pair')} to {path}")
    say_excluded(excluded)
    return settings.config

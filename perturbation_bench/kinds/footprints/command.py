"""``perturbation-bench build footprints``: motifs inserted into backgrounds against permuted
inserts (``kinds/footprints/builder.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import OptionsError
from perturbation_bench.kinds.footprints import builder
from perturbation_bench.wording import counted, say_excluded


def run(args: argparse.Namespace) -> str | None:
    """Build the footprint pairs; print what was written and excluded; return the config whose task YAML to write."""
    from perturbation_bench.formats.backgrounds import read_backgrounds
    from perturbation_bench.formats.meme import read_motifs
    from perturbation_bench.tasks.task_yaml import check_config_name

    check_config_name(args.config)
    copies = builder.doses(args.copies, "--copies", 1)
    spacings = builder.doses(args.spacing, "--spacing", 0)
    if args.fasta and not args.bed:
        raise OptionsError("--fasta goes with --bed (a FASTA of backgrounds is --backgrounds)")
    if args.max_backgrounds is not None and args.max_backgrounds < 1:
        raise OptionsError(f"--max-backgrounds must be at least 1, got {args.max_backgrounds}")
    motifs = read_motifs(args.motifs)
    backgrounds = read_backgrounds(args.backgrounds, args.bed, args.fasta)
    path, report = builder.build_footprints(
        motifs,
        backgrounds,
        copies,
        spacings,
        args.orientation,
        args.seed,
        args.config,
        Path(args.out),
        str(args.motifs),
        args.max_backgrounds,
    )
    used = report["backgrounds"]
    spread = f" ({used} used, spread evenly)" if used < len(backgrounds) else ""
    print(
        f"read {counted(len(motifs), 'motif')} and {counted(len(backgrounds), 'background')}"
        f"{spread}; wrote {counted(report['written_rows'], 'pair')} of {report['read']} to {path}"
    )
    say_excluded(report["excluded"])
    return args.config

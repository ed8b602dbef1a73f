"""``perturbation-bench build recall``: repeat and control windows from a genome's N-free
stretches (``kinds/recall/builder.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.kinds.recall import builder
from perturbation_bench.wording import counted, say_excluded


def run(args: argparse.Namespace) -> str:
    """Build the recall rows; print what was written and excluded; return the config whose task
    YAML to write."""
    from perturbation_bench.formats.fasta import Genome
    from perturbation_bench.kinds.recall.rules import Stretches
    from perturbation_bench.tasks.task_yaml import check_config_name

    check_config_name(args.config)
    settings = {
        "config": args.config,
        "distances": builder.distances(args.distances),
        "segment": args.segment,
        "trials": args.trials,
        "copy": args.copy,
        "control": args.control,
        "align": args.align,
        "seed": args.seed,
        "fasta": str(args.fasta),
    }
    stretches = Stretches(builder.n_free_stretches(Genome(args.fasta)))
    path, report = builder.build_recall(stretches, settings, Path(args.out))
    print(
        f"read {counted(len(stretches.lengths), 'N-free stretch', 'N-free stretches')} "
        f"(longest {report['longest_stretch_bp']} bp); wrote "
        f"{counted(report['written_rows'], 'row')} of {report['read']} to {path}"
    )
    say_excluded(report["excluded"])
    for distance, rows in report["rows_by_distance"].items():
        if not rows:
            print(f"warning: distance {distance} has no row: every trial was excluded")
    rounded = builder.rounding(settings["distances"], args.segment, args.align)
    if rounded:
        print(f"--align {args.align} rounds {rounded} (the rows hold the rounded lengths)")
    return args.config

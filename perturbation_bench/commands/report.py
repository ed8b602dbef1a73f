"""``perturbation-bench report RUN... --out DIR``: intervals, strata, comparisons and plots from
lm-eval runs (``report/make.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import OptionsError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``report`` subcommand's options."""
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="lm_eval --output_path folder, one per model"
    )
    parser.add_argument(
        "--out", required=True, help="folder for report.md/json, pairs.parquet, PNGs"
    )
    parser.add_argument(
        "--by", action="append", default=[], metavar="COL", help="extra stratum column (repeatable)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default %(default)s)")
    parser.add_argument(
        "--bootstrap", type=int, default=2000, help="bootstrap resamples (default %(default)s)"
    )
    parser.add_argument(
        "--cluster",
        default="auto",
        metavar="COLUMN|overlap|none",
        help="which pairs the intervals and paired comparisons resample together: a column of "
        "the pair files, overlap (overlapping windows on one chromosome) or none (each pair); "
        "default: gene_id where the pairs have it, else overlap, else none",
    )
    parser.add_argument(
        "--se-resamples",
        type=int,
        default=100,
        help="stratified resamples of the AUROC/AUPRC standard errors (default %(default)s, TraitGym's)",
    )
    parser.add_argument(
        "--se-chrom-resamples",
        type=int,
        default=1000,
        help="chromosome resamples of the by-chromosome standard errors (default %(default)s, TraitGym's)",
    )
    parser.add_argument(
        "--floor",
        action="append",
        default=[],
        metavar="FOLDER",
        help="a run read as a floor of the others (repeatable; kmer-markov runs and "
        "random_init=true runs among the RUNs are floors already)",
    )
    parser.add_argument(
        "--export",
        nargs=2,
        metavar=("FORMAT", "DIR"),
        help="also write the labelled variant runs in an upstream's layout: traitgym DIR",
    )
    parser.add_argument(
        "--min-subset",
        type=int,
        default=30,
        help="fewest matched pairs of a consequence in the Macro Avg (default %(default)s)",
    )
    parser.add_argument("--gtf", help="annotation whose CDS exons are drawn under saturation maps")
    parser.add_argument("--gff3", help="the same, from a GFF3")
    parser.add_argument(
        "--allow-different-data",
        action="store_true",
        help="compare runs that scored different data for a task",
    )
    add_name_option(parser)


def add_name_option(parser: argparse.ArgumentParser) -> None:
    """``--name FOLDER=LABEL``, as ``report`` and ``leaderboard`` take it (``run_labels``)."""
    parser.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="FOLDER=LABEL",
        help="the name of a RUN in tables and figures (repeatable; default: the model's short "
        "name, and what tells runs of one model apart)",
    )


def run_labels(items: list[str]) -> dict[str, str]:
    """``--name FOLDER=LABEL`` options as ``{folder: label}``.

    Raises:
        OptionsError: an item without a folder or a label.
    """
    names = {}
    for item in items:
        folder, _, label = item.partition("=")
        if not folder or not label:
            raise OptionsError(f"--name {item!r}: expected FOLDER=LABEL")
        names[folder] = label
    return names


def _check_numbers(args: argparse.Namespace) -> None:
    """Refuse resample counts below 2 and a ``--min-subset`` below 1."""
    for option, value in (
        ("--bootstrap", args.bootstrap),
        ("--se-resamples", args.se_resamples),
        ("--se-chrom-resamples", args.se_chrom_resamples),
    ):
        if value < 2:
            raise OptionsError(f"{option} must be at least 2, got {value}")
    if args.min_subset < 1:
        raise OptionsError(f"--min-subset must be at least 1 pair, got {args.min_subset}")


def run(args: argparse.Namespace) -> int:
    """Write the report; print one line per model and task; return 0."""
    from perturbation_bench.formats.annotation import exons_of
    from perturbation_bench.report.export import FORMATS
    from perturbation_bench.report.make import make_report

    _check_numbers(args)
    if args.export and args.export[0] not in FORMATS:
        raise OptionsError(
            f"--export {args.export[0]}: formats are {', '.join(FORMATS)} (--export traitgym DIR)"
        )
    features = []
    if args.gtf or args.gff3:
        features = [(exon.chrom, exon.start, exon.end) for exon in exons_of(args.gtf, args.gff3)]
    names = run_labels(args.name)
    report = make_report(
        args.runs,
        args.out,
        by=args.by,
        seed=args.seed,
        n_boot=args.bootstrap,
        features=features,
        allow_different_data=args.allow_different_data,
        names=names,
        se_boot=args.se_resamples,
        se_chrom_boot=args.se_chrom_resamples,
        floors=args.floor,
        min_subset=args.min_subset,
        export=tuple(args.export) if args.export else None,
        cluster=args.cluster,
    )
    for row in report["summary"]:
        low, high = row["bootstrap_95"]
        print(
            f"{row['model']} {row['task']}: pairwise_acc {row['pairwise_acc']:.4f} "
            f"[{low:.4f}, {high:.4f}] (n={row['n']}; {row['n_clusters']} clusters by "
            f"{row['cluster_unit']}, effective n {row['effective_n']:.1f})"
        )
    for note in report["notes"]:
        print(f"note: {note}")
    if args.export:
        print(f"{len(report['exported'])} files in TraitGym's layout under {args.export[1]}")
    print(f"report written to {Path(args.out) / 'report.md'}")
    return 0

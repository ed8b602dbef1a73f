"""The ``perturbation-bench`` command.

Subcommands:
    path        print the folder to pass to ``lm_eval --include_path``
    build       build a dataset (``build syn`` or ``build motif``) from a FASTA and a GTF or GFF3,
                or pairs from a variant file (``build variants``)
    validate    check a dataset's invariants, optionally against the genome
    report      intervals, strata, paired comparisons and plots from lm-eval runs
    check       a dry run of an lm_eval command line: options, data, tokenizer, no weights
    bench       time a naive scorer, lm-eval ``hf`` and ``dna-hf`` on the same model and pairs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perturbation_bench import __version__
from perturbation_bench.errors import OptionsError, UserInputError


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; return the exit status."""
    from perturbation_bench.bench import scale
    from perturbation_bench.bench import throughput as bench

    parser = argparse.ArgumentParser(
        prog="perturbation-bench",
        description="perturbation-bench for lm-evaluation-harness (DNA language models).",
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("path", help="print the task folder for lm_eval --include_path")
    build = commands.add_parser("build", help="build a dataset from a genome and an annotation")
    kinds = build.add_subparsers(dest="kind", required=True, metavar="KIND")
    _add_build_arguments(
        kinds.add_parser("syn", help="synonymous recoding to the most frequent codons")
    )
    _add_build_arguments(kinds.add_parser("motif", help="an in-frame repeat (default CAG x 10)"))
    variants = kinds.add_parser("variants", help="reference/alternate windows of a variant file")
    variants.add_argument("--variants", required=True, help="VCF (.vcf, .vcf.gz) or table "
                          "(.parquet, .csv, .tsv) with chrom, pos (1-based), ref, alt")  # fmt: skip
    variants.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    variants.add_argument("--config", required=True, help="config name, e.g. traitgym_mendelian")
    variants.add_argument("--out", required=True, help="output folder (hub layout)")
    variants.add_argument("--window", type=int, default=8192, help="window bp (default 8192)")
    mutations = kinds.add_parser("mutations", help="a variant table of mutations by consequence class")
    mutations.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    annotation = mutations.add_mutually_exclusive_group(required=True)
    annotation.add_argument("--gtf", help="annotation GTF (a .gff3/.gff name is read as GFF3)")
    annotation.add_argument("--gff3", help="annotation GFF3")
    mutations.add_argument("--out", required=True, help="the variant table to write (.parquet)")
    mutations.add_argument("--classes", help="comma-separated classes (default: all)")
    mutations.add_argument("--positive", help="classes labelled true (default: stop_gained,"
                           "start_lost,splice_donor_variant,splice_acceptor_variant,frameshift_variant)")  # fmt: skip
    mutations.add_argument("--per-class", type=int, default=500, help="variants per class (default 500)")
    mutations.add_argument("--per-gene", type=int, default=3, help="per gene and class (default 3)")
    mutations.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    saturation = kinds.add_parser("saturation", help="every base of regions to each other base")
    saturation.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    saturation.add_argument("--region", action="append", default=[], metavar="CHROM:START-END",
                            help="1-based, both ends included (repeatable)")  # fmt: skip
    saturation.add_argument("--bed", help="regions from a BED file (0-based, half-open)")
    saturation.add_argument("--out", required=True, help="the variant table to write (.parquet)")
    check = commands.add_parser("validate", help="check a dataset's invariants")
    check.add_argument("path", help="a parquet file or a folder of them")
    check.add_argument("--fasta", help="also check original_sequence against this genome")
    report = commands.add_parser("report", help="intervals, strata, comparisons, plots from runs")
    report.add_argument(
        "runs", nargs="+", metavar="RUN", help="lm_eval --output_path folder, one per model"
    )
    report.add_argument(
        "--out", required=True, help="folder for report.md/json, pairs.parquet, PNGs"
    )
    report.add_argument(
        "--by", action="append", default=[], metavar="COL", help="extra stratum column (repeatable)"
    )
    report.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    report.add_argument(
        "--bootstrap", type=int, default=2000, help="bootstrap resamples (default 2000)"
    )
    report.add_argument("--gtf", help="annotation whose CDS exons are drawn under saturation maps")
    report.add_argument("--gff3", help="the same, from a GFF3")
    report.add_argument("--allow-different-data", action="store_true",
                        help="compare runs that scored different data for a task")  # fmt: skip
    from perturbation_bench import check as dry_run

    dry_run.add_arguments(
        commands.add_parser("check", help="dry run of lm_eval's --tasks/--metadata/--model_args")
    )
    bench_parser = commands.add_parser("bench", help="throughput: naive loop vs lm-eval hf vs dna-hf")
    bench.add_arguments(bench_parser)
    scale.add_arguments(bench_parser)
    args = parser.parse_args(argv)

    try:
        if args.command == "path":
            from perturbation_bench.paths import tasks_dir

            print(tasks_dir())
            return 0
        if args.command == "build":
            return _build(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "report":
            return _report(args)
        if args.command == "check":
            return dry_run.run(args)
        if args.sharing:
            from perturbation_bench.bench import sharing

            return sharing.run(args)
        if args.scale:
            return scale.run(args)
        if args.saturation:
            from perturbation_bench.bench import saturation

            return saturation.run(args)
        return bench.run(args)
    except UserInputError as err:
        print(f"perturbation-bench error: {err}", file=sys.stderr)
        return 2


def _add_build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    annotation = parser.add_mutually_exclusive_group(required=True)
    annotation.add_argument(
        "--gtf", help="annotation GTF (plain or .gz; a .gff3/.gff name is read as GFF3)"
    )
    annotation.add_argument("--gff3", help="annotation GFF3 (plain or .gz), e.g. NCBI RefSeq, SGD")
    parser.add_argument(
        "--species", required=True, help="human, mouse, yeast, ... (names the config)"
    )
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--config", help="config name (default: <kind>_<species>)")
    parser.add_argument("--window", type=int, default=8192, help="window bp (default 8192)")
    parser.add_argument(
        "--flank", type=int, default=1024, help="bp upstream of the CDS exon (default 1024)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--max-pairs", type=int, help="keep a seeded random sample of this many")
    parser.add_argument("--assembly", help="genome_assembly column (default: FASTA file name)")
    parser.add_argument(
        "--annotation-source", help="annotation_source column (default: GTF file name)"
    )
    if parser.prog.endswith("syn"):
        parser.add_argument("--optimization-rate", type=float, default=1.0,
                            help="share of eligible codons to recode (default 1)")  # fmt: skip
        parser.add_argument(
            "--codon-table", help="CSV codon,amino_acid,frequency (default: python-codon-tables)"
        )
    else:
        parser.add_argument("--motif", default="CAG", help="repeat unit (default CAG)")
        parser.add_argument(
            "--repeats", type=int, default=10, help="copies of the unit (default 10)"
        )
        parser.add_argument(
            "--allow-stop-or-frameshift",
            action="store_true",
            help="build a repeat with an in-frame stop codon or a length not a multiple of 3",
        )
        parser.add_argument("--offset", type=int, default=60,
                            help="bp after the first complete codon (default 60)")  # fmt: skip


def _annotation_exons(args: argparse.Namespace):
    """The chosen transcripts' CDS exons of ``--gtf`` or ``--gff3`` (``dataset/annotation.py``)."""
    from perturbation_bench.dataset.annotation import read_cds_exons

    return read_cds_exons(args.gff3 or args.gtf, gff3=True if args.gff3 else None)


def _print_excluded(excluded) -> None:
    for reason, count in sorted(excluded.items()):
        print(f"excluded {count} ({reason})")


def _build(args: argparse.Namespace) -> int:
    if args.kind == "variants":
        return _build_variants(args)
    if args.kind == "mutations":
        return _build_mutations(args)
    if args.kind == "saturation":
        return _build_saturation(args)
    from perturbation_bench.dataset.build import BuildSettings, build_dataset
    from perturbation_bench.dataset.codons import load_codon_table
    from perturbation_bench.dataset.genome import Genome

    extra = (
        {"optimization_rate": args.optimization_rate}
        if args.kind == "syn"
        else {"motif": args.motif.upper(), "repeats": args.repeats, "offset": args.offset}
    )
    settings = BuildSettings(
        kind=args.kind,
        species=args.species,
        config=args.config or f"{args.kind}_{args.species}",
        annotation_source=args.annotation_source or Path(args.gtf or args.gff3).name,
        genome_assembly=args.assembly or Path(args.fasta).name,
        window=args.window,
        flank=args.flank,
        seed=args.seed,
        max_pairs=args.max_pairs,
        **extra,
    )
    _check_settings(settings, getattr(args, "allow_stop_or_frameshift", False))
    table = load_codon_table(args.species, args.codon_table) if args.kind == "syn" else None
    genome = Genome(args.fasta)
    path, written, excluded = build_dataset(
        genome,
        _annotation_exons(args),
        settings,
        table,
        Path(args.out),
    )
    print(f"wrote {written} pairs to {path}")
    _print_excluded(excluded)
    _announce_task(Path(args.out), settings.config)
    return 0


def _build_variants(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.genome import Genome
    from perturbation_bench.tasks.named import VARIANT_TEMPLATE
    from perturbation_bench.variants.build import build_variant_dataset

    if args.window < 2:
        raise OptionsError(f"--window must be at least 2 bp, got {args.window}")
    path, written, excluded, read = build_variant_dataset(
        args.variants, Genome(args.fasta), args.config, Path(args.out), args.window
    )
    print(f"read {read} variants; wrote {written} pairs to {path}")
    _print_excluded(excluded)
    _announce_task(Path(args.out), args.config, VARIANT_TEMPLATE)
    return 0


def _build_mutations(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.genome import Genome
    from perturbation_bench.variants import mutations

    def class_list(text, default):
        names = tuple(n.strip() for n in text.split(",") if n.strip()) if text else default
        unknown = sorted(set(names) - set(mutations.CLASSES))
        if unknown:
            raise OptionsError(f"unknown class(es) {', '.join(unknown)}; classes: "
                               f"{', '.join(mutations.CLASSES)}")  # fmt: skip
        return names

    classes = class_list(args.classes, mutations.CLASSES)
    positive = class_list(args.positive, mutations.POSITIVE)
    if args.per_class < 1 or args.per_gene < 1:
        raise OptionsError("--per-class and --per-gene must be at least 1")
    exons = _annotation_exons(args)
    chosen, summary = mutations.scan(Genome(args.fasta), exons, classes, args.per_class,
                                     args.per_gene, args.seed, positive)  # fmt: skip
    summary_path = mutations.write_table(chosen, summary, Path(args.out), positive)
    print(f"wrote {len(chosen)} variants to {args.out} (summary: {summary_path})")
    for consequence, count in summary["counts"].items():
        print(f"  {consequence}: {count} of {summary['candidates'][consequence]} candidates")
    for reason, count in summary["excluded"].items():
        print(f"  excluded {count} ({reason})")
    for note in summary["notes"]:
        print(f"  {note}")
    return 0


def _build_saturation(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.genome import Genome
    from perturbation_bench.variants import saturation

    regions = [saturation.parse_region(text) for text in args.region]
    regions += saturation.read_bed(args.bed) if args.bed else []
    if not regions:
        raise OptionsError("build saturation needs --region CHROM:START-END or --bed FILE")
    rows, summary = saturation.saturation_rows(Genome(args.fasta), regions)
    summary_path = saturation.write_saturation(rows, summary, args.out)
    print(f"wrote {len(rows)} variants of {len(regions)} region(s) to {args.out} "
          f"(summary: {summary_path}); {summary['left_out_non_acgt']} non-ACGT bases left out")  # fmt: skip
    return 0


def _announce_task(out: Path, config: str, template: str | None = None) -> None:
    """Write the built config's own task YAML (``tasks/named.py``) and say how to run it."""
    from perturbation_bench.tasks.named import TEMPLATE, write_task_yaml

    path = write_task_yaml(out, config, template or TEMPLATE)
    print(f"task {path.stem}: lm_eval --include_path {path.parent} --tasks {path.stem} ...")


def _check_settings(settings, allow_disruptive: bool = False) -> None:
    if not 0 < settings.optimization_rate <= 1:
        raise OptionsError(
            f"--optimization-rate must be in (0, 1], got {settings.optimization_rate}"
        )
    if settings.window < 1 or not 0 <= settings.flank < settings.window:
        raise OptionsError(
            f"need window > 0 and 0 <= flank < window, got {settings.window}, {settings.flank}"
        )
    if settings.kind == "motif":
        _check_motif(settings, allow_disruptive)


STOP_CODONS = ("TAA", "TAG", "TGA")
PUBLISHED_MOTIF = {"config": "motif_human", "motif": "CAG", "repeats": 10, "offset": 60}


def _check_motif(settings, allow_disruptive: bool) -> None:
    """The repeat must keep the reading frame and code for amino acids, unless the user asks."""
    repeat = settings.motif * settings.repeats
    if set(settings.motif) - set("ACGT") or not repeat or settings.offset % 3:
        raise OptionsError(
            "--motif must be A/C/G/T letters and --offset a multiple of 3 (the patch starts on "
            "a codon boundary)"
        )
    stops = sorted({repeat[i : i + 3] for i in range(0, len(repeat) - 2, 3)} & set(STOP_CODONS))
    if (stops or len(repeat) % 3) and not allow_disruptive:
        raise OptionsError(
            f"{settings.repeats} x {settings.motif} = {len(repeat)} bp "
            + (
                f"has the in-frame stop codon(s) {', '.join(stops)}"
                if stops
                else "shifts the reading frame (not a multiple of 3)"
            )
            + "; pass --allow-stop-or-frameshift if that is what you want to test"
        )
    published = {key: PUBLISHED_MOTIF[key] for key in ("motif", "repeats", "offset")}
    if (
        settings.config == PUBLISHED_MOTIF["config"]
        and {key: getattr(settings, key) for key in published} != published
    ):
        raise OptionsError(
            f"motif_human is the published config (CAG x 10, offset 60); name this dataset "
            f"after its own repeat with --config, e.g. motif_{settings.motif.lower()}_{settings.species}"
        )


def _validate(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.validate import report, validate

    checks, n_rows = validate(args.path, args.fasta)
    print(report(checks, n_rows))
    return 1 if any(check.broken for check in checks) else 0


def _report(args: argparse.Namespace) -> int:
    from perturbation_bench.report.analysis import make_report

    features = []
    if args.gtf or args.gff3:
        features = [(exon.chrom, exon.start, exon.end) for exon in _annotation_exons(args)]
    report = make_report(args.runs, args.out, by=args.by, seed=args.seed, n_boot=args.bootstrap,
                         features=features, allow_different_data=args.allow_different_data)  # fmt: skip
    for row in report["summary"]:
        low, high = row["bootstrap_95"]
        print(
            f"{row['model']} {row['task']}: pairwise_acc {row['pairwise_acc']:.4f} "
            f"[{low:.4f}, {high:.4f}] (n={row['n']})"
        )
    for note in report["notes"]:
        print(f"note: {note}")
    print(f"report written to {Path(args.out) / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

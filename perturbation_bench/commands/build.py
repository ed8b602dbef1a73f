"""``perturbation-bench build KIND``: datasets from a genome and an annotation or a variant file.

- ``syn``, ``motif``: the benchmark's pairs (``dataset/build.py``; settings and their rules in
  ``dataset/settings.py``);
- ``variants``: reference/alternate windows of a variant file (``variants/build.py``);
- ``mutations``: a variant table of mutations by consequence class (``variants/mutations.py``);
- ``saturation``: every base of regions to each other base (``variants/saturation.py``);
- ``controls``: elements against shuffles of themselves (``controls/build.py``);
- ``footprints``: motifs inserted into backgrounds against permuted inserts
  (``controls/footprints.py``).

Each kind's options are declared beside its builder, in a module that imports nothing heavy
(``KINDS``), so the parser is built without reading pyarrow or a model; the calls here read
the arguments and print what the builders return. ``syn``, ``motif``, ``variants`` and
``controls``, ``footprints`` also write the built config's own task YAML beside the data
(``tasks/task_yaml.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.controls import elements, footprints
from perturbation_bench.dataset import settings as pair_settings
from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.variants import mutations, saturation, windows
from perturbation_bench.wording import counted, tally

KINDS = {
    "syn": (pair_settings.add_arguments, "synonymous recoding to the most frequent codons"),
    "motif": (pair_settings.add_arguments, "an in-frame repeat (default CAG x 10)"),
    "variants": (windows.add_arguments, "reference/alternate windows of a variant file"),
    "mutations": (mutations.add_arguments, "a variant table of mutations by consequence class"),
    "saturation": (saturation.add_arguments, "every base of regions to each other base"),
    "controls": (elements.add_arguments, "elements against shuffles of themselves"),
    "footprints": (footprints.add_arguments, "motifs in backgrounds against permuted inserts"),
}
"""Kind -> the function that adds its options (beside its builder) and its help."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``build`` subcommand's kinds; each kind's options are its builder's (``KINDS``)."""
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for kind, (add_kind_arguments, summary) in KINDS.items():
        add_kind_arguments(kinds.add_parser(kind, help=summary))


def _some(names: list[str], shown: int = 5) -> str:
    """``a, b, c`` (and ``(+N more)``) for a message."""
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _print_excluded(excluded) -> None:
    for reason, count in sorted(excluded.items()):
        print(f"excluded {count} ({reason})")


def run(args: argparse.Namespace) -> int:
    """Build the chosen kind; print what was written and excluded; return the exit status."""
    builders = {
        "syn": _build_pairs,
        "motif": _build_pairs,
        "variants": _build_variants,
        "mutations": _build_mutations,
        "saturation": _build_saturation,
        "controls": _build_controls,
        "footprints": _build_footprints,
    }
    return builders[args.kind](args)


def _build_pairs(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.annotation import exons_of
    from perturbation_bench.dataset.build import build_dataset
    from perturbation_bench.dataset.codons import load_codon_table
    from perturbation_bench.dataset.genome import Genome
    from perturbation_bench.dataset.settings import BuildSettings, check_settings

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
    _print_excluded(excluded)
    _announce_task(Path(args.out), settings.config, args.kind)
    return 0


def _build_variants(args: argparse.Namespace) -> int:
    from perturbation_bench.pairs.layout import EXCLUDED_NAME
    from perturbation_bench.variants import build

    if args.window < 2:
        raise OptionsError(f"--window must be at least 2 bp, got {args.window}")
    path, written, excluded, read = _variant_build(args, build)
    print(f"read {counted(read, 'variant')}; wrote {counted(written, 'pair')} to {path}")
    _print_excluded(excluded)
    if excluded:
        print(f"excluded variants, each with its reason: {path.parent / EXCLUDED_NAME}")
    _announce_task(Path(args.out), args.config, args.kind)
    return 0


def _variant_build(args: argparse.Namespace, build):
    """The build of ``--from``'s format, its options checked before any file is read."""
    from perturbation_bench.dataset.genome import Genome

    for option, source_format, given in (
        ("--hgvs-column", "mavedb", args.hgvs_column != "hgvs_nt"),
        ("--chrom", "mavedb", args.chrom is not None),
        ("--nabench-metadata", "nabench", args.nabench_metadata is not None),
    ):
        if given and source_format != args.source_format:
            raise OptionsError(f"{option} goes with --from {source_format}")
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


def _build_mutations(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.annotation import exons_of
    from perturbation_bench.dataset.genome import Genome

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
            f"{_some(sorted({exon.chrom for exon in exons}))}, the FASTA's {_some(genome.names)}"
        )
    summary_path = mutations.write_table(chosen, summary, Path(args.out), positive)
    print(f"wrote {counted(len(chosen), 'variant')} to {args.out} (summary: {summary_path})")
    for consequence, count in summary["counts"].items():
        print(f"  {consequence}: {count} of {summary['candidates'][consequence]} candidates")
    for reason, count in summary["excluded"].items():
        print(f"  excluded {count} ({reason})")
    for note in summary["notes"]:
        print(f"  {note}")
    return 0


def _build_saturation(args: argparse.Namespace) -> int:
    from perturbation_bench.dataset.genome import Genome
    from perturbation_bench.variants.bed import read_bed

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
    return 0


def _build_controls(args: argparse.Namespace) -> int:
    from perturbation_bench.controls.build import build_controls
    from perturbation_bench.controls.elements import annotation_elements, bed_elements
    from perturbation_bench.dataset.genome import Genome

    if args.window < 4:
        raise OptionsError(f"--window must be at least 4 bp, got {args.window}")
    if args.promoter_bp < 1:
        raise OptionsError(f"--promoter-bp must be at least 1 bp, got {args.promoter_bp}")
    if args.bed:
        if args.feature:
            raise OptionsError(
                "--feature picks features of an annotation (--gtf/--gff3), not of a BED file"
            )
        elements = bed_elements(args.bed)
    else:
        from perturbation_bench.dataset.annotation import exons_of, is_gff3, read_exon_spans

        if not args.feature:
            raise OptionsError(
                "--gtf/--gff3 needs --feature (cds, exon, intron, utr5, utr3, promoter)"
            )
        annotation = args.gff3 or args.gtf
        cds = exons_of(args.gtf, args.gff3)
        spans = (
            {}
            if args.feature == "cds"
            else read_exon_spans(
                annotation, bool(args.gff3) or is_gff3(annotation), {e.transcript_id for e in cds}
            )
        )
        elements = annotation_elements(annotation, cds, spans, args.feature, args.promoter_bp)
    path, report = build_controls(
        Genome(args.fasta),
        elements,
        args.shuffle,
        args.window,
        args.seed,
        args.strands,
        args.config,
        Path(args.out),
    )
    written = report["written_rows"]
    print(f"read {counted(report['read'], 'element')}; wrote {counted(written, 'pair')} to {path}")
    _print_excluded(report["excluded"])
    if report["cut_at_chromosome_ends"]:
        cut = counted(report["cut_at_chromosome_ends"], "element")
        print(f"cut {cut} at their chromosome's ends")
    if report["no_unshuffled_flank"]:
        print(
            f"{report['no_unshuffled_flank']} of {counted(written, 'pair')} have no unshuffled "
            f"flank: the element fills the whole {args.window} bp window, so only its own bases "
            "are compared (a longer --window keeps flanks)"
        )
    _announce_task(Path(args.out), args.config, args.kind)
    return 0


def _build_footprints(args: argparse.Namespace) -> int:
    from perturbation_bench.controls.backgrounds import read_backgrounds
    from perturbation_bench.controls.motifs import read_motifs
    from perturbation_bench.tasks.task_yaml import check_config_name

    check_config_name(args.config)
    copies = footprints.doses(args.copies, "--copies", 1)
    spacings = footprints.doses(args.spacing, "--spacing", 0)
    if args.fasta and not args.bed:
        raise OptionsError("--fasta goes with --bed (a FASTA of backgrounds is --backgrounds)")
    if args.max_backgrounds is not None and args.max_backgrounds < 1:
        raise OptionsError(f"--max-backgrounds must be at least 1, got {args.max_backgrounds}")
    motifs = read_motifs(args.motifs)
    backgrounds = read_backgrounds(args.backgrounds, args.bed, args.fasta)
    path, report = footprints.build_footprints(
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
    _print_excluded(report["excluded"])
    _announce_task(Path(args.out), args.config, args.kind)
    return 0


def _announce_task(out: Path, config: str, build: str) -> None:
    """Write the built config's own task YAML on its kind's template (``tasks/task_yaml.py``,
    ``pairs/kinds.py``) and say how to run it."""
    from perturbation_bench.pairs.kinds import BUILT_BY
    from perturbation_bench.tasks.task_yaml import write_task_yaml

    path = write_task_yaml(out, config, BUILT_BY[build])
    print(f"task {path.stem}: lm_eval --include_path {path.parent} --tasks {path.stem} ...")

"""``perturbation-bench build controls``: elements against shuffles of themselves
(``controls/build.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from perturbation_bench.errors import OptionsError
from perturbation_bench.wording import counted, say_excluded


def run(args: argparse.Namespace) -> str | None:
    """Build the control pairs; print what was written and excluded; return the config whose task YAML to write."""
    from perturbation_bench.controls.build import build_controls
    from perturbation_bench.formats.fasta import Genome

    if args.window < 4:
        raise OptionsError(f"--window must be at least 4 bp, got {args.window}")
    if args.promoter_bp < 1:
        raise OptionsError(f"--promoter-bp must be at least 1 bp, got {args.promoter_bp}")
    elements = _elements(args)
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
    say_excluded(report["excluded"])
    if report["cut_at_chromosome_ends"]:
        cut = counted(report["cut_at_chromosome_ends"], "element")
        print(f"cut {cut} at their chromosome's ends")
    if report["no_unshuffled_flank"]:
        print(
            f"{report['no_unshuffled_flank']} of {counted(written, 'pair')} have no unshuffled "
            f"flank: the element fills the whole {args.window} bp window, so only its own bases "
            "are compared (a longer --window keeps flanks)"
        )
    return args.config


def _elements(args: argparse.Namespace) -> list:
    """The elements of ``--bed``, or the ``--feature`` of each chosen transcript of ``--gtf`` or
    ``--gff3``; ``--feature`` refused with a BED file and required with an annotation."""
    from perturbation_bench.controls.elements import annotation_elements, bed_elements

    if args.bed:
        if args.feature:
            raise OptionsError(
                "--feature picks features of an annotation (--gtf/--gff3), not of a BED file"
            )
        return bed_elements(args.bed)
    from perturbation_bench.formats.annotation import exons_of, is_gff3, read_exon_spans

    if not args.feature:
        raise OptionsError("--gtf/--gff3 needs --feature (cds, exon, intron, utr5, utr3, promoter)")
    annotation = args.gff3 or args.gtf
    cds = exons_of(args.gtf, args.gff3)
    spans = (
        {}
        if args.feature == "cds"
        else read_exon_spans(
            annotation, bool(args.gff3) or is_gff3(annotation), {e.transcript_id for e in cds}
        )
    )
    return annotation_elements(annotation, cds, spans, args.feature, args.promoter_bp)

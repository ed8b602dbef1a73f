"""The elements to control: regions of a BED file, or features of an annotation's transcripts.

An element is a genome interval (0-based, half-open) with a name and where it came from. From
a BED file: every region as it is (``track``/``browser``/``#`` lines skipped; its 4th column,
if any, names it). From a GTF or GFF3: the features of the transcript ``build syn`` chooses for
each gene (``formats/annotation.py``), by ``--feature``:

- ``cds``: its CDS exons;
- ``exon``: its exons (the annotation's ``exon`` records; without any for the transcript, its
  CDS exons stand for them, so it has no UTRs);
- ``intron``: the gaps between its consecutive exons;
- ``utr5``, ``utr3``: the parts of its exons before the CDS and after it, on its strand;
- ``promoter``: the ``promoter_bp`` bases upstream of its first exon, on its strand (it may run
  past either end of its chromosome, a negative start included; ``build controls`` cuts it there
  and counts the cut).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

from perturbation_bench.errors import DataValidationError

FEATURES = ("cds", "exon", "intron", "utr5", "utr3", "promoter")
DEFAULT_PROMOTER_BP = 1000


@dataclass(frozen=True)
class Element:
    """One element: ``[start, end)`` on ``chrom``, its name, and where it came from."""

    chrom: str
    start: int
    end: int
    name: str
    source: str  # "FILE line N" or "FILE (TRANSCRIPT)", for messages


def bed_elements(path) -> list[Element]:
    """The regions of a BED file (module docstring), each checked: ``0 <= START < END``."""
    from perturbation_bench.formats.bed import read_bed

    return [
        Element(chrom, start, end, name, f"{path} line {number}")
        for number, (chrom, start, end, name) in read_bed(path, numbered=True)
    ]


def annotation_elements(
    annotation: str,
    cds_exons,
    exon_spans: dict,
    feature: str,
    promoter_bp: int = DEFAULT_PROMOTER_BP,
) -> list[Element]:
    """The ``feature`` elements of each chosen transcript (module docstring), in genome order.

    Args:
        cds_exons: the chosen transcripts' CDS exons (``annotation.exons_of``).
        exon_spans: ``transcript_id -> [(start, end), ...]`` of their exon records.

    Raises:
        DataValidationError: no transcript has such a feature, naming the file and the kind.
    """
    by_transcript = defaultdict(list)
    for exon in cds_exons:
        by_transcript[exon.transcript_id].append(exon)
    elements = []
    for transcript, cds in sorted(by_transcript.items()):
        where = f"{annotation} ({transcript})"
        exons = exon_spans.get(transcript)
        elements += _transcript_elements(where, cds, exons, feature, promoter_bp)
    if not elements:
        raise DataValidationError(
            f"{annotation}: no {feature} feature in its {len(by_transcript)} chosen transcripts"
            + (
                " (it has no exon records beyond the CDS, so no UTRs)"
                if feature.startswith("utr")
                else ""
            )
        )
    return sorted(elements, key=lambda e: (e.chrom, e.start, e.end, e.name))


def _transcript_elements(where: str, cds, exons, feature, promoter_bp) -> list[Element]:
    """One transcript's non-empty ``feature`` elements from its CDS exons and its exon spans
    (its CDS where it has none), named ``<gene>:<feature><k>`` with ``k`` counted in transcript
    order."""
    chrom, strand, gene = cds[0].chrom, cds[0].strand, cds[0].gene_name or cds[0].gene_id
    coding = [(e.start, e.end) for e in cds]
    spans = _feature_spans(feature, sorted(coding), sorted(exons or coding), strand, promoter_bp)
    ordered = spans if strand == "+" else spans[::-1]
    return [
        Element(chrom, start, end, f"{gene}:{feature}{k}", where)
        for k, (start, end) in enumerate(ordered, start=1)
        if end > start
    ]


def _feature_spans(feature, coding, exons, strand, promoter_bp) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` in genome order of one transcript's ``feature``."""
    if feature == "cds":
        return coding
    if feature == "exon":
        return exons
    if feature == "intron":
        return [(a_end, b_start) for (_, a_end), (b_start, _) in pairwise(exons)]
    if feature == "promoter":
        return (
            [(exons[0][0] - promoter_bp, exons[0][0])]
            if strand == "+"
            else [(exons[-1][1], exons[-1][1] + promoter_bp)]
        )
    return _utr_spans(feature, coding, exons, strand)


def _utr_spans(feature, coding, exons, strand) -> list[tuple[int, int]]:
    """``utr5`` or ``utr3``: the exon parts before the first coding base or after the last, in
    genome order, upstream or downstream by the strand."""
    first, last = coding[0][0], coding[-1][1]
    before = [(start, min(end, first)) for start, end in exons if start < first]
    after = [(max(start, last), end) for start, end in exons if end > last]
    upstream, downstream = (before, after) if strand == "+" else (after, before)
    return upstream if feature == "utr5" else downstream


def add_arguments(parser) -> None:
    """The options of ``build controls``: the elements, the shuffle, the window, the strands."""
    from perturbation_bench.controls.shuffles import SHUFFLES, STRANDS

    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--bed", help="elements: the regions of a BED file (0-based, half-open)")
    source.add_argument("--gtf", help="elements: --feature of each gene's chosen transcript")
    source.add_argument("--gff3", help="as --gtf, from a GFF3")
    parser.add_argument("--feature", choices=FEATURES, help="with --gtf/--gff3: which feature")
    parser.add_argument(
        "--promoter-bp",
        type=int,
        default=DEFAULT_PROMOTER_BP,
        help="--feature promoter: bp upstream of the transcript (default %(default)s)",
    )
    parser.add_argument(
        "--shuffle",
        required=True,
        choices=SHUFFLES,
        metavar="{mononucleotide,dinucleotide,kmer:1..6}",
        help="what the shuffle keeps: base counts, dinucleotide counts, or every K-mer count",
    )
    parser.add_argument("--window", type=int, default=350, help="window bp (default %(default)s)")
    parser.add_argument(
        "--strands",
        choices=STRANDS,
        default="forward",
        help="forward (default), both (a reverse-complemented row too), random",
    )
    parser.add_argument("--config", required=True, help="config name, e.g. controls_ccre_dinuc")
    parser.add_argument("--out", required=True, help="output folder (hub layout)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")

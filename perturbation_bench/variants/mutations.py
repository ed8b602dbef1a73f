"""``perturbation-bench build mutations``: a variant table of in-silico mutations by consequence
class, labelled by the genetic code itself, from any genome and annotation.

Transcripts: the same choice and reading of the annotation as ``build syn`` (``Ensembl_canonical``,
else the longest CDS; GTF or GFF3: ``formats/annotation.py``). A transcript's CDS is its CDS
exons in transcript order (reverse-complemented on the minus strand). Classes are decided by
translating codons before and after the change with the standard genetic code (NCBI table 1,
from Biopython; stops ``TAA``, ``TAG``, ``TGA``), with codon ``i`` the CDS bases ``3i .. 3i+2``:

- ``start_lost``: a single-base change in codon 0, which must be ``ATG``;
- ``stop_lost``: a single-base change in the last codon, which must be a stop, that makes it a
  sense codon;
- in every other codon (which must be a sense codon): ``stop_gained`` (the new codon is a
  stop), ``synonymous_variant`` (same amino acid) or ``missense_variant`` (another one);
- ``splice_donor_variant`` / ``splice_acceptor_variant``: a single-base change at intron
  positions +1/+2 after a CDS exon that is not the last, or -2/-1 before one that is not the
  first, only where the intron reads ``GT...AG`` on the transcript's strand;
- ``frameshift_variant``: a 1-base deletion of a CDS base outside the first and last codons,
  written as a VCF writes it: ``pos`` = the (1-based) position of the base before it on the
  forward strand, ``ref`` = that base + the deleted base, ``alt`` = that base;
- ``intergenic_variant``: a single-base change at least :data:`~perturbation_bench.variants.consequences.INTERGENIC_DISTANCE` bp from
  every chosen transcript's CDS span, excluded transcripts included (the annotation is read for
  its CDS records).

Alleles are on the genome's forward strand, as in a VCF. Candidates are drawn with seeded
generators: per transcript and class at most ``per_gene``, then per class at most ``per_class``
over all transcripts; a genome position is used once at most (classes are filled in the order
above). ``label`` is true for the ``positive`` classes, false for ``synonymous_variant``, null
for the others. Excluded and counted: transcripts whose CDS is not a whole number of codons,
whose phases do not continue the frame, that hold an internal stop; codons or sites holding a
base other than A/C/G/T; introns without ``GT...AG``; transcripts on chromosomes the FASTA lacks. Same inputs and seed, same bytes.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from pathlib import Path

from perturbation_bench.variants.consequences import (
    INTERGENIC_DISTANCE,
    Transcript,
    coding_candidates,
    frameshift_candidates,
    intergenic_candidates,
    splice_candidates,
    standard_code,
)
from perturbation_bench.variants.tables import write_variant_table

CLASSES = (
    "stop_gained",
    "start_lost",
    "stop_lost",
    "splice_donor_variant",
    "splice_acceptor_variant",
    "frameshift_variant",
    "missense_variant",
    "synonymous_variant",
    "intergenic_variant",
)
POSITIVE = (
    "stop_gained",
    "start_lost",
    "splice_donor_variant",
    "splice_acceptor_variant",
    "frameshift_variant",
)
NEGATIVE = ("synonymous_variant",)


def scan(
    genome,
    exons,
    classes=CLASSES,
    per_class: int = 500,
    per_gene: int = 3,
    seed: int = 0,
    positive=POSITIVE,
):
    """The sampled mutations (module docstring) and the summary (counts, candidates, exclusions)."""
    code = standard_code()
    excluded, available, pools = Counter(), Counter(), defaultdict(list)
    annotated, transcripts = _transcripts(genome, exons, code, excluded)
    for transcript_id, transcript in transcripts:
        rng = random.Random(f"{seed}:{transcript_id}")
        for consequence, candidates in _candidates(transcript, genome, code, excluded).items():
            available[consequence] += len(candidates)
            pools[consequence] += rng.sample(candidates, min(per_gene, len(candidates)))
    wanted = [c for c in CLASSES if c in classes]
    notes = []
    if "intergenic_variant" in classes:
        pools["intergenic_variant"], available["intergenic_variant"] = intergenic_candidates(
            genome, annotated, random.Random(f"{seed}:intergenic"), per_class
        )
        if not pools["intergenic_variant"]:
            notes.append(
                f"intergenic_variant skipped: no base lies {INTERGENIC_DISTANCE} bp from every CDS"
            )
    chosen = _draw(pools, wanted, per_class, seed)
    counts = Counter(m.consequence for m in chosen)
    summary = {
        "counts": {c: counts[c] for c in wanted},
        "candidates": {c: available[c] for c in wanted},
        "transcripts_scanned": len(transcripts),
        "excluded": dict(sorted(excluded.items())),
        "notes": notes,
        "settings": {
            "per_class": per_class,
            "per_gene": per_gene,
            "seed": seed,
            "positive": list(positive),
        },
    }
    return chosen, summary


def _transcripts(genome, exons, code, excluded: Counter) -> tuple[list, list]:
    """The transcripts on the FASTA's chromosomes, and ``(transcript_id, transcript)`` of those
    whose CDS reads (module docstring), by transcript id; each one excluded is counted in
    ``excluded`` under its reason."""
    by_transcript = defaultdict(list)
    for exon in exons:
        by_transcript[exon.transcript_id].append(exon)
    annotated, readable = [], []
    for transcript_id in sorted(by_transcript):
        if by_transcript[transcript_id][0].chrom not in genome:
            excluded["chromosome_not_in_fasta"] += 1
            continue
        transcript = Transcript(by_transcript[transcript_id], genome)
        annotated.append(transcript)  # excluded or not, its span is no intergenic sequence
        problem = transcript.problem(code)
        if problem:
            excluded[problem] += 1
        else:
            readable.append((transcript_id, transcript))
    return annotated, readable


def _candidates(transcript, genome, code, excluded: Counter) -> dict[str, list]:
    """``consequence -> mutations`` of one transcript's coding, splice and frameshift
    candidates; the sites excluded are counted in ``excluded``."""
    found = defaultdict(list)
    for mutation in (
        *coding_candidates(transcript, code, excluded),
        *splice_candidates(transcript, genome, excluded),
        *frameshift_candidates(transcript, genome),
    ):
        found[mutation.consequence].append(mutation)
    return found


def _draw(pools: dict, classes: list[str], per_class: int, seed: int) -> list:
    """At most ``per_class`` of each class's pool, drawn in a seeded order, classes in order,
    each genome position used once at most; each class's draw sorted by position."""
    chosen, used = [], set()
    for consequence in classes:
        pool = list(pools[consequence])
        random.Random(f"{seed}:{consequence}").shuffle(pool)
        picked = []
        for mutation in pool:
            key = (mutation.chrom, mutation.pos)
            if key in used or len(picked) == per_class:
                continue
            used.add(key)
            picked.append(mutation)
        chosen += sorted(picked, key=lambda m: (m.chrom, m.pos, m.alt))
    return chosen


def write_table(mutations, summary: dict, out: Path, positive=POSITIVE) -> Path:
    """Write the variant table (parquet) and ``<out>.summary.json`` beside it; return the summary path."""
    import pyarrow as pa

    def label(consequence):
        return True if consequence in positive else False if consequence in NEGATIVE else None

    columns = [
        ("chrom", pa.string()),
        ("pos", pa.int64()),
        ("ref", pa.string()),
        ("alt", pa.string()),
        ("consequence", pa.string()),
        ("gene_id", pa.string()),
        ("transcript_id", pa.string()),
        ("label", pa.bool_()),
    ]
    rows = [
        {
            "chrom": m.chrom,
            "pos": m.pos,
            "ref": m.ref,
            "alt": m.alt,
            "consequence": m.consequence,
            "gene_id": m.gene_id,
            "transcript_id": m.transcript_id,
            "label": label(m.consequence),
        }
        for m in mutations
    ]
    return write_variant_table(rows, columns, summary, out)


def add_arguments(parser) -> None:
    """The options of ``build mutations``."""
    parser.add_argument("--fasta", required=True, help="genome FASTA (plain or bgzip)")
    annotation = parser.add_mutually_exclusive_group(required=True)
    annotation.add_argument("--gtf", help="annotation GTF (a .gff3/.gff name is read as GFF3)")
    annotation.add_argument("--gff3", help="annotation GFF3")
    parser.add_argument("--out", required=True, help="the variant table to write (.parquet)")
    parser.add_argument("--classes", help="comma-separated classes (default: all)")
    parser.add_argument(
        "--positive",
        help="classes labelled true (default: stop_gained,"
        "start_lost,splice_donor_variant,splice_acceptor_variant,frameshift_variant)",
    )
    parser.add_argument(
        "--per-class", type=int, default=500, help="variants per class (default %(default)s)"
    )
    parser.add_argument(
        "--per-gene", type=int, default=3, help="per gene and class (default %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")

"""The candidate mutations of each consequence class (``mutations.py`` states the rules): a
transcript's CDS read on its strand (:class:`Transcript`), and the coding, splice-site,
frameshift and intergenic candidates it offers, each a :class:`Mutation` with its alleles on the
genome's forward strand; sites and codons that break a rule are counted, not drawn.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import pairwise

from perturbation_bench.dna import BASES, reverse_complement

INTERGENIC_DISTANCE = 5_000
"""The fewest bp between an intergenic candidate and every chosen transcript's CDS span."""


def standard_code() -> dict[str, str]:
    """Codon -> amino acid (``*`` for stops) of NCBI translation table 1."""
    from Bio.Data import CodonTable

    table = CodonTable.unambiguous_dna_by_id[1]
    return {**table.forward_table, **{codon: "*" for codon in table.stop_codons}}


@dataclass(frozen=True)
class Mutation:
    """One candidate: forward-strand alleles at 1-based ``pos``, and what it is."""

    chrom: str
    pos: int
    ref: str
    alt: str
    consequence: str
    gene_id: str
    transcript_id: str


class Transcript:
    """A chosen transcript's CDS and where each of its bases lies in the genome."""

    def __init__(self, exons, genome) -> None:
        self.exons = sorted(exons, key=lambda e: e.exon_rank)
        first = self.exons[0]
        self.chrom, self.strand = first.chrom, first.strand
        self.transcript_id, self.gene_id = first.transcript_id, first.gene_id
        self.positions: list[int] = []  # genome position of every CDS base, transcript order
        pieces = []
        for exon in self.exons:
            bases = genome.fetch(exon.chrom, exon.start, exon.end, exon.strand)
            pieces.append(bases)
            span = range(exon.start, exon.end)
            self.positions += list(span) if self.strand == "+" else list(reversed(span))
        self.cds = "".join(pieces)

    def problem(self, code: dict[str, str]) -> str | None:
        """Why this transcript cannot be scanned (module docstring), or None."""
        if len(self.cds) % 3 or len(self.cds) < 6:
            return "cds_not_whole_codons"
        if any(exon.phase != exon.expected_phase for exon in self.exons):
            return "phase_inconsistent"
        codons = [self.cds[i : i + 3] for i in range(3, len(self.cds) - 3, 3)]
        if any(code.get(codon) == "*" for codon in codons):
            return "internal_stop"
        return None

    def forward(self, base: str) -> str:
        """A transcript-strand base on the genome's forward strand."""
        return base if self.strand == "+" else reverse_complement(base)

    def mutation(self, position: int, ref: str, alt: str, consequence: str) -> Mutation:
        return Mutation(
            self.chrom,
            position + 1,
            self.forward(ref),
            self.forward(alt),
            consequence,
            self.gene_id,
            self.transcript_id,
        )


def coding_candidates(transcript: Transcript, code: dict, excluded: Counter):
    """Every single-base coding candidate of ``transcript`` (start, stop, internal codons)."""
    cds, last = transcript.cds, len(transcript.cds) // 3 - 1
    for index in range(last + 1):
        codon = cds[3 * index : 3 * index + 3]
        if set(codon) - set(BASES):
            excluded["codon_with_non_acgt_base"] += 1
            continue
        if index == 0 and codon != "ATG":
            excluded["first_codon_not_atg"] += 1
            continue
        if index == last and code[codon] != "*":
            excluded["last_codon_not_stop"] += 1
            continue
        for offset in range(3):
            for alt in BASES.replace(codon[offset], ""):
                changed = codon[:offset] + alt + codon[offset + 1 :]
                consequence = _codon_class(index, last, code[codon], code[changed])
                if consequence:
                    yield transcript.mutation(
                        transcript.positions[3 * index + offset], codon[offset], alt, consequence
                    )


def _codon_class(index: int, last: int, before: str, after: str) -> str | None:
    if index == 0:
        return "start_lost"
    if index == last:
        return "stop_lost" if after != "*" else None
    if after == "*":
        return "stop_gained"
    return "synonymous_variant" if after == before else "missense_variant"


def splice_candidates(transcript: Transcript, genome, excluded: Counter):
    """Changes at +1/+2 and -2/-1 of each intron between CDS exons that reads GT...AG."""
    for upstream, downstream in pairwise(transcript.exons):
        if transcript.strand == "+":
            donor, acceptor = (
                [upstream.end, upstream.end + 1],
                [downstream.start - 2, downstream.start - 1],
            )
        else:
            donor, acceptor = (
                [upstream.start - 1, upstream.start - 2],
                [downstream.end + 1, downstream.end],
            )
        sites = donor + acceptor  # transcript order: +1, +2, -2, -1
        bases = "".join(_transcript_base(transcript, genome, p) for p in sites)
        if bases != "GTAG":
            excluded["intron_not_gt_ag"] += 1
            continue
        for position, base, consequence in zip(
            sites,
            bases,
            ["splice_donor_variant"] * 2 + ["splice_acceptor_variant"] * 2,
            strict=True,
        ):
            for alt in BASES.replace(base, ""):
                yield transcript.mutation(position, base, alt, consequence)


def _transcript_base(transcript: Transcript, genome, position: int) -> str:
    base = genome.fetch(transcript.chrom, position, position + 1)
    return base if transcript.strand == "+" else reverse_complement(base)


def frameshift_candidates(transcript: Transcript, genome):
    """1-base deletions of CDS bases outside the first and last codons, VCF-style alleles."""
    for index in range(3, len(transcript.cds) - 3):
        deleted = transcript.positions[index]
        before, base = genome.fetch(transcript.chrom, deleted - 1, deleted + 1)
        if not {before, base} <= set(BASES):
            continue
        yield Mutation(
            transcript.chrom,
            deleted,
            before + base,
            before,
            "frameshift_variant",
            transcript.gene_id,
            transcript.transcript_id,
        )


def _intergenic_regions(genome, transcripts: list[Transcript]) -> list[tuple[str, int, int]]:
    """``(chrom, low, high)``, 0-based half-open, of every stretch whose bases lie at least
    INTERGENIC_DISTANCE from every transcript's CDS span (up to the chromosome's ends), on the
    chromosomes that hold a transcript, in name and position order."""
    spans = defaultdict(list)
    for t in transcripts:
        spans[t.chrom].append((min(t.positions), max(t.positions) + 1))
    regions = []
    for chrom in sorted(spans):
        edges = sorted(spans[chrom])
        cursor = 0
        for start, end in edges + [(genome.length(chrom) + INTERGENIC_DISTANCE,) * 2]:
            low, high = cursor + INTERGENIC_DISTANCE * (cursor > 0), start - INTERGENIC_DISTANCE
            if high > low:
                regions.append((chrom, low, high))
            cursor = max(cursor, end)
    return regions


def intergenic_candidates(genome, transcripts: list[Transcript], rng: random.Random, wanted: int):
    """Up to ``wanted`` seeded single-base changes at least INTERGENIC_DISTANCE from every CDS
    span, and how many positions qualified."""
    regions = _intergenic_regions(genome, transcripts)
    total = sum(high - low for _, low, high in regions)
    out = []
    for offset in sorted(rng.sample(range(total), min(total, wanted * 2))) if total else []:
        for chrom, low, high in regions:
            if offset < high - low:
                base = genome.fetch(chrom, low + offset, low + offset + 1)
                if base in BASES:
                    alt = rng.choice(BASES.replace(base, ""))
                    out.append(
                        Mutation(chrom, low + offset + 1, base, alt, "intergenic_variant", "", "")
                    )
                break
            offset -= high - low
    return out[:wanted], total

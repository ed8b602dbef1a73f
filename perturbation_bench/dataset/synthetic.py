"""A synthetic genome and annotation: the source of the shipped demo dataset and of build tests.

Random bases, with genes made of codons drawn from a species' codon-usage table, so that
building a dataset from it exercises every path of ``perturbation-bench build`` offline. Its
pairs show the pipeline working; they say nothing about any model's biology.
"""

from __future__ import annotations

import random
from pathlib import Path

from perturbation_bench.dna import random_dna, reverse_complement


def synthetic_genome(
    folder: Path,
    table,
    n_genes: int = 12,
    chrom_length: int = 120_000,
    seed: int = 0,
) -> tuple[Path, Path]:
    """Write ``genome.fa`` and ``annotation.gtf`` to ``folder``: random genes on two chromosomes.

    Intergenic and intronic bases are uniform; coding bases are codons drawn from ``table``'s
    usage (a start codon first, no stop inside, a stop after the last exon), so recoding changes
    realistic shares of codons. Genes alternate strands and have 2-4 CDS exons whose lengths are
    not multiples of 3, so phases 0, 1 and 2 all occur. Edge cases, always present: the first
    gene of ``chr1`` starts 50 bp from the chromosome start and the last gene of ``chr2``
    (minus strand) ends 50 bp before the chromosome end (both windows clamp); one gene has a run
    of N in its CDS; one gene's CDS is a single 45 bp exon (too short for a 60 bp offset motif);
    one gene has a second, longer transcript that is not tagged Ensembl_canonical.

    Returns:
        ``(fasta_path, gtf_path)``.
    """
    rng = random.Random(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    chroms = {
        "chr1": list(random_dna(rng, chrom_length)),
        "chr2": list(random_dna(rng, chrom_length)),
    }
    gtf_lines = []
    for g in range(n_genes):
        chrom = "chr1" if g < n_genes // 2 else "chr2"
        strand = "-" if g % 2 or g == n_genes - 1 else "+"
        exon_lengths, transcript = _coding_sequence(rng, table, g)
        introns = [rng.randint(200, 800) for _ in exon_lengths[1:]]
        span = sum(exon_lengths) + sum(introns) + 3
        gene_start = _gene_start(g, n_genes, chrom_length, span)
        oriented = _lay_out(transcript, exon_lengths, introns, rng)
        genomic = oriented if strand == "+" else reverse_complement(oriented)
        chroms[chrom][gene_start : gene_start + len(genomic)] = list(genomic)
        gene = (chrom, strand, gene_start, len(genomic), exon_lengths, introns, g)
        gtf_lines += _gtf_records(*gene)
        if g == 1:  # a longer, non-canonical isoform: the canonical tag must win
            gtf_lines += _gtf_records(*gene, transcript=f"T{g}b", canonical=False, extend=9)
    fasta = _write_fasta(folder / "genome.fa", chroms)
    gtf = folder / "annotation.gtf"
    gtf.write_text("".join(gtf_lines))
    return fasta, gtf


def _write_fasta(path: Path, chroms: dict[str, list[str]]) -> Path:
    """``path``, written with one record per chromosome, 60 bases a line."""
    with path.open("w") as out:
        for name, bases in chroms.items():
            out.write(f">{name}\n")
            text = "".join(bases)
            out.writelines(text[i : i + 60] + "\n" for i in range(0, len(text), 60))
    return path


def _coding_sequence(rng: random.Random, table, g: int) -> tuple[list[int], str]:
    """Gene ``g``'s CDS exon lengths and its coding sequence with the stop codon: ``ATG``, then
    sense codons drawn by ``table``'s usage, cut to the exons' total, then a stop. Gene 3 has
    one 45 bp exon; gene 5's first exon is 150 bp, with 12 N at CDS bases 64-75."""
    sense = [aa for aa in table.usage if aa not in "*M"]
    exon_lengths = [45] if g == 3 else [rng.randint(70, 400) for _ in range(rng.randint(2, 4))]
    if g == 5:
        exon_lengths[0] = 150
    codons = [_draw_codon(rng, table, rng.choice(sense)) for _ in range(sum(exon_lengths) // 3)]
    cds = "".join(["ATG", *codons])[: sum(exon_lengths)]
    if g == 5:
        cds = cds[:63] + "N" * 12 + cds[75:]
    return exon_lengths, cds + _draw_codon(rng, table, "*")


def _gene_start(g: int, n_genes: int, chrom_length: int, span: int) -> int:
    """Where gene ``g`` (of ``span`` bp) starts, 0-based: 50 bp from ``chr1``'s start for the
    first gene, 50 bp before ``chr2``'s end for the last, else 2 kb into its slot (each
    chromosome is cut into ``n_genes // 2`` equal slots)."""
    per_chrom = n_genes // 2
    if g == 0:
        return 50
    if g == n_genes - 1:
        return chrom_length - 50 - span
    return g % per_chrom * (chrom_length // per_chrom) + 2_000


def _draw_codon(rng: random.Random, table, amino_acid: str) -> str:
    codons = table.usage[amino_acid]
    return rng.choices(list(codons), weights=list(codons.values()))[0]


def _lay_out(transcript: str, exon_lengths: list[int], introns: list[int], rng) -> str:
    """Transcript-oriented genomic sequence: exons separated by random introns (GT...AG)."""
    pieces, at = [], 0
    for k, length in enumerate(exon_lengths):
        last = k == len(exon_lengths) - 1
        pieces.append(transcript[at : at + length + (3 if last else 0)])
        at += length
        if not last:
            pieces.append("GT" + random_dna(rng, introns[k] - 4) + "AG")
    return "".join(pieces)


def _gtf_records(
    chrom,
    strand,
    start,
    length,
    exon_lengths,
    introns,
    g,
    transcript=None,
    canonical=True,
    extend=0,
) -> list[str]:
    """GTF lines (1-based, closed) for one transcript's CDS exons, listed 5' to 3'."""
    transcript = transcript or f"T{g}"
    tag = 'tag "basic"; tag "Ensembl_canonical";' if canonical else 'tag "basic";'
    attributes = f'gene_id "G{g}"; transcript_id "{transcript}"; gene_name "GENE{g}"; {tag}'
    lines, offset, cds_before = [], 0, 0
    for k, exon in enumerate(exon_lengths):
        exon_length = exon + (extend if k == len(exon_lengths) - 1 else 0)
        if strand == "+":
            first, last = start + offset + 1, start + offset + exon_length
        else:
            last = start + length - offset
            first = last - exon_length + 1
        phase = (3 - cds_before % 3) % 3
        lines.append(f"{chrom}\ttoy\tCDS\t{first}\t{last}\t.\t{strand}\t{phase}\t{attributes}\n")
        cds_before += exon_length
        offset += exon + (introns[k] if k < len(introns) else 0)
    return lines

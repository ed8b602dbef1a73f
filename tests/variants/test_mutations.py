"""Mutation scans by consequence class (``build mutations``): every row's class re-derived by a
second implementation, Biopython's translation of the transcript read here line by line from
the annotation (not with the package's reader), on a synthetic genome with spliced genes on both
strands and on real yeast."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from dna_fixtures import cds_records, read_fasta, rederive, reverse_complement
from perturbation_bench.cli import main

INTRON = 60


def genes_on_a_chromosome(seed: int, length: int, genes) -> tuple[str, list[str]]:
    """A random chromosome ``chrS`` holding ``genes`` and the GTF lines of their CDS exons.

    ``genes``: ``(gene, strand, at, exon lengths, intron length, stop annotated)``; each CDS is
    ATG, random sense codons and TAA, its introns GT...AG. Without ``stop annotated`` the last
    CDS record ends before the stop codon, as Ensembl GTFs write it (the genome still holds it)."""
    from perturbation_bench.variants.consequences import standard_code

    rng = random.Random(seed)
    sense = [c for c, aa in standard_code().items() if aa != "*" and c != "ATG"]
    chrom = [rng.choice("ACGT") for _ in range(length)]
    records = []
    for gene, strand, at, lengths, intron, stop_annotated in genes:
        coding = "ATG" + "".join(rng.choice(sense) for _ in range(sum(lengths) // 3 - 2)) + "TAA"
        pieces, exons, offset = [], [], 0
        for k, exon_length in enumerate(lengths):
            exons.append((len("".join(pieces)), exon_length, (3 - offset % 3) % 3))
            pieces.append(coding[offset : offset + exon_length])
            offset += exon_length
            if k < len(lengths) - 1:
                pieces.append("GT" + "".join(rng.choice("ACGT") for _ in range(intron - 4)) + "AG")
        gene_seq = "".join(pieces)
        placed = gene_seq if strand == "+" else reverse_complement(gene_seq)
        chrom[at : at + len(placed)] = list(placed)
        for k, (start_in_gene, exon_length, phase) in enumerate(exons):
            start = (
                at + start_in_gene
                if strand == "+"
                else at + len(gene_seq) - start_in_gene - exon_length
            )
            end = start + exon_length
            if k == len(exons) - 1 and not stop_annotated:  # the stop codon left out
                start, end = (start, end - 3) if strand == "+" else (start + 3, end)
            records.append(
                f"chrS\tt\tCDS\t{start + 1}\t{end}\t.\t{strand}\t{phase}\t"
                f'gene_id "{gene}"; transcript_id "{gene}.1";'
            )
    return "".join(chrom), records


def write_genome(folder, chrom: str, records: list[str]):
    (folder / "g.fa").write_text(">chrS\n" + chrom + "\n")
    (folder / "a.gtf").write_text("\n".join(records) + "\n")
    return folder / "g.fa", folder / "a.gtf"


@pytest.fixture(scope="module")
def spliced(tmp_path_factory):
    """One chromosome: G1 (+, 3 CDS exons of 101/110/89 bp, so phases 0, 1, 2), G2 (-, 2 exons),
    G3 (+, one exon); introns GT...AG; 10 kb of intergenic sequence at the end."""
    chrom, records = genes_on_a_chromosome(
        11,
        30_000,
        [
            ("G1", "+", 2000, [101, 110, 89], INTRON, True),
            ("G2", "-", 6000, [131, 109], INTRON, True),
            ("G3", "+", 9000, [150], INTRON, True),
        ],
    )
    return write_genome(tmp_path_factory.mktemp("spliced"), chrom, records)


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    """GA (+, two 300 bp CDS exons around a 17 kb intron) with GB (-, one exon, its stop codon
    not annotated, Ensembl style) inside that intron; 20 kb free at the end."""
    chrom, records = genes_on_a_chromosome(
        5,
        42_000,
        [("GA", "+", 2000, [300, 300], 17_000, True), ("GB", "-", 9000, [153], INTRON, False)],
    )
    return write_genome(tmp_path_factory.mktemp("nested"), chrom, records)


def scan(tmp_path, fasta, annotation, *extra) -> pd.DataFrame:
    out = tmp_path / "mutations.parquet"
    flag = "--gtf" if str(annotation).endswith(".gtf") else "--gff3"
    assert (
        main(
            [
                "build",
                "mutations",
                "--fasta",
                str(fasta),
                flag,
                str(annotation),
                "--out",
                str(out),
                *extra,
            ]
        )
        == 0
    )
    return pd.read_parquet(out)


def test_every_class_on_both_strands_matches_an_independent_derivation(spliced, tmp_path):
    fasta, gtf = spliced
    table = scan(tmp_path, fasta, gtf, "--per-class", "40", "--per-gene", "20")
    genome, transcripts = read_fasta(fasta), cds_records(gtf)
    counts = table["consequence"].value_counts().to_dict()
    assert set(counts) == {
        "stop_gained",
        "start_lost",
        "stop_lost",
        "splice_donor_variant",
        "splice_acceptor_variant",
        "frameshift_variant",
        "missense_variant",
        "synonymous_variant",
        "intergenic_variant",
    }
    # 3 introns (2 in G1, 1 in G2) x 2 sites, one alternate per position (positions never repeat)
    assert counts["splice_donor_variant"] == counts["splice_acceptor_variant"] == 6
    for row in table.to_dict("records"):
        assert rederive(row, genome, transcripts) == row["consequence"], row
    assert set(table[table["consequence"] != "intergenic_variant"]["gene_id"]) == {"G1", "G2", "G3"}
    assert not table.duplicated(["chrom", "pos"]).any()
    positives = {
        "stop_gained",
        "start_lost",
        "splice_donor_variant",
        "splice_acceptor_variant",
        "frameshift_variant",
    }
    for consequence, label in zip(table["consequence"], table["label"], strict=True):
        expected = (
            True
            if consequence in positives
            else False
            if consequence == "synonymous_variant"
            else None
        )
        assert (label is None or pd.isna(label)) if expected is None else label == expected


def test_per_gene_and_per_class_caps_and_same_bytes_for_the_same_seed(spliced, tmp_path):
    fasta, gtf = spliced
    table = scan(
        tmp_path / "a",
        fasta,
        gtf,
        "--per-class",
        "5",
        "--per-gene",
        "2",
        "--classes",
        "missense_variant,synonymous_variant",
        "--seed",
        "3",
    )
    assert table["consequence"].value_counts().to_dict() == {
        "missense_variant": 5,
        "synonymous_variant": 5,
    }
    assert table.groupby(["gene_id", "consequence"]).size().max() <= 2
    scan(
        tmp_path / "b",
        fasta,
        gtf,
        "--per-class",
        "5",
        "--per-gene",
        "2",
        "--classes",
        "missense_variant,synonymous_variant",
        "--seed",
        "3",
    )
    files = [tmp_path / d / "mutations.parquet" for d in ("a", "b")]
    assert files[0].read_bytes() == files[1].read_bytes()
    summary = json.loads((tmp_path / "a" / "mutations.parquet.summary.json").read_text())
    assert summary["counts"] == {"missense_variant": 5, "synonymous_variant": 5}
    assert (
        summary["candidates"]["missense_variant"] > summary["candidates"]["synonymous_variant"] > 5
    )


def test_unknown_classes_are_refused(spliced, tmp_path, capsys):
    fasta, gtf = spliced
    args = [
        "build",
        "mutations",
        "--fasta",
        str(fasta),
        "--gtf",
        str(gtf),
        "--out",
        str(tmp_path / "m.parquet"),
        "--classes",
        "nonsense_variant",
    ]
    assert main(args) == 2
    assert "unknown class(es) nonsense_variant" in capsys.readouterr().err


def test_a_scan_that_finds_nothing_exits_with_the_reason_and_writes_nothing(
    spliced, tmp_path, capsys
):
    """No annotated chromosome in the FASTA (the names differ): a non-zero exit naming both sides."""
    fasta, gtf = spliced
    renamed = tmp_path / "renamed.fa"
    renamed.write_text(fasta.read_text().replace(">", ">other_"))
    out = tmp_path / "scan.parquet"
    status = main(
        ["build", "mutations", "--fasta", str(renamed), "--gtf", str(gtf), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert status == 2 and not out.exists()
    assert "no mutation to write" in err and "chromosome_not_in_fasta" in err and "other_" in err


def test_nested_genes_and_a_cds_without_its_stop_codon(nested, tmp_path):
    """Intergenic variants lie 5 kb from every CDS span, also from a gene's whose span holds
    another gene; a CDS whose last codon is not a stop (Ensembl leaves the stop codon out of the
    CDS) gives no stop_lost and is counted; frameshifts never delete a base of the first or last
    codon. Every candidate is written, so every rule is seen on every row it could break."""
    fasta, gtf = nested
    table = scan(tmp_path, fasta, gtf, "--per-class", "5000", "--per-gene", "5000")
    genome, transcripts = read_fasta(fasta), cds_records(gtf)
    for row in table.to_dict("records"):
        assert rederive(row, genome, transcripts) == row["consequence"], row
    summary = json.loads((tmp_path / "mutations.parquet.summary.json").read_text())
    assert summary["excluded"] == {"last_codon_not_stop": 1}
    # GA's TAA: 3 changes at its T, 2 at each A make a sense codon; GB's last codon is not a stop
    assert summary["candidates"]["stop_lost"] == 7
    assert set(table.loc[table["consequence"] == "stop_lost", "gene_id"]) == {"GA"}
    # a 1-base deletion of every CDS base but the first and last codons' (600 + 150 CDS bases)
    assert summary["candidates"]["frameshift_variant"] == (600 - 6) + (150 - 6)
    intergenic = table[table["consequence"] == "intergenic_variant"]
    # only the tail 5 kb past GA's end (2,000 + 300 + 17,000 + 300) qualifies, not GA's intron
    assert summary["candidates"]["intergenic_variant"] == 42_000 - (19_600 + 5_000)
    assert len(intergenic) == 5000 and intergenic["pos"].min() > 19_600 + 5_000


def test_every_exclusion_rule_is_counted_under_its_name(tmp_path):
    """One transcript per rule of the module docstring, each broken on purpose; the candidates
    of the transcripts still scanned are counted exactly (an N base takes two deletions with
    it, the one of the N and the one after it). The genes start 10 kb into the chromosome, so
    its first 5 kb are intergenic too."""
    at = {
        "OK": 10_000,
        "NOATG": 12_000,
        "STOP": 14_000,
        "INTRON": 16_000,
        "NBASE": 19_000,
        "PHASE": 21_000,
        "FRAC": 23_000,
    }
    two_exons = ("INTRON", "PHASE")
    chrom, records = genes_on_a_chromosome(
        7,
        40_000,
        [
            (name, "+", start, [90, 90] if name in two_exons else [150], INTRON, True)
            for name, start in at.items()
        ],
    )
    chrom = list(chrom)
    chrom[at["NOATG"] : at["NOATG"] + 3] = "CTG"  # the first codon
    chrom[at["STOP"] + 30 : at["STOP"] + 33] = "TAA"  # an internal codon
    chrom[at["INTRON"] + 90 : at["INTRON"] + 92] = "CT"  # the donor
    chrom[at["NBASE"] + 31] = "N"  # the middle of codon 10
    second_exon = f"\t{at['PHASE'] + 90 + INTRON + 1}\t"
    records = [
        r.replace("\t+\t0\t", "\t+\t1\t") if '"PHASE"' in r and second_exon in r else r
        for r in records
    ]  # PHASE: the second exon's phase
    frac_end = at["FRAC"] + 150
    records = [
        r.replace(f"\t{frac_end}\t", f"\t{frac_end - 1}\t") if '"FRAC"' in r else r for r in records
    ]  # FRAC: 149 bp
    fasta, gtf = write_genome(tmp_path, "".join(chrom), records)
    scan(tmp_path, fasta, gtf, "--per-class", "5000", "--per-gene", "5000")
    summary = json.loads((tmp_path / "mutations.parquet.summary.json").read_text())
    assert summary["excluded"] == {
        "cds_not_whole_codons": 1,
        "codon_with_non_acgt_base": 1,
        "first_codon_not_atg": 1,
        "internal_stop": 1,
        "intron_not_gt_ag": 1,
        "phase_inconsistent": 1,
    }
    assert summary["transcripts_scanned"] == 4  # OK, NOATG, NBASE, INTRON
    assert summary["candidates"]["frameshift_variant"] == 144 + 144 + (144 - 2) + 174
    # the chromosome's first 5 kb and its tail 5 kb past FRAC's end: FRAC, though excluded, is
    # a gene, and intergenic variants keep 5 kb from it too
    assert summary["candidates"]["intergenic_variant"] == (10_000 - 5_000) + 40_000 - (
        frac_end - 1 + 5_000
    )
    assert summary["notes"] == []
    assert summary["settings"] == {
        "per_class": 5000,
        "per_gene": 5000,
        "seed": 0,
        "positive": [
            "stop_gained",
            "start_lost",
            "splice_donor_variant",
            "splice_acceptor_variant",
            "frameshift_variant",
        ],
    }


def test_no_room_for_intergenic_variants_is_a_note(spliced, tmp_path, capsys):
    """The spliced genome cut 3 kb after its last gene: no base lies 5 kb from every CDS."""
    fasta, gtf = spliced
    short = tmp_path / "short.fa"
    short.write_text(">chrS\n" + read_fasta(fasta)["chrS"][:12_000] + "\n")
    scan(tmp_path, short, gtf, "--classes", "intergenic_variant,missense_variant")
    assert (
        "intergenic_variant skipped: no base lies 5000 bp from every CDS" in capsys.readouterr().out
    )

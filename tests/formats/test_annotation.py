"""Reading annotations (formats/annotation.py): GTF and both GFF3 layouts, transcript choice."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dna_fixtures import build_toy_dataset
from perturbation_bench.formats.annotation import choose_transcripts, read_cds_exons, read_gff3_cds


def gtf_records(gtf: Path) -> list[dict]:
    out = []
    for line in gtf.read_text().splitlines():
        fields = line.split("\t")
        attributes = dict(re.findall(r'(\w+) "([^"]*)"', fields[8]))
        out.append(
            {"fields": fields[:8], "canonical": "Ensembl_canonical" in fields[8], **attributes}
        )
    return out


def write_gff3(records: list[dict], path: Path, layout: str) -> None:
    """The same CDS records as GFF3: gene -> mRNA -> CDS (Ensembl), or gene -> CDS (SGD)."""
    lines, seen = ["##gff-version 3"], set()
    for r in records:
        chrom, source, _, _, _, _, strand, phase = r["fields"]
        if r["gene_id"] not in seen:  # the gene's own span does not matter for the build
            seen.add(r["gene_id"])
            lines.append(
                f"{chrom}\t{source}\tgene\t1\t2\t.\t{strand}\t.\tID={r['gene_id']};Name={r['gene_name']}"
            )
        parent = r["gene_id"]
        if layout == "ensembl":
            parent = r["transcript_id"]
            if parent not in seen:
                seen.add(parent)
                tags = "basic,Ensembl_canonical" if r["canonical"] else "basic"
                lines.append(
                    f"{chrom}\t{source}\tmRNA\t1\t2\t.\t{strand}\t.\tID={parent};Parent={r['gene_id']};tag={tags}"
                )
        start, end = r["fields"][3], r["fields"][4]
        lines.append(
            f"{chrom}\t{source}\tCDS\t{start}\t{end}\t.\t{strand}\t{phase}\tParent={parent}"
        )
    path.write_text("\n".join(lines) + "\n")


def write_gtf(records: list[dict], path: Path) -> None:
    lines = []
    for r in records:
        tag = ' tag "Ensembl_canonical";' if r["canonical"] else ""
        attributes = (
            f'gene_id "{r["gene_id"]}"; transcript_id "{r["transcript_id"]}"; '
            f'gene_name "{r["gene_name"]}";{tag}'
        )
        lines.append("\t".join(r["fields"]) + "\t" + attributes + "\n")
    path.write_text("".join(lines))


@pytest.mark.parametrize("layout", ["ensembl", "sgd"])
def test_both_gff3_layouts_build_the_same_rows_as_the_gtf(genome_files, tmp_path, layout):
    fasta, gtf = genome_files
    records = gtf_records(gtf)
    if layout == "sgd":  # one transcript per gene, named after it
        records = [dict(r, transcript_id=r["gene_id"]) for r in records if r["canonical"]]
    write_gtf(records, tmp_path / "same.gtf")
    write_gff3(records, tmp_path / "same.gff3", layout)
    paths = {}
    for name, flag in (("same.gtf", "--gtf"), ("same.gff3", "--gff3")):
        out = tmp_path / name.replace(".", "_")
        paths[name] = build_toy_dataset("syn", fasta, tmp_path / name, out, annotation=flag)
    gtf_rows, gff3_rows = (pq.read_table(p).to_pylist() for p in paths.values())
    assert len(gtf_rows) > 10 and gff3_rows == gtf_rows
    reports = [
        json.loads((p.parent / "_build_report.json").read_text())["excluded"]
        for p in paths.values()
    ]
    assert reports[0] == reports[1]


def test_a_gff3_is_recognised_by_its_extension(genome_files, tmp_path):
    records = gtf_records(genome_files[1])
    write_gff3(records, tmp_path / "annotation.gff3", "ensembl")
    assert len(read_cds_exons(tmp_path / "annotation.gff3")) == len(read_cds_exons(genome_files[1]))


def cds_table(rows):
    import pandas as pd

    columns = ["seqname", "start", "end", "strand", "frame", "transcript_id", "gene_id", "tag"]
    return pd.DataFrame(rows, columns=columns).assign(gene_name="")


def test_a_tie_in_cds_length_without_a_canonical_tag_picks_the_smallest_transcript_id():
    """Mutant: the transcript id sorted descending (or not at all)."""
    table = cds_table(
        [
            ("c", 1, 90, "+", 0, "T2", "G", ""),
            ("c", 201, 290, "+", 0, "T1", "G", ""),
            ("c", 1, 60, "+", 0, "T3", "G", ""),
        ]
    )
    assert {exon.transcript_id for exon in choose_transcripts(table)} == {"T1"}
    canonical = cds_table(
        [
            ("c", 1, 90, "+", 0, "T2", "G", "Ensembl_canonical"),
            ("c", 201, 290, "+", 0, "T1", "G", ""),
        ]
    )
    assert {exon.transcript_id for exon in choose_transcripts(canonical)} == {"T2"}


def test_a_gff3_cds_with_several_parents_belongs_to_each(tmp_path):
    """Mutant: only the first ``Parent`` kept."""
    gff3 = tmp_path / "a.gff3"
    gff3.write_text(
        "##gff-version 3\n"
        "c\tt\tgene\t1\t300\t.\t+\t.\tID=G\n"
        "c\tt\tmRNA\t1\t300\t.\t+\t.\tID=T1;Parent=G\n"
        "c\tt\tmRNA\t1\t300\t.\t+\t.\tID=T2;Parent=G\n"
        "c\tt\tCDS\t10\t99\t.\t+\t0\tID=cds1;Parent=T1,T2\n"
    )
    table = read_gff3_cds(gff3)
    assert sorted(table["transcript_id"]) == ["T1", "T2"]
    assert set(table["gene_id"]) == {"G"}

"""MaveDB score tables (``build variants --from mavedb``, ``formats/hgvs.py``): each HGVS ``g.``
change's alternate window equals the chromosome edited as HGVS says, cut where the reference
window is; what cannot be read is counted and named with its HGVS, never dropped."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from dna_fixtures import random_genome
from perturbation_bench.cli import main
from perturbation_bench.formats.hgvs import hgvs_alleles, split_accession

W = 64


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    return random_genome(tmp_path_factory.mktemp("mavedb"), {"chr17": 600}, 7)


def edited(chromosome: str, change: str) -> str:
    """The chromosome with one HGVS change applied, read by the test itself (1-based ranges)."""
    match = re.fullmatch(r"g\.(\d+)(?:_(\d+))?(.*)", change)
    start, end, rest = int(match[1]), int(match[2] or match[1]), match[3]
    if ">" in rest:
        return chromosome[: start - 1] + rest[-1] + chromosome[start:]
    if rest.startswith("delins"):
        return chromosome[: start - 1] + rest[6:] + chromosome[end:]
    if rest == "del":
        return chromosome[: start - 1] + chromosome[end:]
    if rest.startswith("ins"):
        return chromosome[:start] + rest[3:] + chromosome[start:]
    assert rest == "dup"
    return chromosome[:end] + chromosome[start - 1 : end] + chromosome[end:]


def test_each_hgvs_change_gives_the_chromosome_edited_as_it_says(genome, tmp_path):
    fasta, sequences = genome
    chromosome = sequences["chr17"]
    changes = [
        f"g.200{chromosome[199]}>{'A' if chromosome[199] != 'A' else 'C'}",
        "g.250_252delinsTT",
        "g.260delinsGG",
        "g.300_303del",
        "g.310del",
        "g.320_321insACG",
        "g.330_332dup",
        "g.340dup",
    ]
    table = pd.DataFrame(
        {
            "accession": [f"urn:mavedb:0-a-1#{i}" for i in range(len(changes))],
            "hgvs_nt": [f"NC_000017.10:{c}" for c in changes],
            "score": [0.5 * i - 1 for i in range(len(changes))],
        }
    )
    table.to_csv(tmp_path / "scores.csv", index=False)
    args = ["build", "variants", "--from", "mavedb", "--variants", str(tmp_path / "scores.csv")]
    args += ["--fasta", str(fasta), "--chrom", "17", "--config", "sge", "--out", str(tmp_path)]
    assert main([*args, "--window", str(W), "--label-direction", "functional"]) == 0
    built = pd.read_parquet(tmp_path / "sge")
    assert built["hgvs_nt"].tolist() == table["hgvs_nt"].tolist()
    assert built["label"].tolist() == table["score"].tolist()
    assert set(built["label_direction"]) == {"functional"}
    for change, start, reference, alternate in zip(
        changes, built["window_start"], built["original_sequence"], built["sequence"], strict=True
    ):
        assert reference == chromosome[start : start + W]
        assert alternate == edited(chromosome, change)[start : start + W], change


def test_what_cannot_be_read_is_counted_and_named_with_its_hgvs(genome, tmp_path):
    fasta, sequences = genome
    chromosome = sequences["chr17"]
    wrong = "A" if chromosome[99] != "A" else "C"
    good = f"g.120{chromosome[119]}>{'G' if chromosome[119] != 'G' else 'T'}"
    values = [
        good,
        "_wt",
        "",
        "g.[120A>G;122C>T]",
        "p.Arg12Gly",
        f"g.100{wrong}>T",  # REF is not the genome's: excluded as every variant is
        "g.598_605del",  # past the chromosome's end
    ]
    table = pd.DataFrame({"hgvs_nt": values, "score": range(len(values))})
    table.to_csv(tmp_path / "scores.csv", index=False)
    args = ["build", "variants", "--from", "mavedb", "--variants", str(tmp_path / "scores.csv")]
    args += ["--fasta", str(fasta), "--chrom", "chr17", "--config", "sge", "--out", str(tmp_path)]
    assert main([*args, "--window", str(W)]) == 0
    folder = tmp_path / "sge"
    report = json.loads((folder / "_build_report.json").read_text())
    assert report["read"] == len(values) and report["written"] == 1
    assert sum(report["excluded"].values()) == len(values) - 1
    named = pd.read_csv(folder / "_excluded.tsv", sep="\t", keep_default_na=False)
    assert named.columns.tolist() == ["hgvs_nt", "chrom", "pos", "ref", "alt", "reason"]
    assert dict(zip(named["hgvs_nt"], named["reason"], strict=True)) == {
        "_wt": "hgvs_unsupported",
        "": "hgvs_missing",
        "g.[120A>G;122C>T]": "hgvs_multiple_variants",
        "p.Arg12Gly": "hgvs_unsupported",
        f"g.100{wrong}>T": "ref_mismatch",
        "g.598_605del": "hgvs_off_chromosome",
    }


@pytest.mark.parametrize(
    "change, expected",
    [
        ("g.5C>G", (5, "C", "G")),
        ("g.5_7delinsT", (5, "CGT", "T")),
        ("g.5_7del", (4, "ACGT", "A")),
        ("g.5_6insTT", (5, "C", "CTT")),
        ("g.5_7dup", (7, "T", "TCGT")),
        ("g.5_6ins", "hgvs_unsupported"),
        ("g.5_7insA", "hgvs_unsupported"),
        ("g.7_5del", "hgvs_unsupported"),
        ("g.5_6A>G", "hgvs_unsupported"),
        ("g.2del", (1, "GG", "G")),
        ("g.1del", "hgvs_off_chromosome"),
        ("g.9_10del", "hgvs_off_chromosome"),
    ],
)
def test_hgvs_alleles_are_vcf_style(change, expected):
    chromosome = "GGGACGTAC"  # positions 1..9: 5 = C, 6 = G, 7 = T

    def sequence(start0, end0):
        return chromosome[max(start0, 0) : end0]

    assert hgvs_alleles(change, sequence) == expected


def test_an_accession_is_split_from_its_change():
    assert split_accession("NC_000017.10:g.41276135T>C") == ("NC_000017.10", "g.41276135T>C")
    assert split_accession("g.5A>G") == (None, "g.5A>G")


@pytest.mark.parametrize(
    ("chrom", "named"), [(None, "the accession 'NC_000017.10'"), ("chr9", "--chrom 'chr9'")]
)
def test_a_chromosome_the_fasta_lacks_is_refused_naming_it_and_chrom(
    genome, tmp_path, capsys, chrom, named
):
    fasta, _ = genome
    table = pd.DataFrame({"hgvs_nt": ["NC_000017.10:g.120A>G"], "score": [0.5]})
    table.to_csv(tmp_path / "scores.csv", index=False)
    args = ["build", "variants", "--from", "mavedb", "--variants", str(tmp_path / "scores.csv")]
    args += ["--fasta", str(fasta), "--config", "sge", "--out", str(tmp_path / "out")]
    assert main([*args, *(["--chrom", chrom] if chrom else [])]) == 2
    err = capsys.readouterr().err
    assert (
        f"{named} names no sequence of the FASTA {fasta}; give its name there with --chrom" in err
    )
    assert "Traceback" not in err and not (tmp_path / "out" / "sge").exists()

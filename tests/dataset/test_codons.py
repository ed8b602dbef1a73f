"""Codon tables (dataset/codons.py): known species, user tables."""

from __future__ import annotations

import pyarrow.parquet as pq

from dna_fixtures import build_arguments
from perturbation_bench.cli import main
from perturbation_bench.dataset.codons import load_codon_table


def test_unknown_species_without_codon_table_lists_the_known_ones(genome_files, tmp_path, capsys):
    args = build_arguments("syn", *genome_files, tmp_path, species="zebrafish")
    assert main(args) == 2
    assert "no codon table for species 'zebrafish'" in capsys.readouterr().err


def test_a_user_codon_table_names_the_config(genome_files, tmp_path):
    table = load_codon_table("mouse")
    csv = tmp_path / "zebrafish.csv"
    csv.write_text(
        "codon,amino_acid,frequency\n"
        + "".join(
            f"{codon},{aa},{freq}\n"
            for aa, codons in table.usage.items()
            for codon, freq in codons.items()
        )
    )
    extra = ["--codon-table", str(csv), "--window", "400", "--flank", "100"]
    args = build_arguments("syn", *genome_files, tmp_path, *extra, species="zebrafish")
    assert main(args) == 0
    row = pq.read_table(tmp_path / "syn_zebrafish").to_pylist()[0]
    assert row["codon_usage_source"] == str(csv) and row["species"] == "zebrafish"

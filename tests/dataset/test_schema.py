"""The published schema of built datasets (dataset/schema.py): columns and their order."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from perturbation_bench.dataset.schema import SCHEMAS


@pytest.mark.parametrize("kind", ["syn", "motif"])
def test_output_has_the_published_schema(built, kind):
    assert pq.read_schema(built[kind]).remove_metadata() == SCHEMAS[kind]


CARD_COLUMNS = {  # frozen copy of the dataset card's column lists, in the card's order
    "syn": "benchmark_id script_version annotation_source genome_assembly codon_usage_source "
    "recoding_mode species chr strand transcript_id gene_id gene_name optimization_rate "
    "fraction_codons_changed random_seed window_size_bp chrom_length cds_genome_start "
    "cds_genome_end window_genome_start window_genome_end upstream_actual downstream_actual "
    "is_clamped exon_rank is_first_exon frame phase_gtf cds_start_in_seq cds_end_in_seq "
    "cds_length patch_start_in_seq patch_end_in_seq patch_length n_codons_total "
    "n_codons_eligible n_codons_changed original_sequence sequence",
    "motif": "benchmark_id script_version annotation_source genome_assembly motif actual_motif "
    "species chr strand transcript_id gene_id gene_name upstream_flank_bp patch_len_bp "
    "start_after_bp random_seed chrom_length cds_genome_start cds_genome_end "
    "window_genome_start window_genome_end upstream_actual is_clamped exon_rank is_first_exon "
    "frame phase_gtf cds_start_in_seq cds_end_in_seq cds_length patch_start_in_cds "
    "patch_end_in_cds patch_start_in_seq patch_end_in_seq original_sequence sequence",
}


@pytest.mark.parametrize("kind, n_columns", [("syn", 39), ("motif", 36)])
def test_schema_column_order_is_the_dataset_cards(kind, n_columns):
    assert SCHEMAS[kind].names == CARD_COLUMNS[kind].split()
    assert len(SCHEMAS[kind]) == n_columns

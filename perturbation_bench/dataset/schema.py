"""The published dataset's columns and dtypes, per kind of config (HuggingFaceBio/perturbation-bench).

Built datasets use exactly these, in the dataset card's order (metadata columns, then the two
sequence columns last), so the tasks and other tools load them unchanged.
"""

from __future__ import annotations

import pyarrow as pa

from perturbation_bench.pairs.files import SEQUENCE_COLUMNS

_S, _F, _I = pa.string(), pa.float64(), pa.int64()

SYN_SCHEMA = pa.schema(
    [
        (name, _S)
        for name in (
            "benchmark_id",
            "script_version",
            "annotation_source",
            "genome_assembly",
            "codon_usage_source",
            "recoding_mode",
            "species",
            "chr",
            "strand",
            "transcript_id",
            "gene_id",
            "gene_name",
        )
    ]
    + [(name, _F) for name in ("optimization_rate", "fraction_codons_changed")]
    + [
        (name, _I)
        for name in (
            "random_seed",
            "window_size_bp",
            "chrom_length",
            "cds_genome_start",
            "cds_genome_end",
            "window_genome_start",
            "window_genome_end",
            "upstream_actual",
            "downstream_actual",
            "is_clamped",
            "exon_rank",
            "is_first_exon",
            "frame",
            "phase_gtf",
            "cds_start_in_seq",
            "cds_end_in_seq",
            "cds_length",
            "patch_start_in_seq",
            "patch_end_in_seq",
            "patch_length",
            "n_codons_total",
            "n_codons_eligible",
            "n_codons_changed",
        )
    ]
    + [(name, _S) for name in SEQUENCE_COLUMNS]
)

MOTIF_SCHEMA = pa.schema(
    [
        (name, _S)
        for name in (
            "benchmark_id",
            "script_version",
            "annotation_source",
            "genome_assembly",
            "motif",
            "actual_motif",
            "species",
            "chr",
            "strand",
            "transcript_id",
            "gene_id",
            "gene_name",
        )
    ]
    + [
        (name, _I)
        for name in (
            "upstream_flank_bp",
            "patch_len_bp",
            "start_after_bp",
            "random_seed",
            "chrom_length",
            "cds_genome_start",
            "cds_genome_end",
            "window_genome_start",
            "window_genome_end",
            "upstream_actual",
            "is_clamped",
            "exon_rank",
            "is_first_exon",
            "frame",
            "phase_gtf",
            "cds_start_in_seq",
            "cds_end_in_seq",
            "cds_length",
            "patch_start_in_cds",
            "patch_end_in_cds",
            "patch_start_in_seq",
            "patch_end_in_seq",
        )
    ]
    + [(name, _S) for name in SEQUENCE_COLUMNS]
)

SCHEMAS = {"syn": SYN_SCHEMA, "motif": MOTIF_SCHEMA}

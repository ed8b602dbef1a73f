"""The synthetic genome and the two datasets built on it, shared by the dataset tests."""

from __future__ import annotations

import pytest

from dna_fixtures import build_toy_dataset
from perturbation_bench.dataset.codons import load_codon_table
from perturbation_bench.dataset.synthetic import synthetic_genome


@pytest.fixture(scope="package")
def genome_files(tmp_path_factory):
    """A 30 kb synthetic genome and its GTF (``dataset/synthetic.py``)."""
    return synthetic_genome(
        tmp_path_factory.mktemp("genome"), load_codon_table("human"), chrom_length=30_000
    )


@pytest.fixture(scope="package")
def built(genome_files, tmp_path_factory):
    """``syn`` and ``motif`` built on :func:`genome_files`: their parquet files by kind."""
    out = tmp_path_factory.mktemp("built")
    return {kind: build_toy_dataset(kind, *genome_files, out) for kind in ("syn", "motif")}

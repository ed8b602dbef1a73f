"""The two datasets built on the synthetic genome (``genome_files``), shared by the dataset tests."""

from __future__ import annotations

import pytest

from dna_fixtures import build_toy_dataset


@pytest.fixture(scope="package")
def built(genome_files, tmp_path_factory):
    """``syn`` and ``motif`` built on :func:`genome_files`: their parquet files by kind."""
    out = tmp_path_factory.mktemp("built")
    return {kind: build_toy_dataset(kind, *genome_files, out) for kind in ("syn", "motif")}

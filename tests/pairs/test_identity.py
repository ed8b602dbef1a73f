"""Content identities (``pairs/identity.py``): of a pair, and of a dataset's files."""

from __future__ import annotations

import hashlib

from perturbation_bench.pairs.identity import data_identity, pair_id


def test_a_pair_s_id_is_its_content_s_hash_and_tells_the_members_apart():
    original, perturbed = "ACGTACGT", "ACGAACGT"
    expected = hashlib.sha256(b"ACGTACGT\nACGAACGT").hexdigest()[:16]
    assert pair_id(original, perturbed) == expected
    assert pair_id(perturbed, original) != expected  # which member is real counts
    assert pair_id("AC", "GTA") != pair_id("ACG", "TA")  # the separator keeps the boundary


def test_the_data_identity_hashes_every_byte_of_the_files_in_the_order_given(tmp_path):
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    first.write_bytes(bytes(range(256)) * 5000)  # more than one 1 MiB read block
    second.write_bytes(b"tail")
    whole = hashlib.sha256(first.read_bytes() + second.read_bytes()).hexdigest()
    assert data_identity([first, second]) == f"sha256:{whole}"
    assert data_identity([second, first]) != data_identity([first, second])
    second.write_bytes(b"tall")
    assert data_identity([first, second]) != f"sha256:{whole}"


def test_a_pair_of_an_assay_is_that_assay_s_and_a_pair_without_one_keeps_its_id():
    """Two assays measuring one pair (replicates) give two ids; without an assay the id is the
    one older runs and reports have (the hash of the two sequences alone)."""
    original, perturbed = "ACGTACGT", "ACGAACGT"
    expected = hashlib.sha256(b"R1\nACGTACGT\nACGAACGT").hexdigest()[:16]
    assert pair_id(original, perturbed, "R1") == expected
    assert pair_id(original, perturbed, "R2") != expected
    assert pair_id(original, perturbed, None) == pair_id(original, perturbed)
    assert pair_id(original, perturbed, "R1") != pair_id(original, perturbed)

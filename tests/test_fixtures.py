"""The random pairs the benchmarks and tests use (``fixtures/random_pairs.py``)."""

from __future__ import annotations

from perturbation_bench.fixtures.random_pairs import random_pair_table


def test_random_pair_tables_change_one_patch_per_window():
    table = random_pair_table(50, 100, seed=3, patch=12)
    for row in table.to_pylist():
        start = row["patch_start_in_seq"]
        original, perturbed = row["original_sequence"], row["sequence"]
        assert len(original) == len(perturbed) == 100 and set(original + perturbed) <= set("ACGT")
        assert original[:start] == perturbed[:start]
        assert original[start + 12 :] == perturbed[start + 12 :]

"""One method measured (``bench/measuring.py``): the pairs and config asked for are scored, and
two measurements agree within the stated tolerance."""

from __future__ import annotations

import pytest

from perturbation_bench.bench.measuring import Measurement, compare_lls, measure
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet


@pytest.mark.slow
@pytest.mark.parametrize("method", ["naive", "dna-hf"])
def test_a_measurement_scores_the_pairs_and_config_asked_for(tiny_models, tmp_path, method):
    write_parquet(random_pairs(5, 60, seed=3), tmp_path, "syn_zebrafish")
    metadata = {"data_dir": str(tmp_path), "config": "syn_zebrafish", "preset": "default"}
    measured = measure(method, tiny_models["char"], metadata, 2, "cpu", "float32", "4")
    assert measured.method == method
    assert len(measured.lls) == 2
    assert measured.seconds > 0 and measured.peak_bytes > 0


def test_two_measurements_agree_within_the_stated_tolerance():
    plain = Measurement("a", [(-1000.0, -2.0), (-3.0, -4.0)], seconds=1.0, peak_bytes=0)
    close = Measurement("b", [(-1000.0009, -2.0009), (-3.0, -4.0)], seconds=1.0, peak_bytes=0)
    far = Measurement("c", [(-1000.0, -2.0012), (-3.0, -4.0)], seconds=1.0, peak_bytes=0)
    assert compare_lls(close, plain) == (pytest.approx(0.0009), True)  # 1e-6 * 1000 + 1e-3
    assert compare_lls(far, plain) == (pytest.approx(0.0012), False)  # over 1e-6 * 2 + 1e-3
    with pytest.raises(ValueError):  # different numbers of pairs are not the same pairs
        compare_lls(Measurement("d", [(-1.0, -2.0)], 1.0, 0), plain)

"""The throughput benchmark: the table is computed right and the three methods agree."""

from __future__ import annotations

import argparse

import pytest

from perturbation_bench.bench import throughput as bench
from perturbation_bench.bench.throughput import Measurement, format_table
from perturbation_bench.comparison import pairwise_accuracy
from perturbation_bench.random_pairs import random_pairs, write_parquet


def test_table_reports_rates_ratios_and_differences():
    naive = Measurement("naive", [(-1.0, -2.0), (-3.0, -2.0)], seconds=4.0, peak_bytes=2**30)
    fast = Measurement("dna-hf", [(-1.0, -2.5), (-3.0, -2.0)], seconds=1.0, peak_bytes=2**29)
    rows = format_table([naive, fast], tokens=400, device="cpu").splitlines()
    assert rows[0].startswith("| method | pairs/s | tokens/s | peak RSS |")
    assert rows[2] == "| naive | 0.50 | 100 | 1,024 MiB | 1.00x | 0.5000 | 0.00e+00 |"
    assert rows[3] == "| dna-hf | 2.00 | 400 | 512 MiB | 4.00x | 0.5000 | 5.00e-01 |"


def test_accuracy_is_strict():
    assert pairwise_accuracy([(-1.0, -1.0), (-1.0, -2.0), (-2.0, -1.0), (-5.0, -9.0)]) == 0.5


def test_small_benchmark_runs_all_three_methods_and_they_agree(capsys):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--pairs", "3", "--length", "60", "--layers", "1", "--hidden", "32"])
    assert bench.run(args) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "method" not in line]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == ["naive", "hf", "dna-hf", "dna-mlm"]
    for row in rows[:3]:
        assert float(row.rstrip(" |").rsplit(" | ", 1)[1]) < 1e-3  # max abs LL diff vs naive
    assert rows[3].endswith("| n/a (masked-marginal score) |")
    assert "the three causal methods give accuracy" in out


def test_data_dir_honours_pairs_and_config(tiny_models, tmp_path, capsys):
    write_parquet(random_pairs(5, 60, seed=3), tmp_path, "syn_zebrafish")
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    args = parser.parse_args(["--model", tiny_models["char"], "--data-dir", str(tmp_path),
                              "--config", "syn_zebrafish", "--pairs", "2"])  # fmt: skip
    metadata = {"data_dir": str(tmp_path), "config": "syn_zebrafish", "preset": "default"}
    for method in ("naive", "dna-hf"):
        measured = bench.measure(method, args.model, metadata, args.pairs, "cpu", "float32", "4")
        assert len(measured.lls) == 2


def test_sharing_bench_ideals_follow_the_plan():
    from perturbation_bench.bench.sharing import SCENARIOS, planned_speedup

    by_name = {s.name: s for s in SCENARIOS}
    for p in (0.5, 0.9):  # linear-dominated: the plan reaches 2 / (2 - p)
        assert planned_speedup(by_name[f"6-mer p={p}"]) == pytest.approx(2 / (2 - p), rel=0.01)
    assert planned_speedup(by_name["6-mer p=0.1"]) == 1.0  # the cost rule declines
    assert planned_speedup(by_name["1-nt p=0.5"]) == 1.0  # attention-dominated: declines
    # windows: 7 per sequence, only the ones holding the change differ
    assert planned_speedup(by_name["1-nt windows"]) > 1.5

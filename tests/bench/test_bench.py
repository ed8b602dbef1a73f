"""The benchmarks (``bench/``): the throughput table is computed right and the three methods agree;
the sharing ideals follow the plan; the scale instrument times every stage."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from perturbation_bench.bench import throughput as bench
from perturbation_bench.bench.throughput import Measurement, format_table
from perturbation_bench.cli import main
from perturbation_bench.fixtures.random_pairs import random_pair_table, random_pairs, write_parquet
from perturbation_bench.pairs.outcome import pairwise_accuracy


def test_table_reports_rates_ratios_and_differences():
    naive = Measurement("naive", [(-1.0, -2.0), (-3.0, -2.0)], seconds=4.0, peak_bytes=2**30)
    fast = Measurement("dna-hf", [(-1.0, -2.5), (-3.0, -2.0)], seconds=1.0, peak_bytes=2**29)
    rows = format_table([naive, fast], tokens=400, device="cpu").splitlines()
    assert rows[0].startswith("| method | pairs/s | tokens/s | peak RSS |")
    assert rows[2] == "| naive | 0.50 | 100 | 1,024 MiB | 1.00x | 0.5000 | 0.00e+00 |"
    assert rows[3] == "| dna-hf | 2.00 | 400 | 512 MiB | 4.00x | 0.5000 | 5.00e-01 |"


def test_accuracy_is_strict():
    assert pairwise_accuracy([(-1.0, -1.0), (-1.0, -2.0), (-2.0, -1.0), (-5.0, -9.0)]) == 0.5


@pytest.mark.slow
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


def test_sharing_bench_alternates_which_way_runs_first():
    """A B B A A B: over an even number of repeats each way runs first as often as second, and
    each keeps its own slot (plain 0, default 1) whatever the order."""
    from perturbation_bench.bench.sharing import run_order

    rows = ["plain", "default"]
    orders = [run_order(rows, repeat) for repeat in range(4)]
    assert [[row for _, row in order] for order in orders[:2]] == [rows, rows[::-1]]
    assert all(dict(order) == {0: "plain", 1: "default"} for order in orders)
    assert sum(order[0][1] == "plain" for order in orders) == 2


def test_an_unknown_sharing_scenario_is_refused_naming_the_nearest(capsys):
    """Not an empty table: one line, before any model is built."""
    assert main(["bench", "--sharing", "--scenario", "6-mer randm p"]) == 2
    err = capsys.readouterr().err
    assert (
        "--scenario '6-mer randm p': not a sharing scenario (did you mean '6-mer random p'" in err
    )


def test_sharing_bench_ideals_follow_the_plan():
    from perturbation_bench.bench.sharing import (
        SCENARIOS,
        ideal_speedup,
        planned_speedup,
        scenario_pairs,
    )

    by_name = {s.name: s for s in SCENARIOS}

    def planned(name):
        starts = [pair["patch_start_in_seq"] for pair in scenario_pairs(by_name[name], 8)]
        return planned_speedup(by_name[name], starts)

    for p in (0.5, 0.9):
        starts = [pair["patch_start_in_seq"] for pair in scenario_pairs(by_name[f"6-mer p={p}"], 3)]
        assert ideal_speedup(by_name[f"6-mer p={p}"], starts) == pytest.approx(
            2 / (2 - p), rel=0.01
        )
    # a late change: the cost model (attention over the cache, the output layer, two passes a
    # batch) predicts most of the ideal 2 / (2 - 0.9)
    assert 1.6 < planned("6-mer p=0.9") <= 2 / (2 - 0.9)
    assert planned("6-mer p=0.1") == 1.0  # the cost rule declines
    # 1,366 inputs at width 512: each remainder token attends to the whole cache, which costs
    # more than the 1.33x a change in the middle could save on a CPU
    assert planned("6-mer p=0.5") == 1.0
    assert planned("1-nt p=0.5") == 1.0  # attention-dominated: declines
    # windows: 7 per sequence, only the ones holding the change differ; dedupe (on in both
    # rows) scores the identical ones once, and the differing ones are attention-dominated
    assert planned("1-nt windows") == pytest.approx(1.0, abs=0.01)
    # a paired control: its left flank (100 of 350 bp) would save 1.17x at most, too little
    # for the separate prefix and remainder passes: the cost rule declines
    assert planned("1-nt controls 350 bp") == 1.0
    # changes at random places: pairs whose prefix pays share it, the others are scored plainly
    random_p = by_name["6-mer random p"]
    starts = [pair["patch_start_in_seq"] for pair in scenario_pairs(random_p, 8)]
    late = [start for start in starts if start > random_p.length / 3]
    assert 0 < len(late) < len(starts)
    assert 1.0 < planned("6-mer random p") <= ideal_speedup(random_p, starts)


@pytest.mark.slow
def test_the_scale_instrument_times_every_stage_and_its_peaks_only_grow(tmp_path):
    from perturbation_bench.fixtures.random_pairs import write_random_genome

    data = tmp_path / "data"
    (data / "scale").mkdir(parents=True)
    pq.write_table(random_pair_table(30, 200), data / "scale" / "t.parquet")
    spec = {
        "data_dir": str(data),
        "fasta": str(write_random_genome(tmp_path / "g.fa", 5_000)),
        "order": 2,
        "log_samples": True,
        "out": str(tmp_path / "stages"),
        "output_path": str(tmp_path / "run"),
    }
    subprocess.run(
        [sys.executable, "-m", "perturbation_bench.bench.stage_clock", json.dumps(spec)],
        check=True,
        capture_output=True,
    )
    stages = json.loads((tmp_path / "stages.rank0.json").read_text())
    from perturbation_bench.bench.stage_clock import MEMORY_STAGES, STAGES

    assert set(stages["seconds"]) == set(STAGES)
    assert all(value >= 0 for value in stages["seconds"].values())
    assert stages["seconds"]["scoring"] > 0 and stages["seconds"]["read"] > 0
    assert stages["seconds"]["write"] > 0  # the samples file was written
    peaks = [stages["peaks"][stage] for stage in MEMORY_STAGES]
    assert peaks == sorted(peaks)  # a high-water mark never falls
    assert list((tmp_path / "run").rglob("samples_perturbation_custom_*.jsonl"))


def test_the_scale_targets_count_the_twenty_pair_run_as_fixed():
    from perturbation_bench.bench.scale import Row, parse_sizes

    def stages(rank, scoring, other, peak):
        seconds = {
            "start-up": 9.0,
            "task": 0.0,
            "read": other,
            "requests": 0.0,
            "scoring": scoring,
            "results": 0.0,
            "env": 1.0,
            "write": 0.0,
        }
        return {"rank": rank, "seconds": seconds, "peaks": {"write": peak}}

    row = Row(1000, 8192, 2, stages(1, 10.0, 6.5, 12 << 20), stages(1, 0.1, 2.0, 2 << 20))
    assert row.scored_pairs == 500 and row.sequence_bytes == 2 * 8192 * 500
    assert row.outside == pytest.approx((6.5 + 1.0 - 2.0 - 1.0) / 10.0)
    assert row.growth == 10 << 20 and row.growth_ratio == pytest.approx(1.28, abs=0.01)
    assert row.within_targets()
    assert not Row(1000, 1024, 1, stages(0, 1.0, 3.0, 0), stages(0, 1.0, 0.0, 0)).within_targets()
    three_times = {
        length: Row(
            1000, length, 1, stages(0, 10.0, 1.0, 3 * 2 * length * 1000), stages(0, 0.1, 1.0, 0)
        )
        for length in (1024, 8192)
    }
    assert three_times[1024].within_targets() and not three_times[8192].within_targets()
    assert parse_sizes("20000x8192, 5x1024") == [(20000, 8192), (5, 1024)]
    for bad in ("20000", "x8192", "0x100", "10x12"):
        with pytest.raises(Exception, match="PAIRSxBP"):
            parse_sizes(bad)


@pytest.mark.slow
def test_the_pll_bench_agrees_with_its_plain_loop(capsys):
    from perturbation_bench.bench import pll

    parser = argparse.ArgumentParser()
    pll.add_arguments(parser)
    arguments = ["--pll", "--pll-pairs", "2", "--pll-bp", "70", "--pll-batch-size", "64"]
    assert pll.run(parser.parse_args(arguments)) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 2 |")]
    assert row.startswith("| 2 | 70 | 140 |") and float(row.rstrip(" |").rsplit(" | ", 1)[1]) < 1e-3


@pytest.mark.slow
def test_the_embedding_bench_agrees_with_its_plain_loop(capsys):
    from perturbation_bench.bench import embedding

    parser = argparse.ArgumentParser()
    embedding.add_arguments(parser)
    assert embedding.run(parser.parse_args(["--embedding", "--embedding-bp", "4"])) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 12 |")]
    assert row.startswith("| 12 | 2 | 1.33 |")
    assert float(row.rstrip(" |").rsplit(" | ", 1)[1]) < 1e-6


def test_protocol_flops_count_every_weight_a_token_meets(tmp_path):
    """``2 N n + 2 L d n^2`` with ``N`` counted from the Llama config by hand: per layer the
    q, k, v, o projections, the three MLP matrices and two norms; the final norm; the output
    layer; not the input embeddings."""
    from transformers import AutoModelForCausalLM

    from perturbation_bench.bench.protocol import matmul_parameters, sequence_flops
    from perturbation_bench.fixtures.random_models import kmer_tokenizer, save_random_llama

    path = save_random_llama(
        tmp_path, kmer_tokenizer(3), layers=3, hidden=48, heads=6, kv_heads=2, intermediate=80
    )
    model = AutoModelForCausalLM.from_pretrained(path)
    d, head_dim, vocab = 48, 8, model.config.vocab_size
    attention = d * 6 * head_dim + 2 * d * 2 * head_dim + 6 * head_dim * d
    per_layer = attention + 3 * d * 80 + 2 * d
    by_hand = 3 * per_layer + d + vocab * d
    assert matmul_parameters(model) == by_hand
    assert sequence_flops(model.config, by_hand, 100) == 2 * by_hand * 100 + 2 * 3 * 48 * 100**2


def test_protocol_rows_time_their_passes_and_score_as_the_reference(tmp_path):
    """The bare loop and dna-hf rows, in this process: as many timed passes as asked (the
    float32 reference: one), and LLs equal to the reference's within the sharing tolerance."""
    from perturbation_bench.bench import protocol
    from perturbation_bench.fixtures.random_models import kmer_tokenizer, save_random_llama

    model = str(save_random_llama(tmp_path / "model", kmer_tokenizer(6), max_positions=64))
    write_parquet(random_pairs(5, 300, seed=2, patch=12), tmp_path / "data", "syn_human")
    metadata = {"data_dir": str(tmp_path / "data"), "config": "syn_human", "preset": "carbon"}
    args = argparse.Namespace(pairs=5, device="cpu", dtype="float32", batch_size="2", repeats=2)
    rows = {row.label: row for row in protocol.ROWS}
    timings = {
        label: protocol.measure_row(rows[label], model, metadata, args)
        for label in ("bare loop", "dna-hf", "float32")
    }
    assert [len(timings[label].passes) for label in timings] == [2, 2, 1]
    # decoder passes counted on the input embedding: 10 sequences of 50 inputs at batch 2
    assert timings["float32"].shapes == [(2, 50)] * 5 and timings["float32"].measured is None
    assert "chosen" in timings["dna-hf"].measured  # share_prefix=auto's record
    assert protocol.passes_line("float32", timings["float32"].shapes, None) == (
        "passes float32: 5 decoder passes (0 of batch 1, 500 padded tokens)"
    )
    reference = timings["float32"].lls
    for label in ("bare loop", "dna-hf"):
        assert len(timings[label].lls) == 5
        for got, expected in zip(timings[label].lls, reference, strict=True):
            assert got == pytest.approx(expected, rel=1e-6, abs=1e-3)
    table = protocol.format_table(timings, flops=1e12, peak=1.0, device="cpu").splitlines()
    bare = timings["bare loop"]
    assert table[2].startswith(f"| bare loop | {bare.warmup:.1f} | {bare.median:.2f} (")
    rates = f"| {5 / bare.median:.2f} | {2.5 / bare.median:.2f} | 1.00x | {1 / bare.median:.2f} |"
    assert rates in table[2]  # pairs/s, variants/s, vs itself, MFU = 1 TFLOP / s / 1 TFLOP/s
    assert all(line.endswith("| 0 of 5 |") for line in table[2:5])
    without_reference = protocol.format_table(
        {"dna-hf": timings["dna-hf"]}, flops=1e12, peak=None, device="cpu"
    )
    cells = without_reference.splitlines()[2].split(" | ")
    assert cells[5:7] == ["n/a", "n/a"] and cells[-2:] == ["n/a", "n/a |"]


def _set_away_from_default(action: argparse.Action) -> list[str]:
    """Command-line words that give ``action`` a value other than its default."""
    if action.nargs == 0:
        return [action.option_strings[0]]
    values = [str(choice) for choice in action.choices or ("7", "8")]
    value = next(v for v in values if v != str(action.default))
    return [action.option_strings[0], value]


def test_every_option_of_a_benchmark_not_run_is_refused_never_ignored():
    """The rule over every benchmark's every option: set with another benchmark chosen, it is
    refused by name (two flags as such); set with its own benchmark, or one that declares it
    reads it (``READS_OPTIONS_OF``), it is accepted."""
    from perturbation_bench.cli import command_parser
    from perturbation_bench.commands.bench import FLAGGED, _module, chosen_benchmark
    from perturbation_bench.errors import OptionsError

    parser = command_parser()
    owned = parser.parse_args(["bench"]).bench_options
    assert set(owned) == {"throughput", *FLAGGED.values()}
    flag_of = {module: [f"--{flag}"] for flag, module in FLAGGED.items()}
    flag_of["protocol"] = ["--protocol", "gpu"]
    refused = accepted = 0
    for chosen in owned:
        reads = {chosen, *getattr(_module(chosen), "READS_OPTIONS_OF", ())}
        for owner, actions in owned.items():
            for action in actions:
                words = _set_away_from_default(action)
                is_flag = words[0].lstrip("-") in FLAGGED
                if words == flag_of.get(chosen) or (is_flag and chosen == "throughput"):
                    continue  # the chosen flag itself; a flag alone chooses its own benchmark
                args = parser.parse_args(["bench", *flag_of.get(chosen, []), *words])
                if owner in reads:
                    assert chosen_benchmark(args) == chosen
                    accepted += 1
                    continue
                with pytest.raises(OptionsError) as refusal:
                    chosen_benchmark(args)
                said = str(refusal.value)
                if is_flag:
                    both = {flag_of[chosen][0], words[0]}
                    given = " and ".join(f"--{f}" for f in FLAGGED if f"--{f}" in both)
                    assert said == f"bench runs one benchmark at a time; {given} were given"
                else:
                    assert f"{action.option_strings[0]} (an option of " in said, said
                refused += 1
    assert refused > 100 and accepted > 20
    assert chosen_benchmark(parser.parse_args(["bench", "--protocol", "gpu", "--pairs", "3"]))


def test_every_integer_option_of_every_benchmark_is_refused_below_its_least_value():
    """The rule over every benchmark's options: an integer is an ``options.at_least`` type, so
    ``--sharing-pairs 0`` or ``--pairs -1`` is refused by the parser in one line naming the
    option, never a run that starts measuring; its least value is accepted."""
    from perturbation_bench.cli import command_parser

    parser = command_parser()
    owned = parser.parse_args(["bench"]).bench_options
    counted = 0
    for actions in owned.values():
        for action in actions:
            assert action.type is not int, f"{action.option_strings[0]}: use options.at_least"
            minimum = getattr(action.type, "minimum", None)
            if minimum is None:
                continue
            counted += 1
            option = action.option_strings[0]
            assert (
                getattr(parser.parse_args(["bench", option, str(minimum)]), action.dest) == minimum
            )
            with pytest.raises(SystemExit) as refused:
                parser.parse_args(["bench", option, str(minimum - 1)])
            assert refused.value.code == 2
    assert counted >= 20
    for words in (["--batch-size", "0"], ["--batch-size", "foo"], ["--sharing-batch-size", "0"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["bench", *words])
    assert parser.parse_args(["bench", "--batch-size", "auto"]).batch_size == "auto"


def test_the_protocol_s_random_pairs_default_to_whole_6_mers():
    from perturbation_bench.bench.inputs import sequence_length
    from perturbation_bench.errors import OptionsError

    def args(length, model=None):
        return argparse.Namespace(length=length, model=model)

    assert sequence_length(args(None)) == 8196
    assert sequence_length(args(None, "ckpt")) == 8192
    assert sequence_length(args(8190)) == 8190
    with pytest.raises(OptionsError, match=r"must be a multiple of 6 \(e\.g\. 8196\), got 8192$"):
        sequence_length(args(8192))


def test_an_option_of_another_benchmark_is_refused_in_one_line_naming_both(capsys):
    assert main(["bench", "--sharing-pairs", "3"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            "the throughput benchmark (bench without a flag) does not read --sharing-pairs (an option "
            "of bench --sharing); drop each, or run the benchmark it belongs to"
        )
    )


@pytest.mark.parametrize(
    "words, said",
    [
        (["--novelty", "--novelty-k", "40"], "argument --novelty-k: must be from 1 to 31, got 40"),
        (["--pairs", "x"], "argument --pairs: not an integer: 'x'"),
        (["--batch-size", "0"], "argument --batch-size: batch size must be a positive whole "
         "number or auto, got '0'"),
    ],
)  # fmt: skip
def test_an_option_out_of_its_range_is_refused_saying_the_range(words, said, capsys):
    with pytest.raises(SystemExit):
        main(["bench", *words])
    assert f"perturbation-bench bench: error: {said} (see" in capsys.readouterr().err

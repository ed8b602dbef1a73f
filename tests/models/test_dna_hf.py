"""The dna-hf model: float32 sums, sliding windows, data parallel on CPU."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import types

import pyarrow.parquet as pq
import pytest
import torch
from tokenizers import processors
from transformers import AutoModelForCausalLM, AutoTokenizer

from dna_fixtures import (
    REPO,
    assert_same_results,
    build_tokenizer,
    evaluate,
    free_port,
    launch,
    reference_ll,
    two_processes_match_one,
)
from perturbation_bench.errors import OptionsError, TokenizationError
from perturbation_bench.fixtures.random_models import save_random_llama
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.models.causal_plan import token_windows
from perturbation_bench.models.dna_hf import DnaHFLM
from perturbation_bench.models.parallel import use_global_rank
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"


@pytest.mark.parametrize(
    "n_tokens, first, max_length, stride",
    [
        (10, 1, 20, 10),
        (21, 1, 20, 10),
        (22, 1, 20, 10),
        (125, 1, 40, 16),
        (125, 1, 40, 1),
        (125, 3, 40, 40),
        (300, 5, 64, 7),
        (50, 45, 16, 8),
    ],
)
def test_windows_tile_the_continuation_and_fit_the_model(n_tokens, first, max_length, stride):
    windows = token_windows(n_tokens, first, max_length, stride)
    scored = [t for _, start, end in windows for t in range(start, end)]
    assert scored == list(range(first, n_tokens))
    for start, target_start, target_end in windows:
        assert start < target_start < target_end
        assert target_end - 1 - start <= max_length
    for start, target_start, _ in windows[1:]:
        assert target_start - start >= max_length + 1 - stride
    if n_tokens <= max_length + 1:
        assert windows == [(0, first, n_tokens)]


def test_stride_must_fit_the_model():
    with pytest.raises(OptionsError, match="window_stride must be between 1 and max_length=8"):
        token_windows(20, 1, 8, 9)


def windowed_reference(model, tokens: list[int], first: int, max_length: int, stride: int) -> float:
    """Token by token, in fp32: token i > max_length sits in window k = ceil((i - max_length) / stride),
    which ends at e = min(n, max_length + 1 + k * stride) and reads tokens[e - 1 - max_length : i]."""
    total = 0.0
    for i in range(first, len(tokens)):
        if i <= max_length:
            start = 0
        else:
            k = -(-(i - max_length) // stride)
            start = min(len(tokens), max_length + 1 + k * stride) - 1 - max_length
        with torch.no_grad():
            logits = model(torch.tensor([tokens[start:i]])).logits[0, -1].float()
        total += torch.log_softmax(logits, -1)[tokens[i]].item()
    return total


@pytest.mark.parametrize("stride", [1, 16])
def test_long_sequences_are_scored_with_sliding_windows(tiny_models, pair_data, stride, caplog):
    path = tiny_models["char"]
    with caplog.at_level(logging.WARNING):
        result = evaluate(
            path,
            [TASK],
            {"data_dir": str(pair_data)},
            model="dna-hf",
            max_length=40,
            window_stride=stride,
        )
    assert f"sliding windows (stride {stride}" in caplog.text
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = build_tokenizer("char")
    rows = pair_data / "syn_human"

    for (ll_original, _), row in zip(
        logged_pairs(result, TASK), pq.read_table(rows).to_pylist(), strict=True
    ):
        tokens = [tokenizer.bos_token_id] + tokenizer(
            row["original_sequence"], add_special_tokens=False
        )["input_ids"]
        assert ll_original == pytest.approx(
            windowed_reference(model, tokens, 1, 40, stride), abs=1e-3
        )


def within_sharing_tolerance(got: float, expected: float) -> bool:
    """|dLL| <= 1e-6 |LL| + 1e-3 nats: the agreement promised between shared and plain scoring."""
    return abs(got - expected) <= 1e-6 * abs(expected) + 1e-3


def test_sequences_that_fit_score_as_plain_hf(tiny_models, pair_data):
    plain = evaluate(tiny_models["bpe"], [TASK], {"data_dir": str(pair_data)})
    dna = evaluate(tiny_models["bpe"], [TASK], {"data_dir": str(pair_data)}, model="dna-hf")
    for got, expected in zip(logged_pairs(dna, TASK), logged_pairs(plain, TASK), strict=True):
        assert all(within_sharing_tolerance(g, e) for g, e in zip(got, expected, strict=True))


def test_other_softmax_dtypes_are_refused(tiny_models):
    with pytest.raises(OptionsError, match="always takes the log-softmax in float32"):
        DnaHFLM(pretrained=tiny_models["char"], device="cpu", softmax_dtype="bfloat16")


BF16_TOLERANCE = 0.5
"""nats. bf16 logits depend on the batch shape (CPU kernels block the matmuls differently): a
batch of 4 against one sequence moved sums of 481 tokens by up to 0.11 nats on one machine and
under 0.05 on another. bf16's own spacing near -600 is 4 nats, so 0.5 still tells a float32 sum
of bf16 logits from a bf16 sum."""


@pytest.fixture(scope="module")
def close_pairs(tmp_path_factory):
    """Pairs of 480 bp that differ in 3 bp: margins of a few nats, under bf16's spacing of 2-4 near -600."""
    root = tmp_path_factory.mktemp("close")
    write_parquet(random_pairs(16, 480, seed=5, patch=3), root, "syn_human")
    return root


def test_bf16_weights_tie_under_hf_but_not_under_dna_hf(tiny_models, close_pairs):
    path, meta = tiny_models["char"], {"data_dir": str(close_pairs)}
    hf = evaluate(path, [TASK], meta, dtype="bfloat16")
    dna = evaluate(path, [TASK], meta, model="dna-hf", dtype="bfloat16")
    assert hf["results"][TASK]["tie_rate,pairs"] >= 0.25
    assert dna["results"][TASK]["tie_rate,pairs"] == 0.0

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16).eval()
    tokenizer = build_tokenizer("char")

    for pair, row in zip(
        logged_pairs(dna, TASK), pq.read_table(close_pairs / "syn_human").to_pylist(), strict=True
    ):
        for ll, sequence in zip(pair, (row["original_sequence"], row["sequence"]), strict=True):
            ids = torch.tensor(
                [
                    [tokenizer.bos_token_id]
                    + tokenizer(sequence, add_special_tokens=False)["input_ids"]
                ]
            )
            with torch.no_grad():
                log_probs = torch.log_softmax(model(ids).logits[0, :-1].float(), -1)
            reference = log_probs.gather(1, ids[0, 1:, None]).double().sum().item()
            assert ll == pytest.approx(reference, abs=BF16_TOLERANCE)


def requests_per_process(log: str) -> dict[str, int]:
    return {
        line.split("dna-hf process ")[1].split(":")[0]: int(line.rsplit(": ", 1)[1].split()[0])
        for line in log.splitlines()
        if "dna-hf process " in line
    }


@pytest.mark.slow
def test_two_cpu_processes_under_torchrun_match_one_process(tiny_models, pair_data, tmp_path):
    run = two_processes_match_one(tiny_models["char"], pair_data, tmp_path, "dna-hf")
    assert requests_per_process(run.stderr) == {"0 of 2": 8, "1 of 2": 8}  # 4 of the 8 pairs each


@pytest.mark.slow
def test_accelerate_launch_of_the_lm_eval_cli_matches_one_process(tiny_models, pair_data, tmp_path):
    single = evaluate(
        tiny_models["kmer6"],
        [TASK],
        {"data_dir": str(pair_data), "preset": "carbon"},
        model="dna-hf",
    )
    from perturbation_bench.paths import tasks_dir

    run = launch(
        [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--config_file",
            str(REPO / "yaml" / "accelerate" / "cpu_2_processes.yaml"),
            "--main_process_port",
            str(free_port()),
            "-m",
            "lm_eval",
            "--model",
            "dna-hf",
            "--model_args",
            f"pretrained={tiny_models['kmer6']},dtype=float32",
            "--device",
            "cpu",
            "--tasks",
            TASK,
            "--include_path",
            str(tasks_dir()),
            "--metadata",
            json.dumps({"data_dir": str(pair_data), "preset": "carbon"}),
            "--batch_size",
            "4",
            "--output_path",
            str(tmp_path),
        ]
    )
    (results,) = tmp_path.glob("**/results_*.json")
    parallel = json.loads(results.read_text())["results"][TASK]
    assert_same_results(parallel, single["results"][TASK])
    assert requests_per_process(run.stderr) == {"0 of 2": 8, "1 of 2": 8}


def test_data_parallel_rank_is_the_global_process_index():
    """Node 2 of 2, local process 1 of 2: its shard is global rank 3 of 4, not local rank 1."""
    model = object.__new__(DnaHFLM)
    model.accelerator = types.SimpleNamespace(
        process_index=3, local_process_index=1, num_processes=4, device="cpu"
    )
    model._device = "cpu"
    use_global_rank(model, {"tp_plan": "auto"}, "dna-hf")  # one model over the processes
    assert not hasattr(model, "_rank")
    use_global_rank(model, {}, "dna-hf")
    assert (model._rank, model._world_size) == (3, 4)
    use_global_rank(object(), {}, "dna-hf")  # no accelerator: nothing to shard


def test_unknown_tokens_stop_the_run_with_the_fix(tiny_models, pair_data):
    """A 6-mer model on 124 bp without trimming: the 4-base tail is the unknown token."""
    with pytest.raises(TokenizationError, match="of which 1 are the unknown token '<oov>'") as err:
        evaluate(tiny_models["kmer6"], [TASK], {"data_dir": str(pair_data)}, model="dna-hf")
    assert '"preset": "carbon"' in str(err.value)


@pytest.fixture(scope="module")
def bos_adding_model(tmp_path_factory):
    """A 6-mer model whose tokenizer puts <s> in front of everything it encodes by default."""
    tokenizer = build_tokenizer("kmer6")
    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tokenizer.bos_token_id)]
    )
    folder = save_random_llama(tmp_path_factory.mktemp("bos") / "m", tokenizer)
    reloaded = AutoTokenizer.from_pretrained(folder)
    assert reloaded("<dna>")["input_ids"][0] == reloaded.bos_token_id  # it really adds BOS
    return folder, reloaded


def test_a_dna_prefix_starts_the_sequence_even_when_the_tokenizer_adds_bos(
    bos_adding_model, pair_data, caplog
):
    folder, tokenizer = bos_adding_model
    metadata = {"data_dir": str(pair_data), "preset": "carbon"}
    result = evaluate(str(folder), [TASK], metadata, model="dna-hf")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    for (ll, _), row in zip(logged_pairs(result, TASK), rows, strict=True):
        reference = reference_ll(model, tokenizer, "<dna>", row["original_sequence"][:120])
        assert ll == pytest.approx(reference, abs=1e-3)
    with caplog.at_level(logging.WARNING):
        with_bos = evaluate(str(folder), [TASK], metadata, model="dna-hf", add_bos_token=True)
    assert "add_bos_token=True puts the BOS token before the DNA prefix '<dna>'" in caplog.text
    assert logged_pairs(with_bos, TASK) != logged_pairs(result, TASK)


def test_lower_case_sequences_score_as_upper_case(tiny_models, pair_data, tmp_path):
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    lower = [dict(r, original_sequence=r["original_sequence"].lower()) for r in rows]
    write_parquet(lower, tmp_path, "syn_human")
    upper_result = evaluate(
        tiny_models["char"], [TASK], {"data_dir": str(pair_data)}, model="dna-hf"
    )
    lower_result = evaluate(
        tiny_models["char"], [TASK], {"data_dir": str(tmp_path)}, model="dna-hf"
    )
    assert logged_pairs(lower_result, TASK) == logged_pairs(upper_result, TASK)
    assert lower_result["results"][TASK]["tie_rate,pairs"] == 0.0


@pytest.mark.slow
def test_a_bad_window_stride_is_one_line_not_a_traceback(tiny_models):
    code = (
        "from perturbation_bench.models.dna_hf import DnaHFLM; "
        f"DnaHFLM(pretrained={tiny_models['char']!r}, device='cpu', window_stride='half')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert (
        "perturbation-bench error: window_stride must be a whole number of tokens, got 'half'"
        in run.stderr
    )
    assert "Traceback" not in run.stderr


@pytest.mark.slow
def test_internal_errors_keep_their_traceback():
    code = (
        "from perturbation_bench.errors import PairingError, install_excepthook; "
        "install_excepthook(); raise PairingError('responses out of order')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "Traceback" in run.stderr and "PairingError: responses out of order" in run.stderr


def test_running_our_tasks_leaves_lm_evals_hf_model_untouched(tiny_models, pair_data):
    from lm_eval.models.huggingface import HFLM

    before = HFLM._loglikelihood_tokens
    evaluate(tiny_models["char"], [TASK], {"data_dir": str(pair_data)})
    assert HFLM._loglikelihood_tokens is before
    assert before.__module__ == "lm_eval.models.huggingface"


def test_the_add_bos_token_advice_for_hf_is_not_given_to_dna_hf(tiny_models, pair_data, caplog):
    metadata = {"data_dir": str(pair_data), "preset": "carbon"}
    with caplog.at_level(logging.WARNING):
        evaluate(tiny_models["kmer6"], [TASK], metadata)
    assert "with --model hf and a tokenizer that adds a BOS token" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        evaluate(tiny_models["kmer6"], [TASK], metadata, model="dna-hf")
    assert "add_bos_token" not in caplog.text


@pytest.mark.parametrize("rank", [0, 1])
def test_the_unknown_tokens_are_gathered_from_every_process_and_logged_on_rank_0(rank):
    """Every path of dna-hf (log-likelihood, JSD, embedding) tallies through one method: the
    counts of every process (lm-eval calls every rank, also under ``--use_cache``, whose
    entries the model's store replaces); rank 0 logs them."""
    calls = []

    class Counter:
        def summary(self, world_size):
            calls.append(("summary", world_size))
            return {"pairs": 1}

        def log(self, summary, n_requests):
            calls.append(("log", summary, n_requests))

    host = types.SimpleNamespace(world_size=2, rank=rank, _unknown=Counter())
    DnaHFLM._tally_unknown(host, 7)
    logged = [("log", {"pairs": 1}, 7)] if rank == 0 else []
    assert calls == [("summary", 2), *logged]
    assert host._unknown_summary == {"pairs": 1}

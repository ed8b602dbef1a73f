"""Test material built at test time: tiny DNA tokenizers and models (three tokenizer kinds), and the
Python-API runner the tests share.

Nothing here touches the network. Every builder is seeded, so a test run is reproducible.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, trainers

from perturbation_bench.dna import random_dna
from perturbation_bench.random_models import (
    SPECIAL_TOKENS,
    kmer_tokenizer,
    save_random_llama,
    single_nucleotide_tokenizer,
    wrap_tokenizer,
)
from perturbation_bench.tasks.pairing import logged_pairs

TOKENIZER_KINDS = ("char", "kmer6", "bpe")


def build_tokenizer(kind: str):
    """A DNA tokenizer: single nucleotides, non-overlapping 6-mers, or a small trained BPE."""
    if kind == "char":
        return single_nucleotide_tokenizer()
    if kind == "kmer6":
        return kmer_tokenizer(6)
    elif kind == "bpe":
        core = Tokenizer(models.BPE(unk_token="<oov>"))
        trainer = trainers.BpeTrainer(
            vocab_size=48, special_tokens=SPECIAL_TOKENS, initial_alphabet=list("ACGTN")
        )
        rng = random.Random(7)
        corpus = [random_dna(rng, 200) + "AAAA" * rng.randint(0, 5) for _ in range(200)]
        core.train_from_iterator(corpus, trainer)
    else:
        raise ValueError(kind)
    return wrap_tokenizer(core)


def reverse_complement(sequence: str) -> str:
    """Independent of the package's own: base by base."""
    return "".join(
        {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N"}[b] for b in reversed(sequence)
    )


def reference_ll(model, tokenizer, prefix: str, sequence: str) -> float:
    """sum_t log p(x_t | x_<t) over the sequence's tokens, fp32, conditioned on the prefix tokens
    (the BOS token when the prefix is empty)."""
    if prefix:
        context = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    else:
        context = [tokenizer.bos_token_id]
    continuation = tokenizer(sequence, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context + continuation])
    with torch.no_grad():
        logits = model(ids).logits[0].float()
    log_probs = torch.log_softmax(logits[:-1], dim=-1)
    targets = ids[0, 1:]
    per_token = log_probs.gather(1, targets[:, None])[:, 0]
    return per_token[len(context) - 1 :].sum().item()


def build_model(kind: str, folder: Path) -> Path:
    """Save a random 2-layer Llama with tokenizer ``kind`` to ``folder``; return the folder."""
    return save_random_llama(folder, build_tokenizer(kind))


def evaluate(
    model_path: str,
    tasks: list[str],
    metadata: dict,
    model: str = "hf",
    output_path: Path | None = None,
    include: list = (),
    use_cache: str | None = None,
    batch_size: int = 4,
    **model_args,
) -> dict:
    """Run tasks through lm-eval's Python API on the CPU with only this package's task folder
    indexed, the model arguments merged into the task metadata as the CLI does; with ``output_path``, save results and samples files as ``lm_eval --output_path
    --log_samples`` does; ``include``: more task folders to index; ``use_cache``: as
    ``lm_eval --use_cache``."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    if model == "kmer-markov":  # model_path is the genome it counts
        model_args = {"fasta": model_path, "order": 3, **model_args}
    else:
        model_args = {"pretrained": model_path, "dtype": "float32", **model_args}
    metadata = model_args | metadata  # as lm-eval's CLI merges --model_args into --metadata
    folders = [str(tasks_dir()), *map(str, include)]
    manager = TaskManager(include_path=folders, include_defaults=False, metadata=metadata)
    tracker = EvaluationTracker(output_path=str(output_path)) if output_path else None
    result = simple_evaluate(
        model=model,
        model_args=model_args,
        tasks=tasks,
        task_manager=manager,
        device="cpu",
        batch_size=batch_size,
        log_samples=True,
        use_cache=use_cache,
        evaluation_tracker=tracker,
    )
    if tracker is not None:  # as lm-eval's CLI does; the tracker rewrites samples in place
        samples = copy.deepcopy(result["samples"])
        aggregated = {key: value for key, value in result.items() if key != "samples"}
        tracker.save_results_aggregated(results=aggregated, samples=samples)
        for name in result["configs"]:
            tracker.save_results_samples(task_name=name, samples=samples[name])
    return result


def launch(command: list[str]) -> subprocess.CompletedProcess:
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def two_processes_match_one(model_path: str, pair_data, tmp_path, model: str):
    """Run the task under torchrun with 2 CPU processes; assert it equals a 1-process run."""
    import pytest

    task = "perturbation_syn_human"
    single = evaluate(model_path, [task], {"data_dir": str(pair_data)}, model=model)
    out = tmp_path / "dp.json"
    run = launch([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                  str(Path(__file__).with_name("dp_driver.py")), model_path, str(pair_data),
                  str(out), model])  # fmt: skip
    parallel = json.loads(out.read_text())
    assert_same_results(parallel["results"], single["results"][task])
    for got, expected in zip(parallel["lls"], logged_pairs(single, task), strict=True):
        assert got == pytest.approx(list(expected), rel=1e-6, abs=1e-3)
    return run


def assert_same_results(got: dict, expected: dict) -> None:
    """Equal task results, floats within the sharing tolerance (1e-6 relative + 1e-3 absolute:
    each process batches other pairs together, which moves float32 sums by about 1e-6; one
    flipped pair moves pairwise_acc by 1/n, far more)."""
    import pytest

    expected = json.loads(json.dumps(expected, default=str))
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-3), key
        else:
            assert got[key] == value, key


def crop_one(original: str, perturbed: str, length: int) -> tuple[int, bool]:
    """The crop start and overflow of one pair, through the tasks' vectorised rule."""
    import numpy as np
    import pyarrow as pa

    from perturbation_bench.pair_changes import changed_spans
    from perturbation_bench.tasks.crop import crop_starts

    spans = changed_spans(pa.array([original]), pa.array([perturbed]), ignore_case=True)
    (start,), (overflows,) = crop_starts(np.array([len(original)]), spans, length)
    return int(start), bool(overflows)

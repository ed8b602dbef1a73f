"""Test material built at test time: tiny DNA tokenizers and models (three tokenizer kinds), and the
Python-API runner the tests share.

Nothing here touches the network. Every builder is seeded, so a test run is reproducible.
"""

from __future__ import annotations

import copy
import itertools
import os
import random
import sysconfig
from pathlib import Path

import pytest
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

from perturbation_bench.dna import random_dna
from perturbation_bench.random_models import (
    SPECIAL_TOKENS,
    save_random_llama,
    single_nucleotide_tokenizer,
    wrap_tokenizer,
)

requires_autoload = pytest.mark.skipif(
    not (Path(sysconfig.get_paths()["purelib"]) / "perturbation_bench_autoload.pth").is_file()
    and not os.environ.get("CI"),
    reason="the autoload .pth comes with a regular install (pip install .), not an editable one; "
    "CI always runs these",
)

TOKENIZER_KINDS = ("char", "kmer6", "bpe")


def build_tokenizer(kind: str):
    """A DNA tokenizer: single nucleotides, non-overlapping 6-mers, or a small trained BPE."""
    if kind == "char":
        return single_nucleotide_tokenizer()
    if kind == "kmer6":
        kmers = ["".join(k) for k in itertools.product("ACGT", repeat=6)]
        vocab = SPECIAL_TOKENS + kmers
        core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(vocab)}, unk_token="<oov>"))
        core.pre_tokenizer = pre_tokenizers.Split(Regex(".{1,6}"), behavior="isolated")
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


def build_model(kind: str, folder: Path) -> Path:
    """Save a random 2-layer Llama with tokenizer ``kind`` to ``folder``; return the folder."""
    return save_random_llama(folder, build_tokenizer(kind))


def evaluate(
    model_path: str,
    tasks: list[str],
    metadata: dict,
    model: str = "hf",
    output_path: Path | None = None,
    **model_args,
) -> dict:
    """Run tasks through lm-eval's Python API on the CPU with only this package's task folder
    indexed; with ``output_path``, save results and samples files as ``lm_eval --output_path
    --log_samples`` does."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    tracker = EvaluationTracker(output_path=str(output_path)) if output_path else None
    result = simple_evaluate(
        model=model,
        model_args={"pretrained": model_path, "dtype": "float32", **model_args},
        tasks=tasks,
        task_manager=manager,
        device="cpu",
        batch_size=4,
        log_samples=True,
        evaluation_tracker=tracker,
    )
    if tracker is not None:  # as lm-eval's CLI does; the tracker rewrites samples in place
        samples = copy.deepcopy(result["samples"])
        aggregated = {key: value for key, value in result.items() if key != "samples"}
        tracker.save_results_aggregated(results=aggregated, samples=samples)
        for name in result["configs"]:
            tracker.save_results_samples(task_name=name, samples=samples[name])
    return result

"""Helpers of the recall tests: a built config on a random genome and two test doubles behind
lm-eval's interface (a uniform model and an induction model)."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.parquet as pq
from lm_eval.api.model import LM

from dna_fixtures import random_genome
from perturbation_bench.kinds.recall.builder import build_recall
from perturbation_bench.kinds.recall.rules import Stretches

GENOME = {"c1": 6000, "c2": 3000}


def build(tmp_path: Path, config: str = "rc", **settings) -> tuple[Path, list[dict], list[str]]:
    """Build a recall config on a random genome; return the data folder, its rows and the
    genome's stretches (the random genome has no N: one stretch per chromosome)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    _, sequences = random_genome(tmp_path, GENOME, seed=3)
    stretches = list(sequences.values())
    settings = {
        "config": config,
        "distances": (64, 256),
        "segment": 64,
        "trials": 3,
        "copy": "exact",
        "control": "native",
        "align": 1,
        "seed": 0,
    } | settings
    path, _ = build_recall(Stretches(stretches), settings, tmp_path / "data")
    return tmp_path / "data", pq.read_table(path).to_pylist(), stretches


class UniformLM(LM):
    """Every base 1/4 whatever its context: ``LL = len(continuation) log(1/4)``."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, str]] = []

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        self.asked += [request.args for request in requests]
        return [(len(r.args[1]) * math.log(0.25), False) for r in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError

    def generate_until(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError


class InductionLM(UniformLM):
    """Copies the earlier occurrence of its last ``k`` bases: each base of the continuation gets
    ``HIT`` where the base after the latest earlier occurrence of the ``k`` bases before it is
    that base, ``MISS`` where it is another, and 1/4 where the ``k`` bases occur nowhere before."""

    K, HIT, MISS = 12, 0.97, 0.01

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        self.asked += [request.args for request in requests]
        return [(self._ll(*request.args), False) for request in requests]

    def _ll(self, context: str, continuation: str) -> float:
        text, k = context + continuation, self.K
        latest = {text[i : i + k]: i + k for i in range(len(context) - k)}  # k-mer -> base after
        total = 0.0
        for p in range(len(context), len(text)):
            seen = latest.get(text[p - k : p])
            probability = 0.25 if seen is None else self.HIT if text[seen] == text[p] else self.MISS
            total += math.log(probability)
            latest[text[p - k : p]] = p
        return total


def run(model, data: Path, config: str = "rc", **metadata) -> dict:
    """The task ``perturbation_recall`` on ``data/<config>`` through lm-eval with ``model`` (an
    lm-eval ``LM`` object); lm-eval's result, samples logged."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    metadata = {"config": config, "data_dir": str(data), **metadata}
    manager = TaskManager(
        include_path=[str(tasks_dir())], include_defaults=False, metadata=metadata
    )
    return simple_evaluate(
        model=model, tasks=["perturbation_recall"], task_manager=manager, log_samples=True
    )


def per_document(result: dict) -> list[dict]:
    """Each logged sample's doc and its pair of log-likelihoods, by doc id."""
    samples = sorted(result["samples"]["perturbation_recall"], key=lambda s: s["doc_id"])
    return [{**s["doc"], "lls": tuple(s["filtered_resps"][0])} for s in samples]

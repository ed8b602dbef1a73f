"""Pair each document's two loglikelihood responses into (LL_original, LL_perturbed).

The task YAMLs use lm-eval's ``multiple_choice`` output type with the choices
``[original, perturbed]``: lm-eval makes two loglikelihood requests per document, index 0 for
the original and index 1 for the perturbed sequence, and keeps them next to each other in the
task's instance list. :class:`PairFilter` walks that list two at a time, checks that both
responses belong to the same document and are real numbers, and gives each of the two
instances the same :class:`LLPair`. :func:`process_results` turns it into the per-pair metrics.

Under data parallelism lm-eval shards whole documents across ranks, so both members of a pair
are always on the same rank; the per-pair values are gathered to rank 0 before aggregation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from lm_eval.api.filter import Filter

from perturbation_bench.errors import PairingError
from perturbation_bench.metrics import pair_metrics


class LLPair(NamedTuple):
    """Log-likelihoods (nats) of both sequences of a pair."""

    original: float
    perturbed: float


class PairFilter(Filter):
    """lm-eval filter: per-instance ``[(ll, is_greedy)]`` -> the document's :class:`LLPair`."""

    def apply(self, resps, docs):
        """Return one :class:`LLPair` per instance, the same for both instances of a document."""
        if len(resps) % 2:
            raise PairingError(
                f"expected two loglikelihood responses per document, got {len(resps)} in all"
            )
        paired = []
        for first in range(0, len(resps), 2):
            doc = docs[first]
            if docs[first + 1] is not doc and docs[first + 1] != doc:
                raise PairingError(
                    f"responses {first} and {first + 1} belong to different documents "
                    f"({_describe(doc)} / {_describe(docs[first + 1])})"
                )
            pair = LLPair(float(resps[first][0][0]), float(resps[first + 1][0][0]))
            if math.isnan(pair.original) or math.isnan(pair.perturbed):
                raise PairingError(
                    f"the model returned a NaN log-likelihood for {_describe(doc)} "
                    f"({pair.original} / {pair.perturbed}); the weights or the dtype overflowed "
                    "(try dtype=float32 or bfloat16 instead of float16)"
                )
            paired += [pair, pair]
        return paired


def process_results(doc, results) -> dict[str, float]:
    """lm-eval hook: ``results`` is ``[pair, pair]`` from :class:`PairFilter`."""
    if len(results) != 2 or results[0] != results[1]:
        raise PairingError(f"{_describe(doc)}: expected one pair twice, got {results!r}")
    pair = results[0]
    return pair_metrics(pair.original, pair.perturbed)


def _describe(doc) -> str:
    for key in ("benchmark_id", "transcript_id", "gene_name"):
        if doc.get(key):
            return f"pair {key}={doc[key]!r}"
    return f"pair starting {doc.get('original_sequence', '')[:20]!r}"

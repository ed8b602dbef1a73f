"""Pair each document's two loglikelihood responses into (LL_original, LL_perturbed).

The task YAMLs use lm-eval's ``multiple_choice`` output type with the choices of
``pairs/requests.py`` (``[original, perturbed]``, or both strands with ``rc_average``): lm-eval
makes one loglikelihood request per choice, in that order, and keeps a document's requests next
to each other in the task's instance list. :class:`PairFilter` walks that list one document at a
time, checks that the responses belong to the same document and are numbers, and gives each of
the document's instances the same :class:`LLPair`, the strand average of its log-likelihoods
(``pairs.requests.strand_average``), where, with ``reduction: mean``, each ``ll[i]`` is first
divided by its continuation's number of scored tokens (the document's ``scoring_token_counts``).
It then reports the task's ties (``metrics.report_ties``), once. A footprint document's three
comparisons (``tasks/document_requests.py``) are three such pairs, one after the other: each
instance gets the pair of its own comparison, and the ties counted are those of the first.

:func:`process_results` turns it into the per-pair metrics.

Under data parallelism lm-eval shards whole documents across ranks, so both members of a pair
are always on the same rank; the per-pair values are gathered to rank 0 before aggregation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from lm_eval.api.filter import Filter

from perturbation_bench.errors import PairingError
from perturbation_bench.pairs.fields import TOKEN_COUNTS
from perturbation_bench.pairs.kinds import shape_of
from perturbation_bench.pairs.requests import strand_average
from perturbation_bench.pairs.settings import settings_of
from perturbation_bench.tasks.document_requests import (
    requests_per_comparison,
    requests_per_document,
)
from perturbation_bench.tasks.metrics import pair_metrics, report_ties


class LLPair(NamedTuple):
    """Log-likelihoods (nats) of both sequences of a pair."""

    original: float
    perturbed: float


class PairFilter(Filter):
    """lm-eval filter: per-instance ``[(ll, is_greedy)]`` -> the document's :class:`LLPair`."""

    def apply(self, resps, docs):
        """Return one :class:`LLPair` per instance, the same for all instances of a document."""
        paired = []
        first = tied = pairs = 0
        while first < len(resps):
            doc = docs[first]
            size, per_comparison = requests_per_document(doc), requests_per_comparison(doc)
            group = range(first, first + size)
            if group.stop > len(resps) or any(docs[i] is not doc and docs[i] != doc for i in group):
                raise PairingError(
                    f"expected {size} consecutive loglikelihood responses for {_describe(doc)}, "
                    f"found responses {first}..{min(group.stop, len(resps)) - 1} of "
                    f"{len(resps)} belonging to other documents or missing"
                )
            lls = [float(resps[i][0][0]) for i in group]
            counts = doc.get(TOKEN_COUNTS)
            if counts:
                lls = [ll / n for ll, n in zip(lls, counts, strict=True)]
            if any(math.isnan(ll) for ll in lls) and not _nan_allowed(doc):
                raise PairingError(
                    f"the model returned a NaN log-likelihood for {_describe(doc)} ({lls}); "
                    "the weights or the dtype overflowed (try dtype=float32 or bfloat16 "
                    "instead of float16)"
                )
            compared = [
                LLPair(*strand_average(lls[i : i + per_comparison]))
                for i in range(0, size, per_comparison)
            ]
            paired += [pair for pair in compared for _ in range(per_comparison)]
            tied += compared[0].original == compared[0].perturbed
            pairs += 1
            first = group.stop
        if docs:
            settings = settings_of(docs[0])
            config = settings.config if settings else None
            report_ties(config, tied, pairs, shape_of(docs[0]).compared)
        return paired


def compared_pairs(doc, results) -> list[LLPair]:
    """The pair of each of a document's comparisons, from ``results`` (per request, from
    :class:`PairFilter`: each comparison's pair once per request of it)."""
    size, per_comparison = requests_per_document(doc), requests_per_comparison(doc)
    pairs = list(results[::per_comparison])
    if len(results) != size or list(results) != [p for p in pairs for _ in range(per_comparison)]:
        raise PairingError(f"{_describe(doc)}: expected one pair per request, got {results!r}")
    return pairs


def process_results(doc, results) -> dict[str, float]:
    """lm-eval hook: the metrics of the document's pair (its first comparison)."""
    pair = compared_pairs(doc, results)[0]
    return pair_metrics(pair.original, pair.perturbed)


def logged_pairs(result: dict, task: str) -> list[tuple[float, float]]:
    """``(LL_original, LL_perturbed)`` per document, in document order, from the samples of an
    in-process ``simple_evaluate(..., log_samples=True)`` result."""
    samples = sorted(result["samples"][task], key=lambda s: s["doc_id"])
    return [tuple(s["filtered_resps"][0]) for s in samples]


def _nan_allowed(doc) -> bool:
    """Whether a NaN answer means "no value" for ``doc``: a score the model computes
    (``score: jsd`` at a chromosome's last base, ``models/jsd_scoring.py``), not a
    log-likelihood that overflowed."""
    settings = settings_of(doc)
    return settings is not None and settings.reading.by_model


def _describe(doc) -> str:
    for key in ("benchmark_id", "transcript_id", "gene_name"):
        if doc.get(key):
            return f"pair {key}={doc[key]!r}"
    return f"pair starting {doc.get('original_sequence', '')[:20]!r}"

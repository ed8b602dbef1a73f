"""The task metrics of one pair, and their aggregation.

Each metric is a value of the pair's outcome (``pairs/outcome.py``, ``a = LL(original)``,
``b = LL(perturbed)``, nats)::

    pairwise_acc = correct = 1[a > b]     strict
    tie_rate     = tie     = 1[a == b]
    margin       = a - b

Each task reports the mean of each over its pairs (lm-eval's built-in ``mean`` aggregation, so
lm-eval adds their standard errors). When more than :data:`TIE_WARNING_THRESHOLD` of a task's
pairs tie, :func:`report_ties` says so once per task, naming its config, with what ties mean for
the model that scored them: expected of a composition floor (a Markov chain ties sequences with
the same k-mer counts), the model's own with this package's float32 scorers, and most often
rounding with lm-eval's ``hf`` model in half precision.
"""

from __future__ import annotations

import logging

from perturbation_bench.active_models import active_model, document_share
from perturbation_bench.families import reads_bases
from perturbation_bench.pairs.outcome import pair_outcome
from perturbation_bench.pairs.shape import PAIR_SHAPE

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply

TIE_WARNING_THRESHOLD = 0.01
"""Share of tied pairs above which :func:`report_ties` speaks."""


def pair_metrics(ll_original: float, ll_perturbed: float) -> dict[str, float]:
    """Return the three per-pair metrics defined in the module docstring."""
    outcome = pair_outcome(ll_original, ll_perturbed)
    return {
        "pairwise_acc": float(outcome.correct),
        "tie_rate": float(outcome.tie),
        "margin": float(outcome.margin),
    }


def report_ties(
    config: str | None, tied: int, pairs: int, compared: tuple[str, str] = PAIR_SHAPE.compared
) -> None:
    """Log the share ``tied / pairs`` of one task's tied pairs (this process's, under data
    parallelism: each process says its own) above :data:`TIE_WARNING_THRESHOLD`; ``compared``:
    the names of the pair's two log-likelihoods (``shape.DocumentShape.compared``)."""
    if not pairs or tied / pairs <= TIE_WARNING_THRESHOLD:
        return
    _, world_size = document_share() or (0, 1)
    held = " held by this process" if world_size > 1 else ""
    where = f"perturbation-bench {config or 'task'}: {tied} of {pairs} pairs{held} tie"
    where += " (LL({}) == LL({}) exactly)".format(*compared)
    model = active_model()
    if reads_bases(model):
        log.info(
            "%s, as expected of %s: a chain of order K reads each base from the K bases before "
            "it only, so two inputs whose scored bases have the same K bases before each score "
            "the same (sequences with the same (K+1)-mer counts and first K bases; a target "
            "after two contexts that end alike). Every tie counts as wrong.",
            where,
            model,
        )
    elif model is not None:
        log.warning(
            "%s. %s takes every log-softmax in float32 and sums in float64, so these ties are the "
            "model's own (identical sequences, or a model that does not see the change); every "
            "tie counts as wrong.",
            where,
            model,
        )
    else:
        log.warning(
            "%s, and every tie counts as wrong. With half-precision weights this is usually "
            "rounding, not the model: lm-eval's hf model sums the log-probs of ~8k tokens in the "
            "model dtype, where neighbouring representable values near 10,000 are 64 nats apart "
            "in bf16. Re-run with softmax_dtype=float32 in --model_args (or use --model dna-hf). "
            "Pairs whose two sequences are identical also tie.",
            where,
        )

"""The task metrics of one pair, and their aggregation.

Each metric is a value of the pair's outcome (``pairs/outcome.py``, ``a = LL(original)``,
``b = LL(perturbed)``, nats)::

    pairwise_acc = correct = 1[a > b]     strict
    tie_rate     = tie     = 1[a == b]
    margin       = a - b

Each task reports the mean of each over its pairs. ``pairwise_acc`` and ``margin`` use lm-eval's
built-in ``mean`` aggregation, so lm-eval adds their standard errors; ``tie_rate`` uses
:func:`tie_rate`, the same mean plus a warning when ties are frequent enough to suggest a
precision problem rather than a model that really cannot tell the sequences apart.
"""

from __future__ import annotations

import logging
from typing import Sequence

from perturbation_bench.pairs.outcome import pair_outcome

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply

TIE_WARNING_THRESHOLD = 0.01
"""Share of tied pairs above which :func:`tie_rate` warns."""


def pair_metrics(ll_original: float, ll_perturbed: float) -> dict[str, float]:
    """Return the three per-pair metrics defined in the module docstring."""
    outcome = pair_outcome(ll_original, ll_perturbed)
    return {
        "pairwise_acc": float(outcome.correct),
        "tie_rate": float(outcome.tie),
        "margin": float(outcome.margin),
    }


def tie_rate(ties: Sequence[float]) -> float:
    """Mean of the per-pair tie indicators; warns above :data:`TIE_WARNING_THRESHOLD`."""
    rate = sum(ties) / len(ties)
    if rate > TIE_WARNING_THRESHOLD:
        log.warning(
            "%.1f%% of pairs have LL(original) == LL(perturbed) exactly, and every tie counts "
            "as wrong. With half-precision weights this is usually rounding, not the model: "
            "lm-eval's hf model sums the log-probs of ~8k tokens in the model dtype, where "
            "neighbouring representable values near 10,000 are 64 nats apart in bf16. Re-run "
            "with softmax_dtype=float32 in --model_args (or use --model dna-hf). Pairs whose "
            "two sequences are identical also tie.",
            100 * rate,
        )
    return rate

"""The benchmark's decision rule and the values of one pair, defined once.

A model gets a pair right when it gives the real window a strictly higher log-likelihood than
the perturbed one. For ``a = LL(original)`` and ``b = LL(perturbed)`` (nats)::

    correct = 1[a > b]      strict: a tie counts as wrong, as in the current reference scorer
                            and the Carbon report (the first dataset card wrote ``>=``)
    tie     = 1[a == b]
    margin  = a - b

The task metrics (``pairwise_acc``, ``tie_rate``, ``margin``), the report and the benchmarks all
call :func:`pair_outcome`.
"""

from __future__ import annotations

from typing import NamedTuple


class Outcome(NamedTuple):
    """One pair's values (module docstring)."""

    correct: bool
    tie: bool
    margin: float


def pair_outcome(ll_original: float, ll_perturbed: float) -> Outcome:
    """The :class:`Outcome` of one pair."""
    return Outcome(
        ll_original > ll_perturbed, ll_original == ll_perturbed, ll_original - ll_perturbed
    )


def pairwise_accuracy(pairs) -> float:
    """Mean of ``correct`` over ``(LL_original, LL_perturbed)`` pairs."""
    pairs = list(pairs)
    return sum(pair_outcome(a, b).correct for a, b in pairs) / len(pairs)

"""The benchmark's decision rule for one pair, defined once.

A model gets a pair right when it gives the real window a strictly higher log-likelihood than
the perturbed one::

    correct = 1[LL(original) > LL(perturbed)]

A tie counts as wrong, as in the current reference scorer and the Carbon report (the first
dataset card wrote ``>=``). The task metrics, the report and the benchmark all call
:func:`original_wins`.
"""

from __future__ import annotations


def original_wins(ll_original: float, ll_perturbed: float) -> bool:
    """True when the model prefers the original sequence, strictly (a tie is False)."""
    return ll_original > ll_perturbed


def pairwise_accuracy(pairs) -> float:
    """Mean of :func:`original_wins` over ``(LL_original, LL_perturbed)`` pairs."""
    pairs = list(pairs)
    return sum(original_wins(a, b) for a, b in pairs) / len(pairs)

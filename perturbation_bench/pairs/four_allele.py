"""The four-allele reading of a single-base variant: the marginal over its site's four alleles,
and the scores read from it (GPN-Star; marin-dna's ``compute_marginal_clm`` and
``entropy_from_marginal``). ``scores.py`` names the scores of this reading.

A variant at site ``i`` of its reference window ``w`` is scored with all four alleles there:
``w_x`` is ``w`` with base ``x`` at ``i``, for ``x`` in ``ACGT``. With ``LL(w_x)`` the model's
log-likelihood of the whole window (a causal model's sum over its tokens, a masked model's
masked marginal at the site, as for any pair; with ``rc_average`` the mean over both strands of
the same forward allele), the marginal is the log-softmax over the four::

    m[x] = LL(w_x) - log sum_y exp(LL(w_y))

and the scores, in nats::

    marginal_llr   s = m[ref] - m[alt]  = LL(w_ref) - LL(w_alt)   the llr score, read off the marginal
    entropy        s = -sum_x exp(m[x]) m[x]                       in [0, log 4]; log 4 when the model
                                                                   cannot tell the alleles apart

The normaliser cancels in ``marginal_llr``, so it equals the two-allele ``llr``; ``entropy`` is
the site's, the same for the three alternates of one site. A constrained site has a low
entropy: unlike the other scores, a larger entropy is not a more damaging variant.

marin-dna normalises every position over the four nucleotide logits (a 4-nucleotide softmax)
before summing; this package's ``LL`` is the model's own, over its whole vocabulary (the same
``LL`` as every other task). The two agree where the model puts its mass on A, C, G and T.
"""

from __future__ import annotations

import math

from perturbation_bench.dna import BASES
from perturbation_bench.pairs.fields import CHANGE, CHANGE_START, ORIGINAL


def other_alleles(ref: str, alt: str) -> tuple[str, str]:
    """The two bases of ``ACGT`` that are neither ``ref`` nor ``alt`` (upper case), in that
    order."""
    ref, alt = ref.upper(), alt.upper()
    others = tuple(base for base in BASES if base not in (ref, alt))
    if len(others) != 2:  # exactly when ref and alt are two different bases of ACGT
        raise ValueError(f"not a single-base change between two of ACGT: {ref!r} > {alt!r}")
    return others


def with_base(window: str, site: int, base: str) -> str:
    """``window`` with ``base`` at ``site``."""
    return window[:site] + base + window[site + 1 :]


def other_windows(doc: dict) -> tuple[str, str]:
    """A single-base variant document's reference window with each of the two other bases at
    its site (the site and the alternate base are its changed span, ``changes.py``)."""
    original, site = doc[ORIGINAL], doc[CHANGE_START]
    others = other_alleles(original[site], doc[CHANGE])
    return with_base(original, site, others[0]), with_base(original, site, others[1])


def marginal(lls: dict[str, float]) -> dict[str, float]:
    """``m[x]``: the log-softmax of the four alleles' log-likelihoods (module docstring)."""
    top = max(lls.values())
    log_total = top + math.log(sum(math.exp(ll - top) for ll in lls.values()))
    return {base: ll - log_total for base, ll in lls.items()}


def marginal_llr(m: dict[str, float], ref: str, alt: str) -> float:
    """``s`` of ``marginal_llr`` (module docstring) from the marginal ``m``."""
    return m[ref] - m[alt]


def entropy(m: dict[str, float], ref: str, alt: str) -> float:
    """``s`` of ``entropy`` (module docstring) from the marginal ``m``: the site's, whatever the
    alleles."""
    return -sum(math.exp(value) * value for value in m.values())


def four_allele_lls(doc: dict, pair, others) -> tuple[str, str, dict[str, float]]:
    """A document's ``(ref, alt, {base: LL(w_base)})`` from its pair's log-likelihoods
    ``(LL(w_ref), LL(w_alt))`` and those of its two other windows (:func:`other_windows`)."""
    ref, alt = doc[ORIGINAL][doc[CHANGE_START]].upper(), doc[CHANGE].upper()
    lls = dict(zip(other_alleles(ref, alt), others, strict=True))
    return ref, alt, {ref: pair[0], alt: pair[1], **lls}

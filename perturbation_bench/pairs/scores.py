"""The variant scores: one declared row per value of the variant task's ``score`` setting, each
carrying its behaviour, which the task's options, its requests, the models, the report and the
export call.

A score is read one of three ways (:class:`Reading`):

    margin       the pair's margin ``LL(ref) - LL(alt)`` (``ranking.py``): one comparison per
                 variant
    four_allele  the marginal over the four alleles at the variant's site (``four_allele.py``):
                 two comparisons per variant, the pair and the two other bases; single-base
                 variants only
    model        a score the model computes itself from the pair and returns as the pair's
                 margin (``models/jsd_scoring.py``): one comparison, no pair metrics, reported
                 on its own scale; single-base variants only

and each row declares

    name      the setting's value
    reading   how it is read (above)
    of        its value from what its reading gives: the margin (margin, model), or the
              marginal ``m`` with the variant's ``ref`` and ``alt`` (four_allele)
    traitgym  TraitGym's name of an unsupervised score, ``(features, sign, feature)``: the
              export's file name ``<run>_<features>.<sign>.<feature>``
    formula   ``s``, as the docs state it
    base      for a context-calibrated score, the score it calibrates (``calibration.py``:
              ``s = s_base - mean over the variant's cell``); None for the others
    equals    the score whose value this one always equals (``marginal_llr``: the normaliser
              cancels, so it is ``llr``); a calibration run scored with either calibrates both
    models    the lm-eval models that compute it, under their default scoring; empty: any

A new score of an existing reading is its row here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from perturbation_bench.pairs.fields import CALIBRATION
from perturbation_bench.pairs.four_allele import entropy, four_allele_lls, marginal, marginal_llr


class Reading(NamedTuple):
    """One way a variant score is read (module docstring)."""

    name: str
    comparisons: int
    """Comparisons per variant document (``tasks/document_requests.py``)."""
    single_base: bool
    """Defined for single-base variants only."""
    by_model: bool
    """The model computes the score: the pair's margin is the score, on the score's own
    scale, and a pair's metrics do not apply."""


MARGIN = Reading("margin", 1, single_base=False, by_model=False)
FOUR_ALLELE = Reading("four_allele", 2, single_base=True, by_model=False)
MODEL = Reading("model", 1, single_base=True, by_model=True)


def _same(margin: float) -> float:
    return margin


class VariantScore(NamedTuple):
    """One variant score (module docstring)."""

    name: str
    reading: Reading
    of: Callable[..., float]
    traitgym: tuple[str, str, str]
    formula: str
    base: str | None = None
    equals: str | None = None
    models: tuple[str, ...] = ()

    def value(self, doc: dict, pair, others=None) -> float:
        """``s`` of a variant document from its pair's log-likelihoods ``(LL(w_ref),
        LL(w_alt))`` and, for a four-allele score, those of its two other windows; a calibrated
        score less its cell's mean (``fields.CALIBRATION``)."""
        if self.base is not None:
            return SCORE[self.base].value(doc, pair, others) - doc[CALIBRATION]
        if self.reading is FOUR_ALLELE:
            ref, alt, lls = four_allele_lls(doc, pair, others)
            return self.of(marginal(lls), ref, alt)
        return self.of(pair[0] - pair[1])


def _calibrated(name: str, base: VariantScore, traitgym: tuple, formula: str) -> VariantScore:
    """The context-calibrated ``base``: read as ``base`` is, less its cell's mean."""
    return VariantScore(name, base.reading, base.of, traitgym, formula, base=base.name)


LLR = VariantScore("llr", MARGIN, _same, ("LLR", "minus", "score"), "LL(ref) - LL(alt)")
ENTROPY = VariantScore(
    "entropy",
    FOUR_ALLELE,
    entropy,
    ("entropy", "plus", "score"),
    "-sum_x exp(m[x]) m[x], in [0, log 4]",
)
# fmt: off
SCORES = (
    LLR,
    VariantScore("abs_llr", MARGIN, abs, ("absLLR", "plus", "score"), "|LL(ref) - LL(alt)|"),
    VariantScore("marginal_llr", FOUR_ALLELE, marginal_llr, ("marginalLLR", "minus", "score"),
                 "m[ref] - m[alt], m the four-allele marginal", equals="llr"),
    ENTROPY,
    VariantScore("jsd", MODEL, _same, ("JSD", "plus", "score"),
                 "mean over the bases after the site of JSD(their predicted distributions)",
                 models=("dna-hf", "dna-mlm")),
    _calibrated("calibrated_llr", LLR, ("calibratedLLR", "minus", "score"),
                "llr - mean llr of the cell's neutral sites"),
    _calibrated("calibrated_entropy", ENTROPY, ("calibratedEntropy", "plus", "score"),
                "entropy - mean entropy of the cell's neutral sites"),
)
# fmt: on
SCORE = {score.name: score for score in SCORES}
""":data:`SCORES` by name."""
CALIBRATED_SCORES = tuple(score.name for score in SCORES if score.base is not None)
"""The context-calibrated scores."""


def calibrating(score: str) -> tuple[str, ...]:
    """The scores of the calibration runs whose cell means calibrate ``score``: its base and
    every score that equals the base."""
    base = SCORE[score].base
    return (base, *(s.name for s in SCORES if s.equals == base))

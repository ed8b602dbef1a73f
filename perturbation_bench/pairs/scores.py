"""The variant scores: one declared row per value of the variant task's ``score`` setting, which
the task's options, its requests, the report and the export read by name.

    name      the setting's value
    reads     what the score is read off: ``margin``, the pair's ``LL(ref) - LL(alt)``
              (``ranking.py``), ``marginal``, the four-allele marginal at the variant's site
              (``marginal.py``: two comparisons per variant, single-base variants only), or
              ``model``, a score the model computes itself from the pair
              (``models/jsd_scoring.py``; single-base variants only)
    traitgym  TraitGym's name of an unsupervised score, ``(features, sign, feature)``: the
              export's file name ``<run>_<features>.<sign>.<feature>``
    formula   ``s``, as the docs state it
    base      for a context-calibrated score, the score it calibrates (``calibration.py``:
              ``s = s_base - mean over the variant's cell``); None for the others
    models    the lm-eval models that compute it, under their default scoring; empty: any
"""

from __future__ import annotations

from typing import NamedTuple


class VariantScore(NamedTuple):
    """One variant score (module docstring)."""

    name: str
    reads: str
    traitgym: tuple[str, str, str]
    formula: str
    base: str | None = None
    models: tuple[str, ...] = ()


# fmt: off
SCORES = (
    VariantScore("llr", "margin", ("LLR", "minus", "score"), "LL(ref) - LL(alt)"),
    VariantScore("abs_llr", "margin", ("absLLR", "plus", "score"), "|LL(ref) - LL(alt)|"),
    VariantScore("marginal_llr", "marginal", ("marginalLLR", "minus", "score"),
                 "m[ref] - m[alt], m the four-allele marginal"),
    VariantScore("entropy", "marginal", ("entropy", "plus", "score"),
                 "-sum_x exp(m[x]) m[x], in [0, log 4]"),
    VariantScore("jsd", "model", ("JSD", "plus", "score"),
                 "mean over the bases after the site of JSD(their predicted distributions)",
                 models=("dna-hf", "dna-mlm")),
    VariantScore("calibrated_llr", "margin", ("calibratedLLR", "minus", "score"),
                 "llr - mean llr of the cell's neutral sites", base="llr"),
    VariantScore("calibrated_entropy", "marginal", ("calibratedEntropy", "plus", "score"),
                 "entropy - mean entropy of the cell's neutral sites", base="entropy"),
)
# fmt: on
SCORE = {score.name: score for score in SCORES}
""":data:`SCORES` by name."""
MARGINAL_SCORES = tuple(score.name for score in SCORES if score.reads == "marginal")
"""The scores read off the four-allele marginal."""
MODEL_SCORES = tuple(score.name for score in SCORES if score.reads == "model")
"""The scores the model computes itself (the pair's margin is the score; no pair metrics)."""
SINGLE_BASE_SCORES = (*MARGINAL_SCORES, *MODEL_SCORES)
"""The scores defined for single-base variants only."""
CALIBRATED_SCORES = tuple(score.name for score in SCORES if score.base is not None)
"""The context-calibrated scores."""

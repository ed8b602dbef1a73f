"""The variant score table (pairs/scores.py) and what reads it."""

from __future__ import annotations

from perturbation_bench.pairs.scores import (
    CALIBRATED_SCORES,
    MARGINAL_SCORES,
    MODEL_SCORES,
    SCORE,
    SCORES,
    SINGLE_BASE_SCORES,
)
from perturbation_bench.pairs.settings import SETTING
from perturbation_bench.report.export import traitgym_name


def test_the_score_setting_takes_exactly_the_tables_rows():
    names = (
        "llr",
        "abs_llr",
        "marginal_llr",
        "entropy",
        "jsd",
        "calibrated_llr",
        "calibrated_entropy",
    )
    assert SETTING["score"].choices == tuple(SCORE) == names
    assert MARGINAL_SCORES == ("marginal_llr", "entropy", "calibrated_entropy")
    assert CALIBRATED_SCORES == ("calibrated_llr", "calibrated_entropy")
    assert all(SCORE[SCORE[name].base].base is None for name in CALIBRATED_SCORES)
    assert {score.reads for score in SCORES} == {"margin", "marginal", "model"}
    assert MODEL_SCORES == ("jsd",)
    assert SINGLE_BASE_SCORES == (*MARGINAL_SCORES, "jsd")


def test_each_score_exports_under_its_traitgym_name():
    assert traitgym_name("m1", "llr") == "m1_LLR.minus.score"
    assert traitgym_name("m1", "abs_llr") == "m1_absLLR.plus.score"
    assert traitgym_name("m1", "entropy") == "m1_entropy.plus.score"
    assert traitgym_name("m1", "marginal_llr") == "m1_marginalLLR.minus.score"
    assert traitgym_name("m1", "jsd") == "m1_JSD.plus.score"

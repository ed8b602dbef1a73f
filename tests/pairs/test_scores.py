"""The variant score table (pairs/scores.py) and what reads it."""

from __future__ import annotations

from perturbation_bench.pairs.scores import (
    CALIBRATED_SCORES,
    FOUR_ALLELE,
    MARGIN,
    MODEL,
    SCORE,
    SCORES,
    calibrating,
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

    def read(reading):
        return tuple(score.name for score in SCORES if score.reading is reading)

    assert read(FOUR_ALLELE) == ("marginal_llr", "entropy", "calibrated_entropy")
    assert read(MODEL) == ("jsd",)
    assert read(MARGIN) == ("llr", "abs_llr", "calibrated_llr")
    assert CALIBRATED_SCORES == ("calibrated_llr", "calibrated_entropy")
    assert all(SCORE[SCORE[name].base].base is None for name in CALIBRATED_SCORES)
    assert [r.comparisons for r in (MARGIN, FOUR_ALLELE, MODEL)] == [1, 2, 1]
    assert [r.single_base for r in (MARGIN, FOUR_ALLELE, MODEL)] == [False, True, True]
    assert [r.by_model for r in (MARGIN, FOUR_ALLELE, MODEL)] == [False, False, True]


def test_a_calibrated_score_is_read_as_its_base_less_its_cell_s_mean():
    from perturbation_bench.pairs.fields import CALIBRATION, CHANGE, CHANGE_START, ORIGINAL

    doc = {ORIGINAL: "acGtA", CHANGE_START: 2, CHANGE: "T", CALIBRATION: 0.25}
    pair, others = (-9.25, -14.0), (-10.0, -11.5)
    for name in CALIBRATED_SCORES:
        base = SCORE[SCORE[name].base]
        assert SCORE[name].reading is base.reading
        assert SCORE[name].value(doc, pair, others) == base.value(doc, pair, others) - 0.25
    assert calibrating("calibrated_llr") == ("llr", "marginal_llr")  # marginal_llr equals llr
    assert calibrating("calibrated_entropy") == ("entropy",)


def test_each_score_exports_under_its_traitgym_name():
    assert traitgym_name("m1", "llr") == "m1_LLR.minus.score"
    assert traitgym_name("m1", "abs_llr") == "m1_absLLR.plus.score"
    assert traitgym_name("m1", "entropy") == "m1_entropy.plus.score"
    assert traitgym_name("m1", "marginal_llr") == "m1_marginalLLR.minus.score"
    assert traitgym_name("m1", "jsd") == "m1_JSD.plus.score"

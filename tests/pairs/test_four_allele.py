"""The four-allele reading (pairs/four_allele.py) and its scores against direct arithmetic."""

from __future__ import annotations

import math

import pytest

from perturbation_bench.pairs.fields import CHANGE, CHANGE_START, ORIGINAL
from perturbation_bench.pairs.four_allele import marginal, other_alleles, other_windows
from perturbation_bench.pairs.scores import SCORE

LLS = {"A": -10.0, "C": -11.5, "G": -9.25, "T": -14.0}


def test_the_marginal_is_the_log_softmax_of_the_four_windows():
    m = marginal(LLS)
    assert sum(math.exp(v) for v in m.values()) == pytest.approx(1.0, abs=1e-12)
    total = sum(math.exp(v) for v in LLS.values())
    for base, ll in LLS.items():
        assert m[base] == pytest.approx(ll - math.log(total), abs=1e-12)


def test_the_marginal_llr_is_the_two_allele_llr_and_the_entropy_is_shannons():
    def four_allele(score: str, ref: str, alt: str, lls: dict) -> float:
        return SCORE[score].of(marginal(lls), ref, alt)

    assert four_allele("marginal_llr", "G", "T", LLS) == pytest.approx(-9.25 + 14.0)
    p = [math.exp(v) for v in marginal(LLS).values()]
    assert four_allele("entropy", "G", "T", LLS) == pytest.approx(-sum(x * math.log(x) for x in p))
    uniform = dict.fromkeys("ACGT", -3.0)
    assert four_allele("entropy", "A", "C", uniform) == pytest.approx(math.log(4))
    assert four_allele("entropy", "A", "C", {"A": 0.0, "C": -80, "G": -80, "T": -80}) < 1e-30


def test_the_other_bases_are_in_acgt_order_and_a_change_of_one_base_is_required():
    assert other_alleles("g", "A") == ("C", "T")
    assert other_alleles("T", "C") == ("A", "G")
    for ref, alt in (("A", "A"), ("A", "N"), ("N", "A"), ("AC", "A"), ("A", "CG"), ("AC", "CA")):
        with pytest.raises(ValueError, match="not a single-base change"):
            other_alleles(ref, alt)


def test_a_documents_other_windows_and_score_come_from_its_changed_span():
    doc = {ORIGINAL: "acGtA", CHANGE_START: 2, CHANGE: "T"}
    assert other_windows(doc) == ("acAtA", "acCtA")
    pair, others = (LLS["G"], LLS["T"]), (LLS["A"], LLS["C"])
    score = SCORE["marginal_llr"].value(doc, pair, others)
    assert score == pytest.approx(LLS["G"] - LLS["T"])
    assert SCORE["llr"].value(doc, (-3.0, -1.0)) == pytest.approx(-2.0)
    assert SCORE["abs_llr"].value(doc, (-3.0, -1.0)) == pytest.approx(2.0)
    entropy = SCORE["entropy"].value(doc, pair, others)
    p = [math.exp(v) for v in marginal(LLS).values()]
    assert entropy == pytest.approx(-sum(x * math.log(x) for x in p))

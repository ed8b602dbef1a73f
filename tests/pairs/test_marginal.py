"""The four-allele marginal (pairs/marginal.py) against direct arithmetic."""

from __future__ import annotations

import math

import pytest

from perturbation_bench.pairs.fields import CHANGE, CHANGE_START, ORIGINAL
from perturbation_bench.pairs.marginal import (
    document_score,
    marginal,
    marginal_score,
    other_alleles,
    other_windows,
)

LLS = {"A": -10.0, "C": -11.5, "G": -9.25, "T": -14.0}


def test_the_marginal_is_the_log_softmax_of_the_four_windows():
    m = marginal(LLS)
    assert sum(math.exp(v) for v in m.values()) == pytest.approx(1.0, abs=1e-12)
    total = sum(math.exp(v) for v in LLS.values())
    for base, ll in LLS.items():
        assert m[base] == pytest.approx(ll - math.log(total), abs=1e-12)


def test_the_marginal_llr_is_the_two_allele_llr_and_the_entropy_is_shannons():
    assert marginal_score("marginal_llr", "G", "t", LLS) == pytest.approx(-9.25 + 14.0)
    p = [math.exp(v) for v in marginal(LLS).values()]
    assert marginal_score("entropy", "G", "T", LLS) == pytest.approx(
        -sum(x * math.log(x) for x in p)
    )
    uniform = dict.fromkeys("ACGT", -3.0)
    assert marginal_score("entropy", "A", "C", uniform) == pytest.approx(math.log(4))
    assert marginal_score("entropy", "A", "C", {"A": 0.0, "C": -80, "G": -80, "T": -80}) < 1e-30
    with pytest.raises(
        ValueError, match="not a marginal score: .llr.; one of marginal_llr, entropy$"
    ):
        marginal_score("llr", "A", "C", LLS)


def test_the_other_bases_are_in_acgt_order_and_a_change_of_one_base_is_required():
    assert other_alleles("g", "A") == ("C", "T")
    assert other_alleles("T", "C") == ("A", "G")
    for ref, alt in (("A", "A"), ("A", "N"), ("N", "A"), ("AC", "A"), ("A", "CG"), ("AC", "CA")):
        with pytest.raises(ValueError, match="not a single-base change"):
            other_alleles(ref, alt)


def test_a_documents_other_windows_and_score_come_from_its_changed_span():
    doc = {ORIGINAL: "acGtA", CHANGE_START: 2, CHANGE: "T"}
    assert other_windows(doc) == ("acAtA", "acCtA")
    score = document_score("marginal_llr", doc, (LLS["G"], LLS["T"]), (LLS["A"], LLS["C"]))
    assert score == pytest.approx(LLS["G"] - LLS["T"])
    assert document_score("llr", doc, (-3.0, -1.0)) == pytest.approx(-2.0)
    assert document_score("abs_llr", doc, (-3.0, -1.0)) == pytest.approx(2.0)
    entropy = document_score("entropy", doc, (LLS["G"], LLS["T"]), (LLS["A"], LLS["C"]))
    assert entropy == pytest.approx(marginal_score("entropy", "G", "T", LLS))

"""A kind's document shape (``pairs/shape.py``): what the core reads of a kind instead of its
names."""

from __future__ import annotations

import pytest

from perturbation_bench.kinds.footprints.shape import BACKGROUND, SHAPE
from perturbation_bench.pairs.identity import pair_id
from perturbation_bench.pairs.kinds import KIND, copies, margin_fields, shape_of
from perturbation_bench.pairs.shape import (
    PAIR,
    PAIR_SHAPE,
    Comparison,
    Copy,
    DocumentShape,
    Request,
)


@pytest.mark.parametrize(
    "comparisons",
    [
        (Comparison("original", "background", margin="m"),),  # the pair not first
        (PAIR, Comparison("original", "elsewhere", margin="m")),  # no such sequence
        (PAIR, Comparison("original", "background")),  # no field for its margin
    ],
)
def test_a_shape_compares_its_pair_first_then_its_own_sequences_each_with_a_margin(comparisons):
    with pytest.raises(ValueError, match="compares its pair first"):
        DocumentShape(copies=(Copy("background_sequence", "background"),), comparisons=comparisons)


def test_a_copy_is_held_as_its_span_under_its_name():
    assert (BACKGROUND.start, BACKGROUND.change) == (
        "scoring_background_start",
        "scoring_background_change",
    )
    assert copies() == (BACKGROUND,)
    assert margin_fields() == ("motif_margin", "control_margin") == SHAPE.margins


def test_a_document_s_shape_is_its_kind_s():
    footprint = {"motif": "TF1", BACKGROUND.change: "ACG", BACKGROUND.start: 3}
    assert shape_of(footprint) is SHAPE  # the motif column of a footprint does not make it motif
    assert shape_of({"alt": "G", "motif": None}) is KIND["variants"].document
    assert shape_of({"motif": None, BACKGROUND.change: None}) is PAIR_SHAPE
    assert shape_of({"n_codons_changed": 3}) is PAIR_SHAPE


def test_what_enters_a_pair_s_id_is_what_its_kind_declares():
    variants, footprints = KIND["variants"].document, KIND["footprints"].document
    row = {"assay": "R1", "motif": "TF1"}
    assert variants.pair_id("AC", "AG", row) == pair_id("AC", "AG", "R1")
    assert variants.pair_id("AC", "AG", {}) == pair_id("AC", "AG")
    assert footprints.pair_id("AC", "AG", row) == pair_id("AC", "AG") != pair_id("AC", "AG", "R1")


@pytest.mark.parametrize(
    "requests",
    [
        (Request("a", "t"),),  # one: nothing to compare
        (Request("a", "t"), Request("b", "t"), Request("c", "t")),  # three
        (Request("a", "t"), Request("b", "u")),  # two continuations: not one lm-eval choice set
    ],
)
def test_a_shape_of_requests_asks_two_with_one_continuation(requests):
    with pytest.raises(ValueError, match="asks two, with one continuation"):
        DocumentShape(requests=requests)
    with pytest.raises(ValueError, match="holds no copies"):
        DocumentShape(requests=requests[:1] * 2, copies=(Copy("b", "b"),))


def test_a_shape_of_requests_reads_its_columns_in_place_of_the_pair_s():
    shape = DocumentShape(columns=("d",), requests=(Request("a", "t"), Request("b", "t")))
    assert (shape.contexts, shape.sequence_columns) == (("a", "b"), ("a", "b", "t"))
    assert shape.checked_columns == ("a", "b", "t", "d")
    assert (
        PAIR_SHAPE.checked_columns
        == ("original_sequence", "sequence")
        == PAIR_SHAPE.sequence_columns
    )

"""A kind's document shape (``pairs/shape.py``): what the core reads of a kind instead of its
names."""

from __future__ import annotations

import pytest

from perturbation_bench.kinds.footprints.shape import BACKGROUND, SHAPE
from perturbation_bench.pairs.identity import pair_id
from perturbation_bench.pairs.kinds import KIND, copies, margin_fields, shape_of
from perturbation_bench.pairs.shape import PAIR, PAIR_SHAPE, Comparison, Copy, DocumentShape


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

"""The scoring table (families.SCORINGS): what each model's scoring argument gives, and the
report reading it."""

from __future__ import annotations

import pytest

from perturbation_bench.families import (
    DEFAULT_SCORINGS,
    DIRECTED_SCALES,
    MODELS,
    SCORING,
    SCORINGS,
    scoring_of,
)


@pytest.mark.parametrize(
    ("model", "scoring", "scale"),
    [
        (None, None, "causal"),
        ("dna-hf", None, "causal"),
        ("dna-hf", "embedding", "embedding"),
        ("kmer-markov", None, "causal"),
        ("dna-mlm", None, "masked"),
        ("dna-mlm", "marginal", "masked"),
        ("dna-mlm", "pll", "pll"),
        ("dna-mlm", "embedding", "embedding"),
    ],
)
def test_a_runs_scale_follows_from_its_model_and_scoring(model, scoring, scale):
    assert scoring_of(model, scoring).scale == scale


def test_every_models_scorings_are_rows_and_each_scale_is_one_rows():
    assert {s for model in MODELS.values() for s in model.scorings} <= set(SCORING)
    assert len({s.scale for s in SCORINGS}) == len(SCORINGS)
    assert DEFAULT_SCORINGS == ("likelihood", "marginal")


def test_only_scores_with_a_direction_enter_the_paired_tables():
    assert DIRECTED_SCALES == ("causal", "masked", "pll")
    assert not SCORING["embedding"].directed
    assert {s.unit for s in SCORINGS if s.directed} == {"nats"}


def test_the_margin_figure_labels_every_scale():
    from perturbation_bench.report.plots import SCALE_LABELS

    assert set(SCALE_LABELS) == {s.scale for s in SCORINGS} | {"jsd"}


def test_the_composition_floor_is_the_markov_chain_alone_and_random_weights_a_floor_too():
    from perturbation_bench.families import COMPOSITION, RANDOM_WEIGHTS, floor_kind

    assert [name for name in MODELS if floor_kind(name)] == ["kmer-markov"]
    assert floor_kind("kmer-markov") == COMPOSITION and floor_kind(None) is None
    random = {"random_init": True, "seed": 42}
    assert [floor_kind(name, random) for name in ("dna-hf", "dna-mlm", None)] == [
        RANDOM_WEIGHTS
    ] * 3
    assert floor_kind("dna-hf", {"random_init": "true"}) is None  # settings hold the bool

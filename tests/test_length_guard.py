"""A sequence longer than the model's context stops with the numbers and the fix, not an AssertionError."""

from __future__ import annotations

import pytest

from dna_fixtures import evaluate
from perturbation_bench.errors import SequenceTooLongError


def test_too_long_sequence_names_limit_length_and_fix(tiny_models, pair_data):
    with pytest.raises(SequenceTooLongError) as error:
        evaluate(
            tiny_models["char"],
            ["perturbation_syn_human"],
            {"data_dir": str(pair_data)},
            max_length=100,
        )
    message = str(error.value)
    assert "124 bp is 124 tokens" in message
    assert "max_length of 100 tokens" in message
    assert "--model dna-hf" in message


def test_sequences_that_fit_exactly_are_scored(tiny_models, pair_data):
    result = evaluate(
        tiny_models["char"],
        ["perturbation_syn_human"],
        {"data_dir": str(pair_data)},
        max_length=124,
    )
    assert result["results"]["perturbation_syn_human"]["sample_len"] == 8

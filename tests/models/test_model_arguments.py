"""Model arguments a model does not take are refused in one line before any weight is read, by
the run and by ``check`` alike (``models/model_arguments.py``); those it takes pass."""

from __future__ import annotations

import json

import pytest

from dna_fixtures import evaluate
from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.model_arguments import check_model_arguments

TASK = "perturbation_syn_human"


@pytest.mark.parametrize(
    "model, arguments, message",
    [
        (
            "dna-hf",
            {"scoring": "pll"},
            "dna-hf scores with scoring= likelihood or embedding, not 'pll' .pll is a scoring of dna-mlm.$",
        ),
        ("dna-mlm", {"scoring": "pl"}, "scores with scoring= .*, not 'pl' .did you mean 'pll'..$"),
        ("dna-hf", {"order": 5}, "does not take the model argument order .order is an argument of kmer-markov"),
        ("hf", {"plugin": "gpn"}, "hf does not take the model argument plugin .plugin is an argument of dna-mlm"),
        ("dna-mlm", {"window_stride": 8}, "dna-mlm does not take the model argument window_stride .window_stride is an argument of dna-hf.; it takes batch_size, dedupe,"),
        ("dna-hf", {"windows_stride": 8}, "dna-hf does not take the model argument windows_stride$"),
        ("kmer-markov", {"pretrained": "x"}, "kmer-markov does not take the model argument pretrained .pretrained is an argument of dna-hf and dna-mlm.; it takes counts, fasta, order, pseudocount$"),
    ],
)  # fmt: skip
def test_an_argument_the_model_does_not_take_is_refused_naming_who_takes_it(
    tiny_models, model, arguments, message
):
    given = {"pretrained": tiny_models["char"]} if model != "kmer-markov" else {"fasta": "g.fa"}
    with pytest.raises(OptionsError, match=message):
        check_model_arguments(model, {**given, **arguments})


@pytest.mark.parametrize(
    "model, arguments",
    [
        ("dna-hf", {"window_stride": 8, "share_prefix": "false", "softmax_dtype": "float32"}),
        ("dna-hf", {"attn_implementation": "eager", "max_length": 64}),  # from_pretrained's, HFLM's
        ("dna-hf", {"attention_dropout": 0.0}),  # an attribute of the model's config
        ("hf", {"add_bos_token": False, "batch_size": 4, "device": "cpu"}),
        ("dna-mlm", {"scoring": "pll", "plugin": "gpn", "max_batch_size": 8}),
        ("kmer-markov", {"fasta": "g.fa", "order": 3, "device": "cpu", "batch_size": 1}),
    ],
)
def test_the_arguments_a_model_takes_pass(tiny_models, model, arguments):
    check_model_arguments(
        model,
        {"pretrained": tiny_models["char"], **arguments} if model != "kmer-markov" else arguments,
    )


def test_a_model_lm_eval_does_not_know_is_one_line():
    with pytest.raises(OptionsError, match="--model dna-llm: lm-eval has no model of that name"):
        check_model_arguments("dna-llm", {})


def test_the_run_refuses_before_reading_weights(tiny_models, pair_data, no_weights_read):
    with pytest.raises(
        OptionsError, match="dna-hf scores with scoring= likelihood or embedding, not 'pll'"
    ):
        evaluate(
            tiny_models["char"], [TASK], {"data_dir": str(pair_data)}, model="dna-hf", scoring="pll"
        )


def test_check_refuses_what_the_run_refuses(tiny_models, pair_data, no_weights_read, capsys):
    status = main(
        [
            "check",
            "--model",
            "dna-hf",
            "--tasks",
            TASK,
            "--metadata",
            json.dumps({"data_dir": str(pair_data)}),
            "--model_args",
            f"pretrained={tiny_models['char']},scoring=pll",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2
    assert (
        "dna-hf scores with scoring= likelihood or embedding, not 'pll' (pll is a scoring of dna-mlm)"
        in err
    )


BAD_VALUES = [
    ("dna-hf", {"seed": 3}, "seed=3 draws random weights, which only random_init=true does"),
    ("dna-hf", {"share_prefix": "sometimes"}, "share_prefix"),
    ("dna-hf", {"window_stride": 1.5}, "window_stride must be a whole number of tokens"),
    ("dna-hf", {"window_stride": 0}, "window_stride must be at least 1 token, got 0"),
    ("dna-hf", {"window_stride": -3}, "at least 1 token, got -3"),
    ("dna-hf", {"softmax_dtype": "bfloat16"}, "always takes the log-softmax in float32"),
    ("dna-hf", {"dedupe": "perhaps"}, "dedupe"),
    ("dna-hf", {"random_init": "true", "peft": "adapter"}, "peft=adapter loads or places"),
    ("dna-mlm", {"random_init": "true", "seed": "-1"}, "seed must be a whole number >= 0"),
    ("dna-mlm", {"scoring": "embedding", "distance": "manhattan"}, "distance"),
    ("kmer-markov", {"order": "three"}, "order must be a whole number from 0 to 12, got 'three'"),
    ("kmer-markov", {"pseudocount": "none"}, "pseudocount must be a number > 0"),
    ("kmer-markov", {"order": 13}, "order must be a whole number from 0 to 12, got '13'"),
    ("kmer-markov", {"fasta": ""}, "kmer-markov needs the genome to count"),
]
"""A value each model refuses of an argument it takes."""


@pytest.mark.parametrize(("model", "arguments", "message"), BAD_VALUES)
def test_check_and_the_constructor_refuse_a_bad_value_alike_before_any_weight(
    tiny_models, no_weights_read, model, arguments, message
):
    """``check`` reads the model's ``argument_values``, as its constructor does: one refusal."""
    from perturbation_bench.models.model_arguments import model_class

    given = {"pretrained": tiny_models["char"]} if model != "kmer-markov" else {"fasta": "g.fa"}
    given |= arguments
    with pytest.raises(OptionsError, match=message) as checked:
        check_model_arguments(model, given)
    with pytest.raises(OptionsError) as constructed:
        model_class(model)(**given)
    assert str(constructed.value) == str(checked.value)

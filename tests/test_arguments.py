"""Runs that are going to fail fail first, in one line: model arguments before any weight is read
(``arguments.py``)."""

from __future__ import annotations

import pytest

from perturbation_bench.arguments import check_batch_size, check_model_source, load_tokenizer, truth
from perturbation_bench.errors import OptionsError


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
@pytest.mark.parametrize(
    "pretrained, message",
    [
        ("./no/such/folder", "no such model folder .from .*, and not a hub id"),
        (
            "nosuch-model",
            "no such model folder .from .*, and the Hugging Face hub is off .HF_HUB_OFFLINE=1. with nothing cached",
        ),
    ],
)
def test_a_missing_model_is_refused_before_weights_load(
    model, pretrained, message, no_weights_read
):
    from lm_eval.api.registry import get_model

    import perturbation_bench.models.dna_hf  # noqa: F401  (registers the models)
    import perturbation_bench.models.dna_mlm  # noqa: F401

    with pytest.raises(OptionsError, match=f"pretrained={pretrained}: {message}"):
        get_model(model).create_from_arg_string(f"pretrained={pretrained}", {"device": "cpu"})


def test_a_file_is_not_a_model_folder(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"")
    with pytest.raises(OptionsError, match="a file, not a model folder"):
        check_model_source(str(tmp_path / "model.bin"))
    check_model_source(str(tmp_path))  # a folder passes


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
@pytest.mark.parametrize("size", ["0", "-2", "two", "auto:0"])
def test_invalid_batch_sizes_are_refused_before_weights_load(
    model, size, tiny_models, no_weights_read
):
    from lm_eval.api.registry import get_model

    import perturbation_bench.models.dna_hf  # noqa: F401
    import perturbation_bench.models.dna_mlm  # noqa: F401

    with pytest.raises(
        OptionsError, match=f"batch size must be a positive whole number or auto, got '{size}'"
    ):
        get_model(model).create_from_arg_string(
            f"pretrained={tiny_models['char']}", {"device": "cpu", "batch_size": size}
        )


@pytest.mark.parametrize("size", ["1", "16", "auto", "auto:4", 8])
def test_valid_batch_sizes_pass(size):
    check_batch_size(size)


@pytest.mark.parametrize(
    "value, expected",
    [(True, True), (False, False), ("True", True), ("false", False), (" FALSE ", False),
     ("yes", True), ("0", False)],
)  # fmt: skip
def test_a_truth_value_is_read_as_written(value, expected):
    assert truth(value, "dedupe") is expected


@pytest.mark.parametrize("value", ["maybe", "", None, 1, 0.0])
def test_anything_else_is_refused_naming_the_argument(value):
    with pytest.raises(OptionsError, match=f"^dedupe must be true or false, got {value!r}$"):
        truth(value, "dedupe")


def test_the_tokenizer_is_loaded_with_the_run_s_revision_and_trust_read_as_written(monkeypatch):
    """A string "False" (a Python caller's, or a YAML's) must not trust a model's own code."""
    import transformers

    calls = []
    monkeypatch.setattr(
        transformers.AutoTokenizer,
        "from_pretrained",
        classmethod(lambda cls, name, **kwargs: calls.append((name, kwargs)) or "tok"),
    )
    args = {"pretrained": "m", "tokenizer": "t", "trust_remote_code": "False", "revision": "v2"}
    assert load_tokenizer(args) == "tok"
    assert calls == [("t", {"trust_remote_code": False, "revision": "v2"})]
    assert load_tokenizer({"pretrained": "m", "trust_remote_code": "true"}) == "tok"
    assert calls[-1] == ("m", {"trust_remote_code": True, "revision": None})
    assert load_tokenizer({"dtype": "float32"}) is None and len(calls) == 2

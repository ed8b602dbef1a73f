"""Runs that are going to fail fail first, in one line: model arguments before any weight is read
(``models/arguments.py``)."""

from __future__ import annotations

import pytest

from perturbation_bench.errors import OptionsError
from perturbation_bench.models.arguments import check_batch_size, check_model_source


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

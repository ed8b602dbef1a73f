"""Runs that are going to fail fail first, in one line: model arguments before any weight is read,
task options and data through ``perturbation-bench check`` (a dry run, no weights)."""

from __future__ import annotations

import json
import re
import time

import pytest

from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.arguments import check_batch_size, check_model_source
from perturbation_bench.random_pairs import random_pairs, write_parquet


@pytest.fixture
def no_weights_read(monkeypatch):
    """Make any weight loading fail loudly, so a test shows its error came first."""
    from transformers import PreTrainedModel

    def refuse(*args, **kwargs):
        raise AssertionError("weights were read")

    monkeypatch.setattr(PreTrainedModel, "from_pretrained", classmethod(refuse))


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
@pytest.mark.parametrize(
    "pretrained, message",
    [
        ("./no/such/folder", "no such model folder .from .*, and not a hub id"),
        ("nosuch-model", "no such model folder .from .*, and the Hugging Face hub is off .HF_HUB_OFFLINE=1. with nothing cached"),
    ],
)
def test_a_missing_model_is_refused_before_weights_load(model, pretrained, message, no_weights_read):
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

    with pytest.raises(OptionsError, match=f"batch size must be a positive whole number or auto, got '{size}'"):
        get_model(model).create_from_arg_string(
            f"pretrained={tiny_models['char']}", {"device": "cpu", "batch_size": size}
        )


@pytest.mark.parametrize("size", ["1", "16", "auto", "auto:4", 8])
def test_valid_batch_sizes_pass(size):
    check_batch_size(size)


def check(capsys, *args: str) -> tuple[int, str, str]:
    started = time.perf_counter()
    status = main(["check", *args])
    captured = capsys.readouterr()
    assert time.perf_counter() - started < 30
    return status, captured.out, captured.err


def test_check_reads_every_task_and_tokenizes_a_sample(tiny_models, pair_data, capsys):
    status, out, _ = check(
        capsys,
        "--tasks", "perturbation_bench,hellaswag",
        "--metadata", json.dumps({"data_dir": str(pair_data)}),
        "--model_args", f"pretrained={tiny_models['char']},dtype=float32",
    )  # fmt: skip
    assert status == 0
    assert "hellaswag: not a perturbation-bench task; not checked" in out
    assert "perturbation_syn_human: 8 pairs, options and files OK; 124-124 tokens" in out
    assert "perturbation_motif_human: 6 pairs, options and files OK; 102-102 tokens" in out


@pytest.mark.parametrize(
    "metadata, message",
    [
        ({"data_dir": "DATA", "presets": "carbon"}, "unknown option 'presets' .did you mean 'preset'"),
        ({"data_dir": "DATA", "preset": "evo"}, "unknown preset 'evo'"),
        ({"data_dir": "/no/such/dir"}, "data_dir '/no/such/dir' has no folder 'syn_human'"),
        ({"data_dir": "DATA/syn_human"}, "a config folder: pass its parent"),
    ],
)
def test_check_reports_bad_options_and_data_in_one_line(pair_data, capsys, metadata, message):
    metadata = {k: v.replace("DATA", str(pair_data)) for k, v in metadata.items()}
    status, _, err = check(
        capsys, "--tasks", "perturbation_syn_human", "--metadata", json.dumps(metadata)
    )
    assert status == 2
    (line,) = [line for line in err.splitlines() if line.startswith("perturbation-bench error")]
    assert re.search(message, line), line


def test_check_reports_a_bad_pair_file(tmp_path, capsys):
    rows = random_pairs(3, 60, seed=1)
    rows[1]["sequence"] = rows[1]["sequence"][:-1]
    write_parquet(rows, tmp_path, "syn_human")
    status, _, err = check(
        capsys, "--tasks", "perturbation_syn_human", "--metadata", json.dumps({"data_dir": str(tmp_path)})
    )
    assert status == 2 and "row 1" in err and "length" in err


def test_check_refuses_a_tokenizer_that_does_not_fit(tiny_models, pair_data, capsys):
    """124 bp pairs under a 6-mer tokenizer without trimming: the 4-base tail is unknown."""
    status, _, err = check(
        capsys,
        "--tasks", "perturbation_syn_human",
        "--metadata", json.dumps({"data_dir": str(pair_data)}),
        "--model_args", f"pretrained={tiny_models['kmer6']}",
    )  # fmt: skip
    assert status == 2 and "has only A/C/G/T bases" in err and "preset 'default'" in err

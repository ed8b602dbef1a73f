"""A checkpoint the model cannot score is refused from its config.json, before any weight is read
(``models/architecture.py``), by ``perturbation-bench check`` and by the model itself; so is a
``score: jsd`` run with a tokenizer that has no single-base tokens."""

from __future__ import annotations

import importlib
import json

import pytest

from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.fixtures.random_models import (
    as_masked_lm_tokenizer,
    save_random_bert,
    single_nucleotide_tokenizer,
)


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("bert")
    return str(save_random_bert(folder, as_masked_lm_tokenizer(single_nucleotide_tokenizer())))


def check(capsys, model: str, path: str, data, metadata: dict | None = None) -> tuple[int, str]:
    status = main(
        [
            "check",
            "--model",
            model,
            "--tasks",
            "perturbation_syn_human",
            "--metadata",
            json.dumps({"data_dir": str(data), **(metadata or {})}),
            "--model_args",
            f"pretrained={path}",
        ]
    )
    return status, capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    "model, given, expected",
    [
        ("dna-hf", "masked", "a masked LM (BertForMaskedLM in its config.json); dna-hf scores "
         "causal (left-to-right) LMs: run it with --model dna-mlm"),
        ("dna-mlm", "causal", "a causal (left-to-right) LM (LlamaForCausalLM in its config.json); "
         "dna-mlm scores masked LMs: run it with --model dna-hf"),
    ],
)  # fmt: skip
def test_a_checkpoint_of_the_other_kind_is_refused_before_any_weight(
    bert, tiny_models, pair_data, capsys, no_weights_read, model, given, expected
):
    from perturbation_bench.families import MODELS

    path = bert if given == "masked" else tiny_models["char"]
    message = f"pretrained={path} is {expected}"
    assert check(capsys, model, path, pair_data) == (2, f"perturbation-bench error: {message}")
    cls = getattr(
        importlib.import_module(MODELS[model].target.split(":")[0]),
        MODELS[model].target.split(":")[1],
    )
    with pytest.raises(OptionsError) as refused:
        cls(pretrained=path, device="cpu")
    assert str(refused.value) == message


def test_check_holds_lm_eval_s_own_hf_model_to_causal_checkpoints(
    bert, pair_data, capsys, no_weights_read
):
    assert check(capsys, "hf", bert, pair_data) == (
        2,
        f"perturbation-bench error: pretrained={bert} is a masked LM (BertForMaskedLM in its "
        "config.json); hf scores causal (left-to-right) LMs: run it with --model dna-mlm",
    )


def test_without_architectures_the_model_type_decides(bert, tiny_models, tmp_path):
    from transformers import AutoConfig

    from perturbation_bench.models.architecture import check_architecture

    masked, causal = (
        AutoConfig.from_pretrained(bert),
        AutoConfig.from_pretrained(tiny_models["char"]),
    )
    masked.architectures = causal.architectures = None
    check_architecture("dna-mlm", masked, "m")  # bert has a masked-LM class
    check_architecture("dna-hf", masked, "m")  # and a causal one (BertLMHeadModel)
    check_architecture("dna-hf", causal, "c")
    with pytest.raises(
        OptionsError,
        match=r"^pretrained=c: transformers has no masked LM class for its model_type 'llama'",
    ):
        check_architecture("dna-mlm", causal, "c")
    causal.auto_map = {"AutoModelForMaskedLM": "own.Model"}  # its own code: not judged
    check_architecture("dna-mlm", causal, "c")
    masked.architectures = ["BertForMaskedLM", "EsmForMaskedLM"]
    with pytest.raises(
        OptionsError, match=r"^pretrained=m is a masked LM \(BertForMaskedLM, EsmForMaskedLM in"
    ):
        check_architecture("dna-hf", masked, "m")
    masked.architectures = ["BertForMaskedLM", "BertLMHeadModel"]  # one of each: not refused
    check_architecture("dna-hf", masked, "m")


def test_an_embedding_score_is_held_to_the_same_rule(bert):
    """dna-hf reads a causal model's hidden states: a masked checkpoint loaded as a causal LM
    would attend one way only, so ``scoring=embedding`` is refused alike."""
    from perturbation_bench.models.architecture import check_checkpoint

    for scoring in ("likelihood", "embedding"):
        with pytest.raises(OptionsError, match="is a masked LM"):
            check_checkpoint("dna-hf", {"pretrained": bert, "scoring": scoring})


def test_jsd_with_a_k_mer_tokenizer_is_refused_by_check_before_any_weight(
    tiny_models, tmp_path, capsys, no_weights_read
):
    from dna_fixtures import build_variants, random_genome, snvs_at

    fasta, sequences = random_genome(tmp_path, {"chr1": 400}, 2)
    snvs_at(sequences, [("chr1", p) for p in (100, 200, 300)]).to_csv(
        tmp_path / "v.csv", index=False
    )
    build_variants(tmp_path, tmp_path / "v.csv", fasta, "v", window=60)
    capsys.readouterr()
    status = main(
        [
            "check",
            "--model",
            "dna-hf",
            "--tasks",
            "perturbation_variants",
            "--metadata",
            json.dumps({"data_dir": str(tmp_path / "out"), "config": "v", "score": "jsd"}),
            "--model_args",
            f"pretrained={tiny_models['kmer6']}",
        ]
    )
    assert (status, capsys.readouterr().err.strip()) == (
        2,
        "perturbation-bench error: score jsd reads the distributions of single bases: the tokenizer needs A, C, G and T "
        "as single tokens (a single-nucleotide tokenizer); this one has none for A, C, G, T",
    )


def test_a_plugin_registers_its_classes_and_a_missing_one_is_refused(tmp_path, monkeypatch):
    from perturbation_bench.models.architecture import register_plugin

    (tmp_path / "dna_plugin_probe.py").write_text(
        "calls = []\ndef register_auto_classes():\n    calls.append(1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    register_plugin("dna_plugin_probe")
    assert importlib.import_module("dna_plugin_probe").calls == [1]
    register_plugin("json")  # a package that registers nothing is imported and left as it is
    with pytest.raises(OptionsError, match=r"^plugin=no_such_plugin_x: cannot import it"):
        register_plugin("no_such_plugin_x")


def test_a_config_that_ships_its_own_code_needs_trust_remote_code(tmp_path):
    """Read without trust_remote_code by default: refused in one line, as the model would be."""
    from perturbation_bench.models.architecture import checkpoint_config

    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps({"model_type": "own-dna", "auto_map": {"AutoConfig": "own.OwnConfig"}})
    )
    (folder / "own.py").write_text(
        "from transformers import PretrainedConfig\n"
        "class OwnConfig(PretrainedConfig):\n    model_type = 'own-dna'\n"
    )
    with pytest.raises(OptionsError, match="trust_remote_code"):
        checkpoint_config({"pretrained": str(folder)})
    assert (
        checkpoint_config({"pretrained": str(folder), "trust_remote_code": "true"}).model_type
        == "own-dna"
    )


def test_a_config_is_read_at_the_revision_given(monkeypatch):
    from transformers import AutoConfig

    from perturbation_bench.models.architecture import checkpoint_config

    asked = []
    monkeypatch.setattr(
        AutoConfig, "from_pretrained", lambda source, **given: asked.append((source, given))
    )
    checkpoint_config({"pretrained": "org/model", "revision": "v2"})
    checkpoint_config({"pretrained": "org/model"})
    assert asked == [
        ("org/model", {"trust_remote_code": False, "revision": "v2"}),
        ("org/model", {"trust_remote_code": False, "revision": None}),
    ]

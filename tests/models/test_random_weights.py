"""The random-weights floor (``models/random_weights.py``): ``random_init=true`` on ``dna-hf`` and
``dna-mlm`` scores the checkpoint's architecture and tokenizer with weights drawn from its config
under the seed, reads no weight file, is one model per seed, is recorded in the run's identity
and is never served a trained run's answers under ``--use_cache``."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import build_tokenizer, evaluate, reference_ll, reference_pair
from perturbation_bench.errors import OptionsError
from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert
from perturbation_bench.models.model_arguments import check_model_arguments
from perturbation_bench.models.random_weights import DEFAULT_SEED, from_config, random_seed
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"
TOLERANCE = 1e-4  # nats, fp32


def without_weights(folder: str, into, corrupt: bool = False) -> str:
    """A copy of checkpoint ``folder`` whose weight files are deleted (or, ``corrupt``,
    overwritten with bytes no loader reads)."""
    shutil.copytree(folder, into)
    weights = [p for p in into.iterdir() if p.suffix in (".safetensors", ".bin")]
    assert weights
    for path in weights:
        path.write_bytes(b"not a weight file") if corrupt else path.unlink()
    return str(into)


def drawn(auto_class, folder: str, seed: int):
    """The test's own draw: the config's model built under ``torch.manual_seed(seed)``, fp32."""
    torch.manual_seed(seed)
    return auto_class.from_config(AutoConfig.from_pretrained(folder)).eval()


def run(folder, pair_data, model: str, **model_args) -> tuple[list, dict]:
    """Each pair's two LLs, flat, and the run's recorded scorer settings."""
    result = evaluate(folder, [TASK], {"data_dir": str(pair_data)}, model=model, **model_args)
    pairs = logged_pairs(result, TASK)
    return [v for pair in pairs for v in pair], result["config"]["perturbation_bench"]["settings"]


@pytest.fixture(scope="module")
def masked_model(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("mlm") / "char"
    return str(save_random_bert(folder, as_masked_lm_tokenizer(build_tokenizer("char"))))


def test_dna_hf_scores_the_config_s_model_drawn_under_the_seed_with_no_weight_file(
    tiny_models, pair_data, tmp_path, no_weights_read
):
    folder = without_weights(tiny_models["char"], tmp_path / "ckpt")
    got, settings = run(folder, pair_data, "dna-hf", random_init=True, seed=7)
    assert settings["random_init"] is True and settings["seed"] == 7
    model, tokenizer = drawn(AutoModelForCausalLM, folder, 7), AutoTokenizer.from_pretrained(folder)
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    expected = [
        reference_ll(model, tokenizer, "", r[column])
        for r in rows
        for column in ("original_sequence", "sequence")
    ]
    assert got == pytest.approx(expected, abs=TOLERANCE)
    again, _ = run(folder, pair_data, "dna-hf", random_init="true", seed="7")
    assert again == got  # exactly
    other, _ = run(folder, pair_data, "dna-hf", random_init=True, seed=8)
    assert all(a != b for a, b in zip(other, got, strict=True))


def test_dna_mlm_scores_the_config_s_model_drawn_under_the_seed_with_a_corrupt_weight_file(
    masked_model, pair_data, tmp_path
):
    folder = without_weights(masked_model, tmp_path / "ckpt", corrupt=True)
    got, settings = run(folder, pair_data, "dna-mlm", random_init=True)
    assert (settings["random_init"], settings["seed"]) == (True, DEFAULT_SEED)
    model = drawn(AutoModelForMaskedLM, folder, DEFAULT_SEED)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    limit = model.config.max_position_embeddings
    expected = [
        value
        for r in rows
        for value in reference_pair(model, tokenizer, r["original_sequence"], r["sequence"], limit)
    ]
    assert got == pytest.approx(expected, abs=TOLERANCE)
    assert run(folder, pair_data, "dna-mlm", random_init=True, seed=DEFAULT_SEED)[0] == got
    other, _ = run(folder, pair_data, "dna-mlm", random_init=True, seed=1)
    assert sum(a != b for a, b in zip(other, got, strict=True)) > len(got) / 2  # ties stay 0


def test_a_trained_run_records_no_random_init_and_is_never_served_to_a_random_run(
    tiny_models, pair_data, tmp_path
):
    """Trained first on a cache path, then random on the same path: the random run equals a
    random run on a cache of its own, and differs from the trained one (a served answer would
    show); then the trained run on the shared path is the trained run again."""
    path = tiny_models["char"]
    trained, settings = run(path, pair_data, "dna-hf")
    assert "random_init" not in settings and "seed" not in settings
    fresh, _ = run(path, pair_data, "dna-hf", random_init=True, use_cache=str(tmp_path / "own"))
    shared = str(tmp_path / "shared")
    assert run(path, pair_data, "dna-hf", use_cache=shared)[0] == pytest.approx(trained)
    served, _ = run(path, pair_data, "dna-hf", random_init=True, use_cache=shared)
    assert served == fresh
    assert all(a != b for a, b in zip(served, trained, strict=True))
    assert run(path, pair_data, "dna-hf", use_cache=shared)[0] == pytest.approx(trained)


def test_drawing_leaves_the_process_s_random_generator_as_it_was(tiny_models):
    config = AutoConfig.from_pretrained(tiny_models["char"])
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    from_config(AutoModelForCausalLM, config, seed=5)
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize(
    ("random_init", "seed", "others", "message"),
    [
        (False, 3, {}, "seed=3 draws random weights, which only random_init=true does"),
        ("maybe", None, {}, "random_init must be true or false, got 'maybe'"),
        (True, "-1", {}, "seed must be a whole number >= 0, got '-1'"),
        (True, True, {}, "seed must be a whole number >= 0, got True"),
        (True, None, {"peft": "adapter"}, "peft=adapter loads or places checkpoint weights"),
    ],
)
def test_bad_random_init_arguments_are_refused_in_one_line(random_init, seed, others, message):
    with pytest.raises(OptionsError, match=message):
        random_seed(random_init, seed, others)


def test_random_init_is_an_argument_of_the_two_checkpoint_models_alone(tiny_models):
    assert random_seed("false", None) is None and random_seed("True", "0") == 0
    for model in ("dna-hf", "dna-mlm"):
        check_model_arguments(model, {"pretrained": tiny_models["char"], "random_init": True})
    with pytest.raises(OptionsError, match=r"random_init is an argument of dna-hf and dna-mlm"):
        check_model_arguments("kmer-markov", {"fasta": "g.fa", "random_init": True})

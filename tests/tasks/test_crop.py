"""Context-length tasks: the crop rule, exact scores on the crops, the sweep group."""

from __future__ import annotations

import itertools
import logging
import random

import pyarrow.parquet as pq
import pytest
import torch
import yaml
from transformers import AutoModelForCausalLM, AutoTokenizer

from dna_fixtures import crop_one, evaluate, reference_ll
from perturbation_bench.dna import random_dna
from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.changes import perturbed_sequence
from perturbation_bench.paths import tasks_dir
from perturbation_bench.tasks.document_requests import doc_to_sequences
from perturbation_bench.tasks.loading import load_pairs
from perturbation_bench.tasks.pairing import logged_pairs


def reference_crop(original: str, perturbed: str, length: int) -> tuple[str, str]:
    """The pinned rule, written out base by base."""
    n = len(original)
    if length >= n:
        return original, perturbed
    differing = [i for i in range(n) if original[i].upper() != perturbed[i].upper()]
    s, e = (differing[0], differing[-1] + 1) if differing else (n // 2, n // 2)
    c = (s + e) // 2
    start = min(max(0, c - length // 2), n - length)
    return original[start : start + length], perturbed[start : start + length]


def mutate(sequence: str, positions) -> str:
    swap = {"A": "C", "C": "G", "G": "T", "T": "A"}
    bases = list(sequence)
    for i in positions:
        bases[i] = swap[bases[i]]
    return "".join(bases)


CASES = {  # name: positions changed in a 200 bp window
    "start": [0, 1, 2],
    "middle": [97, 100, 104],
    "end": [197, 199],
    "span longer than L": [10, 120, 180],
    "identical": [],
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("length", [7, 50, 51, 200, 300])
def test_crops_follow_the_pinned_rule(case, length):
    original = random_dna(random.Random(3), 200)
    perturbed = mutate(original, CASES[case])
    start, overflows = crop_one(original, perturbed, length)
    cropped = original[start : start + length], perturbed[start : start + length]
    assert cropped == reference_crop(original, perturbed, length)
    assert len(cropped[0]) == min(length, 200)
    span = (max(CASES[case]) + 1 - min(CASES[case])) if CASES[case] else 0
    assert overflows == (length < 200 and span > length)
    if case == "identical":
        assert cropped[0] == cropped[1]


def test_a_cropped_task_scores_exactly_the_crops(tiny_models, pair_data, caplog):
    path = tiny_models["char"]
    with caplog.at_level(logging.INFO, logger="lm_eval.perturbation_bench.tasks.loading"):
        result = evaluate(
            path,
            ["perturbation_syn_human"],
            {"data_dir": str(pair_data), "context_bp": 40},
            model="dna-hf",
        )
    assert "cropped to 40 bp around their changes" in caplog.text
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    rows = pq.read_table(pair_data / "syn_human").to_pylist()
    for pair, row in zip(logged_pairs(result, "perturbation_syn_human"), rows, strict=True):
        crops = reference_crop(row["original_sequence"], row["sequence"], 40)
        assert pair == pytest.approx(
            [reference_ll(model, tokenizer, "", c) for c in crops], abs=1e-3
        )


def test_the_context_tasks_crop_the_demo_windows(tmp_path):
    docs = load_pairs("motif_human", task_context_bp=512, data_dir="demo")["test"]
    for doc in docs:
        original, perturbed = doc_to_sequences(doc)
        assert (original, perturbed) == reference_crop(
            doc["original_sequence"], perturbed_sequence(doc), 512
        )
        assert original != perturbed  # the 30 bp repeat lies inside every crop


def test_a_case_only_difference_does_not_move_the_crop(tmp_path):
    """A soft-masked stretch in one sequence only differs in case, not in bases: the crop centres
    on the real change, as the rule compares in upper case, in a file whose other rows have no
    lower case at all (one batch holds both kinds)."""
    from perturbation_bench.fixtures.random_pairs import write_parquet

    rng = random.Random(5)
    rows = []
    for k in range(4):
        original = random_dna(rng, 400)
        perturbed = mutate(original, [300, 301])
        if k == 2:  # soft-masked bases 0-49 in the original only
            original = original[:50].lower() + original[50:]
        rows.append({"original_sequence": original, "sequence": perturbed})
    write_parquet(rows, tmp_path, "syn_human")
    docs = load_pairs("syn_human", data_dir=str(tmp_path), context_bp=40)["test"]
    for doc, row in zip(docs, rows, strict=True):
        original, perturbed = doc_to_sequences(doc)
        assert original != perturbed  # the real change lies inside every crop
        expected = reference_crop(row["original_sequence"], row["sequence"], 40)
        assert (original, perturbed) == tuple(c.upper() for c in expected)


def test_a_fixed_context_task_refuses_the_context_bp_option():
    with pytest.raises(OptionsError, match="this task is fixed at 512 bp"):
        load_pairs("motif_human", task_context_bp=512, data_dir="demo", context_bp=300)


def test_the_sweep_group_lists_fifteen_tasks_that_exist():
    from lm_eval.tasks import TaskManager

    group = yaml.safe_load((tasks_dir() / "perturbation_bench_context.yaml").read_text())
    configs, lengths = (
        ("syn_human", "syn_mouse", "motif_human"),
        ("_512bp", "_1024bp", "_2048bp", "_4096bp", ""),
    )
    expected = {f"perturbation_{c}{s}" for c, s in itertools.product(configs, lengths)}
    assert len(group["task"]) == 15 and set(group["task"]) == expected
    known = TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_tasks
    assert expected | {"perturbation_bench_context"} <= set(known)
    for name in expected - {f"perturbation_{c}" for c in configs}:
        task = yaml.safe_load((tasks_dir() / f"{name}.yaml").read_text().replace("!function", ""))
        config, length = name.removeprefix("perturbation_").rsplit("_", 1)
        assert task["dataset_kwargs"] == {
            "config_name": config,
            "task_context_bp": int(length[:-2]),
        }


def test_context_bp_option_is_validated():
    with pytest.raises(
        OptionsError, match="context_bp must be a whole number of bp, at least the k-mer size 6"
    ):
        load_pairs("motif_human", data_dir="demo", context_bp=4, preset="carbon")


@pytest.mark.parametrize("span, overflows", [(20, False), (21, True)])
def test_a_changed_span_of_exactly_the_crop_length_does_not_overflow(span, overflows):
    """Mutant: ``>=`` instead of ``>``."""
    original = "A" * 100
    changed = list(original)
    changed[30] = changed[30 + span - 1] = "C"  # the changed span is [30, 30 + span)
    assert crop_one(original, "".join(changed), 20)[1] is overflows

"""The peer check: recall-bench's own window builder and scoring function (PyPI ``recall-bench``
0.2.1, the test extra) on the stretches this task drew from, against this task's windows and
its copy advantage under ``dna-hf``, with a tiny random causal model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dna_fixtures import build_tokenizer, evaluate
from perturbation_bench.fixtures.random_models import save_random_llama
from perturbation_bench.kinds.recall.rules import window_bp

from .recall_doubles import build, per_document

copy_task = pytest.importorskip("recall_bench.copy_task")
recall_bench = pytest.importorskip("recall_bench")

TOLERANCE = 1e-5
"""nats per base: the same float32 forward passes, summed in another order."""


@pytest.mark.parametrize(
    ("copy", "rate", "control"),
    [("exact", 0.0, "native"), ("revcomp", 0.0, "foreign"), ("mutate", 0.3, "foreign")],
)
def test_recall_bench_builds_the_same_windows_and_computes_the_same_copy_advantage(
    tmp_path, copy, rate, control
):
    from transformers import AutoModelForCausalLM

    data, rows, stretches = build(
        tmp_path, copy=f"mutate:{rate}" if rate else copy, control=control, trials=2
    )
    folder = save_random_llama(tmp_path / "m", build_tokenizer("char"), max_positions=1024)
    metadata = {"config": "rc", "data_dir": str(data)}
    ours = per_document(evaluate(str(folder), ["perturbation_recall"], metadata, model="dna-hf"))
    net = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    vocabulary = build_tokenizer("char").get_vocab()
    adapter = recall_bench.CallableModel(
        logits_fn=lambda ids: net(ids).logits,
        tokenize=lambda text: [vocabulary[base] for base in text],
        max_ctx=1024,
        device="cpu",
    )
    background = recall_bench.DNABackground.from_strings(stretches)
    for distance in (64, 256):
        window = window_bp(distance, 64)
        rng = np.random.default_rng([0, window, distance])
        aux = np.random.default_rng([0, window, distance, 1])
        mine = [doc for doc in ours if doc["distance"] == distance]
        for doc in sorted(mine, key=lambda d: d["trial"]):
            repeat, control_ids, span_r, span_c = copy_task.build_pair(
                adapter, background, rng, window, distance, 64, copy, rate, control, aux
            )
            assert repeat == adapter.tokenize(doc["context_repeat"] + doc["target"])
            assert control_ids == adapter.tokenize(doc["context_control"] + doc["target"])
            theirs = (
                copy_task.segment_ce(adapter, control_ids, span_c)
                - copy_task.segment_ce(adapter, repeat, span_r)
            ) / 64
            ll_repeat, ll_control = doc["lls"]
            assert (ll_repeat - ll_control) / 64 == pytest.approx(theirs, abs=TOLERANCE)

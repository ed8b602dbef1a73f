"""A fuzz test of the option space: random combinations of task kind, model, variant score,
task options and small broken inputs, each run through lm-eval on tiny fixtures. Each ends in one
of two ways: the run's metrics equal a direct recomputation from its logged samples, and every
option given was taken by the task or named in the log as ignored; or a one-line refusal (a
:class:`~perturbation_bench.errors.UserInputError`). Never a traceback of another error. The
number of examples is bounded (``MAX_EXAMPLES``) so that the test fits the fast lane."""

from __future__ import annotations

import logging

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dna_fixtures import evaluate, random_genome
from perturbation_bench.errors import UserInputError
from perturbation_bench.fixtures.random_models import (
    as_masked_lm_tokenizer,
    save_random_bert,
    save_random_llama,
    single_nucleotide_tokenizer,
)
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.pairs.conventions import CONVENTIONS
from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.scores import SCORES

MAX_EXAMPLES = 40
OPTIONS = {  # option -> values a user might give, a broken one among them
    "rc_average": [True, "yes"],
    "reduction": ["mean", "median"],
    "start_token": ["none"],
    "ties": ["correct"],
    "min_per_class": [2, 0],
    "context_bp": [40, 10_000, "wide"],
    "calibration": ["no-such-run"],
    "convention": [*CONVENTIONS, "ensembl"],
    "kmer_overlap": [True],
    "one_class_chromosomes": ["keep"],
    "reductoin": ["mean"],
    "shard": ["1/2", "2/2"],
}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A pair config and a labelled SNV config (windows of 60 bp), and tiny models."""
    root = tmp_path_factory.mktemp("fuzz")
    write_parquet(random_pairs(6, 60, seed=4), root / "out", "syn_human")
    fasta, sequences = random_genome(root, {"chr1": 700, "chr2": 500}, 9)
    rows = []
    for i, (chrom, pos) in enumerate([(c, p) for c in sequences for p in range(80, 440, 60)]):
        ref = sequences[chrom][pos - 1]
        rows.append(
            {
                "chrom": chrom,
                "pos": pos,
                "ref": ref,
                "alt": "ACGT".replace(ref, "")[i % 3],
                "label": i % 2 == 0,
            }
        )
    pd.DataFrame(rows).to_csv(root / "v.csv", index=False)
    from perturbation_bench.cli import main

    args = ["--fasta", str(fasta), "--config", "v", "--out", str(root / "out"), "--window", "60"]
    assert main(["build", "variants", "--variants", str(root / "v.csv"), *args]) == 0
    tokenizer = single_nucleotide_tokenizer()
    models = {
        "dna-hf": str(save_random_llama(root / "lm", tokenizer)),
        "hf": str(root / "lm"),
        "dna-mlm": str(save_random_bert(root / "mlm", as_masked_lm_tokenizer(tokenizer))),
        "kmer-markov": str(fasta),
    }
    return root / "out", models


combinations = st.fixed_dictionaries(
    {
        "task": st.sampled_from(["perturbation_syn_human", "perturbation_variants"]),
        "model": st.sampled_from(["dna-hf", "hf", "dna-mlm", "kmer-markov"]),
        "score": st.sampled_from([None, *(s.name for s in SCORES)]),
        "options": st.dictionaries(
            st.sampled_from(sorted(OPTIONS)), st.just(None), max_size=2
        ).flatmap(
            lambda keys: st.fixed_dictionaries({k: st.sampled_from(OPTIONS[k]) for k in keys})
        ),
    }
)


def recomputed(task: str, result: dict) -> dict:
    """The task's headline metrics recomputed from its logged samples."""
    from sklearn.metrics import roc_auc_score

    samples = sorted(result["samples"][task], key=lambda s: s["doc_id"])
    if task == "perturbation_syn_human":
        pairs = [s["filtered_resps"][0] for s in samples]
        return {"pairwise_acc,pairs": sum(o > p for o, p in pairs) / len(pairs)}
    if "auroc" not in samples[0]:
        return {}
    items = [s["auroc"] for s in samples if s["auroc"][1] is not None]
    labels, scores = [bool(i[1]) for i in items], [i[0] for i in items]
    return {"auroc,pairs": roc_auc_score(labels, scores)}


@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(combination=combinations)
def test_a_run_either_scores_what_its_samples_say_or_refuses_in_one_line(case, combination, caplog):
    data, models = case
    task, model = combination["task"], combination["model"]
    metadata = {"data_dir": str(data), **combination["options"]}
    if task == "perturbation_variants":
        metadata["config"] = "v"
    if combination["score"] is not None:
        metadata["score"] = combination["score"]
    caplog.clear()
    try:
        with caplog.at_level(logging.INFO):
            result = evaluate(models[model], [task], metadata, model=model, batch_size=2)
    except UserInputError as err:
        assert str(err) and "\n" not in str(err).strip(), err
        return
    got = result["results"][task]
    for name, value in recomputed(task, result).items():
        assert got[name] == pytest.approx(value, abs=1e-9), name
    recorded = result["samples"][task][0]["doc"][TASK]
    for option, value in combination["options"].items():
        said = f"the {option} option applies to" in caplog.text
        assert recorded[option] == value or said, (option, value, recorded[option])

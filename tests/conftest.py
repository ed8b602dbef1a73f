"""Shared, offline test set-up: no test may reach the network.

The HF variables are set before anything imports huggingface_hub or datasets, and the hub cache
points into a temporary folder so that a real cache on the machine cannot hide a failure. Under
``pytest -n N`` (pytest-xdist) each worker's torch takes its share of the cores.
"""

from __future__ import annotations

import os
import tempfile

_CACHE = tempfile.mkdtemp(prefix="pb-hf-cache-")
os.environ.update(
    HF_HUB_OFFLINE="1",
    HF_DATASETS_OFFLINE="1",
    HF_HUB_CACHE=os.path.join(_CACHE, "hub"),
    HF_DATASETS_CACHE=os.path.join(_CACHE, "datasets"),
    TOKENIZERS_PARALLELISM="false",
)

import pytest  # noqa: E402

if "PYTEST_XDIST_WORKER_COUNT" in os.environ:  # pytest -n N: the cores shared among N workers
    import torch

    torch.set_num_threads(
        max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    )

from dna_fixtures import TOKENIZER_KINDS, build_model  # noqa: E402
from perturbation_bench.dataset.codons import load_codon_table  # noqa: E402
from perturbation_bench.dataset.synthetic import synthetic_genome  # noqa: E402
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet  # noqa: E402


@pytest.fixture(autouse=True)
def _as_a_fresh_process(monkeypatch):
    """Each test starts as a new lm-eval process would: no model of this package created yet
    (``active_models.py``), whatever an earlier test created."""
    monkeypatch.setattr("perturbation_bench.active_models._scoring", (None, None))


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict:
    """One random tiny Llama per tokenizer kind, saved once per session: kind -> folder."""
    root = tmp_path_factory.mktemp("models")
    return {kind: str(build_model(kind, root / kind)) for kind in TOKENIZER_KINDS}


@pytest.fixture(scope="session")
def pair_data(tmp_path_factory):
    """A data_dir with syn_human (8 pairs of 124 bp), syn_mouse and motif_human (6 pairs each)."""
    root = tmp_path_factory.mktemp("data")
    write_parquet(random_pairs(8, 124, seed=1), root, "syn_human")
    write_parquet(random_pairs(6, 96, seed=2), root, "syn_mouse")
    write_parquet(random_pairs(6, 102, seed=3), root, "motif_human")
    return root


@pytest.fixture
def no_weights_read(monkeypatch):
    """Make any weight loading fail loudly, so a test shows its error came first."""
    from transformers import PreTrainedModel

    def refuse(*args, **kwargs):
        raise AssertionError("weights were read")

    monkeypatch.setattr(PreTrainedModel, "from_pretrained", classmethod(refuse))


@pytest.fixture(scope="session")
def genome_files(tmp_path_factory):
    """A 30 kb synthetic genome and its GTF (``dataset/synthetic.py``), shared by the dataset
    and format tests."""
    return synthetic_genome(
        tmp_path_factory.mktemp("genome"), load_codon_table("human"), chrom_length=30_000
    )


@pytest.fixture
def sharing_pays(monkeypatch):
    """The cost rule's threshold at 0 (``causal_plan.MIN_SPEEDUP``): every prefix of at least
    ``MIN_SHARED`` tokens is shared, so that tiny models, for which sharing never pays, run the
    shared path the tests check."""
    from perturbation_bench.models import causal_plan

    monkeypatch.setattr(causal_plan, "MIN_SPEEDUP", 0.0)

"""Data parallelism (``models/parallel.py``): the processes shard by the global process index."""

from __future__ import annotations

from perturbation_bench.active_models import document_share
from perturbation_bench.models.adapter import PackageModel
from perturbation_bench.models.parallel import DataParallel


class Adapter(PackageModel, DataParallel):
    """A package model's checklist around DataParallel, as kmer-markov and dna-mlm run it."""

    model_name = "test-model"
    rank = property(lambda self: self._rank)
    world_size = property(lambda self: self._world_size)


def test_data_parallel_shards_by_the_global_process_index(monkeypatch):
    """Mutant: the local process index (node 2 of 2, local 1 of 2 is global 3 of 4)."""
    import accelerate

    class NodeTwoProcessOne:
        def __init__(self, cpu):
            self.process_index, self.local_process_index, self.num_processes = 3, 1, 4
            self.device = "cpu"

    monkeypatch.setattr(accelerate, "Accelerator", NodeTwoProcessOne)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setattr("perturbation_bench.models.parallel.join_process_group", lambda d: None)
    monkeypatch.setattr("perturbation_bench.active_models._share", None)  # restored afterwards
    model = Adapter()
    model._start_data_parallel("cpu")
    model._ready({}, tokenizes=False)
    assert (model._rank, model._world_size) == (3, 4)
    assert document_share() == (3, 4)  # the tasks hold the documents of the global rank


def test_a_cuda_device_without_cuda_scores_on_the_cpu_saying_so(monkeypatch, caplog):
    """lm_eval's command line passes ``cuda:0`` when ``--device`` is not given: on a machine
    without CUDA a package model scores on the CPU, as lm-eval's ``hf`` does, with a warning;
    with CUDA the device asked for is the one used."""
    import torch

    from perturbation_bench.models.parallel import usable_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert [usable_device(d) for d in (None, "cpu")] == ["cpu", "cpu"]
    assert not caplog.records
    with caplog.at_level("WARNING"):
        assert Adapter()._start_data_parallel("cuda:0") == torch.device("cpu")
    assert "device cuda:0: this machine has no CUDA device; scoring on cpu" in caplog.text
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert [usable_device(d) for d in (None, "cuda:1", "cpu")] == ["cuda", "cuda:1", "cpu"]

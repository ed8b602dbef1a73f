"""Data parallelism shared by this package's model classes, on GPUs and on CPUs.

Under ``torchrun`` or ``accelerate launch`` with several processes, each process scores its
share of the documents (lm-eval shards them by the model's ``rank`` and ``world_size``) and rank
0 aggregates. The rank is the *global* process index, so multi-node launches shard correctly.
Without a GPU the processes join a gloo group, which is torn down at exit after a barrier (a
rank that exits with gloo's threads still running is aborted by the C++ runtime:
"terminate called without an active exception").
"""

from __future__ import annotations

import atexit
import logging
import os

import torch

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply


def usable_device(device: str | None) -> str:
    """The device to score on, read as lm-eval's ``hf`` model reads ``--device``: ``device``
    itself, except None and a CUDA device on a machine without CUDA (lm-eval's command line
    passes ``cuda:0`` when ``--device`` is not given), which give ``cuda`` if available, else
    ``cpu``; the second with a warning that names both."""
    fallback = "cuda" if torch.cuda.is_available() else "cpu"
    if device is None:
        return fallback
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        log.warning(
            "device %s: this machine has no CUDA device; scoring on cpu (lm_eval passes cuda:0 "
            "when --device is not given; --device cpu says it)",
            device,
        )
        return "cpu"
    return str(device)


def join_process_group(device) -> None:
    """Under a multi-process launch without a GPU to use, join the gloo group (idempotent)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return
    if not (str(device or "").startswith("cpu") or not torch.cuda.is_available()):
        return
    from accelerate import PartialState

    if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
        atexit.register(_leave_process_group)
    PartialState(cpu=True)  # an Accelerator() made later joins this gloo process group


def use_global_rank(model, kwargs: dict, name: str) -> None:
    """Shard an lm-eval ``HFLM`` ``model`` by the global process index and count (module
    docstring): HFLM's own are the local ones. Left as they are for one process, and under
    ``parallelize`` or a ``tp_plan``, where the processes share one model."""
    accelerator = getattr(model, "accelerator", None)
    if accelerator is None or accelerator.num_processes <= 1:
        return
    if kwargs.get("parallelize") or kwargs.get("tp_plan") is not None:
        return
    model._rank, model._world_size = accelerator.process_index, accelerator.num_processes
    log.info(
        "%s: data parallel, process %d of %d on %s", name, model._rank, model._world_size,
        model.device,
    )  # fmt: skip


def from_rank_zero(value):
    """Rank 0's ``value`` on every rank (``torch.distributed``'s broadcast, over the process
    group accelerate or torchrun started); ``value`` itself without one. Every rank must call
    it at the same point."""
    distributed = torch.distributed
    if not (distributed.is_available() and distributed.is_initialized()):
        return value
    if distributed.get_world_size() <= 1:
        return value
    box = [value]
    distributed.broadcast_object_list(box, src=0)
    return box[0]


def _leave_process_group() -> None:
    """At exit, wait for every rank, then destroy the process group."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


class DataParallel:
    """lm-eval's collective hooks (``all_gather``, ``gather_object``, ``barrier``) for a model
    class that is not HFLM; call :meth:`_start_data_parallel` in ``__init__``."""

    def _start_data_parallel(self, device) -> torch.device:
        """Join the launch's processes, if any; set rank and world size; return the device
        (:func:`usable_device`)."""
        device = usable_device(device)
        join_process_group(device)
        self.accelerator = None
        self._rank, self._world_size = 0, 1
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            from accelerate import Accelerator

            self.accelerator = Accelerator(
                cpu=not torch.cuda.is_available() or str(device) == "cpu"
            )
            self._rank = self.accelerator.process_index
            self._world_size = self.accelerator.num_processes
        if self.accelerator is not None and str(device).startswith("cuda"):
            return self.accelerator.device
        return torch.device(device)

    def all_gather(self, tensor):
        """Concatenate ``tensor`` from every rank."""
        return tensor if self._world_size <= 1 else self.accelerator.gather(tensor)

    def gather_object(self, obj, dst=0):
        """Every rank's ``obj`` on rank ``dst`` (None on the others)."""
        if self._world_size <= 1:
            return [obj]
        gathered = [None] * self._world_size if self._rank == dst else None
        torch.distributed.gather_object(obj, gathered, dst=dst)
        return gathered

    def barrier(self) -> None:
        """Wait for every rank."""
        if self._world_size > 1:
            self.accelerator.wait_for_everyone()

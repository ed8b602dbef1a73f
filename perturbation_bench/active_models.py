"""Which of this package's models were created in this process, for advice meant for others.

lm-eval creates the model before it builds the tasks, in the same process. This package's models
(``dna-hf``, ``dna-mlm``, ``kmer-markov``) :func:`announce` themselves when created, and the tasks
skip advice that only lm-eval's own ``hf`` model needs (``add_bos_token=False`` before a DNA
prefix) when one of them is scoring. They also :func:`announce_share` the rank and world size
lm-eval will shard documents by, so that a task holds only its process's documents.

Why a module-level record and not an argument: lm-eval (0.4.x) calls a task's
``custom_dataset`` with the run's metadata and the task's ``dataset_kwargs`` only; neither the
model object nor its rank reaches the task, and lm-eval shards by ``lm.rank``, which for this
package's models is the global process index (the environment alone does not say which model
runs, and lm-eval's ``hf`` model shards by the local index). The record is written once per
model, in the process that builds the tasks, and read when they load.
"""

from __future__ import annotations

_created: set[str] = set()
_share: tuple[int, int] | None = None


def announce(name: str) -> None:
    """Record that this package's model ``name`` was created in this process."""
    _created.add(name)


def package_model_created() -> bool:
    """Whether any of this package's models was created in this process."""
    return bool(_created)


def announce_share(rank: int, world_size: int) -> None:
    """Record the scoring model's ``(rank, world_size)``, as lm-eval reads them from it."""
    global _share
    _share = (int(rank), int(world_size))


def document_share() -> tuple[int, int] | None:
    """The last announced ``(rank, world_size)``; None when no model of this package said."""
    return _share

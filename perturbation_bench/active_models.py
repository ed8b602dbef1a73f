"""Which of this package's models scores in this process, for the tasks that load after it.

lm-eval creates the model before it builds the tasks, in the same process. This package's models
(``dna-hf``, ``dna-mlm``, ``kmer-markov``) :func:`announce` themselves when created, and the tasks
read :func:`active_model`: they refuse settings that do not apply to it
(``pairs/conventions.check_model``), count scored tokens the way it scores them, and skip advice
that only lm-eval's own ``hf`` model needs (``add_bos_token=False`` before a DNA prefix). None
means a model of lm-eval's own (or no model yet). ``perturbation-bench check`` builds the tasks
:func:`as_scoring` the model it checks for, without creating it. The models also
:func:`announce_share` the rank and world size lm-eval will shard documents by, so that a task
holds only its process's documents. The tasks :func:`note_option` which given options they take,
so that the run can refuse one that none takes (``pairs/applicability.py``).

Why a module-level record and not an argument: lm-eval (0.4.x) calls a task's
``custom_dataset`` with the run's metadata and the task's ``dataset_kwargs`` only; neither the
model object nor its rank reaches the task, and lm-eval shards by ``lm.rank``, which for this
package's models is the global process index (the environment alone does not say which model
runs, and lm-eval's ``hf`` model shards by the local index). The record is written once per
model, in the process that builds the tasks, and read when they load.
"""

from __future__ import annotations

from contextlib import contextmanager

_scoring: tuple[str | None, str | None] = (None, None)
_share: tuple[int, int] | None = None
_taken: dict[str, dict[str, bool]] = {}  # option -> {task: whether it takes the option}


def announce(name: str, scoring: str | None = None) -> None:
    """Record that this package's model ``name`` was created in this process (and scores),
    with its ``scoring`` model argument (None: the model's default)."""
    global _scoring
    _scoring = (name, scoring)
    _taken.clear()


def active_model() -> str | None:
    """The name of this package's model created last in this process; None if none was."""
    return _scoring[0]


def active_scoring() -> str | None:
    """That model's ``scoring`` model argument (``embedding``, ``pll``, ...); None: its default."""
    return _scoring[1]


@contextmanager
def as_scoring(name: str | None, scoring: str | None = None):
    """Within the block, :func:`active_model` is ``name`` (None: a model of lm-eval's own) and
    :func:`active_scoring` is ``scoring``."""
    global _scoring
    before, _scoring = _scoring, (name, scoring)
    _taken.clear()
    try:
        yield
    finally:
        _scoring = before


def announce_share(rank: int, world_size: int) -> None:
    """Record the scoring model's ``(rank, world_size)``, as lm-eval reads them from it."""
    global _share
    _share = (int(rank), int(world_size))


def document_share() -> tuple[int, int] | None:
    """The last announced ``(rank, world_size)``; None when no model of this package said."""
    return _share


def note_option(option: str, task: str, takes: bool) -> None:
    """Record whether ``task`` of this run takes the given option ``option`` (the run's record
    starts afresh with each model created and in :func:`as_scoring`)."""
    _taken.setdefault(option, {})[task] = takes


def options_taken() -> dict[str, dict[str, bool]]:
    """What :func:`note_option` recorded for this run: option -> {task: takes}."""
    return {option: dict(tasks) for option, tasks in _taken.items()}

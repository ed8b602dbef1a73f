"""Which settings apply to which task, one rule for ``check`` and the run.

lm-eval hands every task of a run the same metadata, so a task receives options meant for
another. Each row of the settings table (``pairs/settings.py``) names the task kinds that take
it and the variant scores under which it applies; for every task:

1. a setting that does not apply to the task is None in its settings, so it is neither recorded
   in its results nor part of its run's name;
2. an option given that the task does not take is noted, and said once in the log (naming where
   it applies); so is a ``context_bp`` that crops none of the task's windows
   (``tasks/loading.py``);
3. once every task of the run is built (``perturbation-bench check`` after building them, the
   model on its first requests), an option given that no task of the run takes is refused.
"""

from __future__ import annotations

import logging

from perturbation_bench.active_models import note_option, options_taken
from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.settings import SETTING, SETTINGS, TaskSettings, applies, applies_to

log = logging.getLogger(f"lm_eval.{__name__}")


def applicable(task: str, kind: str | None, settings: TaskSettings, given) -> TaskSettings:
    """``settings`` of ``task`` (of ``kind``: None for a pair task) with every setting that does
    not apply to it None, noting for each option in ``given`` (the option names the run was
    given) whether the task takes it (rules 1 and 2 of the module docstring)."""
    score = settings.score
    dropped = {s.name: None for s in SETTINGS if not applies(s.name, kind, score)}
    for name in given:
        if name in SETTING and SETTING[name].option:
            note(name, task, name not in dropped)
    return settings.replaced(**dropped) if dropped else settings


def note(option: str, task: str, takes: bool) -> None:
    """Note whether ``task`` takes ``option``; say so the first time a task of the run does
    not (where it applies, or for ``context_bp`` that it crops nothing)."""
    ignored_before = any(not took for took in options_taken().get(option, {}).values())
    note_option(option, task, takes)
    if not takes and not ignored_before:
        log.warning(
            "perturbation-bench %s: the %s option applies to %s; this task and the other tasks "
            "it does not apply to ignore it",
            task,
            option,
            applies_to(option),
        )


def check_every_option_taken() -> None:
    """Rule 3 of the module docstring.

    Raises:
        OptionsError: naming the option, where it applies and the run's tasks.
    """
    for option, tasks in options_taken().items():
        if not any(tasks.values()):
            raise OptionsError(
                f"the {option} option applies to {applies_to(option)}; no task of this run takes "
                f"it ({', '.join(sorted(tasks))}): leave it out"
            )

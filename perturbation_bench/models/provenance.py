"""What produced a run's numbers, recorded in its results file by this package's models.

lm-eval writes ``get_model_info()`` into the results' ``config``; this package's models add::

    config.perturbation_bench = {
        "version": package version,
        "model": "dna-hf" | "dna-mlm" | "kmer-markov",
        "settings": the scorer settings that change numbers (dtype, max_length, ...),
        "measured": what the run chose by measurement (dna-hf: share_prefix=auto's way and
                    both times; absent where nothing was measured),
        "tasks": {task: {setting: value for each recorded setting (pairs/settings.py:
                         RECORDED: the data's identity, the formatting, the crop, the
                         reduction, the score, the start token, the convention, ...)}},
    }

The per-task part is read from the documents the model scored: each holds its task's settings
(``pairs/settings.py``: the data's identity, ``sha256`` of the parquet files' bytes in file-name
order, and the formatting).
"""

from __future__ import annotations

from perturbation_bench import __version__
from perturbation_bench.pairs.applicability import check_every_option_taken
from perturbation_bench.pairs.conventions import check_model
from perturbation_bench.pairs.settings import RECORDED, settings_of


class Provenance:
    """Collects, per task, the data and formatting of the documents a model scores."""

    def __init__(self, model: str, settings: dict) -> None:
        self.model, self.settings, self.tasks = model, settings, {}

    def note(self, requests) -> None:
        """Record the task settings of lm-eval ``Instance`` objects (the first of each task of
        this package), refusing those that do not apply to this model, and, on the run's first
        requests (every task built), an option that no task of the run takes
        (``pairs/applicability.py``)."""
        if not self.tasks:
            check_every_option_taken()
        for request in requests:
            settings = settings_of(getattr(request, "doc", None))
            if request.task_name in self.tasks or settings is None:
                continue
            check_model(self.model, settings)
            self.tasks[request.task_name] = {key: settings[key] for key in RECORDED}

    def scorer_settings(self) -> dict:
        """The scorer settings as JSON values (a dtype as its name)."""
        return {
            key: str(value) if not isinstance(value, (int, float, bool, type(None))) else value
            for key, value in self.settings.items()
        }

    def info(self, measured: dict | None = None) -> dict:
        """The ``perturbation_bench`` entry of the results' config; ``measured``: what the run
        chose by measurement (``share_prefix=auto``'s way and times), kept apart from the
        settings, which key a store (``result_store.py``)."""
        entry = {
            "version": __version__,
            "model": self.model,
            "settings": self.scorer_settings(),
            "tasks": dict(self.tasks),
        }
        return {"perturbation_bench": {**entry, **({"measured": measured} if measured else {})}}

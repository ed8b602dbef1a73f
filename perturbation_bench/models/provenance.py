"""What produced a run's numbers, recorded in its results file by this package's models.

lm-eval writes ``get_model_info()`` into the results' ``config``; this package's models add::

    config.perturbation_bench = {
        "version": package version,
        "model": "dna-hf" | "dna-mlm" | "kmer-markov",
        "settings": the scorer settings that change numbers (dtype, max_length, ...),
        "tasks": {task: {"data": "sha256:...", "preset", "dna_prefix", "kmer_size",
                         "kmer_overlap", "rc_average", "context_bp", "reduction", "start_token",
                         "convention"}},
    }

The per-task part is read from the documents the model scored: each holds its task's settings
(``pairs/settings.py``: the data's identity, ``sha256`` of the parquet files' bytes in file-name
order, and the formatting).
"""

from __future__ import annotations

from perturbation_bench import __version__
from perturbation_bench.pairs.conventions import check_model
from perturbation_bench.pairs.fields import TASK

RECORDED = (
    "data",
    "preset",
    "dna_prefix",
    "kmer_size",
    "kmer_overlap",
    "rc_average",
    "context_bp",
    "reduction",
    "start_token",
    "convention",
)
"""The task settings recorded per task."""


class Provenance:
    """Collects, per task, the data and formatting of the documents a model scores."""

    def __init__(self, model: str, settings: dict) -> None:
        self.model, self.settings, self.tasks = model, settings, {}

    def note(self, requests) -> None:
        """Record the task settings of lm-eval ``Instance`` objects (the first of each task),
        refusing those that do not apply to this model."""
        for request in requests:
            doc = getattr(request, "doc", None)
            if request.task_name in self.tasks or not isinstance(doc, dict):
                continue
            settings = doc.get(TASK) or {}
            check_model(self.model, settings)
            self.tasks[request.task_name] = {key: settings.get(key) for key in RECORDED}

    def info(self) -> dict:
        """The ``perturbation_bench`` entry of the results' config."""
        settings = {
            key: str(value) if not isinstance(value, (int, float, bool, type(None))) else value
            for key, value in self.settings.items()
        }
        return {
            "perturbation_bench": {
                "version": __version__,
                "model": self.model,
                "settings": settings,
                "tasks": dict(self.tasks),
            }
        }

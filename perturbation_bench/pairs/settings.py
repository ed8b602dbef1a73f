"""A task's settings, made once per task and shared by every document of it.

Nothing in a task's settings changes from pair to pair, so the loader makes one
:class:`TaskSettings` per task and every document holds a reference to that one object under
``fields.TASK`` (``scoring_task``): no per-document copy, nothing parsed back per document.
Its keys are plain values, so lm-eval's ``--log_samples`` writes them into each logged document
as JSON, where the report reads them back (:func:`logged_settings`)::

    data         "sha256:<hex>" of the config's parquet files (identity.data_identity)
    shard        "I/N" of a sharded run, None otherwise
    preset       the preset the formatting started from
    dna_prefix, kmer_size, rc_average, kmer_overlap    the formatting (requests.Formatting)
    context_bp   the crop length, None for whole windows
    reduction    "sum" or "mean" of a sequence's token log-probs
    score        the variant task's ranking score ("llr" or "abs_llr"), None for other tasks
    start_token  "model" (the model's BOS/prefix token first) or "none" (pairs/conventions.py)
    convention   the upstream convention named (pairs/conventions.py), None for none
    one_class_chromosomes  "drop" or "keep": by-chromosome metrics (pairs/ranking.py)
    labels       the variant task's label kind, "binary" or "quantitative"; None for other tasks
                 and data without labels (set by tasks/variants.py once the data is read)

:attr:`TaskSettings.formatting` is the :class:`~perturbation_bench.pairs.requests.Formatting`
these keys describe, built once. lm-eval builds the task's requests from each document alone
(``doc_to_text(doc)``, ``doc_to_choice(doc)``), which is why the document carries a reference.
"""

from __future__ import annotations

from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.requests import Formatting

_LOGGED_BEFORE = {
    "data": "scoring_data",
    "shard": "scoring_shard",
    "preset": "scoring_preset",
    "dna_prefix": "scoring_prefix",
    "kmer_size": "scoring_kmer_size",
    "rc_average": "scoring_rc_average",
    "context_bp": "scoring_context_bp",
    "score": "scoring_score",
}
"""Where samples files of perturbation-bench 0.1.0 runs hold each setting (one field each)."""
_ADDED_LATER = {
    "start_token": "model",
    "convention": None,
    "one_class_chromosomes": "drop",
    "labels": None,
    "kmer_overlap": False,
}
"""Settings that samples files of earlier versions lack, as those versions scored."""


class TaskSettings(dict):
    """The settings of one task (module docstring): a dict of plain values, plus ``formatting``."""

    def __init__(
        self,
        formatting: Formatting,
        preset: str,
        data: str | None = None,
        shard: str | None = None,
        context_bp: int | None = None,
        reduction: str = "sum",
        score: str | None = None,
        start_token: str = "model",
        convention: str | None = None,
        one_class_chromosomes: str = "drop",
    ) -> None:
        super().__init__(
            data=data,
            shard=shard,
            preset=preset,
            dna_prefix=formatting.dna_prefix,
            kmer_size=formatting.kmer_size,
            rc_average=formatting.rc_average,
            kmer_overlap=formatting.kmer_overlap,
            context_bp=context_bp,
            reduction=reduction,
            score=score,
            start_token=start_token,
            convention=convention,
            one_class_chromosomes=one_class_chromosomes,
            labels=None,
        )
        self.formatting = formatting


def settings_of(doc) -> dict:
    """The settings a document of a task of this package carries; ``{}`` for anything else (a
    document of another task, no document)."""
    settings = doc.get(TASK) if isinstance(doc, dict) else None
    return settings or {}


def logged_settings(doc: dict) -> dict:
    """The settings of a logged document (a samples file's ``doc``), also from the samples files
    of earlier versions, which wrote each setting into a field of its own."""
    if TASK in doc:
        return {**_ADDED_LATER, **doc[TASK]}
    settings = {key: doc.get(field) for key, field in _LOGGED_BEFORE.items()}
    settings["reduction"] = "mean" if "scoring_token_counts" in doc else "sum"
    return {**settings, **_ADDED_LATER}

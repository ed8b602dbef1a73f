"""A task's settings: one declared table, and one object per task shared by its documents.

:data:`SETTINGS` is the one table of the settings a task is scored with. Every list of them
elsewhere is derived from it: the task options and their checks (``tasks/options.py``), the
settings object (:class:`TaskSettings`) and its log line, what a results file records
(``models/provenance.py``), what tells one run from another in the report
(``report/run_names.py``), and how samples files of earlier versions read
(:func:`logged_settings`). Each row says:

    name        the key, in ``--metadata`` and in the logged documents
    type        the type of its values (None aside), checked when a :class:`TaskSettings` is
                made
    default     its value when the option is not given (None counts as not given); the formatting pieces
                (``dna_prefix``, ``kmer_size``, ``kmer_overlap``) default to the preset's
    choices     the values it may take, where they are a fixed few (else ``tasks/options.py``
                checks it)
    option      set with ``--metadata`` (else the task fills it in: the data's identity, the
                label kind)
    identifies  part of a run's identity: two runs that differ in it are two rows of a report
    recorded    written into the results file (``config.perturbation_bench.tasks``)
    logged_as   its own field in samples files of version 0.1.0; None for a setting added
                later, which those files read as its default (how those versions scored)
    kinds       the task kinds whose tasks take it (``pairs/kinds.py``: ``variants``, and the
                kinds whose folders declare their own rows, ``footprints``); empty: every task.
                A task of another kind holds None
    scores      the variant scores under which it applies (``pairs/scores.py``); empty: any
    read_by_model
                the model reads it from the document and computes another answer to the same
                request under another value, so a stored answer is keyed by it
                (``models/result_store.py``)

Nothing in a task's settings changes from pair to pair, so the loader makes one
:class:`TaskSettings` per task and every document holds a reference to that one object under
``fields.TASK`` (``scoring_task``): no per-document copy, nothing parsed back per document. It is
a frozen dict of plain values, so lm-eval's ``--log_samples`` writes it into each logged
document as JSON, where the report reads it back; its values are read as attributes
(``settings.reduction``), and nothing changes them after the loader made them (``replaced``
makes others).
lm-eval builds a task's requests from each document alone (``doc_to_text(doc)``), which is why
the document carries a reference.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.kinds import KINDS
from perturbation_bench.pairs.requests import Formatting
from perturbation_bench.pairs.scores import CALIBRATED_SCORES, MARGIN, SCORE, Reading, VariantScore
from perturbation_bench.pairs.setting_rows import Setting

# fmt: off
CORE = (
    Setting("data", None, '"sha256:<hex>" of the config\'s parquet files (identity.py)',
            option=False, logged_as="scoring_data"),
    Setting("preset", "default", "the model family's preset the formatting starts from",
            logged_as="scoring_preset"),
    Setting("dna_prefix", "", 'text before every sequence ("": the model\'s start token)',
            logged_as="scoring_prefix"),
    Setting("kmer_size", 1, "sequences trimmed to whole k-mers of this size", type=int,
            logged_as="scoring_kmer_size"),
    Setting("kmer_overlap", False, "sequences given as overlapping k-mers (DNABERT)",
            type=bool, choices=(False, True)),
    Setting("rc_average", False, "the mean of the forward and the reverse-complement score",
            type=bool, choices=(False, True), logged_as="scoring_rc_average"),
    Setting("reduction", "sum", "a sequence's score: the sum or the mean of its token "
            "log-probs", choices=("sum", "mean")),
    Setting("context_bp", None, "pairs cropped to this many bp around their changes; None: "
            "the whole window", type=int, logged_as="scoring_context_bp"),
    Setting("score", "llr", "the variant task's ranking score (ranking.py; the four-allele "
            "reading's in four_allele.py); None in other tasks' settings",
            choices=tuple(SCORE), logged_as="scoring_score", kinds=("variants",),
            read_by_model=True),
    Setting("calibration", None, "the calibration table a calibrated score reads "
            "(calibration.py); None: none", kinds=("variants",), scores=CALIBRATED_SCORES),
    Setting("shard", None, '"I/N": the pairs whose 0-based row is I modulo N; None: every pair',
            identifies=False, logged_as="scoring_shard"),
    Setting("start_token", "model", "the model's start token first, or nothing before the "
            "sequence (conventions.py)", choices=("model", "none"), read_by_model=True),
    Setting("convention", None, "the upstream convention named (conventions.py)"),
    Setting("one_class_chromosomes", "drop", "chromosomes with one label class in the "
            "by-chromosome metrics (ranking.py)", choices=("drop", "keep")),
    Setting("min_per_class", 30, "the variant task's per-assay gate: an assay with fewer "
            "variants of a label class (binary) or fewer variants (quantitative) has no value "
            "(assays.py); None in other tasks' settings", type=int, kinds=("variants",)),
    # the rows of the kinds that declare their own (pairs/kinds.py: own_settings) come here
)
LAST = (
    Setting("config", None, "the config the task's pairs were read from (named in messages)",
            option=False, identifies=False, recorded=False),
    Setting("labels", None, 'the variant task\'s label kind, "binary" or "quantitative"; None '
            "for other tasks and data without labels", option=False, identifies=False,
            kinds=("variants",)),
)
# fmt: on
SETTINGS = (
    *CORE,
    *(replace(row, kinds=(kind.name,)) for kind in KINDS for row in kind.setting_rows()),
    *LAST,
)
"""The settings table: the core rows, each kind's own, and the last two."""
SETTING = {setting.name: setting for setting in SETTINGS}
""":data:`SETTINGS` by name."""
RECORDED = tuple(setting.name for setting in SETTINGS if setting.recorded)
"""The settings a results file records per task."""
IDENTIFYING = tuple(setting.name for setting in SETTINGS if setting.identifies)
"""The settings that tell one run from another."""
KIND_SETTINGS = tuple(setting.name for setting in SETTINGS if setting.kinds)
"""The settings that some task kinds take (None in the others' settings)."""


def applies(name: str, kind: str | None, score: str | None) -> bool:
    """Whether setting ``name`` applies to a task of ``kind`` (None: a pair task) scored by
    ``score`` (None: no variant score), by its row's ``kinds`` and ``scores``."""
    setting = SETTING[name]
    in_kind = not setting.kinds or kind in setting.kinds
    return in_kind and (not setting.scores or score in setting.scores)


def applies_to(name: str) -> str:
    """Where setting ``name`` applies, in words: its kinds' tasks and scores; ``context_bp``, to
    tasks whose windows are longer."""
    setting = SETTING[name]
    if name == "context_bp":
        return "tasks whose windows are longer than it"
    where = (
        " and ".join(f"perturbation_{kind} (and built {kind} configs)" for kind in setting.kinds)
        or "every task"
    )
    return where + (f" scored by {' or '.join(setting.scores)}" if setting.scores else "")


class TaskSettings(dict):
    """The settings of one task (module docstring), frozen: every name of :data:`SETTINGS` with
    its value, read as attributes, and ``formatting``, the
    :class:`~perturbation_bench.pairs.requests.Formatting` they describe, built once.

    Raises:
        TypeError: a name that is not a setting, or a value not of its setting's type.
    """

    def __init__(self, **values: Any) -> None:
        unknown = sorted(set(values) - set(SETTING))
        if unknown:
            raise TypeError(f"not task settings: {', '.join(unknown)}")
        mistyped = [f"{n}={v!r}" for n, v in values.items() if not SETTING[n].holds(v)]
        if mistyped:
            raise TypeError(f"task settings of the wrong type: {', '.join(mistyped)}")
        super().__init__(
            {name: values.get(name, setting.default) for name, setting in SETTING.items()}
        )
        self.formatting = Formatting(
            dna_prefix=self["dna_prefix"],
            kmer_size=self["kmer_size"],
            rc_average=self["rc_average"],
            kmer_overlap=self["kmer_overlap"],
        )

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def _frozen(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("task settings are frozen: make others with replaced(name=value)")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _frozen
    __ior__ = _frozen

    def __reduce__(self):
        """Copies and pickles rebuild the settings from their values (a frozen dict cannot be
        filled item by item)."""
        return _rebuilt, (dict(self),)

    @property
    def variant_score(self) -> VariantScore | None:
        """The variant score (``scores.py``) its ``score`` names; None in a pair task."""
        return SCORE.get(self["score"])

    @property
    def reading(self) -> Reading:
        """How its documents' scores are read: its variant score's, or a pair task's margin."""
        return self.variant_score.reading if self.variant_score else MARGIN

    @property
    def bare_start(self) -> bool:
        """Whether sequences are scored with nothing before them (``start_token: none``)."""
        return self["start_token"] == "none"

    def replaced(self, **values: Any) -> TaskSettings:
        """These settings with ``values`` in place of their own."""
        return TaskSettings(**{**self, **values})

    def describe(self) -> str:
        """One line for the log: ``name=value`` of every setting that identifies a run."""
        return " ".join(f"{name}={self[name]!r}" for name in IDENTIFYING if name != "data")


def _rebuilt(values: dict) -> TaskSettings:
    """:class:`TaskSettings` of ``values`` (unpickling, copying)."""
    return TaskSettings(**values)


def settings_of(doc) -> TaskSettings | None:
    """The settings a document of a task of this package carries; None for anything else (a
    document of another task, no document)."""
    return doc.get(TASK) if isinstance(doc, dict) else None


def read_by_model(doc) -> dict | None:
    """The settings of :data:`SETTINGS` a model reads from a document (``read_by_model``), with
    their values; None for a document of another task."""
    settings = settings_of(doc)
    if settings is None:
        return None
    return {setting.name: settings[setting.name] for setting in SETTINGS if setting.read_by_model}


def logged_settings(doc: dict) -> TaskSettings:
    """The settings of a logged document (a samples file's ``doc``), also from the samples files
    of earlier versions: those of 0.1.0 wrote each setting into a field of its own (``logged_as``)
    and took the mean exactly when they counted tokens; a setting a file lacks reads as its
    default."""
    if TASK in doc:
        return TaskSettings(**{k: v for k, v in doc[TASK].items() if k in SETTING})
    values = {s.name: doc.get(s.logged_as) for s in SETTINGS if s.logged_as is not None}
    values["reduction"] = "mean" if "scoring_token_counts" in doc else "sum"
    return TaskSettings(**values)

"""Upstream scoring conventions, so that a score can be compared with a published one.

Each convention is the set of choices one upstream codebase makes, named with
``--metadata '{"convention": NAME}'``; every piece is also an option of its own (``start_token``,
``reduction``, ``rc_average``, ``one_class_chromosomes``; the window edge rule is the data's, set
by ``build variants --edge``)::

    name           model     start_token  reduction  strands  edge      one-class chromosomes
    traitgym       causal    none         sum        both     pad       kept (AUPRC 0, AUROC NaN)
    gpn            dna-mlm   -            sum        both     pad       dropped and named
    evo2           causal    none         mean       forward  truncate  dropped and named
    biofoundation  causal    none         sum        forward  pad       dropped and named
    dart_eval      causal,   none         sum        forward  shift     dropped and named
                   dna-mlm   (causal)

``dart_eval`` (DART-Eval's motif footprinting, task 2) also sets ``ties: correct`` (a tie counts as
right in the per-motif accuracy) and scores a masked model by pseudo-log-likelihood: a
``dna-mlm`` run under it must give ``scoring=pll`` (:attr:`Convention.masked_scoring`), and the
start token, which a masked model has none of, is set for causal models only.

``start_token``: ``model`` (default) scores every token of the sequence after the model's
BOS/prefix token (or the preset's DNA prefix); ``none`` gives the model the raw sequence with
nothing before it and leaves its first token unscored (``L - 1`` terms), as every upstream causal
scorer does. A masked model has no start token to choose. ``causal`` means ``dna-hf`` or
``kmer-markov``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from perturbation_bench.errors import OptionsError
from perturbation_bench.families import (
    CAUSAL_MODELS,
    MASKED_MODELS,
    MODELS,
    reads_bases,
    scoring_of,
)
from perturbation_bench.pairs.settings import TaskSettings, settings_of

EDGES = ("shift", "pad", "truncate")


@dataclass(frozen=True)
class Convention:
    """One upstream's choices (module docstring); ``follows`` names the upstream files."""

    name: str
    models: tuple[str, ...]
    start_token: str
    reduction: str
    rc_average: bool
    edge: str
    one_class_chromosomes: str
    follows: str
    ties: str | None = None
    """The footprint task's ties rule it sets; None: it sets none."""
    masked_scoring: str | None = None
    """The ``scoring`` a masked model must run under it; None: any."""

    def pieces(self, model: str | None = None) -> dict:
        """The task options this convention sets for ``model`` (the start token for a model that
        is not masked only; None: a model not yet known)."""
        pieces = {
            "start_token": self.start_token,
            "reduction": self.reduction,
            "rc_average": self.rc_average,
            "one_class_chromosomes": self.one_class_chromosomes,
            "ties": self.ties,
        }
        if model in MASKED_MODELS:
            del pieces["start_token"]
        return {key: value for key, value in pieces.items() if value is not None}


CONVENTIONS = {
    convention.name: convention
    for convention in (
        Convention(
            "traitgym",
            CAUSAL_MODELS,
            "none",
            "sum",
            True,
            "pad",
            "keep",
            "songlab-cal/TraitGym: workflow/scripts/run_vep_llr_hyenadna.py "
            "(CLMforVEPModel), workflow/rules/model.smk (metrics, standard errors)",
        ),
        Convention(
            "gpn",
            MASKED_MODELS,
            "model",
            "sum",
            True,
            "pad",
            "drop",
            "songlab-cal/gpn: gpn/ss/run_vep.py, gpn/data.py (Genome.get_seq)",
        ),
        Convention(
            "evo2",
            CAUSAL_MODELS,
            "none",
            "mean",
            False,
            "truncate",
            "drop",
            "ArcInstitute/evo2: evo2/scoring.py (score_sequences, prepend_bos=False, "
            "reduce_method='mean'), the BRCA1 notebook (windows)",
        ),
        Convention(
            "biofoundation",
            CAUSAL_MODELS,
            "none",
            "sum",
            False,
            "pad",
            "drop",
            "Open-Athena/biofoundation: run_llr_clm",
        ),
        Convention(
            "dart_eval",
            CAUSAL_MODELS + MASKED_MODELS,
            "none",
            "sum",
            False,
            "shift",
            "drop",
            "kundajelab/DART-Eval: task 2 footprinting likelihoods and "
            "footprint_eval_likelihoods (accuracy counts a tie as right)",
            ties="correct",
            masked_scoring="pll",
        ),
    )
}


class ModelCase(NamedTuple):
    """What :data:`MODEL_REFUSALS` read: the model (None: one of lm-eval's own, causal, which
    always conditions on a start token), its ``scoring`` argument (None: its default) and a
    task's settings."""

    model: str | None
    scoring: str | None
    settings: TaskSettings

    @property
    def name(self) -> str:
        return self.model or "lm-eval's own model"

    @property
    def undirected(self) -> bool:
        """Whether the model's scoring has no direction (an embedding distance)."""
        return not scoring_of(self.model, self.scoring).directed

    @property
    def computed_by(self) -> tuple[str, ...]:
        """The models that compute the task's variant score (empty: any)."""
        score = self.settings.variant_score
        return score.models if score else ()

    @property
    def convention(self) -> Convention | None:
        return CONVENTIONS.get(self.settings.convention or "")


class ModelRefusal(NamedTuple):
    """A task's settings that a model cannot score: when it ``applies`` to a
    :class:`ModelCase`, what the refusal ``says``."""

    applies: Callable[[ModelCase], bool]
    says: Callable[[ModelCase], str]


# fmt: off
MODEL_REFUSALS = (
    ModelRefusal(
        lambda c: c.undirected and c.settings.score is None and c.settings.ties is None,
        lambda c: "scoring=embedding scores a variant or a motif footprint by a distance, which "
        f"has no direction; {c.settings.config or 'this task'} is a paired task, scored by which "
        "window the model prefers (leave scoring=embedding out)"),
    ModelRefusal(
        lambda c: c.undirected and c.settings.score not in (None, "llr"),
        lambda c: f"score: {c.settings.score} reads a log-likelihood ratio; scoring=embedding "
        "gives the score itself (leave score out)"),
    ModelRefusal(
        lambda c: bool(c.computed_by) and (
            c.model not in c.computed_by or c.scoring not in (None, MODELS[c.model].scorings[0])),
        lambda c: f"score {c.settings.score} is computed by {' or '.join(c.computed_by)} from the "
        f"model's distributions of single bases, not by {c.name}"
        f"{f' scoring={c.scoring}' if c.scoring else ''} (score marginal_llr or entropy instead)"),
    ModelRefusal(
        lambda c: c.convention is not None and c.model not in c.convention.models,
        lambda c: f"convention {c.convention.name!r} scores with "
        f"{' or '.join(c.convention.models)}, not {c.name} (follows {c.convention.follows})"),
    ModelRefusal(
        lambda c: c.convention is not None and bool(c.convention.masked_scoring)
        and c.model in MASKED_MODELS and c.scoring != c.convention.masked_scoring,
        lambda c: f"convention {c.convention.name!r} scores a masked model by "
        f"scoring={c.convention.masked_scoring}: add it to --model_args (got "
        f"{c.scoring or 'the default'}; follows {c.convention.follows})"),
    ModelRefusal(
        lambda c: bool(c.settings.kmer_overlap) and reads_bases(c.model),
        lambda c: f"{c.model} reads bases, not overlapping k-mers (leave kmer_overlap and the "
        "dnabert preset out)"),
    ModelRefusal(
        lambda c: c.settings.bare_start and c.model is None,
        lambda c: "start_token 'none' needs one of this package's models (--model "
        f"{' or '.join(CAUSAL_MODELS)}): lm-eval's hf model always conditions on a start token"),
    ModelRefusal(
        lambda c: c.settings.bare_start and c.model not in CAUSAL_MODELS,
        lambda c: f"start_token 'none' applies to causal models ({', '.join(CAUSAL_MODELS)}); "
        f"{c.model} reads the whole window at once (leave start_token out)"),
)
# fmt: on
"""What a model cannot score, in the order ``check_model`` tries them."""


def check_model(model: str | None, settings: TaskSettings, scoring: str | None = None) -> None:
    """Refuse to score a task whose settings (``pairs/settings.py``) do not apply to ``model``
    (:class:`ModelCase`): the first of :data:`MODEL_REFUSALS` that applies.

    Raises:
        OptionsError: what that refusal says.
    """
    case = ModelCase(model, scoring, settings)
    for refusal in MODEL_REFUSALS:
        if refusal.applies(case):
            raise OptionsError(refusal.says(case))


def bare_start(doc) -> bool:
    """Whether a document's sequences are scored with nothing before them (``start_token:
    none``); False for a document of another task."""
    settings = settings_of(doc)
    return settings is not None and settings.bare_start

"""The model table, the scoring table and the family table: the lm-eval models this package
adds, what each way of scoring gives, and the model families it knows how to run (each one a
preset).

:data:`MODELS` names each lm-eval model with the class that implements it, its kind:
``causal`` (log-likelihoods of whole sequences: ``dna-hf``, ``kmer-markov``) or ``masked``
(masked marginals over the positions that differ: ``dna-mlm``), and what it reads: ``tokens``
of a tokenizer, or ``bases`` (``kmer-markov``: one scored term per base, no tokenizer). The autoload hook registers
them with lm-eval from it (lazily, without importing them), each adapter takes its name from it
(``models/adapter.registered``), and a test holds ``setup.cfg``'s ``lm_eval.models`` entry points
to it. What follows from the kind (which conventions apply, what scale a report puts a run on)
is read from here.

:data:`SCORINGS` is one row per value of a model's ``scoring`` argument, and what a run scored
so gives::

    name      the value (``likelihood`` for the models without the argument: ``kmer-markov``
              and lm-eval's own)
    scale     the report's name for what a run's two numbers per pair are; runs compare only on
              one scale (``pairs.parquet``'s ``scale``, the margin figure's rows)
    unit      the unit of a margin
    directed  whether a margin's sign says which window the model prefers; a score without
              (an embedding distance) enters the variant sections alone, and is refused for a
              paired task (``pairs/conventions.py``)
    label     what a margin is, as the figures say it

The other names of the scoring axis: a variant task's ``score`` (``llr``, ``abs_llr``: how a
margin ranks variants, a task setting), the report's ``score_kind`` (that score's name, or the
embedding score's: :attr:`report.runs.Run.score_kind`).

:data:`FAMILIES` is one row per preset (``--metadata '{"preset": NAME}'``)::

    preset      the name
    formatting  how the family reads DNA: ``dna_prefix``, ``kmer_size``, ``kmer_overlap``
                (``pairs/requests.Formatting``; the task options are built from it, and any of
                them can be set alone on top of it)
    model       the lm-eval model that scores the family
    model_args  what a run of the family passes in ``--model_args`` besides ``pretrained``
    config      its ready-made ``lm_eval --config`` file in ``yaml/``, or None
    example     a hub id of the family

The ready-made configs, the families table of ``docs/models-and-presets.md`` and the tests are
checked against it. Importing this module imports nothing.
"""

from __future__ import annotations

from typing import NamedTuple


class Model(NamedTuple):
    """One lm-eval model of this package: ``module:Class``, its kind, what it reads, the
    values of its ``scoring`` argument, its default first (none: it has no such argument), and
    whether its runs are composition floors, which the report reads every other model against
    (``report/floors.py``; a run with ``random_init`` is a floor too, :func:`floor_kind`)."""

    target: str
    kind: str
    reads: str = "tokens"
    scorings: tuple[str, ...] = ()
    floor: bool = False


MODELS = {
    "dna-hf": Model(
        "perturbation_bench.models.dna_hf:DnaHFLM", "causal", scorings=("likelihood", "embedding")
    ),
    "dna-mlm": Model(
        "perturbation_bench.models.dna_mlm:DnaMaskedLM",
        "masked",
        scorings=("marginal", "pll", "embedding"),
    ),
    "kmer-markov": Model(
        "perturbation_bench.models.kmer_markov:KmerMarkovLM", "causal", "bases", floor=True
    ),
}
"""lm-eval model name -> :class:`Model`."""
CAUSAL_MODELS = tuple(name for name, model in MODELS.items() if model.kind == "causal")
MASKED_MODELS = tuple(name for name, model in MODELS.items() if model.kind == "masked")


class Scoring(NamedTuple):
    """One way of scoring (module docstring)."""

    name: str
    scale: str
    unit: str
    directed: bool
    label: str


# fmt: off
SCORINGS = (
    Scoring("likelihood", "causal", "nats", True, "log-likelihood of the whole sequence"),
    Scoring("marginal", "masked", "nats", True, "masked marginal over the differing positions"),
    Scoring("pll", "pll", "nats", True, "pseudo-log-likelihood of the whole sequence"),
    Scoring("embedding", "embedding", "embedding distance", False,
            "embedding score (signed distance between the windows' hidden states)"),
)
# fmt: on
SCORING = {scoring.name: scoring for scoring in SCORINGS}
""":data:`SCORINGS` by name."""
DIRECTED_SCALES = tuple(scoring.scale for scoring in SCORINGS if scoring.directed)
"""The scales whose margins say which window a model prefers."""
DEFAULT_SCORINGS = tuple(dict.fromkeys(m.scorings[0] for m in MODELS.values() if m.scorings))
"""Each model's default ``scoring``, which a run's name leaves out."""


def scoring_of(model: str | None, scoring: str | None) -> Scoring:
    """How a run of lm-eval model ``model`` (None: one of lm-eval's) with the ``scoring``
    argument ``scoring`` (None: the model's default) scores."""
    scorings = MODELS[model].scorings if model in MODELS else ()
    return SCORING[scoring or (scorings[0] if scorings else "likelihood")]


COMPOSITION, RANDOM_WEIGHTS, GIVEN = "composition", "random weights", "given (--floor)"
"""The kinds of floor a report reads other runs against (:func:`floor_kind`)."""


def floor_kind(model: str | None, settings: dict | None = None) -> str | None:
    """What a run of ``model`` (a name; None for one of lm-eval's) with the scorer ``settings``
    its results record is a floor of: :data:`COMPOSITION` for a floor model's run
    (``kmer-markov``: k-mer statistics alone), :data:`RANDOM_WEIGHTS` for a run with
    ``random_init`` (``models/random_weights.py``: the architecture and tokenizer alone); None
    for a run that is no floor (``report/floors.py`` adds the runs given with ``--floor``)."""
    if model in MODELS and MODELS[model].floor:
        return COMPOSITION
    return RANDOM_WEIGHTS if (settings or {}).get("random_init") is True else None


def reads_bases(model: str | None) -> bool:
    """Whether ``model`` (a name; None for one of lm-eval's) scores bases, not tokens."""
    return model in MODELS and MODELS[model].reads == "bases"


class Family(NamedTuple):
    """One model family (module docstring)."""

    preset: str
    formatting: dict
    model: str
    model_args: dict
    config: str | None
    example: str


FAMILIES = (
    Family(
        "default",
        {"dna_prefix": "", "kmer_size": 1},
        "dna-hf",
        {"dtype": "bfloat16"},
        "single_nucleotide.yaml",
        "any single-nucleotide causal LM",
    ),
    Family(
        "carbon",
        {"dna_prefix": "<dna>", "kmer_size": 6},
        "dna-hf",
        {"dtype": "bfloat16", "add_bos_token": False},
        "carbon.yaml",
        "HuggingFaceBio/Carbon-3B",
    ),
    Family(
        "generator",
        {"dna_prefix": "<s>", "kmer_size": 6},
        "dna-hf",
        {"dtype": "bfloat16", "add_bos_token": False},
        "generator.yaml",
        "GenerTeam/GENERator-v2-eukaryote-1.2b-base",
    ),
    Family(
        "nucleotide_transformer",
        {"dna_prefix": "", "kmer_size": 6},
        "dna-mlm",
        {"dtype": "bfloat16", "trust_remote_code": True},
        "nucleotide_transformer.yaml",
        "InstaDeepAI/nucleotide-transformer-v2-500m-multi-species",
    ),
    Family(
        "dnabert",
        {"dna_prefix": "", "kmer_size": 6, "kmer_overlap": True},
        "dna-mlm",
        {},
        None,
        "zhihan1996/DNA_bert_6",
    ),
)

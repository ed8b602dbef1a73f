"""The model table and the family table: the lm-eval models this package adds, and the model
families it knows how to run (each one a preset).

:data:`MODELS` names each lm-eval model with the class that implements it, its kind:
``causal`` (log-likelihoods of whole sequences: ``dna-hf``, ``kmer-markov``) or ``masked``
(masked marginals over the positions that differ: ``dna-mlm``), and what it reads: ``tokens``
of a tokenizer, or ``bases`` (``kmer-markov``: one scored term per base, no tokenizer). The autoload hook registers
them with lm-eval from it (lazily, without importing them), each adapter takes its name from it
(``models/adapter.registered``), and a test holds ``setup.cfg``'s ``lm_eval.models`` entry points
to it. What follows from the kind (which conventions apply, what scale a report puts a run on)
is read from here.

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
    """One lm-eval model of this package: ``module:Class``, its kind, what it reads, and the
    values of its ``scoring`` argument, its default first (none: it has no such argument)."""

    target: str
    kind: str
    reads: str = "tokens"
    scorings: tuple[str, ...] = ()


MODELS = {
    "dna-hf": Model(
        "perturbation_bench.models.dna_hf:DnaHFLM", "causal", scorings=("likelihood", "embedding")
    ),
    "dna-mlm": Model(
        "perturbation_bench.models.dna_mlm:DnaMaskedLM",
        "masked",
        scorings=("marginal", "pll", "embedding"),
    ),
    "kmer-markov": Model("perturbation_bench.models.kmer_markov:KmerMarkovLM", "causal", "bases"),
}
"""lm-eval model name -> :class:`Model`."""
CAUSAL_MODELS = tuple(name for name, model in MODELS.items() if model.kind == "causal")
MASKED_MODELS = tuple(name for name, model in MODELS.items() if model.kind == "masked")


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
FAMILY = {family.preset: family for family in FAMILIES}
""":data:`FAMILIES` by preset."""

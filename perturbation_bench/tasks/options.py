"""Task options read from lm-eval's ``--metadata`` JSON, and the model-family presets.

lm-eval merges ``--model_args`` into the metadata before it reaches a task, so the dict this
module receives mixes the options below with model arguments (``pretrained``, ``dtype``, ...)
and lm-eval's own keys (``version``). It cannot tell a model argument from a typo in general;
it rejects a key that is not one of :data:`OPTION_KEYS` but close to one of them (``presets``,
``data-dir``, ``dna_prefx``), and passes every other key through untouched.

A preset is a :class:`~perturbation_bench.pairs.requests.Formatting` (DNA prefix, k-mer size,
overlapping k-mers; ``pairs/requests.py`` states how it shapes the requests); ``dna_prefix``,
``kmer_size``, ``kmer_overlap`` and ``rc_average`` override it.

Reduction of a sequence's token log-probs to its score (``reduction``):

    sum   LL(s) = sum over the continuation's tokens of log p(token | previous)   (default)
    mean  LL(s) = that sum / number of continuation tokens                         (reference scorer)

Both rank a pair the same way whenever its two sequences have the same number of tokens (single
nucleotides, fixed k-mers); they can disagree for tokenizers whose token counts differ within a
pair (BPE). "Tokens" are the scored ones: with ``start_token: none`` the first is not.

``convention`` names an upstream's choices (``pairs/conventions.py``) and sets ``start_token``,
``reduction``, ``rc_average`` and ``one_class_chromosomes``; given with one of them set to
another value, it is refused (the run would be neither the convention nor the option).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Mapping

from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.conventions import CONVENTIONS, ONE_CLASS_RULES, START_TOKENS
from perturbation_bench.pairs.ranking import SCORES
from perturbation_bench.pairs.requests import Formatting

PRESETS: dict[str, Formatting] = {
    "default": Formatting(dna_prefix="", kmer_size=1),
    "carbon": Formatting(dna_prefix="<dna>", kmer_size=6),
    "generator": Formatting(dna_prefix="<s>", kmer_size=6),
    "nucleotide_transformer": Formatting(dna_prefix="", kmer_size=6),
    "dnabert": Formatting(dna_prefix="", kmer_size=6, kmer_overlap=True),
}

OPTION_KEYS = (
    "data_dir",
    "dataset_revision",
    "config",
    "preset",
    "dna_prefix",
    "kmer_size",
    "kmer_overlap",
    "rc_average",
    "reduction",
    "context_bp",
    "score",
    "shard",
    "start_token",
    "convention",
    "one_class_chromosomes",
)
REDUCTIONS = ("sum", "mean")


@dataclass(frozen=True)
class TaskOptions:
    """The options of one perturbation-bench task run, validated.

    Attributes:
        preset: name of the preset the formatting started from.
        formatting: the preset with ``dna_prefix`` / ``kmer_size`` overrides applied.
        data_dir: local folder in the hub layout (``DIR/<config>/*.parquet``), or None for the hub.
        dataset_revision: hub revision (branch, tag or commit) when reading from the hub.
        config: the config the ``perturbation_custom`` task reads from ``data_dir``.
        reduction: ``sum`` or ``mean`` of a sequence's token log-probs (module docstring).
        context_bp: crop every pair to this many bp around its changes (``tasks/crop.py``);
            None keeps the whole window.
        score: the variant task's ranking score, ``llr`` or ``abs_llr`` (``pairs/ranking.py``);
            the other tasks ignore it.
        shard: ``(I, N)``: score only the pairs whose 0-based row (in file order) is ``I``
            modulo ``N``; None scores every pair.
        start_token: ``model`` or ``none`` (``pairs/conventions.py``).
        convention: the upstream convention named, or None.
        one_class_chromosomes: ``drop`` or ``keep`` (``pairs/ranking.py``).
    """

    preset: str
    formatting: Formatting
    data_dir: str | None = None
    dataset_revision: str | None = None
    config: str | None = None
    reduction: str = "sum"
    context_bp: int | None = None
    score: str = "llr"
    shard: tuple[int, int] | None = None
    start_token: str = "model"
    convention: str | None = None
    one_class_chromosomes: str = "drop"

    def describe(self) -> str:
        """One line for the log: preset, prefix and k-mer size in use."""
        f = self.formatting
        return (
            f"preset={self.preset!r} dna_prefix={f.dna_prefix!r} kmer_size={f.kmer_size} "
            f"kmer_overlap={f.kmer_overlap} "
            f"rc_average={f.rc_average} reduction={self.reduction} "
            f"context_bp={self.context_bp or 'whole window'} start_token={self.start_token}"
            + (f" convention={self.convention}" if self.convention else "")
        )


def parse_options(metadata: Mapping[str, Any]) -> TaskOptions:
    """Validate the task options in ``metadata`` (see the module docstring for what is checked).

    Raises:
        OptionsError: unknown preset, a key that looks like a misspelt option, or a value of
            the wrong type.
    """
    _reject_misspelt_keys(metadata)
    metadata = _with_convention(metadata)
    preset = metadata.get("preset") or "default"
    if preset not in PRESETS:
        raise OptionsError(f"unknown preset {preset!r}; valid presets: {', '.join(PRESETS)}")
    base = PRESETS[preset]
    dna_prefix = metadata.get("dna_prefix", base.dna_prefix)
    if not isinstance(dna_prefix, str):
        raise OptionsError(f"dna_prefix must be a string, got {dna_prefix!r}")
    kmer_size = metadata.get("kmer_size", base.kmer_size)
    if isinstance(kmer_size, bool) or not isinstance(kmer_size, int) or kmer_size < 1:
        raise OptionsError(f"kmer_size must be a positive integer, got {kmer_size!r}")
    rc_average = metadata.get("rc_average", False)
    if not isinstance(rc_average, bool):
        raise OptionsError(f"rc_average must be true or false, got {rc_average!r}")
    kmer_overlap = metadata.get("kmer_overlap", base.kmer_overlap)
    if not isinstance(kmer_overlap, bool):
        raise OptionsError(f"kmer_overlap must be true or false, got {kmer_overlap!r}")
    reduction = metadata.get("reduction") or "sum"
    if reduction not in REDUCTIONS:
        raise OptionsError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    context_bp = metadata.get("context_bp")
    if context_bp is not None and (
        isinstance(context_bp, bool) or not isinstance(context_bp, int) or context_bp < kmer_size
    ):
        raise OptionsError(
            f"context_bp must be a whole number of bp, at least the k-mer size {kmer_size}, "
            f"got {context_bp!r}"
        )
    score = metadata.get("score") or "llr"
    if score not in SCORES:
        raise OptionsError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    start_token = metadata.get("start_token") or "model"
    if start_token not in START_TOKENS:
        raise OptionsError(
            f"start_token must be one of {', '.join(START_TOKENS)}, got {start_token!r}"
        )
    if start_token == "none" and dna_prefix:
        raise OptionsError(
            f"start_token 'none' scores the raw sequence with nothing before it, but the DNA "
            f'prefix is {dna_prefix!r} (preset {preset!r}); set dna_prefix to "" or leave '
            "start_token out"
        )
    one_class = metadata.get("one_class_chromosomes") or "drop"
    if one_class not in ONE_CLASS_RULES:
        raise OptionsError(
            f"one_class_chromosomes must be one of {', '.join(ONE_CLASS_RULES)}, got {one_class!r}"
        )
    shard = parse_shard(metadata.get("shard"))
    data_dir, config = metadata.get("data_dir"), metadata.get("config")
    if data_dir is not None and not isinstance(data_dir, str):
        raise OptionsError(f"data_dir must be a path string, got {data_dir!r}")
    if config is not None and not isinstance(config, str):
        raise OptionsError(f"config must be a config name, got {config!r}")
    return TaskOptions(
        preset=preset,
        formatting=Formatting(
            dna_prefix=dna_prefix,
            kmer_size=kmer_size,
            rc_average=rc_average,
            kmer_overlap=kmer_overlap,
        ),
        data_dir=data_dir,
        dataset_revision=metadata.get("dataset_revision"),
        config=config,
        reduction=reduction,
        context_bp=context_bp,
        score=score,
        shard=shard,
        start_token=start_token,
        convention=metadata.get("convention"),
        one_class_chromosomes=one_class,
    )


def _with_convention(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata`` with the pieces of its ``convention`` filled in (module docstring)."""
    name = metadata.get("convention")
    if name is None:
        return metadata
    if name not in CONVENTIONS:
        raise OptionsError(f"unknown convention {name!r}; conventions: {', '.join(CONVENTIONS)}")
    pieces = CONVENTIONS[name].pieces()
    for key, value in pieces.items():
        given = metadata.get(key)
        if given is not None and given != value:
            raise OptionsError(
                f"convention {name!r} sets {key}={value!r}, and {key}={given!r} was given; "
                f"leave {key} out, or the convention"
            )
    return {**metadata, **pieces}


def parse_shard(value) -> tuple[int, int] | None:
    """``"I/N"`` (0 <= I < N, as a SLURM array's ``--array=0-(N-1)``) as ``(I, N)``."""
    if value is None:
        return None
    parts = str(value).split("/")
    if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
        index, count = (int(p) for p in parts)
        if 0 <= index < count:
            return index, count
    raise OptionsError(f'shard must be I/N with 0 <= I < N (e.g. "3/8"), got {value!r}')


def _reject_misspelt_keys(metadata: Mapping[str, Any]) -> None:
    for key in metadata:
        if key in OPTION_KEYS:
            continue
        near = difflib.get_close_matches(key, OPTION_KEYS, n=1, cutoff=0.75)
        if near:
            raise OptionsError(
                f"unknown option {key!r} (did you mean {near[0]!r}?); "
                f"perturbation-bench options: {', '.join(OPTION_KEYS)}; "
                f"presets: {', '.join(PRESETS)}"
            )

"""Task options read from lm-eval's ``--metadata`` JSON, and the model-family presets.

lm-eval merges ``--model_args`` into the metadata before it reaches a task, so the dict this
module receives mixes the options below with model arguments (``pretrained``, ``dtype``, ...)
and lm-eval's own keys (``version``). It cannot tell a model argument from a typo in general;
it rejects a key that is not one of :data:`OPTION_KEYS` but close to one of them (``presets``,
``data-dir``, ``dna_prefx``), and passes every other key through untouched.

A preset is a model family's :class:`~perturbation_bench.pairs.requests.Formatting` (the family
table ``families.FAMILIES``: DNA prefix, k-mer size, overlapping k-mers; ``pairs/requests.py`` states how it shapes the requests); ``dna_prefix``,
``kmer_size``, ``kmer_overlap`` and ``rc_average`` override it.

Reduction of a sequence's token log-probs to its score (``reduction``):

    sum   LL(s) = sum over the continuation's tokens of log p(token | previous)   (default)
    mean  LL(s) = that sum / number of continuation tokens                         (reference scorer)

Both rank a pair the same way whenever its two sequences have the same number of tokens (single
nucleotides, fixed k-mers); they can disagree for tokenizers whose token counts differ within a
pair (BPE). "Tokens" are the scored ones: with ``start_token: none`` the first is not.

The options are the settings of ``pairs/settings.py`` that are options (:data:`SETTINGS`), plus
where the data is read from (``data_dir``, ``dataset_revision``, ``config``). A setting with a
fixed few ``choices`` is checked against them here from the table; the others have their own
checks below.

``convention`` names an upstream's choices (``pairs/conventions.py``) and sets ``start_token``,
``reduction``, ``rc_average`` and ``one_class_chromosomes``; given with one of them set to
another value, it is refused (the run would be neither the convention nor the option).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perturbation_bench.active_models import active_model, active_scoring
from perturbation_bench.errors import OptionsError
from perturbation_bench.families import FAMILIES
from perturbation_bench.pairs.conventions import CONVENTIONS
from perturbation_bench.pairs.requests import Formatting
from perturbation_bench.pairs.settings import SETTINGS, TaskSettings
from perturbation_bench.wording import did_you_mean

PRESETS = {family.preset: Formatting(**family.formatting) for family in FAMILIES}
"""Each family's formatting (``families.FAMILIES``), by preset."""

SOURCE_KEYS = ("data_dir", "dataset_revision", "config")
"""The options that say where the data is read from (not settings)."""
OPTION_KEYS = (*SOURCE_KEYS, *(setting.name for setting in SETTINGS if setting.option))


@dataclass(frozen=True)
class TaskOptions:
    """The options of one perturbation-bench task run, validated.

    Attributes:
        settings: the task's settings as the options give them (``pairs/settings.py``), the
            data's identity and the label kind not yet known.
        data_dir: local folder in the hub layout (``DIR/<config>/*.parquet``), or None for the hub.
        dataset_revision: hub revision (branch, tag or commit) when reading from the hub.
        config: the config the ``perturbation_custom`` task reads from ``data_dir``.
        shard: ``(I, N)``: score only the pairs whose 0-based row (in file order) is ``I``
            modulo ``N``; None scores every pair.
    """

    settings: TaskSettings
    data_dir: str | None = None
    dataset_revision: str | None = None
    config: str | None = None
    shard: tuple[int, int] | None = None


def parse_options(metadata: Mapping[str, Any]) -> TaskOptions:
    """Validate the task options in ``metadata`` (see the module docstring for what is checked).

    Raises:
        OptionsError: unknown preset, a key that looks like a misspelt option, or a value of
            the wrong type.
    """
    _reject_misspelt_keys(metadata)
    _reject_model_arguments_in_metadata(metadata)
    metadata = _with_convention(metadata)
    given = {s.name: metadata[s.name] for s in SETTINGS if s.option and _given(metadata, s.name)}
    preset = given.get("preset", "default")
    if preset not in PRESETS:
        raise OptionsError(
            f"unknown preset {preset!r}{did_you_mean(preset, PRESETS)}; valid presets: "
            f"{', '.join(PRESETS)}"
        )
    base = PRESETS[preset]
    values = {
        "dna_prefix": base.dna_prefix,
        "kmer_size": base.kmer_size,
        "kmer_overlap": base.kmer_overlap,
        **given,
    }
    for setting in SETTINGS:
        if setting.choices and setting.name in values:
            _check_choice(setting.name, values[setting.name], setting.choices)
    if not isinstance(values["dna_prefix"], str):
        raise OptionsError(f"dna_prefix must be a string, got {values['dna_prefix']!r}")
    _check_context(values.get("context_bp"), _positive_integer(values, "kmer_size"))
    if "min_per_class" in values:
        _positive_integer(values, "min_per_class")
    if values.get("start_token") == "none" and values["dna_prefix"]:
        raise OptionsError(
            f"start_token 'none' scores the raw sequence with nothing before it, but the DNA "
            f'prefix is {values["dna_prefix"]!r} (preset {preset!r}); set dna_prefix to "" or '
            "leave start_token out"
        )
    shard = parse_shard(values.get("shard"))
    if shard is not None:
        values["shard"] = f"{shard[0]}/{shard[1]}"
    data_dir, config = metadata.get("data_dir"), metadata.get("config")
    if data_dir is not None and not isinstance(data_dir, str):
        raise OptionsError(f"data_dir must be a path string, got {data_dir!r}")
    if config is not None and not isinstance(config, str):
        raise OptionsError(f"config must be a config name, got {config!r}")
    return TaskOptions(
        settings=TaskSettings(**values),
        data_dir=data_dir,
        dataset_revision=metadata.get("dataset_revision"),
        config=config,
        shard=shard,
    )


def _check_context(context_bp, kmer_size: int) -> None:
    """Refuse a ``context_bp`` that is not a whole number of bp of at least one k-mer."""
    if context_bp is not None and (
        isinstance(context_bp, bool) or not isinstance(context_bp, int) or context_bp < kmer_size
    ):
        raise OptionsError(
            f"context_bp must be a whole number of bp, at least the k-mer size {kmer_size}, "
            f"got {context_bp!r}"
        )


def _given(metadata: Mapping[str, Any], name: str) -> bool:
    """Whether option ``name`` is given: None counts as not given, and so does "" but for
    ``dna_prefix`` (where "" means no prefix)."""
    value = metadata.get(name)
    return value is not None and (value != "" or name == "dna_prefix")


def _check_choice(name: str, value, choices: tuple) -> None:
    if all(isinstance(choice, bool) for choice in choices):
        if not isinstance(value, bool):
            raise OptionsError(f"{name} must be true or false, got {value!r}")
    elif value not in choices:
        raise OptionsError(
            f"{name} must be one of {', '.join(choices)}, got {value!r}"
            f"{did_you_mean(value, choices)}"
        )


def _with_convention(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata`` with the pieces of its ``convention`` filled in (module docstring)."""
    name = metadata.get("convention")
    if name is None:
        return metadata
    if name not in CONVENTIONS:
        raise OptionsError(
            f"unknown convention {name!r}{did_you_mean(name, CONVENTIONS)}; conventions: "
            f"{', '.join(CONVENTIONS)}"
        )
    pieces = CONVENTIONS[name].pieces(active_model())
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


MODEL_SCORING_ARGUMENTS = ("distance", "pooling", "layer")
"""The embedding score's model arguments (``models/embedding_scoring.py``)."""


def _reject_model_arguments_in_metadata(metadata: Mapping[str, Any]) -> None:
    """Refuse the model's ``scoring`` (and an embedding score's arguments) where the model was
    not created with them: lm-eval merges ``--model_args`` into the tasks' metadata, so there
    they agree with the model's; given in ``--metadata`` alone, the model never sees them and
    would score otherwise, silently."""
    created = active_scoring()
    given = metadata.get("scoring")
    misplaced = [f"scoring={given}"] if given is not None and given != created else []
    if created != "embedding":
        misplaced += [f"{k}={metadata[k]}" for k in MODEL_SCORING_ARGUMENTS if k in metadata]
    if misplaced:
        raise OptionsError(
            f"{', '.join(misplaced)}: model arguments, read by the model only; give them in "
            f"--model_args (--metadata reaches the tasks; the model scores with "
            f"scoring={created or 'its default'})"
        )


def _positive_integer(values: dict, name: str) -> int:
    """``values[name]``, refused unless a positive whole number (a bool is not one)."""
    value = values[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionsError(f"{name} must be a positive integer, got {value!r}")
    return value

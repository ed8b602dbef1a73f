"""Model arguments (``--model_args``), read and checked before any weight is read: true/false
values, where the model comes from, batch sizes, and the run's tokenizer.

A true/false argument (``trust_remote_code``, ``dedupe``, ...) is a bool, or one of the words of
:data:`TRUE_WORDS` / :data:`FALSE_WORDS` in any case (lm-eval passes ``--model_args`` text
through, and a Python caller may write ``"False"``): :func:`truth` reads it, so ``"False"`` is
false, never a non-empty string taken for true.

A run that is going to fail should fail in its first second, in one line, not after minutes of
loading weights or a transformers traceback. ``pretrained`` (and ``tokenizer``) must be:

- a local folder, or
- a Hugging Face hub id (``owner/name``); with the hub off (``HF_HUB_OFFLINE=1``) it must already
  be in the local cache.

Anything else (a path that does not exist, a file, a name that is not a valid hub id) is
"no such model folder". Loading errors from the hub itself (a misspelt id, no network) are turned
into one line by :func:`loading_errors`.

A model that ships its own code (``auto_map`` in its ``config.json``: HyenaDNA, Caduceus,
DNABERT-2, GENA-LM) loads only with ``trust_remote_code=True``; without it a local folder is
refused before loading (:func:`check_remote_code`) and a hub model's refusal from transformers
becomes one line (:func:`loading_errors`), both naming the argument, never transformers' prompt
or traceback.
"""

from __future__ import annotations

import contextlib
import os

from perturbation_bench.dna import BASES
from perturbation_bench.errors import OptionsError

TRUE_WORDS = ("true", "1", "yes", "t")
FALSE_WORDS = ("false", "0", "no", "f")


def truth_word(value) -> bool | None:
    """``value`` as a bool: a bool itself, or a word of :data:`TRUE_WORDS` / :data:`FALSE_WORDS`
    (any case, spaces around it ignored); None for anything else."""
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    return True if text in TRUE_WORDS else False if text in FALSE_WORDS else None


def truth(value, name: str) -> bool:
    """The true/false model argument ``name`` (module docstring).

    Raises:
        OptionsError: ``value`` is neither a bool nor a truth word.
    """
    read = truth_word(value)
    if read is None:
        raise OptionsError(f"{name} must be true or false, got {value!r}")
    return read


def load_tokenizer(model_args: dict):
    """The run's tokenizer: ``transformers.AutoTokenizer`` of ``tokenizer`` (else ``pretrained``)
    at ``revision``, with ``trust_remote_code`` read by :func:`truth`; None when neither is
    given. A loading failure is one line (:func:`loading_errors`)."""
    name = model_args.get("tokenizer") or model_args.get("pretrained")
    if not name:
        return None
    from transformers import AutoTokenizer

    with loading_errors(name):
        return AutoTokenizer.from_pretrained(
            name,
            trust_remote_code=truth(
                model_args.get("trust_remote_code", False), "trust_remote_code"
            ),
            revision=model_args.get("revision") or None,
        )


def check_model_source(name, argument: str = "pretrained") -> None:
    """Raise :class:`OptionsError` unless ``name`` is a local folder or a usable hub id."""
    if not isinstance(name, str) or not name:
        raise OptionsError(f"{argument} must name a model folder or hub id, got {name!r}")
    path = os.path.expanduser(name)
    if os.path.isdir(path):
        return
    if os.path.exists(path):
        raise OptionsError(f"{argument}={name}: a file, not a model folder")
    from huggingface_hub import constants, try_to_load_from_cache
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        raise OptionsError(
            f"{argument}={name}: no such model folder (from {os.getcwd()}), and not a hub id"
        ) from None
    if constants.HF_HUB_OFFLINE and not isinstance(
        try_to_load_from_cache(name, "config.json"), str
    ):
        raise OptionsError(
            f"{argument}={name}: no such model folder (from {os.getcwd()}), and the Hugging Face "
            "hub is off (HF_HUB_OFFLINE=1) with nothing cached for that hub id"
        )


def check_remote_code(name, trust_remote_code) -> None:
    """Raise :class:`OptionsError` when local model folder ``name`` ships its own code and
    ``trust_remote_code`` is not true."""
    import json

    config = os.path.join(os.path.expanduser(name), "config.json") if isinstance(name, str) else ""
    if truth(trust_remote_code or False, "trust_remote_code") or not os.path.isfile(config):
        return
    try:
        auto_map = json.load(open(config)).get("auto_map")
    except (OSError, ValueError):
        return  # transformers reports an unreadable config itself
    if auto_map:
        raise OptionsError(_remote_code_message(name))


def _remote_code_message(name) -> str:
    return (
        f"{name} ships its own model code (auto_map in its config.json); pass "
        "trust_remote_code=True in --model_args to run it (only for code you trust)"
    )


@contextlib.contextmanager
def loading_errors(name):
    """Turn a hub loading failure of ``name`` (a hub id: not a local folder, not a model object)
    into one :class:`OptionsError`, and transformers' refusal to run a model's own code without
    ``trust_remote_code`` too."""
    try:
        yield
    except ValueError as err:
        if "trust_remote_code" not in str(err):
            raise
        raise OptionsError(_remote_code_message(name)) from None
    except OSError as err:
        if not isinstance(name, str) or os.path.isdir(os.path.expanduser(name)):
            raise
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise OptionsError(
            f"pretrained={name}: no such model folder, and loading it from the Hugging Face hub "
            f"failed: {first}"
        ) from None


def check_batch_size(value, allow_auto: bool = True) -> None:
    """Raise :class:`OptionsError` unless ``value`` is a positive whole number (or ``auto``,
    ``auto:N``)."""
    text = str(value).strip()
    if allow_auto and (text == "auto" or text.startswith("auto:")):
        text = text[5:] or "1"
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        raise OptionsError(
            f"batch size must be a positive whole number{' or auto' if allow_auto else ''}, "
            f"got {value!r}"
        )


def single_base_token_ids(tokenizer) -> list[int]:
    """The token ids of A, C, G and T, each a token of its own (what ``score: jsd`` reads).

    Raises:
        OptionsError: the tokenizer lacks one of them (a k-mer or BPE tokenizer).
    """
    ids = tokenizer.convert_tokens_to_ids(list(BASES))
    missing = [b for b, i in zip(BASES, ids, strict=True) if i in (None, tokenizer.unk_token_id)]
    if missing or len(set(ids)) != 4:
        raise OptionsError(
            "score jsd reads the distributions of single bases: the tokenizer needs A, C, G "
            "and T as single tokens (a single-nucleotide tokenizer); this one has none for "
            f"{', '.join(missing) or 'each'}"
        )
    return ids


def model_source(arguments: dict) -> str | None:
    """What identifies a model among its arguments: ``pretrained``, or a kmer-markov's
    ``fasta``."""
    return arguments.get("pretrained") or arguments.get("fasta")

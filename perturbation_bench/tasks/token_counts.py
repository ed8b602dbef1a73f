"""How many tokens of each continuation the model scores, for ``reduction: mean``.

lm-eval's hf-family models score a request's continuation as (``lm_eval.api.model.TemplateLM``)::

    context == ""  ->  tokens(continuation)                             (after the BOS/prefix token)
    otherwise      ->  tokens(context + continuation)[len(tokens(context)):]

so the number of scored tokens is ``len(tokens(continuation))`` or
``len(tokens(context + continuation)) - len(tokens(context))``, both without special tokens (a
BOS added to both encodings cancels). With ``start_token: none`` (``pairs/conventions.py``) the
context is empty and the first token of the continuation is not scored: one fewer. The counts
are taken once, when the task loads, with the run's own tokenizer (``tokenizer`` or
``pretrained`` from ``--model_args``, loaded by ``arguments.load_tokenizer``). A model that
reads bases (``kmer-markov``, ``families.MODELS``) scores one term per base of the
continuation: ``len(continuation)``, one fewer with ``start_token: none``; it needs no tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from perturbation_bench.arguments import load_tokenizer
from perturbation_bench.errors import OptionsError
from perturbation_bench.families import reads_bases


def scored_counter(metadata: Mapping[str, Any], model: str | None) -> Callable[..., int]:
    """``count(context, continuation, bare)`` for the run's ``model`` (module docstring)."""
    if reads_bases(model):
        return scored_bases
    return partial(scored_tokens, counting_tokenizer(metadata))


def scored_bases(context: str, continuation: str, bare: bool = False) -> int:
    """Bases of ``continuation`` a model that reads bases scores (module docstring)."""
    return len(continuation) - bare


def counting_tokenizer(metadata: Mapping[str, Any]):
    """The tokenizer of the run's model, named by ``tokenizer`` or ``pretrained`` in ``metadata``."""
    tokenizer = load_tokenizer(dict(metadata))
    if tokenizer is None:
        raise OptionsError(
            "reduction 'mean' divides by the number of tokens, so it needs the model's tokenizer: "
            "pass pretrained=... (or tokenizer=...) in --model_args"
        )
    return tokenizer


def scored_tokens(tokenizer, context: str, continuation: str, bare: bool = False) -> int:
    """Number of tokens of ``continuation`` the model scores after ``context``; ``bare``: with
    nothing before it, its first token unscored (module docstring)."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    if not context:
        return count(continuation) - bare
    return count(context + continuation) - count(context)

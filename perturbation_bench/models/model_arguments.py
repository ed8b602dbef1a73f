"""Which ``--model_args`` a model takes, read off the code that takes them.

Checked for this package's models and for lm-eval's ``hf`` family (``HFLM`` and the classes
derived from it); lm-eval's other models check their own. A model takes an argument when
(:func:`check_model_arguments`):

1. an ``__init__`` of its class or of a class it derives from names it (``dna-hf``: its own and
   lm-eval's ``HFLM``'s; ``dna-mlm``, ``kmer-markov``: their own), or lm-eval passes it to every
   model (:data:`LM_EVAL_PASSES`);
2. for an ``HFLM``, which hands the arguments it does not name to transformers'
   ``from_pretrained``, also when ``from_pretrained`` documents it (``attn_implementation``,
   ``device_map``, ...) or the model's config has it as an attribute (``from_pretrained`` sets
   those on the config; the config file is read, no weight).

Anything else would reach a model's constructor as an unexpected keyword (a transformers
``TypeError`` after the download) or be ignored; it is refused in one line instead, naming the
model of this package that does take it, if one does. A model of this package then reads the
values of the arguments it takes (its ``argument_values``: a seed, a sharing mode, a stride),
its constructor's defaults filled in (:func:`signature_defaults`). ``perturbation-bench check``
and every model of this package's ``__init__`` run the same check, before any weight is read,
and the constructor keeps the values it returns.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Any

from perturbation_bench.errors import OptionsError
from perturbation_bench.families import MODELS
from perturbation_bench.paths import named
from perturbation_bench.wording import did_you_mean

LM_EVAL_PASSES = ("batch_size", "max_batch_size", "device")
"""What lm-eval adds to every model's arguments (``create_from_arg_string``)."""

_DOCUMENTED = re.compile(r"^\s+(\w+) \(`", re.MULTILINE)


def model_class(model: str):
    """The class lm-eval runs for ``--model model``; None when it needs a package that is not
    installed (lm-eval names it when the run starts).

    Raises:
        OptionsError: lm-eval has no model of that name.
    """
    from lm_eval.api.registry import get_model

    if model in MODELS:  # this package's own, whether or not the autoload hook registered it
        return named(MODELS[model].target)
    try:
        return get_model(model)
    except ImportError:
        return None
    except ValueError:
        raise OptionsError(f"--model {model}: lm-eval has no model of that name") from None


def _forwards_to_from_pretrained(cls) -> bool:
    from lm_eval.models.huggingface import HFLM

    return issubclass(cls, HFLM)


def named_arguments(cls) -> set[str]:
    """The keyword arguments some ``__init__`` in ``cls``'s class hierarchy names."""
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for parameter in inspect.signature(init).parameters.values():
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
                names.add(parameter.name)
    return names - {"self"}


def signature_defaults(cls) -> dict[str, Any]:
    """The defaults ``cls.__init__`` declares, by argument name."""
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not p.empty}


def check_scoring(model: str, scoring) -> None:
    """Refuse a ``scoring`` value that this package's ``model`` does not have (the model table's
    ``scorings``).

    Raises:
        OptionsError: naming the model's scorings and the models that have the value.
    """
    choices = MODELS[model].scorings if model in MODELS else ()
    if not choices or scoring in choices:
        return
    others = [name for name, entry in MODELS.items() if scoring in entry.scorings]
    where = (
        f" ({scoring} is a scoring of {' and '.join(others)})"
        if others
        else did_you_mean(scoring, choices)
    )
    raise OptionsError(
        f"{model} scores with scoring= {' or '.join(choices)}, not {scoring!r}{where}"
    )


def check_model_arguments(model: str, model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Refuse an argument in ``model_args`` that ``model`` does not take (module docstring) and
    a ``scoring`` it does not have (:func:`check_scoring`); return, for a model of this package,
    the values it reads (its class's ``argument_values``), else ``{}``.

    Raises:
        OptionsError: naming the argument, the model, and the model of this package that takes
            it, or the value and what the argument takes.
    """
    if "scoring" in model_args:
        check_scoring(model, model_args["scoring"])
    cls = model_class(model)
    if cls is None:
        return {}
    forwards = _forwards_to_from_pretrained(cls)
    if model not in MODELS and not forwards:
        return {}
    unknown = _unknown(cls, model_args, forwards)
    if unknown:
        _refuse(model, unknown[0], cls, forwards)
    if model not in MODELS:
        return {}
    return cls.argument_values({**signature_defaults(cls), **model_args})


def _unknown(cls, model_args: Mapping[str, Any], forwards: bool) -> list[str]:
    """The arguments of ``model_args`` that ``cls`` does not take (module docstring)."""
    taken = named_arguments(cls) | set(LM_EVAL_PASSES)
    unknown = [key for key in model_args if key not in taken]
    return _not_for_transformers(unknown, model_args) if unknown and forwards else unknown


def _refuse(model: str, key: str, cls, forwards: bool) -> None:
    """Refuse argument ``key`` of ``model``, naming the models of this package that take it."""
    others = [
        name for name in MODELS if name != model and key in named_arguments(model_class(name))
    ]
    where = f" ({key} is an argument of {' and '.join(others)})" if others else ""
    listing = ""
    if not forwards:
        listing = f"; it takes {', '.join(sorted(named_arguments(cls)))}"
    raise OptionsError(f"{model} does not take the model argument {key}{where}{listing}")


def _not_for_transformers(keys: list[str], model_args: Mapping[str, Any]) -> list[str]:
    """Those of ``keys`` that transformers' ``from_pretrained`` neither documents nor finds on
    the model's config."""
    from transformers import PreTrainedModel

    documented = set(_DOCUMENTED.findall(PreTrainedModel.from_pretrained.__doc__ or ""))
    keys = [key for key in keys if key not in documented]
    if not keys or not isinstance(model_args.get("pretrained"), str):
        return keys
    config = _config(model_args)
    if config is None:
        return []  # loading the model will say why its config cannot be read
    return [key for key in keys if not hasattr(config, key)]


def _config(model_args: Mapping[str, Any]):
    """The model's config (its file only), or None when it cannot be read."""
    from transformers import AutoConfig

    from perturbation_bench.arguments import truth

    try:
        return AutoConfig.from_pretrained(
            model_args["pretrained"],
            revision=model_args.get("revision"),
            trust_remote_code=truth(
                model_args.get("trust_remote_code", False), "trust_remote_code"
            ),
        )
    except (OSError, ValueError):
        return None

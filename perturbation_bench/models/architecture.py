"""Whether a checkpoint's architecture is one a model of this package can score, read from its
``config.json`` alone (no weight is read), for ``check`` and each model's constructor.

A model of kind ``causal`` (``dna-hf``, ``families.MODELS``) scores a left-to-right LM; one of
kind ``masked`` (``dna-mlm``) masks positions of a bidirectional one. The config tells which:

1. ``architectures`` (the classes it was saved from): a name ending in ``ForMaskedLM`` is a
   masked LM, one ending in ``ForCausalLM`` or ``LMHeadModel`` a causal LM; a checkpoint whose
   names are all of the other kind is refused;
2. without such names, ``model_type``: it must have a class in transformers' mapping of the
   model's kind (causal LM or masked LM), unless the folder ships its own code (``auto_map``).

The rule holds for every scoring (an embedding score reads a causal model's hidden states with
``dna-hf``, a masked model's with ``dna-mlm``: a masked checkpoint loaded as a causal LM would
attend one way only).
"""

from __future__ import annotations

from perturbation_bench.arguments import loading_errors, truth
from perturbation_bench.errors import OptionsError
from perturbation_bench.families import MODELS

SUFFIXES = {"masked": ("ForMaskedLM",), "causal": ("ForCausalLM", "LMHeadModel")}
OTHER_MODEL = {"causal": "dna-mlm", "masked": "dna-hf"}
WHAT = {"causal": "causal (left-to-right) LM", "masked": "masked LM"}


def check_architecture(model: str, config, source: str) -> None:
    """Refuse ``config`` (a transformers config of ``source``) for ``model`` (module docstring;
    lm-eval's own ``hf`` model scores causal LMs, as ``dna-hf`` does).

    Raises:
        OptionsError: naming the checkpoint, its architecture and the model to use instead.
    """
    kind = MODELS[model].kind if model in MODELS else "causal"  # lm-eval's hf: a causal LM
    other = "masked" if kind == "causal" else "causal"
    names = list(config.architectures or [])  # a PretrainedConfig always has the field
    if names and all(name.endswith(SUFFIXES[other]) for name in names):
        raise OptionsError(
            f"pretrained={source} is a {WHAT[other]} ({', '.join(names)} in its config.json); "
            f"{model} scores {WHAT[kind]}s: run it with --model {OTHER_MODEL[kind]}"
        )
    if any(name.endswith(SUFFIXES[kind]) for name in names) or getattr(config, "auto_map", None):
        return
    from transformers.models.auto import modeling_auto

    mapping = (
        modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        if kind == "causal"
        else modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    )
    if config.model_type not in mapping:
        raise OptionsError(
            f"pretrained={source}: transformers has no {WHAT[kind]} class for its model_type "
            f"{config.model_type!r} (config.json); {model} scores {WHAT[kind]}s: run it with "
            f"--model {OTHER_MODEL[kind]}"
        )


def checkpoint_config(model_args: dict):
    """The transformers config of ``model_args``' ``pretrained`` (``trust_remote_code`` and
    ``revision`` as given; a ``plugin`` registered before, :func:`register_plugin`), read
    without any weight; None for a model object."""
    source = model_args["pretrained"]
    if not isinstance(source, str):
        return None
    from transformers import AutoConfig

    remote = truth(model_args.get("trust_remote_code", False), "trust_remote_code")
    with loading_errors(source):
        return AutoConfig.from_pretrained(
            source, trust_remote_code=remote, revision=model_args.get("revision")
        )


def check_checkpoint(model: str, model_args: dict) -> None:
    """:func:`check_architecture` of ``model_args``' checkpoint, unless it is a model object."""
    if "pretrained" not in model_args:
        return
    config = checkpoint_config(model_args)
    if config is not None:
        check_architecture(model, config, model_args["pretrained"])


def register_plugin(name: str) -> None:
    """Import package ``name`` and call its ``register_auto_classes()`` if it has one."""
    import importlib

    try:
        package = importlib.import_module(name)
    except ImportError as err:
        raise OptionsError(
            f"plugin={name}: cannot import it ({err}); pip install {name}?"
        ) from None
    register = getattr(package, "register_auto_classes", None)
    if register is not None:
        register()

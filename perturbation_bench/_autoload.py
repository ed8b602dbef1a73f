"""Let ``lm_eval`` find this package's tasks and its models without ``--include_path``.

lm-eval 0.4.x has no plugin entry points (the package declares the ones upstream is adding, so
this hook can retire once a release reads them), so the package installs a one-line
``perturbation_bench_autoload.pth`` into site-packages that imports this module at Python
start-up. Contract:

- Free: importing this module imports nothing (``os`` and ``sys`` are loaded before any ``.pth``)
  and puts one finder first in ``sys.meta_path``; a program that never imports lm-eval pays one
  dict look-up per import.
- Transparent: when ``lm_eval.tasks.manager`` or ``lm_eval.models`` is imported, the finder asks
  the other finders for the real spec and wraps only ``exec_module`` of its loader, delegating
  every other attribute; once the module has run, the real loader is put back on the module
  and its spec, so ``importlib.resources`` and friends see exactly what they would without us.
- What the hooks do: ``TaskManager.__init__`` is wrapped so that whenever the built-in tasks are
  indexed (``include_defaults=True``), this package's task folder is indexed right after them and
  before the user's ``include_path`` (later paths win in lm-eval, so a user's task of the same
  name overrides ours); this package's models are registered in lm-eval's model registry as lazy
  entries, imported only when a run asks for one.
- Fail-safe: any exception inside a hook, or a ``TaskManager`` whose signature is not the one we
  know, is caught and logged once with the fix (``--include_path``), and lm-eval runs exactly as
  it would without this package.

``PERTURBATION_BENCH_NO_AUTOLOAD=1`` turns all of this off.
"""

import os
import sys

_reported = []


def report_failure(error: BaseException) -> None:
    """Log once that the hook could not run, and how to use the package without it."""
    if _reported:
        return
    _reported.append(error)
    import logging

    logging.getLogger("lm_eval.perturbation_bench").warning(
        "perturbation-bench could not hook into lm-eval (%s: %s); lm-eval runs without it. "
        'Name the task folder yourself: lm_eval --include_path "$(perturbation-bench path)" ...; '
        "and import perturbation_bench.models.dna_hf before lm-eval builds the model from Python.",
        type(error).__name__,
        error,
    )


class _HookedLoader:
    """The real loader, with ``hook(module)`` run after ``exec_module`` (failures reported)."""

    def __init__(self, loader, hook) -> None:
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        try:
            self._hook(module)
        except Exception as error:  # never break lm-eval because of us
            report_failure(error)


class PostImportFinder:
    """A ``sys.meta_path`` finder that runs a hook right after a named module is imported, once."""

    def __init__(self, hooks: dict) -> None:
        self._hooks = dict(hooks)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self._hooks:
            return None
        hook = self._hooks.pop(fullname)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = _HookedLoader(spec.loader, hook)
                    return spec
        except Exception as error:
            report_failure(error)
        return None


def add_tasks_to_defaults(manager_module) -> None:
    """Wrap ``TaskManager.__init__`` as described in the module docstring."""
    import functools
    import inspect

    original = manager_module.TaskManager.__init__
    signature = inspect.signature(original)
    if not {"include_path", "include_defaults"} <= set(signature.parameters):
        raise TypeError(f"TaskManager.__init__{signature} lacks include_path/include_defaults")

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        try:
            args, kwargs = with_tasks_dir(signature, self, args, kwargs)
        except Exception as error:
            report_failure(error)
        original(self, *args, **kwargs)

    manager_module.TaskManager.__init__ = __init__


def with_tasks_dir(signature, self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments with this package's task folder first in ``include_path`` when the
    built-in tasks are indexed; unchanged otherwise."""
    from pathlib import Path

    from perturbation_bench.paths import tasks_dir

    bound = signature.bind(self, *args, **kwargs)
    bound.apply_defaults()
    if not bound.arguments["include_defaults"]:
        return args, kwargs
    include = bound.arguments["include_path"]
    paths = (
        []
        if include is None
        else list(include)
        if isinstance(include, (list, tuple))
        else [include]
    )
    ours = tasks_dir()
    others = [p for p in paths if Path(p).resolve() != ours.resolve()]
    bound.arguments["include_path"] = [str(ours), *others]
    return bound.args[1:], bound.kwargs


def register_models(models_module) -> None:
    """Add this package's model table (``perturbation_bench.families.MODELS``) to lm-eval's model
    registry as lazy placeholders."""
    from lm_eval.api.registry import model_registry

    from perturbation_bench.families import MODELS

    for name, model in MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=model.target)


HOOKS = {"lm_eval.tasks.manager": add_tasks_to_defaults, "lm_eval.models": register_models}


def install() -> None:
    """Put the finder first in ``sys.meta_path`` unless disabled or already there."""
    if os.environ.get("PERTURBATION_BENCH_NO_AUTOLOAD", "") not in ("", "0"):
        return
    if any(type(finder).__name__ == "PostImportFinder" for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, PostImportFinder(HOOKS))


install()

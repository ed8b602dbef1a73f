"""Let ``lm_eval`` find this package's tasks and its ``dna-hf`` model without ``--include_path``.

lm-eval 0.4.x has no plugin entry points, so the package installs a one-line
``perturbation_bench_autoload.pth`` into site-packages that imports this module at Python
start-up. Importing it only puts a finder first in to ``sys.meta_path``: nothing else is imported
and a program that never imports lm-eval pays one dict look-up per import. When a program
imports ``lm_eval.tasks.manager``, the finder lets the real module load, then wraps
``TaskManager.__init__`` so that, whenever the built-in tasks are indexed
(``include_defaults=True``), this package's task folder is indexed too, before any
``include_path`` of the user's (which can therefore override it). When a program imports
``lm_eval.models``, it registers ``dna-hf`` in lm-eval's model registry as a lazy entry
(``perturbation_bench.models.dna_hf:DnaHFLM``), imported only if a run asks for that model.

``PERTURBATION_BENCH_NO_AUTOLOAD=1`` turns all of this off.
"""

from __future__ import annotations

import functools
import importlib.abc
import inspect
import os
import sys
from pathlib import Path
from typing import Callable


class _LoaderWithHook(importlib.abc.Loader):
    """Delegate to the real loader, then call ``hook(module)``."""

    def __init__(self, loader, hook: Callable) -> None:
        self._loader = loader
        self._hook = hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        self._hook(module)


class PostImportFinder(importlib.abc.MetaPathFinder):
    """Run a hook right after a named module has been imported, once."""

    def __init__(self, hooks: dict[str, Callable]) -> None:
        self._hooks = dict(hooks)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self._hooks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _LoaderWithHook(spec.loader, self._hooks.pop(fullname))
                return spec
        return None


def with_tasks_dir(include_path, tasks_dir: Path) -> list:
    """``include_path`` (None, a path or a list) as a list that starts with ``tasks_dir`` once."""
    if include_path is None:
        paths = []
    elif isinstance(include_path, (list, tuple)):
        paths = list(include_path)
    else:
        paths = [include_path]
    others = [p for p in paths if Path(p).resolve() != tasks_dir.resolve()]
    return [str(tasks_dir), *others]


def add_tasks_to_defaults(manager_module) -> None:
    """Wrap ``TaskManager.__init__`` as described in the module docstring."""
    from perturbation_bench.paths import tasks_dir

    original = manager_module.TaskManager.__init__
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        if bound.arguments["include_defaults"]:
            bound.arguments["include_path"] = with_tasks_dir(
                bound.arguments["include_path"], tasks_dir()
            )
        original(*bound.args, **bound.kwargs)

    manager_module.TaskManager.__init__ = __init__


def register_dna_hf(models_module) -> None:
    """Add ``dna-hf`` to lm-eval's model registry as a lazy placeholder."""
    from lm_eval.api.registry import model_registry

    if "dna-hf" not in model_registry:
        model_registry.register("dna-hf", target="perturbation_bench.models.dna_hf:DnaHFLM")


HOOKS = {"lm_eval.tasks.manager": add_tasks_to_defaults, "lm_eval.models": register_dna_hf}


def install() -> None:
    """Put the finder first in ``sys.meta_path`` unless disabled or already there."""
    if os.environ.get("PERTURBATION_BENCH_NO_AUTOLOAD", "") not in ("", "0"):
        return
    if any(isinstance(finder, PostImportFinder) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, PostImportFinder(HOOKS))


install()

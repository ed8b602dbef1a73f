"""Where things of this package are: the lm-eval task folder, the demo data, and an object a
table names by its dotted path (``module.path:name``), so that a lower layer can name code of a
higher one (a kind's modules, a model's class) without importing it."""

from __future__ import annotations

import functools
import importlib
from pathlib import Path


def tasks_dir() -> Path:
    """The folder with the task YAMLs, for ``lm_eval --include_path``.

    Installed, it is ``perturbation_bench/lm_eval_tasks`` (setup.cfg maps the repository's
    top-level ``lm_eval_tasks/`` there); in a source checkout it is that top-level folder.
    """
    package = Path(__file__).resolve().parent
    installed = package / "lm_eval_tasks"
    return installed if installed.is_dir() else package.parent / "lm_eval_tasks"


def demo_data_dir() -> Path:
    """The small synthetic demo dataset shipped with the package (``data_dir: demo``)."""
    return Path(__file__).resolve().parent / "demo_data"


@functools.cache
def named(target: str):
    """The object ``target`` names, ``"package.module:name"``, imported when first asked for."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)

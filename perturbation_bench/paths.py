"""Where the lm-eval task folder of this package lives."""

from __future__ import annotations

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

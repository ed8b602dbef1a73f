"""A built config as a task of its own name, so that lm-eval's results table names it.

lm-eval takes a task's name and its row in the results table from the task's YAML, so a config
run through ``perturbation_custom`` is reported as ``perturbation_custom``. ``perturbation-bench
build`` therefore writes, beside the data, a YAML on the package's template::

    OUT/perturbation_<config>.yaml     task perturbation_<config>, reading OUT/<config>/*.parquet

run with ``lm_eval --include_path OUT --tasks perturbation_<config>``. The YAML names the template
and the data folder by absolute path: rebuild (or edit the two paths) after moving either.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from perturbation_bench.pairs.kinds import Kind
from perturbation_bench.paths import tasks_dir


def task_name(config: str) -> str:
    """The task a built ``config`` runs under."""
    return f"perturbation_{config}"


def check_config_name(config: str) -> None:
    """Refuse a config whose task name is one of the package's own tasks (lm-eval would index
    two tasks of one name).

    Raises:
        OptionsError: ``perturbation_<config>`` is a task of the package.
    """
    from perturbation_bench.errors import OptionsError

    if (tasks_dir() / f"{task_name(config)}.yaml").exists():
        raise OptionsError(
            f"--config {config}: its task name {task_name(config)} is one of the package's own "
            "tasks; choose another config name"
        )


def write_task_yaml(out: Path, config: str, kind: Kind) -> Path:
    """Write ``out/perturbation_<config>.yaml`` (module docstring) on the template of the
    config's ``kind`` (``pairs/kinds.py``) and return its path."""
    out = Path(out).resolve()
    spec = {
        "include": str(tasks_dir() / kind.template),
        "task": task_name(config),
        "dataset_name": config,
        "dataset_kwargs": {"config_name": config, "task_data_dir": str(out)},
    }
    path = out / f"{task_name(config)}.yaml"
    header = f"# Written by perturbation-bench build: lm_eval --include_path {out} --tasks {spec['task']}\n"
    path.write_text(header + yaml.safe_dump(spec, sort_keys=False))
    return path

"""The ready-made run configs in yaml/ are valid lm-eval and accelerate configs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lm_eval.config.evaluate_config import EvaluatorConfig
from lm_eval.tasks import TaskManager

from perturbation_bench.families import FAMILIES, MODELS
from perturbation_bench.pairs.requests import Formatting
from perturbation_bench.paths import tasks_dir
from perturbation_bench.tasks.options import parse_options

YAML = Path(__file__).parents[1] / "yaml"
LM_EVAL_CONFIGS = sorted(YAML.glob("*.yaml"))


@pytest.mark.parametrize("path", LM_EVAL_CONFIGS, ids=lambda p: p.name)
def test_run_config_is_valid_and_scores_in_float32(path):
    config = EvaluatorConfig.from_config(path)
    known = TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_tasks
    assert set(config.tasks.split(",")) <= set(known)
    parse_options(config.metadata)
    assert config.model in MODELS  # float32 log-softmax and sums whatever the weight dtype


ACCELERATE_CONFIGS = sorted((YAML / "accelerate").glob("*.yaml"))


@pytest.mark.parametrize("path", ACCELERATE_CONFIGS, ids=lambda p: p.name)
def test_accelerate_configs_load_and_launch_several_processes(path):
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(path))
    assert config.distributed_type == "MULTI_GPU" and config.num_processes >= 2
    assert config.num_processes % config.num_machines == 0


def test_every_family_s_config_is_there_and_every_config_is_a_family_s():
    assert {family.config for family in FAMILIES if family.config} == {
        path.name for path in LM_EVAL_CONFIGS
    }


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.config], ids=lambda f: f.preset)
def test_a_family_s_config_runs_its_preset_with_its_model_and_model_args(family):
    config = EvaluatorConfig.from_config(YAML / family.config)
    assert (config.metadata["preset"], config.model) == (family.preset, family.model)
    assert family.model_args.items() <= config.model_args.items()
    assert parse_options(config.metadata).settings.formatting == Formatting(**family.formatting)


def test_the_presets_table_of_the_docs_is_the_family_table():
    page = (YAML.parent / "docs" / "models-and-presets.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| `([\w-]+)` \|", page, re.M)
    assert rows == [(family.preset, family.model) for family in FAMILIES]

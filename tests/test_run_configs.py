"""The ready-made run configs in yaml/ are valid lm-eval configs that score in float32."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.config.evaluate_config import EvaluatorConfig
from lm_eval.tasks import TaskManager

from perturbation_bench.options import parse_options
from perturbation_bench.paths import tasks_dir

LM_EVAL_CONFIGS = sorted((Path(__file__).parents[1] / "yaml").glob("*.yaml"))


def test_there_is_one_config_per_model_family():
    presets = {EvaluatorConfig.load_yaml_config(p)["metadata"]["preset"] for p in LM_EVAL_CONFIGS}
    assert presets == {"default", "carbon", "generator"}


@pytest.mark.parametrize("path", LM_EVAL_CONFIGS, ids=lambda p: p.name)
def test_run_config_is_valid_and_scores_in_float32(path):
    config = EvaluatorConfig.from_config(path)
    known = TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_tasks
    assert set(config.tasks.split(",")) <= set(known)
    parse_options(config.metadata)
    args = config.model_args
    assert args.get("softmax_dtype") == "float32" or args.get("dtype") == "float32"

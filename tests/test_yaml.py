"""The ready-made run configs in yaml/ are valid lm-eval and accelerate configs."""

from __future__ import annotations

from pathlib import Path

import pytest
from lm_eval.config.evaluate_config import EvaluatorConfig
from lm_eval.tasks import TaskManager

from perturbation_bench.paths import tasks_dir
from perturbation_bench.tasks.options import parse_options

LM_EVAL_CONFIGS = sorted((Path(__file__).parents[1] / "yaml").glob("*.yaml"))


def test_there_is_one_config_per_model_family():
    presets = {EvaluatorConfig.load_yaml_config(p)["metadata"]["preset"] for p in LM_EVAL_CONFIGS}
    assert presets == {"default", "carbon", "generator", "nucleotide_transformer"}


@pytest.mark.parametrize("path", LM_EVAL_CONFIGS, ids=lambda p: p.name)
def test_run_config_is_valid_and_scores_in_float32(path):
    config = EvaluatorConfig.from_config(path)
    known = TaskManager(include_path=str(tasks_dir()), include_defaults=False).all_tasks
    assert set(config.tasks.split(",")) <= set(known)
    parse_options(config.metadata)
    # float32 log-softmax and sums whatever the weight dtype; masked models need dna-mlm
    masked = config.metadata["preset"] == "nucleotide_transformer"
    assert config.model == ("dna-mlm" if masked else "dna-hf")


ACCELERATE_CONFIGS = sorted((Path(__file__).parents[1] / "yaml" / "accelerate").glob("*.yaml"))


@pytest.mark.parametrize("path", ACCELERATE_CONFIGS, ids=lambda p: p.name)
def test_accelerate_configs_load_and_launch_several_processes(path):
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(path))
    assert config.distributed_type == "MULTI_GPU" and config.num_processes >= 2
    assert config.num_processes % config.num_machines == 0

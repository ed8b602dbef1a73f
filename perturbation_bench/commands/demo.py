"""``perturbation-bench demo [--dir .demo]``: the shipped demo end to end, offline, on this
machine.

Builds the two tiny random models of ``fixtures/random_models.py`` under DIR when absent (a
causal Llama read by ``dna-hf``, ``DIR/tiny-dna-lm``; a masked BERT read by ``dna-mlm``,
``DIR/tiny-dna-mlm``; single-nucleotide tokens, 8,200 positions), scores each on the synthetic
demo data shipped in the package (``data_dir: demo``, task :data:`TASK`: 24 pairs of 8,192 bp)
through lm-eval's Python API, saving results and samples as ``lm_eval --log_samples
--output_path DIR/runs/<kind>`` does (an earlier demo's run there is replaced), then writes the
report (``DIR/report``) and the leaderboard (``DIR/leaderboard``) and prints where they are. The
models are random: the scores mean nothing; the demo shows the pipeline working.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

TASK = "perturbation_motif_human"
MODELS = {"causal": ("dna-hf", "tiny-dna-lm"), "masked": ("dna-mlm", "tiny-dna-mlm")}
"""Run kind -> the lm-eval model that reads it and its folder under DIR."""
MAX_POSITIONS = 8200
"""The models' positions: a demo window (8,192 bp) and its special tokens."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``demo`` subcommand's options."""
    parser.add_argument(
        "--dir", default=".demo", help="folder for the models, runs, report (default %(default)s)"
    )


def run(args: argparse.Namespace) -> int:
    """Build, score, report (module docstring); print where the report and leaderboard are."""
    from perturbation_bench.report.leaderboard import leaderboard
    from perturbation_bench.report.leaderboard_files import write_leaderboard
    from perturbation_bench.report.make import make_report
    from perturbation_bench.report.output_folder import check_output_folder, make_folder

    root = make_folder(args.dir, "--dir")
    check_output_folder(root / "leaderboard", "--dir")  # before minutes of scoring
    runs = []
    for kind, (model, name) in MODELS.items():
        pretrained = build_model(kind, root / name)
        folder = root / "runs" / kind
        shutil.rmtree(folder, ignore_errors=True)
        evaluate_to(folder, model, {"pretrained": str(pretrained)}, [TASK], {"data_dir": "demo"})
        runs.append(str(folder))
    make_report(runs, root / "report")
    write_leaderboard(*leaderboard(runs), root / "leaderboard")
    print(f"report: {root / 'report' / 'report.md'}")
    print(f"leaderboard: {root / 'leaderboard' / 'leaderboard.md'}")
    return 0


def build_model(kind: str, folder: Path) -> Path:
    """The demo's ``kind`` model in ``folder``, built there (seeded) unless already there."""
    from perturbation_bench.fixtures import random_models as made

    if (folder / "config.json").is_file():
        print(f"using {folder}")
        return folder
    tokens = made.single_nucleotide_tokenizer()
    if kind == "masked":
        made.save_random_bert(
            folder, made.as_masked_lm_tokenizer(tokens), max_positions=MAX_POSITIONS
        )
    else:
        made.save_random_llama(folder, tokens, max_positions=MAX_POSITIONS)
    print(f"built {folder}")
    return folder


def evaluate_to(
    folder: Path, model: str, model_args: dict, tasks: list[str], metadata: dict
) -> dict:
    """Score ``tasks`` with lm-eval's ``model`` on the CPU, only this package's tasks indexed,
    the model arguments merged into the task metadata as lm-eval's CLI merges them; results and
    samples saved in ``folder`` as ``lm_eval --output_path folder --log_samples`` saves them."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from perturbation_bench.families import MODELS as REGISTERED
    from perturbation_bench.paths import named, tasks_dir

    named(REGISTERED[model].target)  # imported, its module registers it
    manager = TaskManager(
        include_path=[str(tasks_dir())], include_defaults=False, metadata=model_args | metadata
    )
    tracker = EvaluationTracker(output_path=str(folder))
    result = simple_evaluate(
        model=model, model_args=model_args, tasks=tasks, task_manager=manager, device="cpu",
        batch_size=1, log_samples=True, evaluation_tracker=tracker,
    )  # fmt: skip
    save_as_the_cli(tracker, result)
    return result


def save_as_the_cli(tracker, result: dict) -> None:
    """Save ``result`` (``simple_evaluate``'s, with samples) through ``tracker`` as lm-eval's CLI
    does: the aggregated results, then each task's samples (the tracker rewrites samples in
    place, so it is given a copy)."""
    import copy

    samples = copy.deepcopy(result["samples"])
    tracker.save_results_aggregated(
        results={key: value for key, value in result.items() if key != "samples"}, samples=samples
    )
    for name in result["configs"]:
        tracker.save_results_samples(task_name=name, samples=samples[name])

"""The leaderboard over many runs (``report/leaderboard.py``): a row per run identity with each
task's headline metric as lm-eval wrote it, its 1.96-stderr interval, ranks, and the files."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dna_fixtures import evaluate, random_genome
from perturbation_bench.cli import main
from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.report.leaderboard import headline, leaderboard

TASKS = ["perturbation_syn_human", "perturbation_motif_human"]


@pytest.fixture(scope="module")
def five_runs(tmp_path_factory, pair_data):
    """kmer-markov at orders 0 to 4 on two tasks: five run folders and their results."""
    root = tmp_path_factory.mktemp("leaderboard")
    fasta, _ = random_genome(root, {"chr1": 3000}, 12)
    runs = []
    for order in range(5):
        result = evaluate(
            str(fasta),
            TASKS,
            {"data_dir": str(pair_data)},
            model="kmer-markov",
            output_path=root / f"order{order}",
            order=order,
        )
        runs.append((next((root / f"order{order}").iterdir()), result))
    return runs


def test_five_runs_make_five_rows_with_the_metrics_lm_eval_wrote(five_runs, tmp_path, capsys):
    folders = [str(folder) for folder, _ in five_runs]
    assert main(["leaderboard", *folders, "--out", str(tmp_path / "board")]) == 0
    table = pd.read_csv(tmp_path / "board" / "leaderboard.csv")
    assert len(table) == 5 and table["name"].is_unique
    assert {f"order={k}" for k in range(5)} == {name.split()[-1] for name in table["name"]}
    for folder, result in five_runs:
        row = table[table["folder"] == str(folder)].iloc[0]
        for task in TASKS:
            written = result["results"][task]
            value, stderr = written["pairwise_acc,pairs"], written["pairwise_acc_stderr,pairs"]
            assert row[f"{task}:value"] == pytest.approx(value)
            assert row[f"{task}:low"] == pytest.approx(value - 1.959963984540054 * stderr)
            assert row[f"{task}:metric"] == "pairwise_acc"
            better = sum(
                other["results"][task]["pairwise_acc,pairs"] > value for _, other in five_runs
            )
            assert row[f"{task}:rank"] == 1 + better
    assert list(table["mean_rank"]) == sorted(table["mean_rank"])
    markdown = (tmp_path / "board" / "leaderboard.md").read_text().splitlines()
    assert len(markdown) == 2 + 5 and "syn_human" in markdown[0]
    assert (tmp_path / "board" / "leaderboard.png").stat().st_size > 0
    assert "5 runs, 2 tasks" in capsys.readouterr().out


def test_the_same_run_twice_is_refused_naming_both_folders(five_runs):
    folder = str(five_runs[0][0])
    with pytest.raises(DataValidationError, match="are the same run identity"):
        leaderboard([folder, folder])


def test_a_folder_without_results_is_named(tmp_path):
    with pytest.raises(DataSourceError, match=r"no readable results_\*.json"):
        leaderboard([str(tmp_path)])


@pytest.mark.parametrize(
    "results, expected",
    [
        ({"auprc,pairs": 0.4, "pairwise_acc,pairs": 0.9}, ("auprc", 0.4, None)),
        ({"spearman,pairs": -0.3, "pairwise_acc,pairs": 0.6}, ("spearman", -0.3, None)),
        (
            {
                "auprc,pairs": float("nan"),
                "pairwise_acc,pairs": 0.6,
                "pairwise_acc_stderr,pairs": 0.1,
            },
            ("pairwise_acc", 0.6, 0.1),
        ),
        (
            {"pairwise_acc,pairs": 0.5, "pairwise_acc_stderr,pairs": "N/A"},
            ("pairwise_acc", 0.5, None),
        ),
        ({"tie_rate,pairs": 0.0}, None),
    ],
)
def test_the_headline_is_the_first_metric_the_task_has(results, expected):
    assert headline(results) == expected


def test_a_quantitative_task_ranks_by_the_size_of_rho(tmp_path):
    """rho -0.6 is a better ranking than +0.2 when low labels mean damaging."""
    for name, rho in (("a", -0.6), ("b", 0.2)):
        folder = tmp_path / name / "model"
        folder.mkdir(parents=True)
        results = {
            "results": {"perturbation_variants": {"spearman,pairs": rho}},
            "config": {"model": "dna-hf", "model_args": f"pretrained={name}"},
        }
        (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results))
    _, rows = leaderboard([str(tmp_path / "a"), str(tmp_path / "b")])
    assert [(row["name"], row["tasks"]["perturbation_variants"]["rank"]) for row in rows] == [
        ("a", 1),
        ("b", 2),
    ]

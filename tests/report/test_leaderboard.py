"""The leaderboard over many runs (``report/leaderboard.py``): a row per run identity with each
task's headline metric as lm-eval wrote it, its 1.96-stderr interval, ranks, and the files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dna_fixtures import evaluate, random_genome
from perturbation_bench.cli import main
from perturbation_bench.errors import DataSourceError, DataValidationError, OptionsError
from perturbation_bench.report.leaderboard import headline, leaderboard
from perturbation_bench.report.leaderboard_files import markdown, write_leaderboard

TASKS = ["perturbation_syn_human", "perturbation_motif_human"]


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval, written out (the test's own reference)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return centre - half, centre + half


def write_results(
    folder,
    model: str,
    tasks: dict,
    name: str = "2026-01-01T00-00-00",
    provenance=None,
    limit=None,
    original=None,
) -> None:
    """A results file of ``model`` with ``tasks``: ``task -> (accuracy, n)``; ``provenance``:
    what this package's models record under ``config.perturbation_bench``; ``limit``: the
    ``--limit`` it ran with; ``original``: each task's pairs before it (n by default)."""
    folder.mkdir(parents=True, exist_ok=True)
    results = {
        "results": {task: {"pairwise_acc,pairs": acc, "pairwise_acc_stderr,pairs": 0.2}
                    for task, (acc, _) in tasks.items()},
        "n-samples": {task: {"original": original or n, "effective": n}
                      for task, (_, n) in tasks.items()},
        "config": {"model": "dna-hf", "model_args": f"pretrained={model}", "limit": limit,
                   "perturbation_bench": provenance or {}},
    }  # fmt: skip
    (folder / f"results_{name}.json").write_text(json.dumps(results))


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
            value, n = written["pairwise_acc,pairs"], result["n-samples"][task]["effective"]
            assert row[f"{task}:value"] == pytest.approx(value)
            low, high = wilson(round(value * n), n)
            assert (row[f"{task}:low"], row[f"{task}:high"], row[f"{task}:n"]) == (
                pytest.approx(low, abs=1e-12),
                pytest.approx(high, abs=1e-12),
                n,
            )
            assert row[f"{task}:metric"] == "pairwise_acc"
            better = sum(
                other["results"][task]["pairwise_acc,pairs"] > value for _, other in five_runs
            )
            assert row[f"{task}:rank"] == 1 + better
    assert list(table["mean_rank"]) == sorted(table["mean_rank"])
    assert list(table.columns[:3]) == ["name", "mean_rank", "folder"]  # no index column
    markdown = (tmp_path / "board" / "leaderboard.md").read_text().splitlines()
    assert len(markdown) == 2 + 5 and "syn_human" in markdown[0]
    assert (tmp_path / "board" / "leaderboard.png").stat().st_size > 0
    out = capsys.readouterr().out
    assert "5 runs, 2 tasks; best mean rank over 2 shared tasks: " in out
    assert out.rstrip().endswith(" (every run is a floor)")  # five kmer-markov orders
    written = [line.removeprefix("wrote ") for line in out.splitlines() if line.startswith("wrote")]
    assert [Path(p).name for p in written] == [
        "leaderboard.csv",
        "leaderboard.md",
        "leaderboard.png",
    ]
    assert all(Path(p).is_file() for p in written)


def test_the_same_run_twice_is_refused_naming_both_folders(five_runs, tmp_path):
    """A folder given twice is said to be; two folders of one identity are named, with --name
    as the way to keep both."""
    folder = str(five_runs[0][0])
    with pytest.raises(OptionsError, match=f"^{re.escape(folder)}: given more than once; "):
        leaderboard([folder, folder])
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    with pytest.raises(DataValidationError, match="are the same run identity") as refused:
        leaderboard([folder, str(copy)])
    assert "name them apart with --name FOLDER=LABEL" in str(refused.value)
    _, rows = leaderboard([folder, str(copy)], {str(copy): "again"})
    assert sorted(row["name"] for row in rows)[0] == "again"


def test_a_folder_without_results_is_named(tmp_path):
    with pytest.raises(DataSourceError, match=r"no results_\*.json \(an lm_eval --output_path"):
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


def test_runs_are_ranked_on_the_tasks_every_run_scored_and_the_rest_listed_apart(tmp_path):
    """a beats b on the shared task, b alone ran the other: b is not "#1" of it, and the mean
    rank counts the shared task only; an accuracy of 1 of 12 keeps its interval above 0."""
    write_results(tmp_path / "a" / "m", "a", {"perturbation_syn_human": (0.75, 12)})
    write_results(
        tmp_path / "b" / "m",
        "b",
        {"perturbation_syn_human": (1 / 12, 12), "perturbation_motif_human": (0.9, 10)},
    )
    tasks, rows = leaderboard([str(tmp_path / "a"), str(tmp_path / "b")])
    assert tasks == ["perturbation_syn_human", "perturbation_motif_human"]
    assert [(r["name"], r["mean_rank"]) for r in rows] == [("a", 1.0), ("b", 2.0)]
    b = rows[1]["tasks"]
    assert b["perturbation_motif_human"]["rank"] is None
    low, high = wilson(1, 12)
    assert (b["perturbation_syn_human"]["low"], b["perturbation_syn_human"]["high"]) == (
        pytest.approx(low, abs=1e-12),
        pytest.approx(high, abs=1e-12),
    )
    assert low > 0  # value - 1.96 x 0.2 would be -0.31
    lines = markdown(tasks, rows)
    a_low, a_high = wilson(9, 12)
    assert lines[:4] == [
        "| rank | run | mean rank | syn_human |",
        "|---|---|---|---|",
        f"| 1 | a | 1.00 | pairwise_acc 0.750 [{a_low:.3f}, {a_high:.3f}] n=12 (#1) |",
        f"| 2 | b | 2.00 | pairwise_acc 0.083 [{low:.3f}, {high:.3f}] n=12 (#2) |",
    ]
    assert lines[4:11] == [
        "",
        "Not ranked (a ranked column holds one metric on all of one data identity):",
        "",
        "- motif_human: not scored by a",
        "",
        "| run | motif_human |",
        "|---|---|",
    ]
    assert lines[-2] == "| a | - |"
    assert lines[-1].startswith("| b | pairwise_acc 0.900 [") and "(#" not in lines[-1]


def test_runs_that_share_no_task_are_not_ranked(tmp_path, capsys):
    write_results(tmp_path / "a" / "m", "a", {"perturbation_syn_human": (0.6, 10)})
    write_results(tmp_path / "b" / "m", "b", {"perturbation_motif_human": (0.7, 10)})
    _, rows = leaderboard([str(tmp_path / "a"), str(tmp_path / "b")])
    assert [row["mean_rank"] for row in rows] == [None, None]
    assert all(cell["rank"] is None for row in rows for cell in row["tasks"].values())
    out = tmp_path / "board"
    assert main(["leaderboard", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not ranked: perturbation_syn_human: not scored by b" in printed
    assert "2 runs, 2 tasks; no task scored by every run with one metric on one data" in printed
    assert (out / "leaderboard.md").read_text().splitlines()[0] == (
        "No task was scored by every run with one metric on one data: nothing ranked."
    )


def test_every_results_file_of_a_folder_is_read_or_refused(tmp_path):
    """Two models in one folder are two rows; one model's tasks from two calls merge; a rerun
    of one task and an unreadable file are refused by name."""
    write_results(tmp_path / "two" / "a", "a", {"hellaswag": (0.3, 10)}, "2025-12")  # not ours
    write_results(tmp_path / "two" / "a", "a", {"perturbation_syn_human": (0.6, 10)})
    write_results(tmp_path / "two" / "b", "b", {"perturbation_syn_human": (0.7, 10)})
    write_results(tmp_path / "two" / "b", "b", {"perturbation_motif_human": (0.8, 10)}, "2026-02")
    _, rows = leaderboard([str(tmp_path / "two")])
    assert {row["name"]: sorted(row["tasks"]) for row in rows} == {
        "a": ["perturbation_syn_human"],
        "b": ["perturbation_motif_human", "perturbation_syn_human"],
    }
    write_results(tmp_path / "two" / "b", "b", {"perturbation_syn_human": (0.5, 10)}, "2026-03")
    with pytest.raises(DataValidationError, match=r"both hold perturbation_syn_human of one run"):
        leaderboard([str(tmp_path / "two")])
    (tmp_path / "bad" / "m").mkdir(parents=True)
    (tmp_path / "bad" / "m" / "results_x.json").write_text("{not json")
    with pytest.raises(DataSourceError, match=r"results_x.json: not a readable results file"):
        leaderboard([str(tmp_path / "bad")])


def test_the_figure_draws_chance_and_each_run_s_n(tmp_path, monkeypatch):
    from perturbation_bench.report import plots

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: drawn.append(figure))
    write_results(tmp_path / "a" / "m", "a", {"perturbation_syn_human": (0.6, 10)})
    write_results(tmp_path / "b" / "m", "b", {"perturbation_syn_human": (0.7, 20)})
    tasks, rows = leaderboard([str(tmp_path / "a"), str(tmp_path / "b")])
    write_leaderboard(tasks, rows, tmp_path / "board")
    (axes,) = drawn[0].axes
    assert sorted(text.get_text() for text in axes.texts) == ["n=10", "n=20"]
    chance = [line for line in axes.lines if list(line.get_xdata()) == [0.5, 0.5]]
    assert len(chance) == 1 and axes.get_xlabel() == "pairwise_acc (chance dashed)"
    assert [label.get_text() for label in axes.get_yticklabels()] == [r["name"] for r in rows]
    (container,) = axes.containers
    (bars,) = container.lines[2]  # each run's interval, as drawn
    drawn_intervals = [tuple(x for x, _ in segment) for segment in bars.get_segments()]
    expected = [(r["tasks"][tasks[0]]["low"], r["tasks"][tasks[0]]["high"]) for r in rows]
    assert drawn_intervals == [pytest.approx(pair, abs=1e-12) for pair in expected]
    assert axes.get_title() == "syn_human" and axes.get_ylim() == (1.5, -0.5)  # best on top


def test_a_task_not_every_run_scored_is_drawn_as_not_ranked(tmp_path, monkeypatch):
    from perturbation_bench.report import plots

    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda figure, path: drawn.append(figure))
    write_results(tmp_path / "a" / "m", "a", {"perturbation_syn_human": (0.6, 10)})
    write_results(
        tmp_path / "b" / "m",
        "b",
        {"perturbation_syn_human": (0.7, 20), "perturbation_motif_human": (0.9, 10)},
    )
    tasks, rows = leaderboard([str(tmp_path / "a"), str(tmp_path / "b")])
    write_leaderboard(tasks, rows, tmp_path / "board")
    shared, apart = drawn[0].axes
    assert (shared.get_title(), apart.get_title()) == ("syn_human", "motif_human (not ranked)")
    assert [label.get_text() for label in apart.get_yticklabels()] == ["", ""]


@pytest.mark.parametrize(
    "metric, value, stderr, n, expected",
    [
        ("pairwise_acc", 0.75, 0.2, 12, wilson(9, 12)),  # n known: Wilson's, the stderr unused
        ("pairwise_acc", 0.5, 0.1, None, (0.5 - 0.196, 0.5 + 0.196)),  # no n: +/- 1.96 se
        ("spearman", -0.9, 0.1, 50, (-1.0, -0.9 + 0.196)),  # a correlation stops at -1
        ("spearman_macro", 0.95, 0.1, 50, (0.95 - 0.196, 1.0)),
        ("auprc", 0.05, 0.05, 100, (0.0, 0.05 + 0.098)),  # an AUPRC stops at 0 and 1
        ("auprc_macro", 0.98, 0.05, 100, (0.98 - 0.098, 1.0)),
        ("auprc", 0.9, None, 10, (None, None)),
    ],
)
def test_an_interval_stays_within_its_metric_s_range(metric, value, stderr, n, expected):
    from perturbation_bench.report.leaderboard import interval

    low, high = interval(metric, value, stderr, n)
    if expected[0] is None:
        assert (low, high) == (None, None)
    else:
        assert (low, high) == (
            pytest.approx(expected[0], abs=1e-3),
            pytest.approx(expected[1], abs=1e-3),
        )


def test_runs_of_one_model_with_other_task_settings_are_two_rows(tmp_path):
    """What the package's models record (here the strand average) tells two runs of one model
    apart, as in the report."""
    for strands in (False, True):
        settings = {"tasks": {"perturbation_syn_human": {"rc_average": strands}}}
        write_results(
            tmp_path / str(strands) / "m", "m", {"perturbation_syn_human": (0.6, 10)},
            provenance=settings,
        )  # fmt: skip
    _, rows = leaderboard([str(tmp_path / "False"), str(tmp_path / "True")])
    assert sorted(row["name"] for row in rows) == ["m rc_average=False", "m rc_average=True"]


def test_a_run_without_pretrained_is_named_by_its_model_and_its_scorer_settings(tmp_path):
    """kmer-markov has no ``pretrained``: its rows are named by the lm-eval model, and two of
    them apart by the scorer settings the package recorded (``config.perturbation_bench``)."""
    for order in (2, 5):
        folder = tmp_path / f"o{order}" / "m"
        folder.mkdir(parents=True)
        results = {
            "results": {"perturbation_syn_human": {"pairwise_acc,pairs": 0.6}},
            "config": {
                "model": "kmer-markov",
                "model_args": "fasta=g.fa",
                "perturbation_bench": {"settings": {"order": order}},
            },
        }
        (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results))
    _, rows = leaderboard([str(tmp_path / "o2"), str(tmp_path / "o5")])
    assert sorted(row["name"] for row in rows) == ["kmer-markov order=2", "kmer-markov order=5"]


def test_a_task_scored_with_another_metric_or_on_other_data_is_not_ranked(tmp_path, capsys):
    """Three runs of one task: a and b on data aa with AUPRC, c with Spearman (its labels are
    another data set): no run is "#1" of it, c is listed apart with both reasons, and the figure
    draws two panels, each axis naming its metric. On a task all three scored on aa with AUPRC
    they are ranked, 0.7 > 0.5 > 0.3."""

    def run(name, metric, value, data):
        folder = tmp_path / name / "m"
        folder.mkdir(parents=True)
        results = {
            "results": {
                "perturbation_variants": {f"{metric},pairs": value},
                "perturbation_custom": {"auprc,pairs": {"a": 0.7, "b": 0.5, "c": 0.3}[name]},
            },
            "config": {
                "model": "dna-hf",
                "model_args": f"pretrained=/tmp/x/{name}",
                "perturbation_bench": {
                    "tasks": {
                        "perturbation_variants": {"data": data},
                        "perturbation_custom": {"data": "sha256:aa"},
                    }
                },
            },
        }
        (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results))
        return str(tmp_path / name)

    folders = [
        run("a", "auprc", 0.4, "sha256:aa"),
        run("b", "auprc", 0.6, "sha256:aa"),
        run("c", "spearman_macro", 0.9, "sha256:cc"),
    ]
    tasks, rows = leaderboard(folders)
    assert tasks == ["perturbation_custom", "perturbation_variants"]
    by_name = {row["name"]: row["tasks"] for row in rows}
    assert [by_name[n]["perturbation_custom"]["rank"] for n in "abc"] == [1, 2, 3]
    assert [by_name[n]["perturbation_variants"]["rank"] for n in "abc"] == [None] * 3
    assert [by_name[n]["perturbation_variants"]["apart"] for n in "ab"] == [None, None]
    assert by_name["c"]["perturbation_variants"]["apart"] == (
        "another metric (spearman_macro, not auprc); other data (sha256:cc, not sha256:aa)"
    )
    out = tmp_path / "board"
    assert main(["leaderboard", *folders, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not ranked: perturbation_variants: c apart: another metric (spearman_macro" in printed
    assert "- variants: c apart: another metric" in (out / "leaderboard.md").read_text()
    table = pd.read_csv(out / "leaderboard.csv")
    assert list(table["perturbation_variants:data"]) == ["sha256:aa", "sha256:aa", "sha256:cc"]
    from perturbation_bench.report.leaderboard_files import panels

    assert panels(tasks, rows) == [
        ("perturbation_custom", "auprc"),
        ("perturbation_variants", "auprc"),
        ("perturbation_variants", "spearman_macro"),
    ]


def test_leaderboard_name_labels_a_run_as_report_name_does(tmp_path, capsys):
    write_results(tmp_path / "a" / "m", "/tmp/pytest-1/models/tiny", {TASKS[0]: (0.6, 10)})
    write_results(tmp_path / "b" / "m", "/tmp/pytest-1/models/other", {TASKS[0]: (0.7, 10)})
    _, rows = leaderboard([str(tmp_path / "a"), str(tmp_path / "b")])
    assert sorted(row["name"] for row in rows) == ["other", "tiny"]
    out = tmp_path / "board"
    runs = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["leaderboard", *runs, "--out", str(out), "--name", f"{runs[0]}/=mine"]) == 0
    assert sorted(pd.read_csv(out / "leaderboard.csv")["name"]) == ["mine", "other"]
    assert main(["leaderboard", *runs, "--out", str(out), "--name", "elsewhere=x"]) == 2
    assert "--name elsewhere=x: elsewhere is not one of the RUN folders" in capsys.readouterr().err


def test_a_floor_s_row_says_which_floor_it_is_in_the_csv_and_the_markdown(tmp_path, five_runs):
    """A kmer-markov run is a composition floor, a run recording random_init a random-weights
    floor, a trained run none; ranked alike."""
    composition = str(five_runs[2][0])
    write_results(tmp_path / "t" / "m", "ckpt", {"perturbation_syn_human": (0.75, 12)})
    write_results(
        tmp_path / "r" / "m",
        "ckpt",
        {"perturbation_syn_human": (0.5, 12)},
        provenance={"model": "dna-hf", "settings": {"random_init": True, "seed": 42}},
    )
    folders = [str(tmp_path / "t"), str(tmp_path / "r"), composition]
    _, rows = leaderboard(folders)
    kinds = {row["name"]: row["floor"] for row in rows}
    assert kinds == {
        "ckpt": None,
        "ckpt random_init=True seed=42": "random weights",
        "kmer-markov": "composition",
    }
    assert main(["leaderboard", *folders, "--out", str(tmp_path / "board")]) == 0
    table = pd.read_csv(tmp_path / "board" / "leaderboard.csv").set_index("name")
    assert pd.isna(table.loc["ckpt", "floor"])
    assert table.loc["ckpt random_init=True seed=42", "floor"] == "random weights"
    assert table.loc["kmer-markov", "floor"] == "composition"
    text = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "| ckpt random_init=True seed=42 (floor: random weights) |" in text
    assert "| kmer-markov (floor: composition) |" in text


def _ranked(*rows: tuple[str, float, str | None]) -> list[dict]:
    return [{"name": name, "mean_rank": rank, "floor": floor} for name, rank, floor in rows]


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        (
            _ranked(("m1", 1.0, None), ("kmer", 2.0, "composition")),
            "best mean rank over 2 shared tasks: m1",
        ),
        (
            _ranked(("kmer", 1.0, "composition"), ("m1", 1.5, None), ("m2", 2.0, None)),
            "best mean rank over 2 shared tasks: m1; a floor ranks at or above it: "
            "kmer (composition)",
        ),
        (
            _ranked(("a", 1.5, None), ("b", 1.5, None), ("r", 1.5, "random weights")),
            "best mean rank over 2 shared tasks: a, b (tied at 1.5); a floor ranks at or above "
            "it: r (random weights)",
        ),
        (
            _ranked(("k", 1.0, "composition"), ("r", 2.0, "random weights")),
            "best mean rank over 2 shared tasks: k (every run is a floor)",
        ),
    ],
)
def test_the_headline_names_the_best_model_never_a_floor(rows, said):
    """Rows as ``leaderboard`` returns them, best mean rank first."""
    from perturbation_bench.report.leaderboard import best_line

    assert best_line(rows, ["t1", "t2"]) == said
    assert best_line(rows, []).endswith("nothing ranked")


def test_a_run_of_the_first_pairs_only_is_not_ranked_against_runs_of_every_pair(tmp_path, capsys):
    """--limit 8 scores the first 8 pairs: on one data identity it is apart from the runs that
    scored all 24, with the reason, and the task is listed, not ranked."""
    data = {"tasks": {"perturbation_syn_human": {"data": "sha256:" + "a" * 64}}}
    for name, acc, n, limit in (
        ("a", 0.6, 24, None),
        ("b", 0.7, 24, None),
        ("c", 0.9, 8, 8),
        ("d", 0.8, 24, 100),
    ):
        write_results(
            tmp_path / name / "m", name, {"perturbation_syn_human": (acc, n)}, provenance=data,
            limit=limit, original=24,
        )  # fmt: skip
    folders = [str(tmp_path / name) for name in "abc"]
    assert main(["leaderboard", *folders, "--out", str(tmp_path / "board")]) == 0
    out = capsys.readouterr().out
    assert (
        "not ranked: perturbation_syn_human: c apart: another part of it (--limit 8, not every "
        "pair)" in out
    )
    assert "nothing ranked" in out
    assert "a task is ranked over every run or none: leave out the runs named above" in out
    # --limit 100 on a task of 24 pairs scored every pair: ranked with the runs without one
    _, rows = leaderboard([str(tmp_path / name) for name in "abd"])
    assert [(row["name"], row["mean_rank"]) for row in rows] == [("d", 1.0), ("b", 2.0), ("a", 3.0)]


def test_runs_of_one_mean_rank_share_their_place_in_the_markdown(tmp_path):
    """Two runs tied at the top both place 1; the next places 3 (ties share the best rank, as a
    task's ranks do)."""
    for name, acc in (("a", 0.8), ("b", 0.8), ("c", 0.5)):
        write_results(tmp_path / name / "m", name, {"perturbation_syn_human": (acc, 12)})
    tasks, rows = leaderboard([str(tmp_path / name) for name in "abc"])
    places = [line.split(" | ")[:2] for line in markdown(tasks, rows)[2:5]]
    assert places == [["| 1", "a"], ["| 1", "b"], ["| 3", "c"]]

"""perturbation-bench report: intervals, McNemar, pairing by content, files, bad input."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread
from scipy.stats import binomtest

from dna_fixtures import evaluate, write_run
from perturbation_bench.cli import main
from perturbation_bench.errors import DataSourceError, DataValidationError
from perturbation_bench.fixtures.random_models import save_random_llama, single_nucleotide_tokenizer
from perturbation_bench.report.make import make_report
from perturbation_bench.report.statistics import (
    bootstrap_interval,
    mcnemar_exact,
    paired_bootstrap_difference,
    wilson_interval,
)
from perturbation_bench.report.summaries import model_comparisons

TASKS = ["perturbation_syn_human", "perturbation_motif_human"]
CONTEXT_TASKS = ["perturbation_motif_human_512bp", "perturbation_motif_human_1024bp"]


def outcomes(n: int, p: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < p).astype(int)


def test_bootstrap_is_reproducible_with_a_seed_and_shrinks_with_n():
    small, large = outcomes(60, 0.7), outcomes(6000, 0.7)
    assert bootstrap_interval(small, seed=3) == bootstrap_interval(small, seed=3)
    assert bootstrap_interval(small, seed=3) != bootstrap_interval(small, seed=4)
    width = lambda i: i[1] - i[0]  # noqa: E731
    assert width(bootstrap_interval(large)) < width(bootstrap_interval(small)) / 5
    assert width(wilson_interval(4200, 6000)) < width(wilson_interval(42, 60)) / 5


def test_perfect_separation_gives_accuracy_one_with_a_tight_interval():
    assert bootstrap_interval(np.ones(500, dtype=int)) == (1.0, 1.0)
    low, high = wilson_interval(500, 500)
    assert high == 1.0 and low > 0.99


@pytest.mark.parametrize(
    "k, n, expected",
    [(0, 10, (0.0, 0.2775)), (5, 10, (0.2366, 0.7634)), (81, 263, (0.2553, 0.3662))],
)
def test_wilson_interval_known_values(k, n, expected):
    assert wilson_interval(k, n) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("b, c", [(0, 0), (5, 0), (3, 7), (10, 12), (1, 20), (40, 25)])
def test_mcnemar_exact_matches_scipy(b, c):
    expected = 1.0 if b + c == 0 else binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def pair_frame(model: str, correct: np.ndarray, ids=None) -> pd.DataFrame:
    ids = ids if ids is not None else [f"p{i}" for i in range(len(correct))]
    return pd.DataFrame(
        {"pair_id": ids, "task": "perturbation_syn_human", "model": model, "correct": correct}
    )


def test_comparison_matches_pairs_by_content_not_order():
    a, b = outcomes(200, 0.8, seed=1), outcomes(200, 0.6, seed=2)
    ordered = model_comparisons(pd.concat([pair_frame("A", a), pair_frame("B", b)]))[0]
    shuffled_b = pair_frame("B", b).sample(frac=1, random_state=5)
    shuffled = model_comparisons(pd.concat([pair_frame("A", a), shuffled_b]))[0]
    assert ordered == shuffled
    assert ordered["a_right_b_wrong"] == int(((a == 1) & (b == 0)).sum())
    assert ordered["acc_difference"] == pytest.approx(a.mean() - b.mean())
    assert ordered["mcnemar_exact_p"] == mcnemar_exact(
        ordered["a_right_b_wrong"], ordered["b_right_a_wrong"]
    )
    diff, low, high = paired_bootstrap_difference(a, b)
    assert low < diff < high


def test_pairs_scored_by_one_model_only_are_reported():
    a, b = outcomes(50, 0.5), outcomes(50, 0.5, seed=9)
    result = model_comparisons(
        pd.concat([pair_frame("A", a), pair_frame("B", b[:40], [f"p{i}" for i in range(40)])])
    )[0]
    assert (result["n_common"], result["only_in_a"], result["only_in_b"]) == (40, 10, 0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two tiny random models run through lm-eval on the demo data, saved as lm_eval --log_samples does."""
    root = tmp_path_factory.mktemp("runs")
    folders = []
    for seed in (0, 1):
        model = save_random_llama(
            root / f"model{seed}",
            single_nucleotide_tokenizer(),
            layers=1,
            hidden=16,
            max_positions=8200,
            seed=seed,
        )
        evaluate(
            str(model), TASKS + CONTEXT_TASKS, {"data_dir": "demo"}, output_path=root / f"run{seed}"
        )
        folders.append(root / f"run{seed}")
    return folders


@pytest.fixture(scope="module")
def report(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return out, make_report(runs, out, by=["gene_name"], seed=0, n_boot=500)


@pytest.mark.slow
def test_report_on_real_lm_eval_runs(runs, report):
    out, data = report
    assert {(s["task"], s["n"]) for s in data["summary"]} == {
        (t, 24) for t in TASKS + CONTEXT_TASKS
    }
    assert len(data["summary"]) == 8 and len(data["comparisons"]) == 4
    assert {g["model"][-6:]: g["tasks"] for g in data["group_mean"]} == {
        "model0": sorted(TASKS),
        "model1": sorted(TASKS),
    }  # the crops are left out of the mean over tasks
    for row in data["summary"]:  # the report's accuracy is lm-eval's
        (results,) = (runs[0] if row["model"].endswith("model0") else runs[1]).glob(
            "*/results_*.json"
        )
        assert (
            row["pairwise_acc"]
            == json.loads(results.read_text())["results"][row["task"]]["pairwise_acc,pairs"]
        )
    assert all(c["n_common"] == 24 and c["only_in_a"] == 0 for c in data["comparisons"])
    assert {s["column"] for s in data["strata"]} >= {
        "strand",
        "exon_rank",
        "fraction_codons_changed",
        "gene_name",
    }
    assert all(s["few_pairs"] for s in data["strata"])  # 24 pairs per task: every stratum is small
    markdown = (out / "report.md").read_text()
    assert (
        "## Published reference (not measured here)" in markdown
        and "| Carbon-8B | 89.05 | 91.46 |" in markdown
    )
    assert markdown.index("## Accuracy (measured)") < markdown.index("## Published reference")


@pytest.mark.slow
def test_the_context_sweep_is_tabled_and_drawn(report):
    out, data = report
    sweep = data["context_sweep"]
    assert {(r["model"][-6:], r["config"], r["context_bp"]) for r in sweep} == {
        (m, "perturbation_motif_human", length)
        for m in ("model0", "model1")
        for length in (512, 1024, 8192)
    }
    by_task = {(s["model"], s["task"]): s["pairwise_acc"] for s in data["summary"]}
    for r in sweep:  # the sweep's accuracy at L is the L bp task's (8,192: the whole window)
        task = r["config"] + ("" if r["context_bp"] == 8192 else f"_{r['context_bp']}bp")
        assert r["pairwise_acc"] == by_task[(r["model"], task)] and r["n"] == 24
    markdown = (out / "report.md").read_text()
    assert (
        "## Context-length sweep" in markdown
        and "| perturbation_motif_human | 1,024 | 24 |" in markdown
    )
    assert imread(out / "context_sweep.png").shape[:2] == (500, 900)


@pytest.mark.slow
def test_report_files(runs, report):
    out, _ = report
    pairs = pd.read_parquet(out / "pairs.parquet")
    for name in ("accuracy.png", "accuracy_by_codons_changed.png"):
        assert imread(out / name).shape[:2] == (500, 900)
    panels = pairs["task"].nunique()  # the margins: a 350 px panel per task, 900 px at least
    assert imread(out / "margins.png").shape[:2] == (500, max(900, 350 * panels))
    assert len(pairs) == 2 * 4 * 24 and pairs["pair_id"].nunique() == 48
    samples_bytes = sum(p.stat().st_size for run in runs for p in run.glob("*/samples_*.jsonl"))
    assert samples_bytes / (out / "pairs.parquet").stat().st_size >= 50


@pytest.mark.slow
def test_bad_inputs_name_the_file_and_line(runs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataSourceError, match=f"{empty}: no samples_"):
        make_report([empty], tmp_path / "out")

    (sample,) = runs[0].glob("*/samples_perturbation_syn_human_*.jsonl")
    truncated = tmp_path / "truncated" / "model"
    truncated.mkdir(parents=True)
    lines = sample.read_text().splitlines(keepends=True)
    (truncated / sample.name).write_text("".join(lines[:5]) + lines[5][:100])
    with pytest.raises(
        DataValidationError, match=r"samples_perturbation_syn_human_.*: line 6: not valid JSON"
    ):
        make_report([tmp_path / "truncated"], tmp_path / "out")

    foreign = tmp_path / "foreign" / "model"
    foreign.mkdir(parents=True)
    (foreign / "samples_perturbation_syn_human_2026.jsonl").write_text(
        json.dumps({"doc_id": 0, "doc": {"query": "Q"}, "filtered_resps": [["-1", "-2"]]}) + "\n"
    )
    with pytest.raises(DataValidationError, match="line 1: not a perturbation-bench sample"):
        make_report([tmp_path / "foreign"], tmp_path / "out")

    other_task = tmp_path / "other" / "model"
    other_task.mkdir(parents=True)
    (other_task / "samples_hellaswag_2026.jsonl").write_text("{}\n")
    with pytest.raises(DataSourceError, match="no samples of perturbation-bench tasks"):
        make_report([tmp_path / "other"], tmp_path / "out")

    corrupted = write_run(tmp_path / "corrupted" / "model", "perturbation_syn_human", [(-1, -2)])
    (results,) = corrupted.glob("results_*.json")
    results.write_text(results.read_text()[:30])  # cut short: the run's name would be a guess
    with pytest.raises(DataSourceError, match=rf"{results}: not a readable results file"):
        make_report([tmp_path / "corrupted"], tmp_path / "out")


@pytest.mark.slow
def test_other_tasks_and_older_runs_are_listed_not_silently_skipped(runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    folder = next(run.iterdir())
    (folder / "samples_hellaswag_2026-01-01T00-00-00.jsonl").write_text("{}\n")
    (sample,) = folder.glob("samples_perturbation_syn_human_*.jsonl")
    shutil.copy(sample, folder / "samples_perturbation_syn_human_2000-01-01T00-00-00.jsonl")
    assert main(["report", str(run), "--out", str(tmp_path / "out"), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert (
        "ignored samples_hellaswag_2026-01-01T00-00-00.jsonl (not a perturbation-bench task)" in out
    )
    assert "ignored samples_perturbation_syn_human_2000-01-01T00-00-00.jsonl (older run" in out


def test_bootstrap_draws_every_pair_and_is_a_95_percent_interval():
    rare = np.array([0] * 99 + [1])  # only the last pair is right
    assert bootstrap_interval(rare, n_boot=2000)[1] > 0
    n, p = 20_000, 0.7
    low, high = bootstrap_interval(outcomes(n, p, seed=1), n_boot=2000)
    normal_width = 2 * 1.959964 * np.sqrt(p * (1 - p) / n)  # 95%; a 99% interval is 31% wider
    assert high - low == pytest.approx(normal_width, rel=0.08)


def test_paired_bootstrap_resamples_pairs_jointly():
    a = outcomes(400, 0.6, seed=2)
    b = a.copy()
    b[:4] = 1 - b[:4]  # the two models disagree on 4 of 400 pairs only
    diff, low, high = paired_bootstrap_difference(a, b, n_boot=2000)
    assert low <= diff <= high
    assert high - low < 0.03  # unpaired resampling would give about 0.14


def test_a_tie_counts_as_wrong_in_the_report(tmp_path):
    folder = tmp_path / "run" / "model"
    folder.mkdir(parents=True)
    pairs = [(-3.0, -3.0), (-2.0, -3.0), (-3.0, -2.0)]
    with (folder / "samples_perturbation_syn_human_2026-01-01T00-00-00.jsonl").open("w") as f:
        for i, pair in enumerate(pairs):
            doc = {"original_sequence": "ACGT" + "ACGT"[i], "sequence": "ACGA" + "ACGT"[i]}
            f.write(json.dumps({"doc_id": i, "doc": doc, "filtered_resps": [list(pair)]}) + "\n")
    data = make_report([tmp_path / "run"], tmp_path / "out", n_boot=50)
    (row,) = data["summary"]
    assert (row["pairwise_acc"], row["tie_rate"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))


@pytest.mark.slow
def test_runs_made_with_limit_are_noted(runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(runs[0], run)
    (results,) = run.glob("*/results_*.json")
    data = json.loads(results.read_text())
    data["config"]["limit"] = 100  # at least every task's pairs: every pair scored, no note
    results.write_text(json.dumps(data))
    assert main(["report", str(run), "--out", str(tmp_path / "out"), "--bootstrap", "100"]) == 0
    assert "run with --limit" not in capsys.readouterr().out
    data["config"]["limit"] = 5  # as lm-eval counts a task it cut: 5 of its 24 pairs
    next(iter(data["n-samples"].values()))["effective"] = 5
    results.write_text(json.dumps(data))
    assert main(["report", str(run), "--out", str(tmp_path / "out"), "--bootstrap", "100"]) == 0
    assert "run with --limit 5: only the first pairs" in capsys.readouterr().out


def test_the_margins_wilcoxon_test_and_quantiles_are_scipys_on_the_logged_margins(tmp_path):
    """As DART-Eval reports them: ``scipy.stats.wilcoxon(margins, alternative="greater")`` on the
    margins the run logged, and their 5/25/50/75/95 percentiles; every margin 0: no test."""
    from scipy.stats import wilcoxon

    rng = random.Random(9)
    lls = [(-100 + rng.gauss(0.3, 1), -100.0) for _ in range(40)] + [(-50.0, -50.0)] * 3
    write_run(tmp_path / "run", "perturbation_syn_human", lls)
    write_run(tmp_path / "tied", "perturbation_motif_human", [(-7.0, -7.0)] * 12)
    data = make_report([tmp_path / "run", tmp_path / "tied"], tmp_path / "out", n_boot=50)
    rows = {row["task"]: row for row in data["summary"]}
    margins = np.array([o - p for o, p in lls])
    expected = wilcoxon(margins, alternative="greater")
    row = rows["perturbation_syn_human"]
    assert row["wilcoxon_statistic"] == pytest.approx(expected.statistic, rel=1e-12)
    assert row["wilcoxon_p"] == pytest.approx(expected.pvalue, rel=1e-9)
    assert list(row["margin_quantiles"].values()) == pytest.approx(
        list(np.percentile(margins, [5, 25, 50, 75, 95])), rel=1e-12
    )
    tied = rows["perturbation_motif_human"]
    assert tied["wilcoxon_p"] is None and tied["margin_quantiles"]["q50"] == 0.0
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert f"| {expected.statistic:.1f} | {expected.pvalue:.3g} |" in markdown
    assert "n/a (every margin 0) | n/a" in markdown


def test_exon_ranks_from_five_on_are_one_stratum_and_the_others_their_own():
    import pandas as pd

    from perturbation_bench.report.summaries import strata

    ranks = [1, 2, 4, 5, 5, 6, 9, None]
    pairs = pd.DataFrame(
        {
            "model": "m",
            "task": "t",
            "correct": [1, 0, 1, 1, 0, 1, 1, 0],
            "exon_rank": ranks,
            "fraction_codons_changed": None,
            **{
                column: None
                for column in ("is_first_exon", "strand", "chr", "is_clamped", "consequence")
            },
        }
    )
    rows = {
        row["value"]: row["n"] for row in strata(pairs, n_boot=20) if row["column"] == "exon_rank"
    }
    assert rows == {"1": 1, "2": 1, "4": 1, "5+": 4}
    again = [row for row in strata(pairs, ["exon_rank"], n_boot=20) if row["column"] == "exon_rank"]
    assert {row["value"]: row["n"] for row in again} == rows and len(again) == 4  # --by a stratum


def test_a_report_replaces_an_earlier_report_s_files_and_keeps_others(tmp_path):
    """A figure the earlier report drew and this one does not is removed; a file of the user's
    stays; the manifest lists exactly what this report wrote."""
    from perturbation_bench.report.output_folder import MANIFEST

    folder = tmp_path / "run" / "model"
    folder.mkdir(parents=True)
    with (folder / "samples_perturbation_syn_human_2026-01-01T00-00-00.jsonl").open("w") as f:
        for i, pair in enumerate([(-2.0, -3.0), (-3.0, -2.0), (-1.0, -4.0)]):
            doc = {"original_sequence": "ACGT" + "ACGT"[i], "sequence": "ACGA" + "ACGT"[i]}
            f.write(json.dumps({"doc_id": i, "doc": doc, "filtered_resps": [list(pair)]}) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    make_report([tmp_path / "run"], out, n_boot=50)
    first = (out / MANIFEST).read_text().splitlines()
    assert {"report.md", "report.json", "pairs.parquet"} <= set(first) and "notes.txt" not in first
    (out / "stale.png").write_text("an earlier report's figure")
    (out / MANIFEST).write_text("".join(f"{name}\n" for name in [*first, "stale.png"]))
    make_report([tmp_path / "run"], out, n_boot=50)
    assert not (out / "stale.png").exists() and (out / "notes.txt").read_text() == "mine"
    assert (out / MANIFEST).read_text().splitlines() == first


def test_a_by_column_no_sample_holds_is_refused_naming_the_nearest(tmp_path, capsys):
    """A misspelt ``--by`` is an error, not a report without the strata asked for; a column the
    samples hold is taken."""
    docs = [{"gene_name": f"G{i % 3}"} for i in range(12)]
    run = write_run(tmp_path / "run", "perturbation_syn_human", [(-1.0, -2.0)] * 12, docs=docs)
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out), "--by", "gene_nme"]) == 2
    err = capsys.readouterr().err
    assert (
        "--by gene_nme: no sample of these runs holds this column (did you mean 'gene_name'?); "
        "a --by column is a column of the pair files the runs scored" in err
    )
    assert main(["report", str(run), "--out", str(out), "--by", "context_b"]) == 2
    assert "(did you mean 'context_bp'?)" in capsys.readouterr().err  # a column of the pairs'
    data = make_report([run], tmp_path / "taken", by=["gene_name"], n_boot=20)
    text = (tmp_path / "taken" / "report.md").read_text()
    assert "## Strata" in text.splitlines() and "| gene_name | G0 | 4 (few) |" in text
    strata = {(row["value"], row["n"]) for row in data["strata"] if row["column"] == "gene_name"}
    assert strata == {(f"G{i}", 4) for i in range(3)}


@pytest.mark.parametrize(
    "limit, effective, noted",
    [(5, 5, True), (100, 12, False), (None, 12, False), (5, None, True)],
)
def test_a_limit_is_noted_only_where_it_left_pairs_unscored(tmp_path, limit, effective, noted):
    """lm-eval's n-samples says how many of a task's pairs a --limit left: a limit of at least
    the task's 12 pairs is no limit; without a count the limit stands."""
    run = write_run(tmp_path / "run", "perturbation_syn_human", [(-1.0, -2.0)] * 12)
    (results,) = run.glob("results_*.json")
    data = json.loads(results.read_text())
    data["config"]["limit"] = limit
    if effective is not None:
        data["n-samples"] = {"perturbation_syn_human": {"original": 12, "effective": effective}}
    results.write_text(json.dumps(data))
    notes = make_report([run], tmp_path / "out", n_boot=20)["notes"]
    said = [note for note in notes if "run with --limit" in note]
    assert said == ([f"{run}: run with --limit {limit:g}: only the first pairs of each task were "
                     "scored, not the whole benchmark"] if noted else [])  # fmt: skip

"""No traceback reaches a user of ``perturbation-bench report`` or ``leaderboard``: each bad
input is one line on stderr, ``perturbation-bench error: ...``, naming the file (or option) and
the reason, with exit status 2."""

from __future__ import annotations

import json

import pytest

from dna_fixtures import write_run
from perturbation_bench.cli import main

TASK = "perturbation_syn_human"


def good_run(root):
    """A valid run folder (kmer-markov, 4 pairs, its accuracy in its results), written without
    lm-eval."""
    run = write_run(root / "good", TASK, [(-1.0, -2.0)] * 4, model_args={"order": 2})
    results = json.loads(results_of(run).read_text())
    results["results"] = {TASK: {"pairwise_acc,pairs": 1.0}}
    results_of(run).write_text(json.dumps(results))
    return run


def results_of(run):
    return next(run.glob("results_*.json"))


def samples_of(run):
    return next(run.glob("samples_*.jsonl"))


def break_run(root, how: str):
    """A copy of a good run broken ``how``; returns (run folder, file named, reason shown)."""
    run = write_run(root / how, TASK, [(-1.0, -2.0)] * 4, model_args={"order": 3})
    if how == "corrupt results":
        results_of(run).write_text('{"config": {"model": ')
        return run, results_of(run), "not a readable results file"
    if how == "results not an object":
        results_of(run).write_text("[1, 2]")
        return run, results_of(run), "a JSON list, not the object lm-eval writes"
    if how == "samples cut short":
        text = samples_of(run).read_text()
        samples_of(run).write_text(text[: len(text) // 2 + 7])
        return run, samples_of(run), "not valid JSON"
    if how == "empty samples":
        samples_of(run).write_text("")
        return run, samples_of(run), "an empty samples file"
    if how == "binary samples":
        samples_of(run).write_bytes(b"\x87\xff\x00junk\n")
        return run, samples_of(run), "line 1: not valid JSON"
    if how == "no runs":
        for path in run.iterdir():
            path.unlink()
        return run, run, "no samples_*.jsonl files"
    raise ValueError(how)


def refusal(capsys, argv) -> str:
    """Run ``argv``; assert status 2 and one error line; return it."""
    assert main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(lines) == 1 and lines[0].startswith("perturbation-bench error: "), lines
    return lines[0]


@pytest.mark.parametrize(
    "how",
    ["corrupt results", "results not an object", "samples cut short", "empty samples",
     "binary samples", "no runs"],
)  # fmt: skip
def test_report_refuses_a_broken_run_in_one_line_naming_the_file(tmp_path, capsys, how):
    run, named, reason = break_run(tmp_path, how)
    line = refusal(
        capsys, ["report", str(good_run(tmp_path)), str(run), "--out", str(tmp_path / "r")]
    )
    assert str(named) in line and reason in line


@pytest.mark.parametrize("how", ["corrupt results", "results not an object", "no runs"])
def test_leaderboard_refuses_a_broken_run_in_one_line_naming_the_file(tmp_path, capsys, how):
    run, named, reason = break_run(tmp_path, how)
    if how == "no runs":
        reason = "no results_*.json"
    board = ["leaderboard", str(good_run(tmp_path)), str(run), "--out", str(tmp_path / "b")]
    line = refusal(capsys, board)
    assert str(named) in line and reason in line


@pytest.mark.parametrize("command", ["report", "leaderboard"])
@pytest.mark.parametrize(
    "out, reason",
    [("a-file", "is a file, not a folder"), ("a-file/below", "is a file, not a folder")],
)
def test_an_out_that_is_or_lies_under_a_file_is_refused(tmp_path, capsys, command, out, reason):
    (tmp_path / "a-file").write_text("mine\n")
    line = refusal(capsys, [command, str(good_run(tmp_path)), "--out", str(tmp_path / out)])
    assert f"--out {tmp_path / out}: " in line and reason in line
    assert (tmp_path / "a-file").read_text() == "mine\n"


@pytest.mark.parametrize("command", ["report", "leaderboard"])
def test_a_missing_run_folder_and_a_bad_name_are_refused(tmp_path, capsys, command):
    out = ["--out", str(tmp_path / "o")]
    line = refusal(capsys, [command, str(tmp_path / "nowhere"), *out])
    assert f"{tmp_path / 'nowhere'}: not a folder" in line
    run = str(good_run(tmp_path))
    assert "expected FOLDER=LABEL" in refusal(capsys, [command, run, *out, "--name", "x"])
    line = refusal(capsys, [command, run, *out, "--name", f"{tmp_path}=x"])
    assert f"--name {tmp_path}=x: {tmp_path} is not one of the RUN folders" in line


def test_a_results_file_that_is_not_utf8_is_refused(tmp_path, capsys):
    run = good_run(tmp_path)
    results_of(run).write_bytes(b"\x87" + json.dumps({"config": {}}).encode())
    line = refusal(capsys, ["report", str(run), "--out", str(tmp_path / "r")])
    assert str(results_of(run)) in line and "not a readable results file" in line

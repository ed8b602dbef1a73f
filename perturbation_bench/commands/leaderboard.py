"""``perturbation-bench leaderboard RUN... --out DIR``: one table over many runs
(``report/leaderboard.py``)."""

from __future__ import annotations

import argparse

from perturbation_bench.commands.report import add_name_option, run_labels


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``leaderboard`` subcommand's options."""
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="lm_eval --output_path folder, one per run"
    )
    parser.add_argument(
        "--out",
        required=True,
        help="folder for leaderboard.csv/.md/.png (new, or one an earlier leaderboard wrote)",
    )
    add_name_option(parser)


def run(args: argparse.Namespace) -> int:
    """Read every run once, write the leaderboard, print where it is, what is ranked and why
    each other task is not."""
    from perturbation_bench.report.leaderboard import (
        best_line,
        leaderboard,
        not_ranked_because,
        ranked_tasks,
    )
    from perturbation_bench.report.leaderboard_files import write_leaderboard
    from perturbation_bench.report.output_folder import check_output_folder
    from perturbation_bench.wording import counted

    check_output_folder(args.out, "--out")
    tasks, rows = leaderboard(args.runs, run_labels(args.name))
    for path in write_leaderboard(tasks, rows, args.out):
        print(f"wrote {path}")
    shared = ranked_tasks(tasks, rows)
    unranked = [task for task in tasks if task not in shared]
    for task in unranked:
        print(f"not ranked: {task}: {not_ranked_because(task, rows)}")
    if unranked:
        print(
            "a task is ranked over every run or none: leave out the runs named above to rank "
            "the others on it"
        )
    print(f"{counted(len(rows), 'run')}, {counted(len(tasks), 'task')}; {best_line(rows, shared)}")
    return 0

"""``perturbation-bench leaderboard RUN... --out DIR``: one table over many runs
(``report/leaderboard.py``)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``leaderboard`` subcommand's options."""
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="lm_eval --output_path folder, one per run"
    )
    parser.add_argument("--out", required=True, help="folder for leaderboard.csv/.md/.png")


def run(args: argparse.Namespace) -> int:
    """Read every run once, write the leaderboard, print where it is."""
    from perturbation_bench.report.leaderboard import leaderboard, write_leaderboard

    tasks, rows = leaderboard(args.runs)
    for path in write_leaderboard(tasks, rows, args.out):
        print(f"wrote {path}")
    print(f"{len(rows)} runs, {len(tasks)} tasks; best mean rank: {rows[0]['name']}")
    return 0

"""The ``perturbation-bench`` command: parsing and dispatch only.

Each subcommand is a module of :mod:`perturbation_bench.commands` with ``add_arguments(parser)``
and ``run(args) -> exit status``:

    path        print the folder to pass to ``lm_eval --include_path``
    build       build a dataset (syn, motif) or variant pairs and tables (variants, mutations,
                saturation)
    validate    check a dataset's invariants, optionally against the genome
    annotate    columns added to a data dir's pair files (novelty: k-mers absent from a genome)
    report      intervals, strata, paired comparisons and plots from lm-eval runs
    leaderboard one table over many runs: a row per run, a column per task, ranks
    check       a dry run of an lm_eval command line: options, data, tokenizer, no weights
    bench       benchmarks that print tables (throughput, --sharing, --saturation, --scale)
    demo        the shipped demo end to end: tiny random models scored, a report, a leaderboard

A user error prints one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys

from perturbation_bench import __version__
from perturbation_bench.commands import (
    annotate,
    bench,
    build,
    check,
    demo,
    leaderboard,
    report,
    validate,
)
from perturbation_bench.errors import UserInputError

COMMANDS = {
    "build": (build, "build a dataset from a genome and an annotation"),
    "validate": (validate, "check a dataset's invariants"),
    "annotate": (annotate, "add columns to pair files: novelty against a genome"),
    "report": (report, "intervals, strata, comparisons, plots from runs"),
    "leaderboard": (leaderboard, "one table over many runs, a column per task"),
    "check": (check, "dry run of lm_eval's --tasks/--metadata/--model_args"),
    "bench": (bench, "benchmarks: throughput, --sharing, --saturation, --scale"),
    "demo": (demo, "the shipped demo end to end: tiny models, scores, report, leaderboard"),
}
"""Subcommand -> its module and its help."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusal is one line, the usage left to ``--help``."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def command_parser() -> argparse.ArgumentParser:
    """The parser of ``perturbation-bench`` and every subcommand's options (each a
    :class:`OneLineParser`)."""
    parser = OneLineParser(
        prog="perturbation-bench",
        description="perturbation-bench for lm-evaluation-harness (DNA language models).",
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("path", help="print the task folder for lm_eval --include_path")
    for name, (module, summary) in COMMANDS.items():
        module.add_arguments(commands.add_parser(name, help=summary))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; return the exit status."""
    args = command_parser().parse_args(argv)
    try:
        if args.command == "path":
            from perturbation_bench.paths import tasks_dir

            print(tasks_dir())
            return 0
        return COMMANDS[args.command][0].run(args)
    except UserInputError as err:
        print(f"perturbation-bench error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

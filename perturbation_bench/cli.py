"""The ``perturbation-bench`` command.

Subcommands:
    path    print the folder to pass to ``lm_eval --include_path``
    bench   time a naive scorer, lm-eval ``hf`` and ``dna-hf`` on the same model and pairs
"""

from __future__ import annotations

import argparse
import sys

from perturbation_bench import __version__


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="perturbation-bench",
        description="perturbation-bench for lm-evaluation-harness (DNA language models).",
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("path", help="print the task folder for lm_eval --include_path")
    from perturbation_bench import bench

    bench.add_arguments(
        commands.add_parser("bench", help="throughput: naive loop vs lm-eval hf vs dna-hf")
    )
    args = parser.parse_args(argv)

    if args.command == "path":
        from perturbation_bench.paths import tasks_dir

        print(tasks_dir())
        return 0
    return bench.run(args)


if __name__ == "__main__":
    sys.exit(main())

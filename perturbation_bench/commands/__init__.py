"""The subcommands of ``perturbation-bench``, one module each, with ``add_arguments(parser)`` and
``run(args) -> exit status`` (``cli.py`` parses and dispatches). They turn command lines into
calls of the other subpackages and print what those return; the rules live there.

- ``build.py``: ``build syn|motif|variants|mutations|saturation|controls|footprints``, each
  kind's build in ``builds/``;
- ``validate.py``: a dataset's invariants;
- ``annotate.py``: columns added to a data dir's pair files (``annotate novelty``);
- ``report.py``: the report from run folders;
- ``leaderboard.py``: one table over many run folders;
- ``demo.py``: the shipped demo end to end (tiny models, scores, report, leaderboard);
- ``check.py``: a dry run of an lm_eval command line;
- ``bench.py``: the benchmarks.
"""

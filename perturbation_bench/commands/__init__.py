"""The subcommands of ``perturbation-bench``, one module each, with ``add_arguments(parser)`` and
``run(args) -> exit status`` (``cli.py`` parses and dispatches). They turn command lines into
calls of the other subpackages and print what those return; the rules live there."""

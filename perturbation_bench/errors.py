"""Errors a user can act on, and a hook that prints them without a traceback wall.

Every problem this package reports about its input (a missing file, a bad row, an unknown
option, a sequence too long for the model) is a :class:`PerturbationBenchError` whose message
says what is wrong and how to fix it. On the command line the traceback adds nothing to that
message, so :func:`install_excepthook` prints the message alone;
``PERTURBATION_BENCH_TRACEBACK=1`` brings the full traceback back.
"""

from __future__ import annotations

import os
import sys


class PerturbationBenchError(Exception):
    """Base class: a problem in the user's input or set-up, explained in the message."""


class DataSourceError(PerturbationBenchError):
    """The benchmark's parquet files cannot be found or fetched."""


class DataValidationError(PerturbationBenchError, ValueError):
    """A parquet file or one of its rows breaks the dataset contract (file, row and reason in the message)."""


class OptionsError(PerturbationBenchError, ValueError):
    """An unknown or invalid task option (``--metadata``)."""


class SequenceTooLongError(PerturbationBenchError):
    """A sequence needs more tokens than the model's context."""


class PairingError(PerturbationBenchError, RuntimeError):
    """The model's responses cannot be paired into (original, perturbed) per document."""


def install_excepthook() -> None:
    """Print uncaught :class:`PerturbationBenchError` as one message instead of a traceback.

    Other exceptions go to the hook that was installed before. Calling this twice is harmless.
    """
    previous = sys.excepthook
    if getattr(previous, "_perturbation_bench", False):
        return

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, PerturbationBenchError) and not os.environ.get(
            "PERTURBATION_BENCH_TRACEBACK"
        ):
            sys.stderr.write(
                f"\nperturbation-bench error: {exc}\n"
                "(set PERTURBATION_BENCH_TRACEBACK=1 to see the traceback)\n"
            )
            return
        previous(exc_type, exc, tb)

    hook._perturbation_bench = True
    sys.excepthook = hook

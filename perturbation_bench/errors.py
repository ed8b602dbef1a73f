"""Errors a user can act on, and a hook that prints them without a traceback wall.

Every problem this package reports about the user's input or set-up (a missing file, a bad row,
an unknown option, a sequence the model cannot read) is a :class:`UserInputError` whose message
says what is wrong and how to fix it. On the command line the traceback adds nothing to that
message, so :func:`install_excepthook` prints the message alone; any other exception, ours
(:class:`PairingError`, which means a bug or an unexpected lm-eval) or anyone else's, keeps its
full traceback. ``PERTURBATION_BENCH_TRACEBACK=1`` brings the traceback back for user errors too.
"""

from __future__ import annotations

import os
import sys


class PerturbationBenchError(Exception):
    """Base class of this package's errors."""


class UserInputError(PerturbationBenchError):
    """A problem in the user's input or set-up, explained in the message (printed without traceback)."""


class DataSourceError(UserInputError):
    """The benchmark's parquet files cannot be found or fetched."""


class DataValidationError(UserInputError, ValueError):
    """A parquet file or one of its rows breaks the dataset contract (file, row and reason in the message)."""


class OptionsError(UserInputError, ValueError):
    """An unknown or invalid task or model option."""


class TokenizationError(UserInputError):
    """The model's tokenizer cannot read the sequences as given (unknown tokens, wrong k-mer size)."""


class UnsupportedTaskError(UserInputError):
    """A model class of this package was asked for requests it does not score (e.g. another task)."""


class PairingError(PerturbationBenchError, RuntimeError):
    """The model's responses cannot be paired into (original, perturbed) per document: a bug."""


def install_excepthook() -> None:
    """Print an uncaught :class:`UserInputError` as one message instead of a traceback.

    Every other exception goes to the hook that was installed before. Calling this twice is
    harmless.
    """
    previous = sys.excepthook
    if getattr(previous, "_perturbation_bench", False):
        return

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, UserInputError) and not os.environ.get(
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

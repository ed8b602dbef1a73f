"""The command-line types of the benchmarks' integer options (and lm-eval batch sizes): refused
below their least value by the parser, in one line, before any model is built or anything
measured."""

from __future__ import annotations

import argparse

from perturbation_bench.arguments import check_batch_size
from perturbation_bench.errors import OptionsError


def at_least(minimum: int, most: int | None = None):
    """An argparse type: an integer of at least ``minimum`` (and at most ``most``, if given)."""

    def integer(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum or (most is not None and value > most):
            bounds = f"at least {minimum}" if most is None else f"from {minimum} to {most}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    integer.minimum = minimum
    return integer


count = at_least(1)
"""An integer of at least 1: pairs, bases, repeats, batch sizes, layers, processes."""


def batch_size(text: str) -> str:
    """An argparse type: an lm-eval batch size, a whole number of at least 1, ``auto`` or
    ``auto:N`` (``arguments.check_batch_size``)."""
    try:
        check_batch_size(text)
    except OptionsError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text

"""The command-line types of the benchmarks' integer options: refused below their least value by
the parser, in one line, before any model is built or anything measured."""

from __future__ import annotations

import argparse


def at_least(minimum: int):
    """An argparse type: an integer of at least ``minimum``."""

    def integer(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    integer.minimum = minimum
    return integer


count = at_least(1)
"""An integer of at least 1: pairs, bases, repeats, batch sizes, layers, processes."""

"""How messages put counts into words: ``counted(1, "pair")`` is ``1 pair`` and
``counted(3, "pair")`` is ``3 pairs``; ``tally({"b": 1, "a": 2})`` is ``a 2, b 1`` (names in
sorted order, zero counts left out), never a Python dict's repr."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the plural (``noun + "s"`` unless given) unless ``count`` is 1."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def tally(counts, empty: str = "none") -> str:
    """``name count, ...`` over the non-zero counts of a mapping, by name; ``empty`` if none."""
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items()) if count) or empty

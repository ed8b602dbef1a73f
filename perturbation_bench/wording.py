"""How messages put counts into words: ``counted(1, "pair")`` is ``1 pair`` and
``counted(3, "pair")`` is ``3 pairs``; ``tally({"b": 1, "a": 2})`` is ``a 2, b 1`` (names in
sorted order, zero counts left out), never a Python dict's repr; ``agree(1, "has", "have")`` is
``has``; ``did_you_mean("carbn", PRESETS)`` is `` (did you mean 'carbon'?)``."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the plural (``noun + "s"`` unless given) unless ``count`` is 1."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def tally(counts, empty: str = "none") -> str:
    """``name count, ...`` over the non-zero counts of a mapping, by name; ``empty`` if none."""
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items()) if count) or empty


def agree(count: int, singular: str, plural: str) -> str:
    """The verb that agrees with ``count``: ``singular`` for 1, else ``plural``."""
    return singular if count == 1 else plural


def did_you_mean(value, choices) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to a misspelt ``value`` (difflib's ratio
    at least 0.7), else the empty string."""
    import difflib

    near = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.7)
    return f" (did you mean {near[0]!r}?)" if near else ""


def some(names: list[str], shown: int = 5) -> str:
    """``a, b, c`` (and ``(+N more)``) of ``names`` for a message."""
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def say_excluded(excluded) -> None:
    """Print ``excluded N (reason)`` per reason of a build's exclusion counts, by reason."""
    for reason, count in sorted(excluded.items()):
        print(f"excluded {count} ({reason})")

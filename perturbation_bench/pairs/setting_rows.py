"""One row of the task settings table (``settings.py``), and the check of a value against it.

A row of the core table is declared in ``settings.py``; a kind that has settings of its own
declares their rows in its folder and names them in its row of ``kinds.py`` (``settings``), and
the table gathers them, each then taken by that kind's tasks alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Setting:
    """One row of the settings table (``settings.py``'s module docstring)."""

    name: str
    default: Any
    meaning: str
    type: type | tuple[type, ...] = str
    choices: tuple = ()
    option: bool = True
    identifies: bool = True
    recorded: bool = True
    logged_as: str | None = None
    kinds: tuple[str, ...] = ()
    scores: tuple[str, ...] = ()
    read_by_model: bool = False

    def holds(self, value: Any) -> bool:
        """Whether ``value`` is one of this setting's: None (not set), or of its ``type`` (a
        bool is not an int)."""
        if value is None:
            return True
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        return isinstance(value, types) and (bool in types or not isinstance(value, bool))

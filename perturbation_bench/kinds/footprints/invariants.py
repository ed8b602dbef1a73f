"""The footprint kind's row invariants (``perturbation-bench validate``,
``dataset/invariants.py``).

Motif footprints (``build footprints``), read on the forward strand (a ``reverse`` row's three
windows reverse-complemented, its insert ``[L - insert_end, L - insert_start)``), the copies
where ``rules.insert_starts`` puts them (at the centre, DART-Eval's
``insert_motif`` for one copy):

- ``insert_at_centre``: the insert spans ``[insert_start, insert_end)`` and starts there, and
  ``original_sequence`` is ``background_sequence`` with ``consensus`` at each copy, every other
  base the background's;
- ``control_is_permutation``: ``control_insert`` holds the bases of ``consensus`` in another
  order, and ``sequence`` is ``background_sequence`` with it at the same copies, every other
  base the background's.
"""

from __future__ import annotations

from perturbation_bench.dataset.invariants import Invariant
from perturbation_bench.dna import reverse_complement
from perturbation_bench.kinds.footprints.rules import DOSE_AXES, dose_of, insert_starts, with_copies

COLUMNS = (
    "original_sequence",
    "sequence",
    "background_sequence",
    "consensus",
    "control_insert",
    *DOSE_AXES,
    "orientation",
    "insert_start",
    "insert_end",
)
"""The columns both invariants read."""


def _with_inserts(row: dict, insert: str) -> str | None:
    """The forward strand of ``row``'s background with ``row[insert]`` at each copy, at the
    centre (module docstring); None when the row's insert is not spanned or placed so."""
    background = row["background_sequence"]
    start, end = row["insert_start"], row["insert_end"]
    if row["orientation"] == "reverse":
        background = reverse_complement(background)
        start, end = len(background) - end, len(background) - start
    width = len(row["consensus"])
    starts = insert_starts(len(background), width, *dose_of(row))
    if starts is None or (starts[0], starts[-1] + width) != (start, end):
        return None
    return with_copies(background, row[insert], starts)


def _forward(row: dict, name: str) -> str:
    return reverse_complement(row[name]) if row["orientation"] == "reverse" else row[name]


def _insert_at_centre(row: dict) -> bool:
    return _with_inserts(row, "consensus") == _forward(row, "original_sequence")


def _control_is_permutation(row: dict) -> bool:
    control, consensus = row["control_insert"], row["consensus"]
    return (
        sorted(control) == sorted(consensus)
        and control != consensus
        and _with_inserts(row, "control_insert") == _forward(row, "sequence")
    )


def invariants() -> list[Invariant]:
    """The invariants of the module docstring, of footprint rows."""
    return [
        Invariant("insert_at_centre", COLUMNS, _insert_at_centre, kinds=("footprints",)),
        Invariant(
            "control_is_permutation", COLUMNS, _control_is_permutation, kinds=("footprints",)
        ),
    ]

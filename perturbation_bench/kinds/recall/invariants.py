"""The recall kind's row invariants (``perturbation-bench validate``, ``dataset/invariants.py``),
which ``build recall`` also holds each row it writes to (``builder.py``).

A row of distance ``d`` and target ``A`` of ``s = target_bp`` bases, its contexts of length
``L`` (``rules.py``: ``[lead][A' or C][D]``):

- ``window_as_built``: ``len(A) = s`` and ``L + s = window_bp``, and ``L`` and ``s`` are whole
  ``align``-mers (``align`` at least 1);
- ``contexts_differ_in_copy``: the two contexts are equal outside ``[L - d - s, L - d)``, the
  span of the copy ``A'`` (so they share the ``d`` bases before the target and the lead), and
  differ within it (where they do not, the copy advantage is 0 by construction);
- ``copy_as_named``: ``copy`` and ``control`` are values ``build recall`` takes
  (``rules.parse_copy``, ``rules.CONTROLS``), and ``A'``, the repeat context there, is ``A``
  (``exact``), its reverse complement (``revcomp``) or ``A`` with substitutions only
  (``mutate:P``: its length; which bases a draw changed is not held).
"""

from __future__ import annotations

from perturbation_bench.dataset.invariants import Invariant
from perturbation_bench.dna import reverse_complement
from perturbation_bench.kinds.recall.rules import CONTROLS, parse_copy
from perturbation_bench.kinds.recall.shape import CONTEXTS, TARGET

_KIND = ("recall",)


def copy_span(row: dict) -> tuple[int, int]:
    """``[L - d - s, L - d)``: where the repeat context holds the copy (module docstring)."""
    end = len(row[CONTEXTS[0]]) - row["distance"]
    return end - row["target_bp"], end


def _window_as_built(row: dict) -> bool:
    length, segment, align = len(row[CONTEXTS[0]]), row["target_bp"], row["align"]
    return (
        align >= 1
        and len(row[TARGET]) == segment
        and length + segment == row["window_bp"]
        and length % align == segment % align == 0
    )


def _contexts_differ_in_copy(row: dict) -> bool:
    start, end = copy_span(row)
    repeat, control = (row[name] for name in CONTEXTS)
    outside = (repeat[:start], repeat[end:]) == (control[:start], control[end:])
    return len(repeat) == len(control) and outside and repeat[start:end] != control[start:end]


def _copy_as_named(row: dict) -> bool:
    start, end = copy_span(row)
    copy, target = row[CONTEXTS[0]][start:end], row[TARGET]
    try:
        named, _ = parse_copy(row["copy"])
    except ValueError:
        return False
    if row["control"] not in CONTROLS:
        return False
    if named == "mutate":
        return len(copy) == len(target)
    return copy == (reverse_complement(target) if named == "revcomp" else target)


def invariants() -> list[Invariant]:
    """The invariants of the module docstring, of recall rows."""
    columns = (*CONTEXTS, TARGET, "distance", "target_bp")
    return [
        Invariant(
            "window_as_built", (*columns, "window_bp", "align"), _window_as_built, kinds=_KIND
        ),
        Invariant("contexts_differ_in_copy", columns, _contexts_differ_in_copy, kinds=_KIND),
        Invariant("copy_as_named", (*columns, "copy", "control"), _copy_as_named, kinds=_KIND),
    ]

"""The recall kind's row invariants (``perturbation-bench validate``, ``dataset/invariants.py``),
which ``build recall`` also holds each row it writes to (``builder.py``).

A row of distance ``d`` and target ``A`` of ``s = target_bp`` bases, its contexts of length
``L`` (``rules.py``: ``[lead][A' or C][D]``):

- ``window_as_built``: ``len(A) = s`` and ``L + s = window_bp``, and ``L`` and ``s`` are whole
  ``align``-mers;
- ``contexts_differ_in_copy``: the two contexts are equal outside ``[L - d - s, L - d)``, the
  span of the copy ``A'`` (so they share the ``d`` bases before the target and the lead);
- ``copy_as_named``: ``A'``, the repeat context there, is ``A`` (``exact``), its reverse
  complement (``revcomp``) or ``A`` with substitutions only (``mutate:P``).
"""

from __future__ import annotations

from perturbation_bench.dataset.invariants import Invariant
from perturbation_bench.dna import reverse_complement
from perturbation_bench.kinds.recall.shape import CONTEXTS, TARGET

_KIND = ("recall",)


def copy_span(row: dict) -> tuple[int, int]:
    """``[L - d - s, L - d)``: where the repeat context holds the copy (module docstring)."""
    end = len(row[CONTEXTS[0]]) - row["distance"]
    return end - row["target_bp"], end


def _window_as_built(row: dict) -> bool:
    length, segment, align = len(row[CONTEXTS[0]]), row["target_bp"], row["align"]
    return (
        len(row[TARGET]) == segment
        and length + segment == row["window_bp"]
        and length % align == segment % align == 0
    )


def _contexts_differ_in_copy(row: dict) -> bool:
    start, end = copy_span(row)
    repeat, control = (row[name] for name in CONTEXTS)
    return len(repeat) == len(control) and (repeat[:start], repeat[end:]) == (
        control[:start],
        control[end:],
    )


def _copy_as_named(row: dict) -> bool:
    start, end = copy_span(row)
    copy, target = row[CONTEXTS[0]][start:end], row[TARGET]
    if row["copy"].startswith("mutate:"):
        return len(copy) == len(target)
    return copy == {"exact": target, "revcomp": reverse_complement(target)}.get(row["copy"])


def invariants() -> list[Invariant]:
    """The invariants of the module docstring, of recall rows."""
    columns = (*CONTEXTS, TARGET, "distance", "target_bp")
    return [
        Invariant(
            "window_as_built", (*columns, "window_bp", "align"), _window_as_built, kinds=_KIND
        ),
        Invariant("contexts_differ_in_copy", columns, _contexts_differ_in_copy, kinds=_KIND),
        Invariant("copy_as_named", (*columns, "copy"), _copy_as_named, kinds=_KIND),
    ]

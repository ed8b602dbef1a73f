"""Per-assay metrics: every assay scored apart, then the macro average over assays.

A functional screen (saturation genome editing, a saturation MPRA, a deep mutational scan) is
one assay; several are never pooled into one ranking, since their labels are on different
scales. For data with an ``assay`` column, each metric is computed on each assay's labelled
variants (a *cell*), and the summary is the macro average over assays::

    macro = mean over the cells with a value of metric(cell)

The gate (``min_per_class``, default 30, marin-dna's): a binary cell needs at least that many
variants of each class (``auroc``, ``auprc``), a quantitative cell at least that many variants
(``spearman``, ``pearson``). A cell below the gate is reported with its n and no value, and
takes no part in the macro, and so does a cell whose metric is undefined, with the reason
(:func:`cell`: non-finite labels or scores, one class, constant labels or scores); a macro with
no cell valued is NaN.

The direction of a quantitative label is the data's own declaration (``label_direction``,
written by ``build variants --label-direction`` or read from the table): ``damaging`` (a higher
label is more damaging, as a higher score ``s`` is) or ``functional`` (a higher label is more
function: a fitness or function score). The correlations use the label oriented to damaging
(:func:`oriented`), so a model that ranks variants as the assay does correlates positively in
either case; without a declaration the label is taken as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from perturbation_bench.pairs.ranking import CORRELATIONS, METRICS
from perturbation_bench.pairs.settings import SETTING

DIRECTIONS = ("damaging", "functional")
"""What a higher quantitative label means (module docstring)."""
MIN_PER_CLASS = SETTING["min_per_class"].default
"""The default gate (module docstring)."""
BINARY, QUANTITATIVE = "binary", "quantitative"
ASSAY_METRICS = {BINARY: METRICS, QUANTITATIVE: CORRELATIONS}
"""The per-assay metrics by label kind: name -> ``metric(labels, scores)``."""


def oriented(label: float, direction: str | None) -> float:
    """A quantitative label oriented so that higher is more damaging: ``-label`` for a
    ``functional`` label, the label itself otherwise (module docstring)."""
    return -label if direction == "functional" else label


@dataclass(frozen=True)
class Cell:
    """One metric on one group of variants: its size and value, or None and why not."""

    n: int
    n_positive: int | None
    """Positives of a binary cell; None for a quantitative one."""
    value: float | None
    why: str | None = None
    """Why a cell has no value (:func:`cell`); None for a cell with one."""


def cell(kind: str, metric: str, labels, scores, min_per_class: int = MIN_PER_CLASS) -> Cell:
    """``metric`` on the labelled variants given (``labels``: bools for ``binary``, oriented
    floats for ``quantitative``), or no value and why: ``below the gate`` (module docstring),
    ``non-finite labels``, ``non-finite scores``, ``one class``, ``constant labels``,
    ``constant scores``, ``fewer than 3 variants`` (a correlation needs 3)."""
    labels, scores = list(labels), list(scores)
    if kind == BINARY:
        positives = sum(map(bool, labels))
        passes = min(positives, len(labels) - positives) >= min_per_class
    else:
        positives, passes = None, len(labels) >= min_per_class
    why = "below the gate" if not passes else _undefined(kind, labels, scores)
    if why is not None:
        return Cell(len(labels), positives, None, why)
    return Cell(len(labels), positives, ASSAY_METRICS[kind][metric](labels, scores))


def _undefined(kind: str, labels: list, scores: list) -> str | None:
    """Why ``kind``'s metrics have no value on these variants (:func:`cell`), or None."""
    for name, values in (("labels", labels), ("scores", scores)):
        if not all(math.isfinite(float(x)) for x in values):
            return f"non-finite {name}"
    if kind == BINARY:
        return "one class" if len(set(map(bool, labels))) < 2 else None
    if len(labels) < 3:
        return "fewer than 3 variants"
    for name, values in (("labels", labels), ("scores", scores)):
        if len(set(values)) < 2:
            return f"constant {name}"
    return None


def macro(cells) -> float:
    """The mean of the values of the cells that pass the gate (and have a value); NaN if none."""
    values = [c.value for c in cells if c.value is not None and not math.isnan(c.value)]
    return sum(values) / len(values) if values else math.nan


def per_assay(kind: str, metric: str, rows, min_per_class: int = MIN_PER_CLASS) -> dict:
    """``assay -> Cell`` over ``(assay, label, score)`` rows, assays sorted by name; labels as
    :func:`cell` takes them."""
    groups: dict = {}
    for assay, label, score in rows:
        labels, scores = groups.setdefault(assay, ([], []))
        labels.append(label)
        scores.append(score)
    return {
        assay: cell(kind, metric, *groups[assay], min_per_class=min_per_class)
        for assay in sorted(groups)
    }


def gate_text(c: Cell) -> str:
    """``n=12`` or ``n=40 (8 positive)``: a cell's size, which a cell without a value reports
    beside why it has none."""
    return f"n={c.n}" + ("" if c.n_positive is None else f" ({c.n_positive} positive)")


def no_value_text(c: Cell) -> str:
    """``below the gate (n=40, 8 positive)``: why a cell has no value, and its size."""
    positives = "" if c.n_positive is None else f", {c.n_positive} positive"
    return f"{c.why} (n={c.n}{positives})"

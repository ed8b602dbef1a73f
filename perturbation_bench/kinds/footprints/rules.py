"""Motif footprint pairs: where the insert sits (for the build and ``validate``) and DART-Eval's
footprinting metrics (its ``footprint_eval_likelihoods.py``) for the task and the report.

In a background of ``L`` bases, ``n`` copies of ``w`` bases, ``s`` apart, span
``span = n w + (n - 1) s`` and sit at the centre::

    start = L // 2 - span // 2          (DART-Eval's insert_motif for n = 1)
    copy j at [start + j (w + s), start + j (w + s) + w),  j = 0 .. n - 1

A footprint row (``build footprints``) is scored as three comparisons
(``tasks/document_requests.py``). With ``a = LL(motif window)`` and ``b = LL(control window)``
from the first, and the margins of the other two, ``m_o = LL(motif) - LL(background)`` and
``m_p = LL(control) - LL(background)``::

    correct        = 1[a > b]             ties "strict": a tie counts as wrong (this package's rule)
                     1[a >= b]            ties "correct": DART-Eval's ``x >= 0``
    vs_background  = 1[|m_o| > |m_p|]     DART-Eval's |LL_raw - LL_true| > |LL_raw - LL_shuf|, strict

Per motif at one dose (its rows at one ``copies`` and ``spacing``: every background, both
orientations), as DART-Eval computes per motif::

    accuracy        = mean(correct)
    wilcoxon_p      = scipy.stats.wilcoxon(a, b, alternative="greater").pvalue
                      (scipy's defaults, as DART-Eval calls it: zero differences left out;
                      when every difference is zero, 1.0 or nan as scipy's method for the
                      sample size gives, and either is not below SIGNIFICANCE)
    vs_background   = mean(vs_background)

and per motif over its doses, Spearman's rho of the margin ``a - b`` with ``copies`` and with
``spacing`` (each over all the motif's rows, where the data has several values of it; nan when
the margins or the doses are constant). The task reports the mean accuracy over motif-doses,
the share of motif-doses with ``wilcoxon_p < SIGNIFICANCE`` and the mean rho over the motifs
that have one.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import NamedTuple

SIGNIFICANCE = 0.05
"""The Wilcoxon p-value below which a motif-dose counts as significant."""


class Dose(NamedTuple):
    """How much of a motif a footprint row inserts: ``copies`` of it, ``spacing`` bp apart."""

    copies: int
    spacing: int


DOSE_AXES = Dose._fields
"""The columns of a footprint config that are doses."""


def dose_of(row) -> Dose:
    """The dose of a footprint row, document or sample (anything indexed by column name)."""
    return Dose(*(row[axis] for axis in DOSE_AXES))


def insert_starts(length: int, width: int, copies: int, spacing: int) -> list[int] | None:
    """Where each copy starts in a background of ``length`` bases (module docstring), or None
    when the insert is longer than the background."""
    span = copies * width + (copies - 1) * spacing
    if span > length:
        return None
    start = length // 2 - span // 2
    return [start + j * (width + spacing) for j in range(copies)]


def with_copies(background: str, insert: str, starts: list[int]) -> str:
    """``background`` with ``insert`` in place of its bases at each of ``starts``."""
    pieces, last = [], 0
    for start in starts:
        pieces += [background[last:start], insert]
        last = start + len(insert)
    return "".join(pieces) + background[last:]


class FootprintRow(NamedTuple):
    """What the metrics read of one row (module docstring)."""

    motif: str
    copies: int
    spacing: int
    ll_motif: float
    ll_control: float
    motif_margin: float
    control_margin: float


class MotifDose(NamedTuple):
    """One motif at one dose (module docstring)."""

    motif: str
    copies: int
    spacing: int
    rows: int
    tied: int
    accuracy: float
    wilcoxon_p: float
    vs_background: float


def is_correct(ll_motif: float, ll_control: float, ties: str) -> bool:
    """``correct`` of one row under the ``ties`` rule (module docstring)."""
    return ll_motif > ll_control or (ties == "correct" and ll_motif == ll_control)


def beats_background(motif_margin: float, control_margin: float) -> bool:
    """``vs_background`` of one row (module docstring)."""
    return abs(motif_margin) > abs(control_margin)


def wilcoxon_greater(ll_motif: list[float], ll_control: list[float]) -> float:
    """The one-sided Wilcoxon signed-rank p-value of ``ll_motif > ll_control`` (module
    docstring); scipy's warning for all-zero or few differences is not shown."""
    from scipy.stats import wilcoxon

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (UserWarning, RuntimeWarning))
        return float(wilcoxon(ll_motif, ll_control, alternative="greater").pvalue)


def motif_doses(rows: list[FootprintRow], ties: str) -> list[MotifDose]:
    """Each motif at each dose (module docstring), in the order they first appear."""
    groups = defaultdict(list)
    for row in rows:
        groups[(row.motif, row.copies, row.spacing)].append(row)
    out = []
    for (motif, copies, spacing), group in groups.items():
        a = [row.ll_motif for row in group]
        b = [row.ll_control for row in group]
        out.append(
            MotifDose(
                motif,
                copies,
                spacing,
                len(group),
                sum(x == y for x, y in zip(a, b, strict=True)),
                sum(is_correct(x, y, ties) for x, y in zip(a, b, strict=True)) / len(group),
                wilcoxon_greater(a, b),
                sum(beats_background(r.motif_margin, r.control_margin) for r in group) / len(group),
            )
        )
    return out


def dose_spearman(rows: list[FootprintRow], axis: str) -> dict[str, float]:
    """Per motif, Spearman's rho of the margin ``a - b`` with the dose ``axis`` (``copies`` or
    ``spacing``) over its rows; nan where either is constant."""
    from scipy.stats import spearmanr

    by_motif = defaultdict(list)
    for row in rows:
        by_motif[row.motif].append((getattr(row, axis), row.ll_motif - row.ll_control))
    out = {}
    for motif, points in by_motif.items():
        doses, margins = zip(*points, strict=True)
        if len(set(doses)) < 2 or len(set(margins)) < 2:
            out[motif] = math.nan
            continue
        out[motif] = float(spearmanr(doses, margins).statistic)
    return out


def mean_of(values) -> float:
    """The mean of the values that are not nan; nan when none is."""
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan

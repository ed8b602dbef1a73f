"""The recall windows and their metric: recall-bench's repeat-copy probe (PyPI ``recall-bench``
0.2.1, ``copy_task.py``), its rules restated here.

For a distance ``d`` and a segment of ``s`` bases, one trial is two windows of equal length::

    repeat    [lead][A'][D][A]        context_repeat  = lead + A' + D,  target = A
    control   [lead][C ][D][A]        context_control = lead + C  + D,  target = A

``A`` is a genome segment of ``s`` bases, ``D`` the ``d`` bases of genome before it, ``lead``
the genome before that, ``C`` the control piece and ``A'`` the earlier copy of ``A``:

    copy      exact      A' = A
              mutate:P   A with each base substituted with probability P (to one of the other
                         three, uniformly)
              revcomp    the reverse complement of A
    control   native     C = the genome that really precedes D (the window is untouched genome)
              foreign    C = a segment of s bases from an unrelated place

The window is the smallest power of two of at least ``d + 2 s + 512`` bases
(``window = 2 ** bit_length(d + 2 s + 511)``) and ``lead = window - 2 s - d``; with an
alignment ``a`` (the k-mer size of a preset that reads k-mers) ``s`` and ``d`` are rounded down
to a multiple of ``a``, at least ``a`` (``round_to``), and then the lead, ``window - 2 s - d`` of
the rounded pieces, so both contexts are whole k-mers, the target's tokens are the same after
either, and the pieces never hold more than ``window`` bases.

Draws: per distance, ``rng = default_rng([seed, window, d])`` draws each trial's window
(:func:`sample_window`) and ``aux = default_rng([seed, window, d, 1])`` what the options add (a
mutation, a foreign piece), so one seed gives the same lead, ``D`` and ``A`` for every copy and
control option, and the same draws as recall-bench on the same stretches.

The metric, per trial, in nats per base::

    copy_advantage = (CE(A | control) - CE(A | repeat)) / s = (LL(A | repeat) - LL(A | control)) / s

and per distance its mean with recall-bench's 95% percentile bootstrap interval (the report's
``report/statistics.bootstrap_interval``, the same draws from ``default_rng(seed)``).
"""

from __future__ import annotations

import numpy as np

from perturbation_bench.dna import BASES, reverse_complement

COPIES = ("exact", "mutate", "revcomp")
CONTROLS = ("native", "foreign")
DISTANCES = (64, 256, 1024, 4096, 16384, 65536, 262144)
"""recall-bench's distances (bp)."""
SEGMENT = 256
TRIALS = 128
MARGIN = 512
"""Bases a window holds beyond ``d + 2 s`` at least (the lead, before rounding)."""
_OTHER_BASES = {base: [b for b in BASES if b != base] for base in BASES}


def round_to(n: int, align: int) -> int:
    """``n`` rounded down to a multiple of ``align``, at least ``align``."""
    return max(align, (n // align) * align)


def window_bp(distance: int, segment: int) -> int:
    """The window's length before rounding (module docstring)."""
    return 1 << (distance + 2 * segment + MARGIN - 1).bit_length()


def piece_lengths(distance: int, segment: int, align: int) -> tuple[int, int, int]:
    """``(lead, segment, distance)`` in bases, each rounded to ``align`` (module docstring): the
    segment and the distance first, then the lead down to what the window leaves, so the pieces
    never outgrow :func:`window_bp` (a segment rounded up to one ``align``-mer takes its bases
    from the lead)."""
    window = window_bp(distance, segment)
    segment, distance = round_to(segment, align), round_to(distance, align)
    return round_to(window - 2 * segment - distance, align), segment, distance


def parse_copy(text: str) -> tuple[str, float]:
    """``exact``, ``revcomp`` or ``mutate:P`` (0 <= P <= 1) as ``(copy, rate)``.

    Raises:
        ValueError: any other text.
    """
    name, _, rate = text.partition(":")
    if name == "mutate" and rate:
        try:
            value = float(rate)
        except ValueError:
            value = -1.0
        if 0.0 <= value <= 1.0:
            return name, value
    elif name in ("exact", "revcomp") and not rate:
        return name, 0.0
    raise ValueError(f"--copy {text!r}: exact, revcomp or mutate:P with 0 <= P <= 1")


def mutate(segment: str, rate: float, rng) -> str:
    """Each base of ``segment`` substituted with probability ``rate`` (module docstring): one
    uniform draw per base for whether, then one integer in 0..2 per base for which."""
    hit = rng.random(len(segment)) < rate
    pick = rng.integers(0, 3, len(segment))
    return "".join(
        _OTHER_BASES[base][k] if h and base in _OTHER_BASES else base
        for base, h, k in zip(segment, hit, pick, strict=True)
    )


def earlier_copy(segment: str, copy: str, rate: float, aux) -> str:
    """``A'`` of ``A`` = ``segment`` (module docstring)."""
    if copy == "mutate":
        return mutate(segment, rate, aux)
    return reverse_complement(segment) if copy == "revcomp" else segment


class Stretches:
    """The N-free stretches of a genome, upper case, drawn from as recall-bench draws: a stretch
    of at least ``n`` bases uniformly, then a start in it uniformly."""

    def __init__(self, stretches: list[str]) -> None:
        self.text = "".join(stretches)
        self.offsets = np.cumsum([0, *map(len, stretches)])
        self.lengths = np.diff(self.offsets)

    def longest(self) -> int:
        """The longest stretch's length (0 without one)."""
        return int(self.lengths.max(initial=0))

    def sample(self, rng, n: int) -> str:
        """``n`` contiguous bases of one stretch (a stretch at least ``n`` long must exist)."""
        block = rng.choice(np.flatnonzero(self.lengths >= n))
        start = int(rng.integers(self.offsets[block], self.offsets[block + 1] - n + 1))
        return self.text[start : start + n]


def trial_windows(stretches, rng, aux, lengths, copy: str, rate: float, control: str) -> dict:
    """One trial's ``context_repeat``, ``context_control`` and ``target`` (module docstring)."""
    lead, segment, distance = lengths
    window = stretches.sample(rng, lead + 2 * segment + distance)
    target = window[lead + segment + distance :]
    between = window[lead + segment : lead + segment + distance]
    first = earlier_copy(target, copy, rate, aux)
    piece = (
        stretches.sample(aux, segment) if control == "foreign" else window[lead : lead + segment]
    )
    return {
        "context_repeat": window[:lead] + first + between,
        "context_control": window[:lead] + piece + between,
        "target": target,
    }


def copy_advantage(ll_repeat: float, ll_control: float, target_bp: int) -> float:
    """``(LL(A | repeat) - LL(A | control)) / s`` in nats per base (module docstring)."""
    return (ll_repeat - ll_control) / target_bp

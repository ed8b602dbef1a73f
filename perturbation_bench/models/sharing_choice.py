"""``share_prefix=auto``: shared prefixes or plain scoring, whichever is faster where the run is.

A shared batch (``causal_scoring.py``) does fewer token passes than scoring its pieces plainly,
but in two forward passes with masked attention over a cache; which is faster depends on the
device, the model's shape and the lengths, which no token count can tell. So with
``share_prefix=auto`` (the default) the run's first shared batch (of the first scoring call that
has one: its fullest) is scored both ways, each timed (the clock stops once its log-probabilities
are read back, so a GPU's queue is counted):

- the two must agree per request to :func:`agree` (float32 weights: ``|dLL| <= 1e-6 |LL| + 1e-3``
  nats, the tests' bound; bf16/fp16 weights round each way differently: ``1e-3 |LL| + 0.5``);
  if they do not, the model's cache cannot be trusted and the run scores plainly (warned);
- otherwise the faster way is kept for the rest of the run (every later call of the model),
  and the choice is logged with both times. The batch itself keeps the chosen way's scores.

The timing runs when a process reaches its shared batches, after its plain pieces (the model is
warm by then where it has any; where it has none, one piece is scored first, untimed, so a cold
start counts against neither way). It costs one batch scored the slower way, so it runs only
where the call has at least :data:`MIN_TIMED_BATCHES` shared batches: with fewer, a wrong
choice cannot cost more than the timing itself, and the plan decides for that call. With several processes rank 0 times and every rank takes its choice
(``parallel.from_rank_zero``), so ranks score alike; a process with no shared batch still takes
part. While no choice is made (rank 0 had no shared batch to time) the
plan's cost model decides (``causal_plan.py``). ``share_prefix=false`` scores plainly; ``true`` skips the timing and
shares where the plan's cost model predicts a gain.
The choice and both times are recorded in the results' provenance (``measured``), outside the
scorer settings: a store under ``--use_cache`` is keyed by ``share_prefix`` as given
(``result_store.py``), never by the way ``auto`` chose, which changes no score beyond the bound.
"""

from __future__ import annotations

import logging
import time

from perturbation_bench.arguments import truth_word
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.parallel import from_rank_zero

log = logging.getLogger(f"lm_eval.{__name__}")

AUTO = "auto"
MIN_TIMED_BATCHES = 4
"""Fewest shared batches in a scoring call worth timing (module docstring)."""


def sharing_mode(value) -> bool | str:
    """``share_prefix`` as given: ``"auto"``, True or False.

    Raises:
        OptionsError: anything else.
    """
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    read = truth_word(value)
    if read is None:
        raise OptionsError(f"share_prefix must be auto, true or false, got {value!r}")
    return read


def agree(a: float, b: float, exact: bool) -> bool:
    """Whether two scores of one request agree (module docstring); ``exact``: float32 weights."""
    if exact:
        return abs(a - b) <= 1e-6 * abs(b) + 1e-3
    return abs(a - b) <= 1e-3 * abs(b) + 0.5


def per_request(results) -> dict[int, float]:
    """The summed score per request of a batch's ``(owners, (total, greedy))`` parts."""
    totals: dict[int, float] = {}
    for owners, (total, _) in results:
        for owner in owners:
            totals[owner] = totals.get(owner, 0.0) + total
    return totals


class SharingChoice:
    """The run's way of scoring shared pieces (module docstring); one per model, kept across
    calls. ``shares``: True/False once decided (or forced), None while ``auto`` is undecided;
    ``clock``: seconds, for the timing."""

    def __init__(self, mode: bool | str, clock=time.perf_counter) -> None:
        self.mode, self.clock = mode, clock
        self.shares: bool | None = None if mode == AUTO else mode
        self.measured: dict | None = None

    @property
    def plans_sharing(self) -> bool:
        """Whether the plan shares prefixes: forced, chosen, or ``auto`` not yet decided."""
        return self.shares is not False

    @property
    def undecided(self) -> bool:
        return self.shares is None

    def settle(self, shared_way=None, plain_way=None, exact: bool = True):
        """Decide (module docstring) and return the timed batch's results the chosen way, or
        None when nothing was timed. ``shared_way``/``plain_way``: functions scoring this
        process's first shared batch each way (None: none worth timing). Every process must
        call this once per scoring call while :attr:`undecided`."""
        mine = None
        if shared_way is not None and rank_zero():
            mine = self._time(shared_way, plain_way, exact)
        measured = from_rank_zero(None if mine is None else mine[0])
        if measured is None:
            log.info(
                "dna-hf: share_prefix=auto: fewer than %d shared batches, not timed; the plan "
                "decides",
                MIN_TIMED_BATCHES,
            )
            return None
        self.measured, self.shares = measured, measured["chosen"] == "shared"
        if mine is None:
            return None
        return mine[1] if self.shares else mine[2]

    def _time(self, shared_way, plain_way, exact: bool):
        """``(record, shared results, plain results)`` of one batch timed each way."""
        seconds, results = {}, {}
        for name, way in (("shared", shared_way), ("plain", plain_way)):
            start = self.clock()
            results[name] = way()  # returns once the scores are read back
            seconds[name] = self.clock() - start
        shared, plain = per_request(results["shared"]), per_request(results["plain"])
        worst = max(abs(shared[r] - plain[r]) for r in plain)
        same = all(agree(shared[r], plain[r], exact) for r in plain)
        chosen = "shared" if same and seconds["shared"] < seconds["plain"] else "plain"
        record = {
            "chosen": chosen,
            "seconds": {name: round(value, 6) for name, value in seconds.items()},
            "requests": len(plain),
            "max_abs_dll": worst,
            "agree": same,
        }
        if not same:
            log.warning(
                "dna-hf: share_prefix=auto: shared and plain scores of the first shared batch "
                "differ by up to %.3g nats, beyond the bound; this model's cache is not reused, "
                "every piece is scored plainly",
                worst,
            )
        log.info(
            "dna-hf: share_prefix=auto chose %s scoring: the first shared batch (%d requests) "
            "took %.3f s shared, %.3f s plain (max |dLL| %.2g)",
            chosen,
            len(plain),
            seconds["shared"],
            seconds["plain"],
            worst,
        )
        return record, results["shared"], results["plain"]

    def record(self) -> dict:
        """What the provenance keeps of ``auto``: the way chosen and both times (``chosen``
        None: nothing was timed, the plan decided); nothing where a way was forced."""
        if self.mode != AUTO:
            return {}
        return {"share_prefix": self.measured or {"chosen": None}}


def rank_zero() -> bool:
    """Whether this process is rank 0 (the one that times), or the only one."""
    import torch

    distributed = torch.distributed
    if distributed.is_available() and distributed.is_initialized():
        return distributed.get_rank() == 0
    return True

"""Batches of a causal plan (``causal_plan.py``): which pieces go in one forward pass, and each
request's score gathered from the batches.

Plain pieces go ``batch_size`` at a time, longest first, right-padded. Shared jobs are batched
across pairs whatever their shared lengths: a job of shared length ``P`` shares ``P_b =
shared_bucket(P)`` (at most 1/8 of the prefix given up; sharing fewer tokens than a job could
is still exact), and jobs of one ``P_b`` are batched together, at most ``batch_size`` pieces a
batch, so a pair's scores depend on its own tokens only, never on which pairs share its batch
(shards and processes agree with one run). :func:`passes` gives the shape of every forward pass
without running one.
"""

from __future__ import annotations

from collections import defaultdict


def shared_bucket(shared: int) -> int:
    """The prefix a job of ``shared`` common input tokens shares in a batch: ``shared`` rounded
    down to a multiple of the largest power of two at most ``shared / 8`` (itself below 16):
    at most 1/8 of the prefix given up, for fewer, fuller batches."""
    step = 1 << max(0, (shared // 8).bit_length() - 1)
    return shared - shared % step


def single_batches(singles: list, batch_size: int) -> list[list]:
    """Plain pieces ``(piece, owners)`` in batches of ``batch_size``, longest first."""
    order = sorted(singles, key=lambda single: len(single[0].tokens), reverse=True)
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def shared_groups(jobs: list, batch_size: int) -> list[tuple[int, list]]:
    """Shared jobs ``(P, pieces, owners)`` in batches ``(shared, jobs)`` of one
    :func:`shared_bucket`, longest first, at most ``batch_size`` pieces a batch (a job of more
    pieces alone)."""
    buckets = defaultdict(list)
    for job in jobs:
        buckets[shared_bucket(job[0])].append(job)
    groups = []
    for shared, members in sorted(buckets.items(), reverse=True):
        batch: list = []
        for job in members:
            if batch and sum(len(f) for _, f, _ in batch) + len(job[1]) > batch_size:
                groups.append((shared, batch))
                batch = []
            batch.append(job)
        groups.append((shared, batch))
    return groups


def group_owners(batch: list) -> list[int]:
    """Every owner of every piece of a batch of shared jobs ``(P, pieces, owners)``."""
    return [owner for _, _, job_owners in batch for o in job_owners for owner in o]


def group_pieces(batch: list) -> list[tuple]:
    """The pieces of a batch of shared jobs, each with its owners, to be scored plainly."""
    return [
        (piece, owners)
        for _, found, job_owners in batch
        for piece, owners in zip(found, job_owners, strict=True)
    ]


def passes(work, batch_size: int) -> list[tuple[int, int]]:
    """``(rows, width)`` of every forward pass ``causal_scoring.py`` makes of a
    ``causal_plan.Plan``, in order, padding included: plain batches longest first, then per
    shared batch its prefix pass and (where a piece goes beyond the prefix) its remainder pass."""
    shapes = [
        (len(batch), len(batch[0][0].tokens) - 1)
        for batch in single_batches(work.singles, batch_size)
    ]
    for shared, batch in shared_groups(work.shared, batch_size):
        shapes.append((len(batch), shared))
        rest = [len(piece.tokens) - 1 - shared for piece, _ in group_pieces(batch)]
        if max(rest):
            shapes.append((len(rest), max(rest)))
    return shapes


class Tally:
    """Each request's sum and greedy flag as batches complete, and ``on_complete(index,
    result)`` called for each request once the last batch it waits for is done."""

    def __init__(self, n: int, on_complete=None) -> None:
        self.totals, self.greedy, self.pending = [0.0] * n, [True] * n, [0] * n
        self.on_complete = on_complete

    def expect(self, batches: list[list[int]]) -> None:
        """Note the owners each batch completes (one entry per part an owner waits for)."""
        for owners in batches:
            for owner in owners:
                self.pending[owner] += 1

    def apply(self, done: list[int], results) -> None:
        """Add a batch's ``(owners, (total, greedy))`` parts; ``done``: its owners."""
        for owners, (total, all_greedy) in results:
            for owner in owners:
                self.totals[owner] += total
                self.greedy[owner] = self.greedy[owner] and all_greedy
        for owner in done:
            self.pending[owner] -= 1
            if self.pending[owner] == 0 and self.on_complete is not None:
                self.on_complete(owner, (self.totals[owner], self.greedy[owner]))

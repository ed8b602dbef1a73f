"""Planning causal scoring: which token passes a set of requests needs, each computed once.

A *piece* is a token list ``T`` scored from ``first_target`` on:
``LL = sum over t >= first_target of log p(T[t] | T[:t])`` (the model reads ``T[:-1]``). A
request is one piece, or several with sliding windows. Requests are scored in *groups*: the two
of a pair (the original and the perturbed sequence; with ``rc_average`` each strand's pair too),
or with ``dedupe`` every set of pairs linked by identical requests (a reference window and all
its alternates: a saturation scan's three per position, variants sharing a site), each
identical request scored once for all its owners. A group's pieces are matched window by window:

- identical pieces (a window that ends before the change) are scored once, for all owners;
- distinct pieces with a common prefix of ``P`` input tokens, when sharing pays (``P >=
  MIN_SHARED`` and the speed-up :class:`CostModel` predicts reaches ``MIN_SPEEDUP``), become
  one shared job: the prefix once, then every piece's remainder on its
  key/value cache. Cost ``P + k (n - P)`` instead of ``k n`` token passes for ``k`` pieces of
  ``n`` inputs;
- everything else is scored plainly.

A request longer than the model's ``max_length`` is cut into sliding windows (:func:`token_windows`).

``causal_batches.py`` puts a plan's work in batches, ``causal_scoring.py`` runs them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from perturbation_bench.errors import OptionsError
from perturbation_bench.models.causal_batches import shared_bucket

MIN_SHARED = 16
"""Fewest shared input tokens worth a separate prefix pass."""
MIN_SPEEDUP = 1.3
"""Smallest predicted speed-up (:meth:`CostModel.speedup`) worth sharing: a margin for what the
cost model does not see (padding; a job adds passes, and a bucket of few jobs is a small
batch: on the 384-pair GPU shape, 1.1 would make 57 passes instead of plain's 24, 1.3 makes
44, none of batch 1)."""
LINEAR_FLOPS_PER_SECOND = 30e9
"""The CPU calibration (docs/benchmarks.md, "The sharing cost model"): the decoder's linear
layers, floating-point operations per second."""
ATTENTION_FLOPS_PER_SECOND = 15e9
"""The same for attention (masked attention over a cache included)."""
OUTPUT_FLOPS_PER_SECOND = 23e9
"""The same for the output layer and its float32 log-softmax at the scored positions."""
SECONDS_PER_PASS = 0.006
"""A forward pass's fixed cost (Python, kernel launches, the cache's bookkeeping)."""


@dataclass(frozen=True)
class Piece:
    """Tokens of one scoring pass and the first position scored."""

    tokens: tuple[int, ...]
    first_target: int


@dataclass(frozen=True)
class CostModel:
    """Predicted time of scoring pieces, in units of one token through the decoder's linear
    layers (``2 W`` floating-point operations for ``W`` weights in the decoder's layers).

    A piece of ``n`` inputs, ``s`` of them scored, costs::

        n  +  attention * (query, key) pairs  +  output * s  +  per_pass / batch_size

    Causal attention over ``n`` inputs is ``n^2 / 2`` pairs; a remainder of ``r`` tokens read
    after a cache of ``P`` attends to ``r (P + r)`` keys (kernels without causal blocking on a
    rectangle, the CPU's, pay for all of them); ``attention`` and ``output`` are the ``4 h L``
    operations of a (query, key) pair and the ``2 h V`` of a scored position, weighed by their
    throughput against the linear layers'; ``per_pass`` is a forward pass's fixed cost, shared
    by the ``batch_size`` pieces of a batch (a shared batch is two passes: each of its pieces
    pays it twice). Calibrated on a CPU (the ``*_PER_SECOND`` constants and
    :data:`SECONDS_PER_PASS`); elsewhere ``share_prefix=auto`` measures (``sharing_choice.py``).
    """

    attention: float
    output: float
    per_pass: float
    batch_size: int = 1

    @classmethod
    def of(cls, config, batch_size: int = 1, layer_weights: int | None = None) -> CostModel:
        """The cost model of a transformers ``config`` (``hidden_size``, ``num_hidden_layers``,
        ``vocab_size``); ``layer_weights``: the weights of the decoder's layers (default
        ``12 h^2`` a layer)."""
        h = getattr(config, "hidden_size", None) or 1024
        layers = getattr(config, "num_hidden_layers", None) or 1
        vocabulary = getattr(config, "vocab_size", None) or 4096
        token = 2 * (layer_weights or 12 * h * h * layers)  # operations of one token
        return cls(
            attention=4 * h * layers / token * LINEAR_FLOPS_PER_SECOND / ATTENTION_FLOPS_PER_SECOND,
            output=2 * h * vocabulary / token * LINEAR_FLOPS_PER_SECOND / OUTPUT_FLOPS_PER_SECOND,
            per_pass=SECONDS_PER_PASS * LINEAR_FLOPS_PER_SECOND / token,
            batch_size=batch_size,
        )

    def plain(self, piece: Piece) -> float:
        """A piece scored on its own."""
        n, scored = len(piece.tokens) - 1, len(piece.tokens) - piece.first_target
        return (
            n + self.attention * n * n / 2 + self.output * scored + self.per_pass / self.batch_size
        )

    def shared(self, shared: int, pieces) -> float:
        """The pieces of one job: their first ``shared`` inputs once (and the targets those
        predict, once), then each remainder on the cache."""
        first = min(piece.first_target for piece in pieces)
        cost = shared + self.attention * shared * shared / 2 + self.output * max(0, shared - first)
        for piece in pieces:
            n = len(piece.tokens) - 1
            cost += (n - shared) * (1 + self.attention * n) + 2 * self.per_pass / self.batch_size
            cost += self.output * (len(piece.tokens) - max(piece.first_target, shared))
        return cost

    def speedup(self, shared: int, *pieces: Piece) -> float:
        """Cost of scoring ``pieces`` plainly / with their ``shared`` prefix computed once."""
        return sum(map(self.plain, pieces)) / self.shared(shared, pieces)


def shared_inputs(a: Piece, b: Piece) -> int:
    """Number of leading input tokens (``tokens[:-1]``) two pieces share."""
    limit = min(len(a.tokens), len(b.tokens)) - 1
    shared = 0
    while shared < limit and a.tokens[shared] == b.tokens[shared]:
        shared += 1
    return shared


def worth_sharing(shared: int, *pieces: Piece, cost: CostModel) -> bool:
    """The cost rule: share when the prefix is long enough and the predicted speed-up of the
    prefix a batch shares (``causal_batches.shared_bucket``) pays."""
    return shared >= MIN_SHARED and cost.speedup(shared_bucket(shared), *pieces) >= MIN_SPEEDUP


@dataclass
class Plan:
    """What to run: pieces scored on their own, each with the requests it counts for, and the
    shared-prefix jobs ``(P, pieces, owners of each piece)``."""

    singles: list[tuple[Piece, list[int]]]
    shared: list[tuple[int, list[Piece], list[list[int]]]]

    def input_tokens(self) -> int:
        """Token passes this plan costs (a shared job: its prefix once, every remainder)."""
        plain = sum(len(piece.tokens) - 1 for piece, _ in self.singles)
        return plain + sum(
            p + sum(len(q.tokens) - 1 - p for q in pieces) for p, pieces, _ in self.shared
        )

    def predicted(self, cost: CostModel) -> float:
        """What ``cost`` predicts this plan costs."""
        plain = sum(cost.plain(piece) for piece, _ in self.singles)
        return plain + sum(cost.shared(p, pieces) for p, pieces, _ in self.shared)


def request_groups(pieces, pairs, dedupe: bool) -> tuple[list[list[int]], dict[int, list[int]]]:
    """The groups of scored requests (module docstring) and the owners of each scored request.

    Without ``dedupe`` a group is a pair and every request is scored for itself; with it, each
    distinct piece list is scored once for every request that has it (its owners), and pairs
    that share a scored request join one group.
    """
    scored = list(range(len(pieces)))
    if dedupe:
        first = {}
        scored = [first.setdefault(tuple(request), index) for index, request in enumerate(pieces)]
    owners = defaultdict(list)
    for index, target in enumerate(scored):
        owners[target].append(index)
    parent = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[root(scored[a])] = root(scored[b])
    groups = defaultdict(set)
    for member in list(parent):
        groups[root(member)].add(member)
    grouped = [sorted(members) for _, members in sorted(groups.items())]
    in_groups = set(parent)
    alone = [[target] for target in sorted(owners) if target not in in_groups]
    return grouped + alone, dict(owners)


def plan(
    pieces: list[list[Piece]],
    pairs: list[tuple[int, int]],
    cost: CostModel,
    can_share=lambda: True,
    dedupe: bool = False,
) -> Plan:
    """Match each group's pieces window by window (module docstring): identical pieces once,
    prefixes shared where :func:`worth_sharing` (and ``can_share()``), the rest plainly."""
    work = Plan([], [])
    groups, owners = request_groups(pieces, pairs, dedupe)
    singles: dict = {} if dedupe else None
    for members in groups:
        for k in range(max(len(pieces[m]) for m in members)):
            distinct: dict[Piece, list[int]] = {}
            for m in members:
                if k < len(pieces[m]):
                    distinct.setdefault(pieces[m][k], []).extend(owners[m])
            found = list(distinct)
            shared = min((shared_inputs(found[0], q) for q in found[1:]), default=0)
            if (
                len(found) > 1
                and shared
                and worth_sharing(shared, *found, cost=cost)
                and can_share()
            ):
                work.shared.append((shared, found, [distinct[q] for q in found]))
                continue
            for piece in found:
                if singles is None:
                    work.singles.append((piece, distinct[piece]))
                else:
                    singles.setdefault(piece, []).extend(distinct[piece])
    if singles is not None:
        work.singles = list(singles.items())
    return work


def check_stride(stride) -> None:
    """Refuse a ``window_stride`` model argument that is given and not a whole number of at
    least 1 token (:func:`token_windows` holds it to ``max_length`` once the model is read)."""
    if stride is None:
        return
    if isinstance(stride, bool) or not isinstance(stride, int):
        raise OptionsError(f"window_stride must be a whole number of tokens, got {stride!r}")
    if stride < 1:
        raise OptionsError(f"window_stride must be at least 1 token, got {stride}")


def token_windows(
    n_tokens: int, first_target: int, max_length: int, stride: int
) -> list[tuple[int, int, int]]:
    """Cut the scoring of ``tokens[first_target:n_tokens]`` into windows that fit the model.

    Returns:
        ``(start, target_start, target_end)`` triples: the model reads
        ``tokens[start:target_end - 1]`` (at most ``max_length`` tokens) and the window scores
        ``tokens[target_start:target_end]``. The target ranges tile
        ``[first_target, n_tokens)`` without overlap. A sequence that fits gives the single
        window ``(0, first_target, n_tokens)``.
    """
    if not 1 <= stride <= max_length:
        raise OptionsError(
            f"window_stride must be between 1 and max_length={max_length}, got {stride}"
        )
    if not 0 < first_target < n_tokens:
        raise ValueError(f"need 0 < first_target < n_tokens, got {first_target}, {n_tokens}")
    windows = []
    target_start = first_target
    target_end = min(n_tokens, max(max_length + 1, first_target + 1))
    while True:
        windows.append((max(0, target_end - 1 - max_length), target_start, target_end))
        if target_end == n_tokens:
            return windows
        target_start, target_end = target_end, min(n_tokens, target_end + stride)

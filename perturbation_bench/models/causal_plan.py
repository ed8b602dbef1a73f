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
  MIN_SHARED`` and the predicted speed-up of :func:`predicted_speedup` reaches
  ``MIN_SPEEDUP``), become one shared job: the prefix once, then every piece's remainder on its
  key/value cache. Cost ``P + k (n - P)`` instead of ``k n`` token passes for ``k`` pieces of
  ``n`` inputs;
- everything else is scored plainly.

A request longer than the model's ``max_length`` is cut into sliding windows (:func:`token_windows`).

``causal_scoring.py`` runs the :class:`Plan`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from perturbation_bench.errors import OptionsError

MIN_SHARED = 16
"""Fewest shared input tokens worth a separate prefix pass."""
MIN_SPEEDUP = 1.2
"""Smallest predicted speed-up (:func:`predicted_speedup`) worth the extra passes: each shared
job's separate prefix and remainder calls cost time the token count does not see (a 350 bp
paired control, 1.17x predicted, ran at 0.41x of plain scoring on a CPU)."""


@dataclass(frozen=True)
class Piece:
    """Tokens of one scoring pass and the first position scored."""

    tokens: tuple[int, ...]
    first_target: int


def shared_inputs(a: Piece, b: Piece) -> int:
    """Number of leading input tokens (``tokens[:-1]``) two pieces share."""
    limit = min(len(a.tokens), len(b.tokens)) - 1
    shared = 0
    while shared < limit and a.tokens[shared] == b.tokens[shared]:
        shared += 1
    return shared


def predicted_speedup(shared: int, *pieces: Piece, hidden_size: int) -> float:
    """Cost of scoring ``pieces`` plainly / with their ``shared`` prefix computed once.

    Per layer, a token costs ~12 h^2 in the linear layers and ~2 h per token it attends to, so
    attention weighs ``x = 1 / (6 h)`` against a token's linear cost. Plain: each piece of ``n``
    inputs costs ``n + x n^2 / 2`` (causal). Shared: the prefix costs ``P + x P^2 / 2``, and each
    remainder of ``r = n - P`` tokens ``r + x r n``: its queries attend to the whole cache, which
    kernels without causal blocking on a rectangle (CPU) pay in full.
    """
    x = 1.0 / (6.0 * hidden_size)
    lengths = [len(piece.tokens) - 1 for piece in pieces]
    plain = sum(n + x * n * n / 2 for n in lengths)
    with_prefix = shared + x * shared * shared / 2
    for n in lengths:
        with_prefix += (n - shared) * (1 + x * n)
    return plain / with_prefix


def worth_sharing(shared: int, *pieces: Piece, hidden_size: int) -> bool:
    """The cost rule: share when the prefix is long enough and the predicted speed-up pays."""
    return (
        shared >= MIN_SHARED
        and predicted_speedup(shared, *pieces, hidden_size=hidden_size) >= MIN_SPEEDUP
    )


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
    hidden_size: int,
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
                and worth_sharing(shared, *found, hidden_size=hidden_size)
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

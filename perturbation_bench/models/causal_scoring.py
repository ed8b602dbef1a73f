"""Causal LM scoring that computes what sequences share only once.

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
  ``MIN_SPEEDUP``), are scored by running the prefix once, keeping its key/value cache, then
  every piece's remainder on that cache (one pass on a repeated cache when the remainders have
  one length, else one pass each, the cache cropped back to ``P`` in between). Cost
  ``P + k (n - P)`` instead of ``k n`` token passes for ``k`` pieces of ``n`` inputs;
- everything else is scored plainly, batched by length with right padding (a causal model's
  real positions never see the padding after them).

Log-probabilities are exact (float32) and computed only where they are needed: the decoder's
hidden states go through the output layer a chunk of positions at a time, and only each target's
log-probability (``logit - logsumexp``) and whether it is the argmax are kept, so memory never
holds a [batch, tokens, vocabulary] tensor in float32. Models whose output layer cannot be
split off (logit soft-capping or scaling) use their full logits, still chunked; models whose
cache cannot be reused fall back to plain scoring (logged once).
"""

from __future__ import annotations

import inspect
import logging
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import torch

log = logging.getLogger(f"lm_eval.{__name__}")

MIN_SHARED = 16
"""Fewest shared input tokens worth a separate prefix pass."""
MIN_SPEEDUP = 1.05
"""Smallest predicted speed-up (:func:`predicted_speedup`) worth the extra passes."""
LOGIT_ELEMENTS = 1 << 24
"""Logits materialised at once (64 MiB in float32)."""


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
    return shared >= MIN_SHARED and predicted_speedup(shared, *pieces, hidden_size=hidden_size) >= MIN_SPEEDUP


@dataclass
class Plan:
    """What to run: pieces scored on their own, each with the requests it counts for, and the
    shared-prefix jobs ``(P, pieces, owners of each piece)``."""

    singles: list[tuple[Piece, list[int]]]
    shared: list[tuple[int, list[Piece], list[list[int]]]]

    def input_tokens(self) -> int:
        """Token passes this plan costs (a shared job: its prefix once, every remainder)."""
        plain = sum(len(piece.tokens) - 1 for piece, _ in self.singles)
        return plain + sum(p + sum(len(q.tokens) - 1 - p for q in pieces)
                           for p, pieces, _ in self.shared)  # fmt: skip


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
            if len(found) > 1 and shared and worth_sharing(
                shared, *found, hidden_size=hidden_size
            ) and can_share():
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


class CausalScorer:
    """Score pieces with a causal LM; see the module docstring.

    Args:
        model: a transformers causal LM, unwrapped, in eval mode.
        device: where inputs go.
        batch_size: pieces (or prefixes) per forward pass.
        share: use shared prefixes and identical-piece reuse.
        progress: show a progress bar over the pieces.
        dedupe: score identical requests once and group pairs that share one.
    """

    def __init__(
        self, model, device, batch_size: int, share: bool = True, progress: bool = False,
        dedupe: bool = False,
    ) -> None:  # fmt: skip
        self.model, self.device, self.batch_size, self.share = model, device, batch_size, share
        self.progress, self.dedupe = progress, dedupe
        self.decoder, self.head = _split_output_layer(model)
        self._fallback_logged = False
        parameters = inspect.signature(self.decoder.forward).parameters if self.decoder else {}
        self._cache_argument = "cache" if "cache" in parameters else "past_key_values"

    def score(
        self, pieces: list[list[Piece]], pairs: list[tuple[int, int]], on_complete=None
    ) -> list[tuple[float, bool]]:
        """``(LL, all targets greedy)`` per request, from its ``pieces`` (``pairs``: indices of
        requests whose pieces are matched window by window). ``on_complete(index, result)`` is
        called for each request as soon as its last piece is scored (a killed run keeps what
        was complete)."""
        hidden = getattr(self.model.config, "hidden_size", None) or 1024
        work = plan(pieces, pairs if self.share else [], hidden, self._cache_reusable, self.dedupe)
        if self.share or self.dedupe:
            log.info(
                "dna-hf: %d piece groups share a prefix (one prefix pass each, %d pieces), %d "
                "identical pieces scored once for several requests, %d pieces scored plainly",
                len(work.shared),
                sum(len(found) for _, found, _ in work.shared),
                sum(len(owners) > 1 for _, owners in work.singles),
                len(work.singles),
            )
        totals = [0.0] * len(pieces)
        greedy = [True] * len(pieces)
        pending = [0] * len(pieces)  # jobs (singles, shared) each request still waits for
        for owners in [o for _, o in work.singles] + [sum(o, []) for _, _, o in work.shared]:
            for owner in owners:
                pending[owner] += 1

        def take(owners, result) -> None:
            if owners is None:  # the end of a batch: ``result`` lists its jobs' owners
                for owner in result:
                    pending[owner] -= 1
                    if pending[owner] == 0 and on_complete is not None:
                        on_complete(owner, (totals[owner], greedy[owner]))
                return
            for owner in owners:
                totals[owner] += result[0]
                greedy[owner] = greedy[owner] and result[1]

        from tqdm import tqdm

        with tqdm(
            total=len(work.singles) + len(work.shared),
            desc="dna-hf: scoring pieces",
            disable=not self.progress,
        ) as bar:
            for owners, result in self._score_singles(work.singles, bar):
                take(owners, result)
            for owners, result in self._score_shared(work.shared, bar):
                take(owners, result)
        return list(zip(totals, greedy))

    def _cache_reusable(self) -> bool:
        if self.decoder is not None and getattr(self.model.config, "use_cache", True):
            return True
        if not self._fallback_logged:
            self._fallback_logged = True
            log.warning("dna-hf: this model's cache cannot be reused; scoring pairs plainly")
        return False

    @torch.no_grad()
    def _score_singles(self, singles: list[tuple[Piece, list[int]]], bar):
        """``(owners, result)`` per entry of ``singles``, batched longest first, each batch
        followed by ``(None, its owners)``; ``bar`` counts the pieces done."""
        order = sorted(range(len(singles)), key=lambda i: len(singles[i][0].tokens), reverse=True)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = len(singles[batch[0]][0].tokens) - 1
            ids = torch.zeros((len(batch), width), dtype=torch.long)
            for row, index in enumerate(batch):
                tokens = singles[index][0].tokens
                ids[row, : len(tokens) - 1] = torch.tensor(tokens[:-1])
            states = self._states(ids.to(self.device))
            for row, index in enumerate(batch):
                piece, owners = singles[index]
                yield owners, self._target_log_probs(
                    states[row, piece.first_target - 1 : len(piece.tokens) - 1],
                    piece.tokens[piece.first_target :],
                )
            yield None, [owner for index in batch for owner in singles[index][1]]
            bar.update(len(batch))

    @torch.no_grad()
    def _score_shared(self, jobs: list, bar) -> Iterator[tuple[list[int], tuple[float, bool]]]:
        """``(owners, result)`` for every part of every shared job, batched by shape, each batch
        followed by ``(None, its jobs' owners)``."""
        groups = defaultdict(list)
        for job in jobs:
            shared, found, _ = job
            groups[(shared, tuple(len(piece.tokens) for piece in found))].append(job)
        for (shared, _), group in sorted(groups.items()):
            for start in range(0, len(group), self.batch_size):
                batch = group[start : start + self.batch_size]
                yield from self._score_shared_batch(shared, batch)
                yield None, [owner for _, _, owners in batch for owner in sum(owners, [])]
                bar.update(len(batch))

    def _score_shared_batch(self, shared: int, batch: list):
        prefix = torch.tensor([job[1][0].tokens[:shared] for job in batch], device=self.device)
        output = self.decoder(input_ids=prefix, use_cache=True)
        cache = getattr(output, "cache", None) or output.past_key_values
        prefix_states = output.last_hidden_state
        for row, (_, found, owners) in enumerate(batch):
            # positions before the last prefix one predict prefix tokens: the same for every piece
            by_start = defaultdict(list)
            for piece, piece_owners in zip(found, owners):
                by_start[piece.first_target - 1] += piece_owners
            for start, start_owners in sorted(by_start.items()):
                if start < shared - 1:
                    yield start_owners, self._target_log_probs(
                        prefix_states[row, start : shared - 1], found[0].tokens[start + 1 : shared]
                    )
        sides = len(batch[0][1])
        if len({len(piece.tokens) for piece in batch[0][1]}) == 1:  # every remainder in one pass
            remainders = self._repeated_remainder_states(cache, prefix_states, shared, batch)
        else:
            remainders = [
                self._remainder_states(cache, prefix_states, shared, batch, side)
                for side in range(sides)
            ]
        for side, states in enumerate(remainders):
            for row, (_, found, owners) in enumerate(batch):
                piece = found[side]
                start = max(piece.first_target - 1, shared - 1)
                yield owners[side], self._target_log_probs(
                    states[row, start - (shared - 1) :], piece.tokens[start + 1 :]
                )

    def _remainder_states(self, cache, prefix_states, shared: int, batch: list, side: int):
        """States from the last prefix position on for one side's remainders, run on the cache
        (then cropped back to the prefix)."""
        rest = torch.tensor([job[1][side].tokens[shared:-1] for job in batch], device=self.device)
        states = prefix_states[:, shared - 1 :]
        if rest.shape[1]:
            more = self.decoder(input_ids=rest, use_cache=True, **{self._cache_argument: cache})
            states = torch.cat([states, more.last_hidden_state], dim=1)
            cache.crop(-rest.shape[1])
        return states

    def _repeated_remainder_states(self, cache, prefix_states, shared: int, batch: list):
        """Every side's remainder in one pass: the cache repeated once per side."""
        sides = len(batch[0][1])
        last = prefix_states[:, shared - 1 :]
        if len(batch[0][1][0].tokens) - 1 == shared:  # nothing after the prefix
            return [last] * sides
        rest = torch.tensor(
            [piece.tokens[shared:-1] for job in batch for piece in job[1]], device=self.device
        )
        cache.batch_repeat_interleave(sides)
        more = self.decoder(input_ids=rest, use_cache=True, **{self._cache_argument: cache})
        states = more.last_hidden_state.view(len(batch), sides, rest.shape[1], -1)
        return [torch.cat([last, states[:, side]], dim=1) for side in range(sides)]

    def _states(self, ids: torch.Tensor) -> torch.Tensor:
        """Hidden states (or logits, for a model without a separable output layer)."""
        if self.decoder is not None:
            return self.decoder(input_ids=ids, use_cache=False).last_hidden_state
        return self.model(input_ids=ids, use_cache=False).logits

    def _target_log_probs(self, rows: torch.Tensor, tokens) -> tuple[float, bool]:
        """``(sum of log p(tokens[k] | position k), all argmax)`` for the states ``rows``."""
        targets = torch.tensor(tokens, device=rows.device)
        vocabulary = self.model.config.vocab_size
        chunk = max(1, LOGIT_ELEMENTS // max(1, vocabulary))
        total, greedy = 0.0, True
        for start in range(0, len(targets), chunk):
            part = rows[start : start + chunk]
            logits = (self.head(part) if self.decoder is not None else part).float()
            wanted = targets[start : start + chunk]
            chosen = logits.gather(-1, wanted[:, None])[:, 0]
            total += float((chosen - torch.logsumexp(logits, dim=-1)).sum(dtype=torch.float64))
            greedy = greedy and bool((logits.argmax(-1) == wanted).all())
        return total, greedy


def _split_output_layer(model):
    """``(decoder, output layer)`` when logits are exactly ``head(decoder(...))``, else ``(None, None)``."""
    config = model.config
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None):
        return None, None
    get_decoder = getattr(model, "get_decoder", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    decoder = get_decoder() if get_decoder is not None else None
    if decoder is None or head is None or decoder is model:
        return None, None
    return decoder, head

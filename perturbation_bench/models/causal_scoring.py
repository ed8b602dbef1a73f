"""Causal LM scoring that computes what the two sequences of a pair share only once.

A *piece* is a token list ``T`` scored from ``first_target`` on:
``LL = sum over t >= first_target of log p(T[t] | T[:t])`` (the model reads ``T[:-1]``). A
request is one piece, or several with sliding windows. For the two requests of a pair (the
original and the perturbed sequence; with ``rc_average`` each strand's pair too) the pieces are
matched window by window:

- identical pieces (a window that ends before the change) are scored once, for both;
- pieces with a common prefix of ``P`` input tokens, when sharing pays (``P >= MIN_SHARED`` and
  ``P >= MIN_FRACTION`` of the input), are scored by running the prefix once, keeping its
  key/value cache, then each sequence's remainder on that cache (the cache is cropped back to
  ``P`` in between). Cost ``P + 2 (n - P)`` instead of ``2 n`` token passes: an ideal speed-up
  of ``2 / (2 - p)`` for ``p = P / n``;
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
MIN_FRACTION = 0.25
"""Smallest shared fraction of the input worth it (measured: 0.85x at 0.13 in a prototype)."""
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


def worth_sharing(shared: int, a: Piece, b: Piece) -> bool:
    """The cost rule: share when the prefix is long enough, in tokens and as a fraction."""
    inputs = max(len(a.tokens), len(b.tokens)) - 1
    return shared >= MIN_SHARED and shared >= MIN_FRACTION * inputs


class CausalScorer:
    """Score pieces with a causal LM; see the module docstring.

    Args:
        model: a transformers causal LM, unwrapped, in eval mode.
        device: where inputs go.
        batch_size: pieces (or prefixes) per forward pass.
        share: use shared prefixes and identical-piece reuse.
    """

    def __init__(self, model, device, batch_size: int, share: bool = True) -> None:
        self.model, self.device, self.batch_size, self.share = model, device, batch_size, share
        self.decoder, self.head = _split_output_layer(model)
        self._fallback_logged = False
        parameters = inspect.signature(self.decoder.forward).parameters if self.decoder else {}
        self._cache_argument = "cache" if "cache" in parameters else "past_key_values"

    def score(
        self, pieces: list[list[Piece]], pairs: list[tuple[int, int]]
    ) -> list[tuple[float, bool]]:
        """``(LL, all targets greedy)`` per request, from its ``pieces`` (``pairs``: indices of
        requests whose pieces are matched window by window)."""
        totals = [0.0] * len(pieces)
        greedy = [True] * len(pieces)

        def add(owner: int, result: tuple[float, bool]) -> None:
            totals[owner] += result[0]
            greedy[owner] = greedy[owner] and result[1]

        singles: dict[Piece, list[int]] = defaultdict(list)
        shared_jobs = []
        paired = set()
        for first, second in pairs if self.share else []:
            paired.update((first, second))
            for k in range(max(len(pieces[first]), len(pieces[second]))):
                a = pieces[first][k] if k < len(pieces[first]) else None
                b = pieces[second][k] if k < len(pieces[second]) else None
                if a is None or b is None or a == b:
                    for piece, owner in ((a, first), (b, second)):
                        if piece is not None:
                            singles[piece].append(owner)
                    continue
                shared = shared_inputs(a, b)
                if worth_sharing(shared, a, b) and self._cache_reusable():
                    shared_jobs.append((shared, a, b, first, second))
                else:
                    singles[a].append(first)
                    singles[b].append(second)
        for index, request_pieces in enumerate(pieces):
            if index not in paired:
                for piece in request_pieces:
                    singles[piece].append(index)
        if self.share:
            log.info(
                "dna-hf: %d piece pairs share a prefix (one prefix pass each), %d identical "
                "pieces scored once for two requests, %d pieces scored plainly",
                len(shared_jobs),
                sum(len(owners) > 1 for owners in singles.values()),
                len(singles),
            )
        for piece, result in self._score_singles(list(singles)):
            for owner in singles[piece]:
                add(owner, result)
        for owner, result in self._score_shared(shared_jobs):
            add(owner, result)
        return list(zip(totals, greedy))

    def _cache_reusable(self) -> bool:
        if self.decoder is not None and getattr(self.model.config, "use_cache", True):
            return True
        if not self._fallback_logged:
            self._fallback_logged = True
            log.warning("dna-hf: this model's cache cannot be reused; scoring pairs plainly")
        return False

    @torch.no_grad()
    def _score_singles(self, pieces: list[Piece]) -> Iterator[tuple[Piece, tuple[float, bool]]]:
        ordered = sorted(pieces, key=lambda p: len(p.tokens), reverse=True)
        for start in range(0, len(ordered), self.batch_size):
            batch = ordered[start : start + self.batch_size]
            width = len(batch[0].tokens) - 1
            ids = torch.zeros((len(batch), width), dtype=torch.long)
            for row, piece in enumerate(batch):
                ids[row, : len(piece.tokens) - 1] = torch.tensor(piece.tokens[:-1])
            states = self._states(ids.to(self.device))
            for row, piece in enumerate(batch):
                yield piece, self._sum(states[row], piece.tokens, piece.first_target)

    @torch.no_grad()
    def _score_shared(self, jobs: list) -> Iterator[tuple[int, tuple[float, bool]]]:
        groups = defaultdict(list)
        for job in jobs:
            shared, a, b = job[:3]
            groups[(shared, len(a.tokens), len(b.tokens))].append(job)
        for (shared, _, _), group in sorted(groups.items()):
            for start in range(0, len(group), self.batch_size):
                yield from self._score_shared_batch(shared, group[start : start + self.batch_size])

    def _score_shared_batch(self, shared: int, batch: list):
        prefix = torch.tensor([job[1].tokens[:shared] for job in batch], device=self.device)
        output = self.decoder(input_ids=prefix, use_cache=True)
        cache = getattr(output, "cache", None) or output.past_key_values
        prefix_states = output.last_hidden_state
        for side in (1, 2):  # the original's remainder, then the perturbed one's
            pieces = [job[side] for job in batch]
            rest = torch.tensor([p.tokens[shared:-1] for p in pieces], device=self.device)
            states = prefix_states
            if rest.shape[1]:
                more = self.decoder(input_ids=rest, use_cache=True, **{self._cache_argument: cache})
                states = torch.cat([prefix_states, more.last_hidden_state], dim=1)
                cache.crop(-rest.shape[1])
            for row, (job, piece) in enumerate(zip(batch, pieces)):
                yield job[side + 2], self._sum(states[row], piece.tokens, piece.first_target)

    def _states(self, ids: torch.Tensor) -> torch.Tensor:
        """Hidden states (or logits, for a model without a separable output layer)."""
        if self.decoder is not None:
            return self.decoder(input_ids=ids, use_cache=False).last_hidden_state
        return self.model(input_ids=ids, use_cache=False).logits

    def _sum(self, states: torch.Tensor, tokens, first_target: int) -> tuple[float, bool]:
        """``(sum of log p(tokens[t] | tokens[:t]), all argmax)`` over ``t >= first_target``,
        from the states of the inputs ``tokens[:-1]``."""
        targets = torch.tensor(tokens[first_target:], device=states.device)
        rows = states[first_target - 1 : len(tokens) - 1]
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

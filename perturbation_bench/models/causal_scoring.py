"""Causal LM scoring of a :class:`~perturbation_bench.models.causal_plan.Plan`: every token pass
it lists, each once.

A plan's shared jobs run the prefix once, keep its key/value cache, then every piece's remainder
on that cache (one pass on a repeated cache when the remainders have one length, else one pass
each, the cache cropped back to ``P`` in between); its single pieces are scored plainly, batched
by length with right padding (a causal model's real positions never see the padding after them).
``causal_plan.py`` states what a piece is and when sharing pays.

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

import torch

from perturbation_bench.models.causal_plan import Piece, plan

log = logging.getLogger(f"lm_eval.{__name__}")

LOGIT_ELEMENTS = 1 << 24
"""Logits materialised at once (64 MiB in float32)."""


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
        self,
        model,
        device,
        batch_size: int,
        share: bool = True,
        progress: bool = False,
        dedupe: bool = False,
    ) -> None:
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
                yield (
                    owners,
                    self._target_log_probs(
                        states[row, piece.first_target - 1 : len(piece.tokens) - 1],
                        piece.tokens[piece.first_target :],
                    ),
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
                    yield (
                        start_owners,
                        self._target_log_probs(
                            prefix_states[row, start : shared - 1],
                            found[0].tokens[start + 1 : shared],
                        ),
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
                yield (
                    owners[side],
                    self._target_log_probs(
                        states[row, start - (shared - 1) :], piece.tokens[start + 1 :]
                    ),
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

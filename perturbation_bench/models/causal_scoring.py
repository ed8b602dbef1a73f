"""Causal LM scoring of a :class:`~perturbation_bench.models.causal_plan.Plan`: every token pass
it lists, each once, batched whatever the shapes.

Pieces are batched as ``causal_batches.py`` states: single pieces plainly, longest first with
right padding (a causal model's real positions never see the padding after them); shared jobs
by their prefix rounded to a bucket ``P_b`` (every piece of a job starts with its job's first
``P_b`` tokens). A batch of shared jobs is two forward passes:

1. the prefix pass: each job's first ``P_b`` tokens, keeping the key/value cache;
2. the remainder pass: the cache expanded to one row per piece (a job's rows repeat its
   prefix), then every piece's tokens after ``P_b``, right-padded to the longest.

Positions before ``P_b - 1`` predict prefix tokens, the same for every piece of a job: they are
scored once for all its owners (once per distinct first target); position ``P_b - 1`` and the
remainder positions predict each piece's own tokens. ``causal_plan.py`` states what a piece is
and when sharing pays.

Log-probabilities are exact (float32) and computed only at the scored positions: the decoder's
hidden states of those positions go through the output layer a chunk at a time, and only each
target's log-probability (``logit - logsumexp``) and whether it is the argmax are kept, summed
per request part in float64 on the device and read back once per batch, so memory never holds a
[batch, tokens, vocabulary] tensor in float32. Models whose output layer cannot be split off
(logit soft-capping or scaling) use their full logits, still chunked; models whose cache cannot
be reused fall back to plain scoring (logged once). With ``share_prefix=auto`` the first
shared batch is timed both ways and the faster kept (``sharing_choice.py``).
"""

from __future__ import annotations

import inspect
import logging
from collections import defaultdict

import torch

from perturbation_bench.models.causal_batches import (
    Tally,
    group_owners,
    group_pieces,
    shared_groups,
    single_batches,
)
from perturbation_bench.models.causal_plan import CostModel, Piece, plan
from perturbation_bench.models.sharing_choice import MIN_TIMED_BATCHES, SharingChoice, rank_zero

log = logging.getLogger(f"lm_eval.{__name__}")

LOGIT_ELEMENTS = 1 << 24
"""Logits materialised at once (64 MiB in float32)."""


def right_padded(rows, width: int) -> torch.Tensor:
    """Token lists as one ``[rows, width]`` tensor, each right-padded with 0 (a causal model's
    real positions never see the padding after them)."""
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    for row, tokens in enumerate(rows):
        ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
    return ids


class Reads:
    """What one batch scores: rows of a states matrix, the token each row must predict, and
    the part (a list of owners) each row's log-probability counts for."""

    def __init__(self) -> None:
        self.owners: list[list[int]] = []
        self.rows: dict[int, tuple[list[int], list[int], list[int]]] = defaultdict(
            lambda: ([], [], [])
        )

    def add(self, owners: list[int], source: int, first_row: int, targets) -> None:
        """One part: rows ``first_row, first_row + 1, ...`` of states matrix ``source``
        predict ``targets`` in turn, and their sum counts for ``owners`` (no targets: nothing
        to add)."""
        if not targets:
            return
        part = len(self.owners)
        self.owners.append(owners)
        rows, tokens, parts = self.rows[source]
        rows.extend(range(first_row, first_row + len(targets)))
        tokens.extend(targets)
        parts.extend([part] * len(targets))


class CausalScorer:
    """Score pieces with a causal LM; see the module docstring.

    Args:
        model: a transformers causal LM, unwrapped, in eval mode.
        device: where inputs go.
        batch_size: pieces per forward pass (a shared batch: its pieces' remainders).
        share: use shared prefixes: True, False, or the run's :class:`SharingChoice`
            (``share_prefix=auto``, kept by the model across calls).
        progress: show a progress bar over the pieces.
        dedupe: score identical requests once and group pairs that share one.
    """

    def __init__(
        self,
        model,
        device,
        batch_size: int,
        share: bool | SharingChoice = True,
        progress: bool = False,
        dedupe: bool = False,
    ) -> None:
        self.model, self.device, self.batch_size = model, device, batch_size
        self.sharing = share if isinstance(share, SharingChoice) else SharingChoice(share)
        self.progress, self.dedupe = progress, dedupe
        self.decoder, self.head = split_output_layer(model)
        self._fallback_logged = False
        self._cache_argument = cache_argument(self.decoder)

    def score(
        self, pieces: list[list[Piece]], pairs: list[tuple[int, int]], on_complete=None
    ) -> list[tuple[float, bool]]:
        """``(LL, all targets greedy)`` per request, from its ``pieces`` (``pairs``: indices of
        requests whose pieces are matched window by window). ``on_complete(index, result)`` is
        called for each request as soon as its last piece is scored (a killed run keeps what
        was complete). Plain pieces first, then shared batches; with ``share_prefix=auto``
        undecided, the first shared batch settles the way (``sharing_choice.py``)."""
        cost = CostModel.of(self.model.config, self.batch_size, self._layer_weights())
        sharing = self.sharing.plans_sharing
        work = plan(pieces, pairs if sharing else [], cost, self._cache_reusable, self.dedupe)
        if sharing or self.dedupe:
            log.info(
                "dna-hf: %d piece groups share a prefix (one prefix pass each, %d pieces), %d "
                "identical pieces scored once for several requests, %d pieces scored plainly",
                len(work.shared),
                sum(len(found) for _, found, _ in work.shared),
                sum(len(owners) > 1 for _, owners in work.singles),
                len(work.singles),
            )
        singles = list(self._single_batches(work.singles))
        groups = shared_groups(work.shared, self.batch_size)
        tally = Tally(len(pieces), on_complete)
        tally.expect([done for _, done, _ in singles] + [group_owners(b) for _, b in groups])

        from tqdm import tqdm

        with (
            tqdm(
                total=len(work.singles) + len(work.shared),
                desc="dna-hf: scoring pieces",
                disable=not self.progress,
            ) as bar,
            torch.no_grad(),
        ):

            def run_all(batches) -> None:
                for size, done, run in batches:
                    tally.apply(done, run())
                    bar.update(size)

            run_all(singles)  # first, so that auto times its shared batch on a warm model
            run_all(self._shared_or_plain(groups, tally, bar, warm=bool(singles)))
        return list(zip(tally.totals, tally.greedy, strict=True))

    def _shared_or_plain(self, groups: list, tally: Tally, bar, warm: bool) -> list:
        """The batches of the shared groups, the run's way: with ``share_prefix=auto``
        undecided, the group of most pieces settles it where there are at least
        ``MIN_TIMED_BATCHES`` (its results go to ``tally``; ``warm``:
        plain batches ran before); where the way chosen is plain, the groups' pieces in plain
        batches."""
        if self.sharing.undecided:
            sizes = [sum(len(found) for _, found, _ in batch) for _, batch in groups]
            largest = sizes.index(max(sizes)) if len(groups) >= MIN_TIMED_BATCHES else None
            timed = self._settle(None if largest is None else groups[largest], warm=warm)
            if timed is not None:
                tally.apply(group_owners(groups[largest][1]), timed)
                bar.update(len(groups.pop(largest)[1]))
        if self.sharing.shares is not False:
            return [self._shared_batch(shared, batch) for shared, batch in groups]
        rest = [(piece, owners) for _, batch in groups for piece, owners in group_pieces(batch)]
        bar.total += len(rest) - sum(len(batch) for _, batch in groups)
        return list(self._single_batches(rest))

    def _settle(self, group, warm: bool):
        """``share_prefix=auto``'s choice, timed on ``group`` (``(shared, batch)``, None: this
        process has none worth timing; ``warm``: plain batches ran before it, else one piece is
        scored first, untimed); the group's results the chosen way, or None."""
        if group is None:
            return self.sharing.settle()
        shared, batch = group
        pieces = group_pieces(batch)
        if not warm and rank_zero():
            self._score_singles(pieces[:1])
        return self.sharing.settle(
            lambda: self._score_shared(shared, batch),
            lambda: [r for *_, run in self._single_batches(pieces) for r in run()],
            exact=self.model.dtype == torch.float32,
        )

    def _layer_weights(self) -> int | None:
        """The weights of the decoder's layers (the cost model's unit), None without one."""
        layers = getattr(self.decoder, "layers", None)
        return sum(p.numel() for p in layers.parameters()) if layers is not None else None

    def _cache_reusable(self) -> bool:
        if self.decoder is not None and getattr(self.model.config, "use_cache", True):
            return True
        if not self._fallback_logged:
            self._fallback_logged = True
            log.warning("dna-hf: this model's cache cannot be reused; scoring pairs plainly")
        return False

    def _single_batches(self, singles: list[tuple[Piece, list[int]]]):
        """``(pieces, owners of its jobs, run)`` per batch of single pieces, longest first."""
        for batch in single_batches(singles, self.batch_size):
            owners = [owner for _, piece_owners in batch for owner in piece_owners]
            yield len(batch), owners, lambda batch=batch: self._score_singles(batch)

    def _shared_batch(self, shared: int, batch: list):
        """``(jobs, owners of its jobs, run)`` of a batch of shared jobs."""
        return len(batch), group_owners(batch), lambda: self._score_shared(shared, batch)

    def _score_singles(self, batch: list[tuple[Piece, list[int]]]):
        """``(owners, result)`` per piece of a batch, one forward pass, right-padded."""
        width = len(batch[0][0].tokens) - 1
        ids = right_padded([piece.tokens[:-1] for piece, _ in batch], width)
        reads = Reads()
        for row, (piece, owners) in enumerate(batch):
            reads.add(
                owners, 0, row * width + piece.first_target - 1, piece.tokens[piece.first_target :]
            )
        states = self._states(ids.to(self.device))
        return self._read(reads, [states.flatten(0, 1)])

    def _score_shared(self, shared: int, batch: list) -> list:
        """``(owners, result)`` per part of a batch of shared jobs that share their first
        ``shared`` tokens (module docstring): one prefix pass, one remainder pass."""
        prefix = torch.tensor([job[1][0].tokens[:shared] for job in batch], device=self.device)
        rest = [piece.tokens[shared:-1] for _, found, _ in batch for piece in found]
        width = max(map(len, rest))
        if width:
            ids = right_padded(rest, width).to(self.device)
            jobs = [j for j, (_, found, _) in enumerate(batch) for _ in found]
            states = prefix_then_rest(self.decoder, self._cache_argument, prefix, jobs, ids)
            sources = [states[0].flatten(0, 1), states[1].flatten(0, 1)]
        else:
            sources = [
                self.decoder(input_ids=prefix, use_cache=False).last_hidden_state.flatten(0, 1)
            ]
        reads, row = Reads(), 0
        for j, (_, found, owners) in enumerate(batch):
            by_start = defaultdict(list)  # positions before shared - 1 predict prefix tokens
            for piece, piece_owners in zip(found, owners, strict=True):
                by_start[piece.first_target - 1] += piece_owners
            for start, start_owners in sorted(by_start.items()):
                if start < shared - 1:
                    reads.add(
                        start_owners, 0, j * shared + start, found[0].tokens[start + 1 : shared]
                    )
            for piece, piece_owners in zip(found, owners, strict=True):
                first = max(piece.first_target, shared)  # the piece's first own target
                if first == shared:  # predicted by the last prefix position
                    reads.add(piece_owners, 0, j * shared + shared - 1, piece.tokens[shared:][:1])
                    first += 1
                # target t is predicted by position t - 1, remainder row position t - 1 - shared
                reads.add(piece_owners, 1, row * width + first - 1 - shared, piece.tokens[first:])
                row += 1
        return self._read(reads, sources)

    def _states(self, ids: torch.Tensor) -> torch.Tensor:
        """Hidden states (or logits, for a model without a separable output layer)."""
        if self.decoder is not None:
            return self.decoder(input_ids=ids, use_cache=False).last_hidden_state
        return self.model(input_ids=ids, use_cache=False).logits

    def _read(self, reads: Reads, sources: list[torch.Tensor]):
        """``(owners, (sum of log p(target | row), all argmax))`` per part of ``reads``, its rows
        taken from the flattened states ``sources``: the output layer a chunk of rows at a time,
        sums in float64, one transfer back."""
        parts = len(reads.owners)
        sums = torch.zeros(parts, dtype=torch.float64, device=sources[0].device)
        misses = torch.zeros(parts, dtype=torch.long, device=sources[0].device)
        chunk = max(1, LOGIT_ELEMENTS // max(1, self.model.config.vocab_size))
        for source, (rows, tokens, part_of) in reads.rows.items():
            states = sources[source]
            rows, tokens, part_of = (
                torch.tensor(values, device=states.device) for values in (rows, tokens, part_of)
            )
            for start in range(0, len(rows), chunk):
                part = states.index_select(0, rows[start : start + chunk])
                logits = (self.head(part) if self.decoder is not None else part).float()
                wanted, into = tokens[start : start + chunk], part_of[start : start + chunk]
                chosen = logits.gather(-1, wanted[:, None])[:, 0]
                sums.index_add_(0, into, (chosen - torch.logsumexp(logits, dim=-1)).double())
                misses.index_add_(0, into, (logits.argmax(-1) != wanted).long())
        return list(
            zip(reads.owners, zip(sums.tolist(), (misses == 0).tolist(), strict=True), strict=True)
        )


def cache_argument(decoder) -> str:
    """The name under which ``decoder`` takes a key/value cache."""
    parameters = inspect.signature(decoder.forward).parameters if decoder is not None else {}
    return "cache" if "cache" in parameters else "past_key_values"


def prefix_then_rest(decoder, argument: str, prefix, rows: list[int], rest) -> tuple:
    """The hidden states of ``prefix`` (``[jobs, P]`` token ids) and of ``rest`` (``[pieces,
    W]``, right-padded) read after the prefix of job ``rows[i]`` for piece ``i``: one prefix
    pass keeping the key/value cache, the cache expanded to one row per piece, one pass over the
    rest (``argument``: :func:`cache_argument`)."""
    output = decoder(input_ids=prefix, use_cache=True)
    cache = getattr(output, "cache", None) or output.past_key_values
    cache.batch_select_indices(torch.tensor(rows, device=prefix.device))
    more = decoder(input_ids=rest, use_cache=True, **{argument: cache})
    return output.last_hidden_state, more.last_hidden_state


def split_output_layer(model):
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

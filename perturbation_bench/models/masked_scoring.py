"""Masked-LM scoring of pairs: what differs within a pair, masked and read (``dna-mlm``).

Each pair ``(o, p)`` of continuations after the same context (the preset's DNA prefix, usually
none) is scored as follows:

1. Tokenize ``context + o`` and ``context + p`` with the tokenizer's special tokens.
2. Same number of tokens (single-nucleotide and fixed k-mer tokenizers): let ``D`` be the
   positions where the tokens differ. ONE input, ``o``'s tokens with every position of ``D``
   masked, serves both sequences (outside ``D`` they agree). With a float32 log-softmax::

       LL(o) = sum_{i in D} log P(o_i | masked input)
       LL(p) = sum_{i in D} log P(p_i | masked input)

3. Different numbers of tokens (BPE): each sequence's changed span is the smallest token range
   covering every base that differs; each sequence is scored with its own span masked (two
   inputs), summing the log-probs of its own span tokens.
4. An input longer than ``max_length`` tokens is cut to a window of ``max_length`` tokens
   centred on the masked positions; if they do not fit in one window, they are split into runs
   that do, each run scored in its own window centred on it (every masked position is masked in
   every window that contains it, and scored exactly once). Windowing is logged with counts.
5. ``D`` empty (identical sequences): both LLs are 0, a tie, which counts as wrong.
6. Identical inputs once (``dedupe``, default true): masked inputs with the same tokens and the
   same masked positions, from any documents of the run (the three alternates of a saturation
   scan's position, variants sharing a site), are run once and every read of every request is
   taken from that pass. With several processes each process does this for its own documents
   (lm-eval splits documents among processes; duplicates on two processes run on both).
7. Unknown tokens from k-mers holding a non-ACGT base (``N``) are scored like any other token and
   counted (log, and ``unknown_tokens`` in the results' config); an unknown token of A/C/G/T
   alone stops the run (``models/tokens.py``).
8. A pair whose two requests ask one continuation after two contexts (a context that is part of
   the question, ``pairs/requests.asks_continuation``): each request is ONE input with every
   token of the continuation masked, ``LL = sum_{i in continuation} log P(x_i | input)``; an
   input longer than ``max_length`` is refused, never cropped. ``scoring=pll`` does not apply.

With overlapping k-mers (``kmer_overlap``, DNABERT; ``pairs/requests.py``) a changed base lies
in up to ``k`` tokens, and each of them differs: rules 2 and 3 mask every token that covers a
changed base, as DNABERT's pre-training masks ``k`` contiguous tokens, so the masked bases
cannot be read off an unmasked neighbour. This is this package's rule for such models.

So ``LL`` here is a masked-marginal sum over the differing positions: comparable within a pair
(``pairwise_acc``, and ``margin`` across pairs of one model), not with a causal model's LL. A
pair whose differing positions are more than half its tokens (a shuffled element fills most of
its window) has little left unmasked to condition on: such pairs are counted in a warning that
names the pseudo-log-likelihood.

Pseudo-log-likelihood (``scoring="pll"``; Salazar et al. 2020, DART-Eval's masked score): each
sequence on its own, one input per token of the continuation (special tokens and the context's
tokens excluded), that token masked::

    LL(s) = sum_{i in tokens(s)} log P(s_i | s with position i masked)

A sequence of ``T`` tokens costs ``T`` inputs; an input longer than ``max_length`` is the window
of ``max_length`` tokens centred on its masked position (rule 4). Rules 6 and 7 apply as above.
With overlapping k-mers, the ``k`` tokens covering each base are masked in turn (this package's
rule), one input per base ``b``, reading every masked token::

    LL(s) = sum_{bases b} sum_{i in cover(b)} log P(s_i | s with cover(b) masked)
    cover(b) = the tokens i with i <= b <= i + k - 1          (k = 1: the PLL above)

Inputs are batched only with inputs of the same length, so nothing is ever padded: models that
take no attention mask (convolutional GPN, Caduceus) score exactly as they would one at a time.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from functools import partial

import torch
from tqdm import tqdm

from perturbation_bench.errors import OptionsError
from perturbation_bench.models.masked_head import ReadLogits
from perturbation_bench.models.masked_inputs import (
    MaskedInput,
    continuation_inputs,
    covering,
    encode_request,
    encode_texts,
    merge_identical,
    overlap_size,
    token_offsets,
    token_span,
    windows,
)
from perturbation_bench.pairs.changes import changed_span
from perturbation_bench.pairs.requests import asks_continuation

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply


MOSTLY_MASKED = 0.5
"""Masked-marginal pairs whose differing positions exceed this share of their tokens are counted
in a warning that names the PLL."""


class MaskedScorer:
    """Scores pairs of lm-eval requests by the rules of the module docstring."""

    def __init__(
        self,
        model,
        tokenizer,
        device,
        batch_size: int,
        max_length: int,
        dedupe: bool,
        unknown,
        progress: bool = True,
        scoring: str = "marginal",
    ) -> None:
        self.tokenizer, self.device = tokenizer, device
        self.batch_size, self.max_length, self.dedupe = batch_size, max_length, dedupe
        self.unknown, self.progress, self.scoring = unknown, progress, scoring
        self.mostly_masked = 0
        self.read_logits = ReadLogits(model)

    def score(self, requests, pairs: list[tuple[int, int]], totals: list[float], on_pair=None):
        """Add every read of ``pairs`` (indices into ``requests``) to ``totals``, calling
        ``on_pair((first, second))`` as soon as a pair is completely scored."""
        inputs, n_windowed = [], 0
        encoded: dict[str, dict] = {}  # with dedupe, a sequence in several pairs is tokenized once
        if self.dedupe:  # every distinct sequence in one batch call
            texts = (requests[i].args[0] + requests[i].args[1] for pair in pairs for i in pair)
            encode_texts(self.tokenizer, texts, encoded)
        pair_inputs = self._pll_inputs if self.scoring == "pll" else self._pair_inputs
        for first, second in pairs:
            continued = asks_continuation(requests[first])  # rule 8
            make = self._continuation_inputs if continued else pair_inputs
            made, windowed = make(requests, first, second, encoded)
            n_windowed += windowed
            inputs += made
        if self.mostly_masked:
            log.warning(
                "dna-mlm: in %d of %d pairs the differing positions are more than half the "
                "tokens, so little is left unmasked to condition on; scoring=pll in --model_args "
                "scores each sequence by its pseudo-log-likelihood instead",
                self.mostly_masked,
                len(pairs),
            )
        if n_windowed:
            log.warning(
                "dna-mlm: %d of %d pairs are longer than max_length=%d tokens; scored in windows "
                "of max_length tokens centred on their differing positions",
                n_windowed,
                len(requests) // 2,
                self.max_length,
            )
        if self.dedupe:
            distinct = merge_identical(inputs)
            log.info(
                "dna-mlm: %d masked inputs, %d distinct (one forward pass each)",
                len(inputs),
                len(distinct),
            )
            inputs = distinct
        pending = PendingPairs(pairs, inputs)
        done = on_pair or (lambda pair: None)
        for pair in pending.idle():
            done(pair)
        for index, log_prob in self._run(inputs):
            if index is None:  # a batch is done: the pairs it completed
                for pair in pending.done(log_prob):
                    done(pair)
                continue
            totals[index] += log_prob

    def _pair_inputs(
        self, requests, first: int, second: int, encoded: dict
    ) -> tuple[list[MaskedInput], bool]:
        """The masked inputs of one pair (rules 1-4 of the module docstring), and whether the
        pair is longer than ``max_length`` tokens; ``encoded`` keeps the tokenizations made."""
        texts = [requests[i].args[0] + requests[i].args[1] for i in (first, second)]
        encodings = [self._encode(requests[i], encoded) for i in (first, second)]
        ids_o, ids_p = (e["input_ids"] for e in encodings)
        windowed = max(len(ids_o), len(ids_p)) > self.max_length
        if len(ids_o) == len(ids_p):
            masked = [i for i, (a, b) in enumerate(zip(ids_o, ids_p, strict=True)) if a != b]
            self.mostly_masked += len(masked) > MOSTLY_MASKED * len(ids_o)
            reads = {i: [(ids_o[i], first), (ids_p[i], second)] for i in masked}
            return self._windowed(ids_o, masked, reads), windowed
        start, end = changed_span(*texts)  # the texts differ: their tokens do
        inputs = []
        for encoding, index, text in zip(encodings, (first, second), texts, strict=True):
            ids = encoding["input_ids"]
            span = token_span(self._offsets(encoding, text), start, end)
            inputs += self._windowed(ids, span, {i: [(ids[i], index)] for i in span})
        return inputs, windowed

    def _continuation_inputs(self, requests, first: int, second: int, encoded: dict):
        """Rule 8's inputs of one pair (``masked_inputs.continuation_inputs``); none windowed."""
        if self.scoring == "pll":
            raise OptionsError("scoring=pll does not score a continuation after a context")
        encode = partial(self._encode, encoded=encoded)
        pair = (first, second)
        return continuation_inputs(self.tokenizer, requests, pair, encode, self.max_length), False

    def _pll_inputs(
        self, requests, first: int, second: int, encoded: dict
    ) -> tuple[list[MaskedInput], bool]:
        """One input per scored token of each sequence of the pair (the PLL, module docstring),
        and whether a sequence is longer than ``max_length`` tokens."""
        inputs, windowed = [], False
        for index in (first, second):
            context = requests[index].args[0]
            encoding = self._encode(requests[index], encoded)
            ids = encoding["input_ids"]
            windowed |= len(ids) > self.max_length
            specials = encoding["special_tokens_mask"]
            text = context + requests[index].args[1]
            starts = [s for s, _ in self._offsets(encoding, text)] if context else [0] * len(ids)
            scored = [i for i in range(len(ids)) if not specials[i] and starts[i] >= len(context)]
            windows_made: dict[int, list[int]] = {}  # one token list per window start, shared
            for group in covering(scored, overlap_size(requests[index])):
                ((start, _),) = windows(len(ids), group, self.max_length)
                tokens = windows_made.setdefault(start, ids[start : start + self.max_length])
                inputs.append(
                    MaskedInput(
                        tokens,
                        tuple(p - start for p in group),
                        self.tokenizer.mask_token_id,
                        [(p - start, ids[p], index) for p in group],
                    )
                )
        return inputs, windowed

    def _encode(self, request, encoded: dict):
        """:func:`encode_request`, from ``encoded`` with ``dedupe``."""
        return encode_request(
            self.tokenizer, request, self.unknown, encoded if self.dedupe else None
        )

    def _offsets(self, encoding, text: str) -> list[tuple[int, int]]:
        return token_offsets(self.tokenizer, encoding, text)

    def _windowed(
        self, ids: list[int], masked: list[int], reads: dict[int, list[tuple[int, int]]]
    ) -> list[MaskedInput]:
        """Inputs with the ``masked`` positions masked, cut into windows (rule 4), each reading
        ``reads[i]`` (``(token_id, request_index)`` pairs) at the positions ``i`` it scores."""
        out = []
        for start, run in windows(len(ids), masked, self.max_length):
            if not run:  # identical sequences: nothing to score, both LLs stay 0
                continue
            window = ids[start : start + self.max_length]
            in_window = tuple(i - start for i in masked if start <= i < start + len(window))
            out.append(
                MaskedInput(
                    window,
                    in_window,
                    self.tokenizer.mask_token_id,
                    [(i - start, t, r) for i in run for t, r in reads[i]],
                )
            )
        return out

    @torch.no_grad()
    def _run(self, inputs: list[MaskedInput]):
        """Yield ``(request_index, log_prob)`` for every read of every input, batching equal
        lengths (whatever their masked positions), and ``(None, batch)`` after each batch; the
        output layer (where it splits off, ``masked_head.py``) and the log-softmax run at the
        read positions only, the log-softmax in float32, read back once a batch."""
        by_length = defaultdict(list)
        for item in inputs:
            by_length[len(item.ids)].append(item)
        batches = [
            group[i : i + self.batch_size]
            for _, group in sorted(by_length.items())
            for i in range(0, len(group), self.batch_size)
        ]
        if self.scoring == "pll":
            (log.warning if self.batch_size == 1 and len(batches) > 1 else log.info)(
                "dna-mlm: scoring=pll masks each token in turn: %d masked inputs, %d forward "
                "passes at batch_size=%d; a larger --batch_size runs more of them at once "
                "(%d passes at 64)",
                len(inputs),
                len(batches),
                self.batch_size,
                sum(-(-len(group) // 64) for group in by_length.values()),
            )
        for batch in tqdm(
            batches, desc="dna-mlm: masked forward passes", disable=not self.progress
        ):
            ids = torch.tensor([item.ids for item in batch], device=self.device)
            rows, positions, tokens = (
                torch.tensor(values, device=ids.device)
                for values in zip(
                    *((row, p, t) for row, item in enumerate(batch) for p, t, _ in item.reads),
                    strict=True,
                )
            )
            logits = self.read_logits(ids, rows, positions)  # the head at the reads only
            read = torch.log_softmax(logits.float(), dim=-1)
            log_probs = read.gather(-1, tokens[:, None])[:, 0].tolist()  # one transfer a batch
            indices = [index for item in batch for _, _, index in item.reads]
            yield from zip(indices, log_probs, strict=True)
            yield None, batch


class PendingPairs:
    """Which pairs every masked input serves, to tell when a pair is completely scored."""

    def __init__(self, pairs: list[tuple[int, int]], inputs: list[MaskedInput]) -> None:
        pair_of = {}
        for first, second in pairs:
            pair_of[first] = pair_of[second] = (first, second)
        self.serves = {id(item): {pair_of[r] for _, _, r in item.reads} for item in inputs}
        self.waiting = dict.fromkeys(pairs, 0)
        for served in self.serves.values():
            for pair in served:
                self.waiting[pair] += 1

    def idle(self) -> list[tuple[int, int]]:
        """Pairs with nothing to run (identical sequences: both LLs 0)."""
        return [pair for pair, count in self.waiting.items() if count == 0]

    def done(self, batch) -> list[tuple[int, int]]:
        """The pairs this finished ``batch`` of inputs completes."""
        complete = []
        for item in batch:
            for pair in self.serves[id(item)]:
                self.waiting[pair] -= 1
                if self.waiting[pair] == 0:
                    complete.append(pair)
        return complete

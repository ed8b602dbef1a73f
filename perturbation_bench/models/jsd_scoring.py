"""Downstream JSD of single-base variants (``score: jsd``; marin-dna's
``compute_variant_score_bundle``): how far a variant moves a model's predictions of the bases
after it, for ``dna-hf`` (causal) and ``dna-mlm`` (masked).

A variant's reference window ``r`` and alternate window ``a`` are read as the model reads any
sequence, one token per base; ``b`` is the base where they differ. For each base ``j`` after
``b`` (``j = b + 1 .. n - 1``), ``t_j`` is the row of the logits that predicts base ``j``:

- causal (``dna-hf``): the position before base ``j``'s token, the next-base prediction given
  the bases before it (after the variant, from the variant's token to the last but one);
- masked (``dna-mlm``): base ``j``'s own position in the unmasked window, the model's
  reconstruction of it given the whole window (as the nucleotide dependency maps of masked DNA
  models read it: nothing is masked, so each window is one pass).

Over the logits of A, C, G and T alone, in float32::

    p_j = softmax(logits_r[t_j, ACGT])      q_j = softmax(logits_a[t_j, ACGT])
    JSD_j = (KL(p_j || m_j) + KL(q_j || m_j)) / 2,   m_j = (p_j + q_j) / 2
    s = mean over j of JSD_j              (nats, in [0, log 2]; 0 when r = a)

It reads one token per base: a tokenizer without A, C, G and T as single tokens (k-mers), a
sequence that is not one token per base (BPE), a variant that is not one base changed, and a
window longer than the model's ``max_length`` are refused in one line. A variant at its window's
last base (a chromosome's last base) has no base after it: its ``s`` is NaN, counted and named in
the log, and the variant task leaves it out of its ranking metrics as it does an unlabelled one.
Each window is one forward pass, its two windows batched with other pairs of the same length;
with a causal model (``share_prefix``, on by default) the tokens before the variant's, which
the two windows share, are run once and both remainders read them from the key/value cache
(prefixes batched by ``causal_batches.shared_bucket``, as pairs are): a variant at the middle
of its window costs 1.5 windows instead of 2.
The scorer answers the reference request with ``s`` and the alternate with 0, as embedding
scores do (``embedding_scoring.py``): the task's margin is ``s``, with ``rc_average`` its mean
over both strands.
"""

from __future__ import annotations

import logging
import math

import torch
from tqdm import tqdm

from perturbation_bench.arguments import single_base_token_ids
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.causal_batches import shared_bucket
from perturbation_bench.models.causal_scoring import (
    cache_argument,
    prefix_then_rest,
    right_padded,
    split_output_layer,
)
from perturbation_bench.models.tokens import describe_request
from perturbation_bench.pairs.settings import settings_of

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply


def reads_downstream(request) -> bool:
    """Whether a request's task is scored by a score the model computes (``score: jsd``)."""
    settings = settings_of(getattr(request, "doc", None))
    return settings is not None and settings.reading.by_model


def downstream_jsd(logits_ref: torch.Tensor, logits_alt: torch.Tensor, rows, bases) -> float:
    """``s`` of the module docstring from the two windows' logits (tokens x vocabulary),
    ``rows`` the ``t_j`` that predict the bases after the variant, ``bases`` the token ids of
    A, C, G, T."""
    rows = torch.as_tensor(rows, device=logits_ref.device)
    log_p = torch.log_softmax(logits_ref[rows][:, bases].float(), dim=-1)
    log_q = torch.log_softmax(logits_alt[rows][:, bases].float(), dim=-1)
    log_m = torch.logaddexp(log_p, log_q) - math.log(2.0)
    jsd = 0.5 * ((log_p.exp() * (log_p - log_m)).sum(-1) + (log_q.exp() * (log_q - log_m)).sum(-1))
    return float(jsd.mean())


class JSDScorer:
    """Scores a run's variant pairs by downstream JSD (module docstring).

    Args:
        model: the causal or masked LM.
        tokenizer: its tokenizer (A, C, G, T each one token).
        device: where the model runs.
        batch_size: windows per forward pass.
        max_length: the longest window the model reads.
        encode: ``request -> (token ids, positions of its sequence's bases)``, as the model
            reads the request.
        causal: whether logits at a position predict the next token (else the position's own).
        name: the model's name in the progress bar.
        share: (causal) run the tokens before the variant once for both windows.
    """

    def __init__(
        self,
        model,
        tokenizer,
        device,
        batch_size: int,
        max_length: int,
        encode,
        causal: bool,
        name: str,
        share: bool = False,
    ):
        self.model, self.device, self.max_length, self.encode = model, device, max_length, encode
        self.shift, self.name = int(causal), name
        self.decoder, self.head = split_output_layer(model) if causal and share else (None, None)
        if self.decoder is not None and not getattr(model.config, "use_cache", True):
            self.decoder = self.head = None
        self.argument = cache_argument(self.decoder)
        self.batch_size = max(2, batch_size)
        self.bases = single_base_token_ids(tokenizer)

    def scores(self, requests, pairs: list[tuple[int, int]], progress: bool) -> list[float]:
        """``s`` for each pair's reference request, 0 for its alternate and any other."""
        out = [0.0] * len(requests)
        windows = [self._pair(requests, o, p) for o, p in pairs]
        last = [k for k, window in enumerate(windows) if window is None]
        if last:
            log.warning(
                "%s: %d variant(s) are the last base of their window (a chromosome's last base): "
                "no base after them to read, so their jsd is NaN and the ranking metrics leave "
                "them out (first: %s)",
                self.name,
                len(last),
                describe_request(requests[pairs[last[0]][0]]),
            )
        for k in last:
            out[pairs[k][0]] = math.nan
        pairs = [pair for pair, window in zip(pairs, windows, strict=True) if window is not None]
        windows = [window for window in windows if window is not None]
        per_batch, groups = self.batch_size // 2, self._groups(windows)
        log.info(
            "%s: downstream JSD of %d pairs, %d sharing the tokens before their variant (one "
            "prefix pass for both windows)",
            self.name,
            len(pairs),
            sum(len(members) for (shared, _), members in groups.items() if shared),
        )
        batches = [
            (shared, members[i : i + per_batch])
            for (shared, _), members in groups.items()
            for i in range(0, len(members), per_batch)
        ]
        with torch.no_grad():
            for shared, batch in tqdm(
                batches, desc=f"{self.name}: downstream JSD", disable=not progress
            ):
                for k, s in zip(batch, self._batch(windows, shared, batch), strict=True):
                    out[pairs[k][0]] = s
        return out

    def _groups(self, windows) -> dict[tuple[int, int], list[int]]:
        """Pairs batched together: ``(shared prefix, window length) -> pairs``. The windows of a
        causal model share their tokens before the variant's (``shared_bucket`` of them, as
        ``causal_scoring.py`` batches shared prefixes; 0: whole windows)."""
        groups: dict[tuple[int, int], list[int]] = {}
        for k, (ref, _, rows) in enumerate(windows):
            shared = shared_bucket(rows[0]) if self.decoder is not None else 0
            groups.setdefault((shared, 0 if shared else len(ref)), []).append(k)
        return groups

    def _batch(self, windows, shared: int, batch: list[int]) -> list[float]:
        """``s`` of each pair of ``batch``: its two windows in one pass (``shared`` 0), or their
        first ``shared`` tokens once and the two remainders on that key/value cache."""
        if not shared:
            ids = torch.tensor([w for k in batch for w in windows[k][:2]], device=self.device)
            logits = self.model(input_ids=ids).logits
            return [
                downstream_jsd(logits[2 * j], logits[2 * j + 1], windows[k][2], self.bases)
                for j, k in enumerate(batch)
            ]
        prefix = torch.tensor([windows[k][0][:shared] for k in batch], device=self.device)
        rest = [window[shared:-1] for k in batch for window in windows[k][:2]]
        ids = right_padded(rest, max(map(len, rest))).to(self.device)
        rows = [j for j in range(len(batch)) for _ in range(2)]
        _, states = prefix_then_rest(self.decoder, self.argument, prefix, rows, ids)
        out = []
        for j, k in enumerate(batch):
            read = [t - shared for t in windows[k][2]]
            ref, alt = (self.head(states[2 * j + i, read]) for i in (0, 1))
            out.append(downstream_jsd(ref, alt, range(len(read)), self.bases))
        return out

    def _pair(self, requests, original: int, perturbed: int) -> tuple[list, list, list[int]] | None:
        """Both windows' token ids and the rows ``t_j`` (module docstring); None for a variant at
        its window's last base, which has no base after it (its score is NaN).

        Raises:
            OptionsError: not one token per base, not one base changed, or longer than
                ``max_length`` (module docstring).
        """
        (ref, positions), (alt, _) = (self.encode(requests[i]) for i in (original, perturbed))
        what = describe_request(requests[original])
        sequence, other = requests[original].args[1], requests[perturbed].args[1]
        if len(positions) != len(sequence) or len(ref) != len(alt):
            raise OptionsError(
                f"score jsd reads one token per base; {what} has {len(sequence)} bases in "
                f"{len(positions)} tokens (use a single-nucleotide tokenizer, or score llr)"
            )
        changed = [i for i, (a, b) in enumerate(zip(sequence, other, strict=False)) if a != b]
        differ = [t for t, (a, b) in enumerate(zip(ref, alt, strict=True)) if a != b]
        one_base = len(changed) == 1 and differ == [positions[changed[0]]]
        if one_base and changed[0] == len(sequence) - 1:
            return None  # the window's last base: nothing after it to read (NaN, scores())
        if not one_base:
            raise OptionsError(
                f"score jsd reads a single-base variant with bases after it; {what} differs "
                f"at {len(changed)} base(s) and {len(differ)} token(s)"
            )
        if len(ref) > self.max_length:
            raise OptionsError(
                f"score jsd reads whole windows; {what} is {len(ref)} tokens, longer than the "
                f"model's max_length {self.max_length}"
            )
        return ref, alt, [p - self.shift for p in positions[changed[0] + 1 :]]

"""Downstream JSD of single-base variants (``score: jsd``, ``dna-hf``; marin-dna's
``compute_variant_score_bundle``): how far a variant moves a causal model's predictions of the
bases after it.

A variant's reference window ``r`` and alternate window ``a`` are read as the model reads any
sequence (its start token or the DNA prefix, then one token per base); ``d`` is the one token
where they differ and ``L`` their length in tokens. At each position ``t = d .. L - 2`` (the
predictions of the bases after the variant), over the logits of A, C, G and T alone, in
float32::

    p_t = softmax(logits_r[t, ACGT])      q_t = softmax(logits_a[t, ACGT])
    JSD_t = (KL(p_t || m_t) + KL(q_t || m_t)) / 2,   m_t = (p_t + q_t) / 2
    s = mean over t of JSD_t              (nats, in [0, log 2]; 0 when r = a)

It reads one token per base: a tokenizer whose tokens are not single bases (k-mers, BPE), a
variant that is not one token changed, and a window longer than the model's ``max_length`` are
refused in one line. Each window is one forward pass, its two windows batched together with
other pairs of the same length. The scorer answers the reference request with ``s`` and the
alternate with 0, as embedding scores do (``embedding_scoring.py``): the task's margin is ``s``,
with ``rc_average`` its mean over both strands.
"""

from __future__ import annotations

import math

import torch
from tqdm import tqdm

from perturbation_bench.errors import OptionsError
from perturbation_bench.models.tokens import describe_request
from perturbation_bench.pairs.scores import MODEL_SCORES
from perturbation_bench.pairs.settings import settings_of


def reads_downstream(request) -> bool:
    """Whether a request's task is scored by a score the model computes (``score: jsd``)."""
    settings = settings_of(getattr(request, "doc", None))
    return settings is not None and settings.score in MODEL_SCORES


def downstream_jsd(logits_ref: torch.Tensor, logits_alt: torch.Tensor, site: int, bases) -> float:
    """``s`` of the module docstring from the two windows' logits (tokens x vocabulary),
    ``site`` the token where they differ, ``bases`` the token ids of A, C, G, T."""
    log_p = torch.log_softmax(logits_ref[site:-1, bases].float(), dim=-1)
    log_q = torch.log_softmax(logits_alt[site:-1, bases].float(), dim=-1)
    log_m = torch.logaddexp(log_p, log_q) - math.log(2.0)
    jsd = 0.5 * ((log_p.exp() * (log_p - log_m)).sum(-1) + (log_q.exp() * (log_q - log_m)).sum(-1))
    return float(jsd.mean())


class JSDScorer:
    """Scores a run's variant pairs by downstream JSD (module docstring).

    Args:
        model: the causal LM.
        tokenizer: its tokenizer (A, C, G, T each one token).
        device: where the model runs.
        batch_size: windows per forward pass.
        max_length: the longest window the model reads.
        encode: ``request -> token ids`` as the model reads the request's sequence.
    """

    def __init__(self, model, tokenizer, device, batch_size: int, max_length: int, encode):
        self.model, self.device, self.max_length, self.encode = model, device, max_length, encode
        self.batch_size = max(2, batch_size)
        ids = tokenizer.convert_tokens_to_ids(list("ACGT"))
        missing = [
            b for b, i in zip("ACGT", ids, strict=True) if i in (None, tokenizer.unk_token_id)
        ]
        if missing or len(set(ids)) != 4:
            raise OptionsError(
                "score jsd reads next-base distributions: the tokenizer needs A, C, G and T as "
                f"single tokens (a single-nucleotide tokenizer); this one has none for "
                f"{', '.join(missing) or 'each'}"
            )
        self.bases = ids

    def scores(self, requests, pairs: list[tuple[int, int]], progress: bool) -> list[float]:
        """``s`` for each pair's reference request, 0 for its alternate and any other."""
        windows = [self._pair(requests, o, p) for o, p in pairs]
        out = [0.0] * len(requests)
        by_length: dict[int, list[int]] = {}
        for k, (ref, _, _) in enumerate(windows):
            by_length.setdefault(len(ref), []).append(k)
        per_batch = self.batch_size // 2
        batches = [
            members[i : i + per_batch]
            for members in by_length.values()
            for i in range(0, len(members), per_batch)
        ]
        with torch.no_grad():
            for batch in tqdm(batches, desc="dna-hf: downstream JSD", disable=not progress):
                ids = torch.tensor([w for k in batch for w in windows[k][:2]], device=self.device)
                logits = self.model(input_ids=ids).logits
                for j, k in enumerate(batch):
                    site = windows[k][2]
                    s = downstream_jsd(logits[2 * j], logits[2 * j + 1], site, self.bases)
                    out[pairs[k][0]] = s
        return out

    def _pair(self, requests, original: int, perturbed: int) -> tuple[list, list, int]:
        """Both windows' token ids and the one token where they differ."""
        ref, alt = self.encode(requests[original]), self.encode(requests[perturbed])
        what = describe_request(requests[original])
        bases = len(requests[original].args[1])
        if len(ref) - bases not in (0, 1) or len(ref) != len(alt):
            raise OptionsError(
                f"score jsd reads one token per base; {what} has {bases} bases in {len(ref)} "
                "tokens (use a single-nucleotide tokenizer, or score llr)"
            )
        differ = [t for t, (a, b) in enumerate(zip(ref, alt, strict=True)) if a != b]
        if len(differ) != 1 or differ[0] >= len(ref) - 1:
            raise OptionsError(
                f"score jsd reads a single-base variant with bases after it; {what} differs "
                f"at {len(differ)} token(s)"
            )
        if len(ref) > self.max_length:
            raise OptionsError(
                f"score jsd reads whole windows; {what} is {len(ref)} tokens, longer than the "
                f"model's max_length {self.max_length}"
            )
        return ref, alt, differ[0]

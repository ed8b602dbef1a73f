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
sequence that is not one token per base (BPE), a variant that is not one base changed with
bases after it, and a window longer than the model's ``max_length`` are refused in one line.
Each window is one forward pass, its two windows batched with other pairs of the same length.
The scorer answers the reference request with ``s`` and the alternate with 0, as embedding
scores do (``embedding_scoring.py``): the task's margin is ``s``, with ``rc_average`` its mean
over both strands.
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


def downstream_jsd(logits_ref: torch.Tensor, logits_alt: torch.Tensor, rows, bases) -> float:
    """``s`` of the module docstring from the two windows' logits (tokens x vocabulary),
    ``rows`` the ``t_j`` that predict the bases after the variant, ``bases`` the token ids of
    A, C, G, T."""
    rows = torch.as_tensor(rows, dtype=torch.long, device=logits_ref.device)
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
    """

    def __init__(
        self, model, tokenizer, device, batch_size: int, max_length: int, encode, causal: bool, name
    ):
        self.model, self.device, self.max_length, self.encode = model, device, max_length, encode
        self.shift, self.name = int(causal), name
        self.batch_size = max(2, batch_size)
        ids = tokenizer.convert_tokens_to_ids(list("ACGT"))
        missing = [
            b for b, i in zip("ACGT", ids, strict=True) if i in (None, tokenizer.unk_token_id)
        ]
        if missing or len(set(ids)) != 4:
            raise OptionsError(
                "score jsd reads the distributions of single bases: the tokenizer needs A, C, G "
                "and T as single tokens (a single-nucleotide tokenizer); this one has none for "
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
            for batch in tqdm(batches, desc=f"{self.name}: downstream JSD", disable=not progress):
                ids = torch.tensor([w for k in batch for w in windows[k][:2]], device=self.device)
                logits = self.model(input_ids=ids).logits
                for j, k in enumerate(batch):
                    rows = windows[k][2]
                    s = downstream_jsd(logits[2 * j], logits[2 * j + 1], rows, self.bases)
                    out[pairs[k][0]] = s
        return out

    def _pair(self, requests, original: int, perturbed: int) -> tuple[list, list, list[int]]:
        """Both windows' token ids and the rows ``t_j`` (module docstring).

        Raises:
            OptionsError: not one token per base, not one base changed with bases after it, or
                longer than ``max_length`` (module docstring).
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
        if (
            len(changed) != 1
            or changed[0] == len(sequence) - 1
            or differ != [positions[changed[0]]]
        ):
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

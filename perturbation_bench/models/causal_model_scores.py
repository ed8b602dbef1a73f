"""The scores ``dna-hf``'s model computes itself instead of a log-likelihood: embedding distances
(``scoring=embedding``, ``embedding_scoring.py``) and downstream JSD (``score: jsd``,
``jsd_scoring.py``).

Each is one score per pair, answered on the pair's reference request with 0 on its alternate,
``(score, False)`` for lm-eval; under ``--use_cache`` each pair's two answers are kept in the
model's store, keyed with the partner (``result_store.py``). The mixin reads what HFLM and
:class:`~perturbation_bench.models.dna_hf.DnaHFLM` set: the model and tokenizer, the device,
batch size and ``max_length``, the rank, the sharing choice, the unknown-token counter and
``_tally_unknown``.
"""

from __future__ import annotations

from perturbation_bench.models.embedding_scoring import EmbeddingScorer
from perturbation_bench.models.jsd_scoring import JSDScorer
from perturbation_bench.models.result_store import split_stored
from perturbation_bench.pairs.conventions import bare_start
from perturbation_bench.pairs.requests import document_pairs


class CausalModelScores:
    """Embedding and JSD scores for :class:`~perturbation_bench.models.dna_hf.DnaHFLM`."""

    def _embedding_scores(self, requests, disable_tqdm: bool) -> list[tuple[float, bool]]:
        """Rule 7: each pair's embedding score on its reference request, 0 on its alternate."""
        scorer = EmbeddingScorer(
            self.model.base_model,
            self.tokenizer,
            self.device,
            self._whole_batch_size,
            self.max_length,
            self.embedding,
            self._unknown,
        )
        scores = self._scored_by(scorer, requests, disable_tqdm)
        self._tally_unknown(len(requests))
        return scores

    def _jsd_scores(self, requests, disable_tqdm: bool) -> list[tuple[float, bool]]:
        """Each pair's downstream JSD on its reference request, 0 on its alternate
        (``jsd_scoring.py``)."""
        scorer = JSDScorer(
            self.model,
            self.tokenizer,
            self.device,
            self._whole_batch_size,
            self.max_length,
            self._tokens,
            causal=True,
            name="dna-hf",
            share=self._sharing.plans_sharing,  # auto: shared unless measured slower
        )
        return self._scored_by(scorer, requests, disable_tqdm)

    @property
    def _whole_batch_size(self) -> int:
        """The run's batch size, 1 where it is ``auto`` (detected for log-likelihoods only)."""
        return self.batch_size if isinstance(self.batch_size, int) else 1

    def _scored_by(self, scorer, requests, disable_tqdm: bool) -> list[tuple[float, bool]]:
        """``(score, False)`` per request from ``scorer`` (an embedding or JSD scorer: a pair's
        score on its reference request, 0 on its alternate)."""
        totals = [0.0] * len(requests)
        keys, todo = split_stored(
            self._store, requests, document_pairs(requests, strict=True), totals
        )
        if not todo:
            return [(total, False) for total in totals]
        scores = scorer.scores(requests, todo, progress=not disable_tqdm and self.rank == 0)
        for first, second in todo:
            totals[first], totals[second] = scores[first], scores[second]
            if self._store is not None:
                self._store.put(keys[first], (totals[first], totals[second]))
        return [(total, False) for total in totals]

    def _tokens(self, request) -> tuple[list[int], range]:
        """A request's tokens as the model reads them (its start token or context, then its
        sequence; ``start_token: none``: the sequence alone), and the positions of the
        sequence's tokens among them."""
        context, continuation = request.args
        if bare_start(request.doc):
            tokens = self.tok_encode(continuation, add_special_tokens=False)
            return tokens, range(len(tokens))
        if context == "":
            sequence = self.tok_encode(continuation, add_special_tokens=False)
            context_enc = [self.prefix_token_id]
        else:
            context_enc, sequence = self._encode_pair(context, continuation)
        return context_enc + sequence, range(len(context_enc), len(context_enc) + len(sequence))

"""``dna-mlm``: masked language models, scored on what differs within a pair.

Registered with lm-eval as ``--model dna-mlm``; loads any ``AutoModelForMaskedLM``
(Nucleotide Transformer, DNABERT-2, Caduceus, GPN, ...). lm-eval hands it every loglikelihood
request; it groups them per document (two per pair, four with ``rc_average``: each strand's pair
is scored on its own, ``pairs/requests.py``) and scores the pairs with
:class:`~perturbation_bench.models.masked_scoring.MaskedScorer`, whose module states the rules:
by default the positions where a pair differs are masked and read, so ``LL`` is a
masked-marginal sum over them, comparable within a pair, not with a causal model's LL; with
``scoring=pll`` each sequence's pseudo-log-likelihood (one pass per token). A variant task with
``score: jsd`` is scored by :class:`~perturbation_bench.models.jsd_scoring.JSDScorer` on the
unmasked windows.

With lm-eval's ``--use_cache`` whole pairs are kept in a store of their own
(``result_store.py``), written as each pair is scored, so a killed run resumes where it stopped.
"""

from __future__ import annotations

import logging

import torch
from lm_eval.api.model import LM

from perturbation_bench.arguments import load_tokenizer, loading_errors, truth
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.adapter import PackageModel, PairsOnly, registered
from perturbation_bench.models.architecture import check_checkpoint, register_plugin
from perturbation_bench.models.embedding_scoring import (
    EmbeddingScore,
    EmbeddingScorer,
    check_layer,
)
from perturbation_bench.models.jsd_scoring import JSDScorer, reads_downstream
from perturbation_bench.models.masked_inputs import encode_request
from perturbation_bench.models.masked_scoring import MaskedScorer
from perturbation_bench.models.parallel import DataParallel
from perturbation_bench.models.random_weights import from_config, random_seed
from perturbation_bench.models.random_weights import settings as random_settings
from perturbation_bench.models.result_store import split_stored
from perturbation_bench.pairs.requests import document_pairs

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply


@registered
class DnaMaskedLM(PackageModel, PairsOnly, DataParallel, LM):
    """Masked-LM scoring of perturbation-bench pairs; see the module docstring.

    Args (model_args):
        pretrained: model folder or hub id (``AutoModelForMaskedLM``).
        tokenizer: tokenizer folder or hub id (default: ``pretrained``).
        dtype: weight dtype (``float32``, ``bfloat16``, ``float16``, ``auto``); the
            log-softmax is float32 whatever it is.
        device: ``cuda``, ``cuda:1``, ``cpu`` (default, and for CUDA on a machine without it:
            cuda if available, else cpu; ``parallel.usable_device``).
        batch_size: inputs per forward pass (an int; ``auto`` means 8).
        max_length: tokens per input (default: the tokenizer's ``model_max_length``, else the
            config's ``max_position_embeddings``).
        trust_remote_code, revision: as for transformers.
        plugin: a package to import, whose ``register_auto_classes()`` registers its models
            with transformers before loading (GPN: ``plugin=gpn``).
        dedupe: run identical masked inputs once (``masked_scoring.py``, rule 6; default true).
        scoring: ``marginal`` (default: the differing positions masked) or ``pll`` (the
            pseudo-log-likelihood of each sequence), both defined in ``masked_scoring.py``; or
            ``embedding``: variants scored by the distance between the windows' hidden states
            (``embedding_scoring.py``; the model is then loaded as ``AutoModel``, so an encoder
            without an LM head will do).
        distance, pooling, layer: the embedding score (``scoring=embedding`` only).
        random_init, seed: the checkpoint's config and tokenizer with weights drawn afresh
            under ``seed`` (default 42), no weight file read (``random_weights.py``).
    """

    def __init__(
        self,
        pretrained: str,
        tokenizer: str | None = None,
        dtype: str = "float32",
        device: str | None = None,
        batch_size: int | str = 8,
        max_length: int | None = None,
        trust_remote_code: bool = False,
        revision: str | None = None,
        plugin: str | None = None,
        dedupe: bool | str = True,
        scoring: str = "marginal",
        distance: str | None = None,
        pooling: str | None = None,
        layer: str | int | None = None,
        random_init: bool | str = False,
        seed: int | str | None = None,
        **unused,
    ) -> None:
        named = dict(pretrained=pretrained, dedupe=dedupe, scoring=scoring, distance=distance,
                     pooling=pooling, layer=layer, random_init=random_init, seed=seed)  # fmt: skip
        values = self._check_arguments(
            {**unused, **named},
            {"pretrained": pretrained, "tokenizer": tokenizer},
            batch_size,
            trust_remote_code,
            scoring,
        )
        super().__init__()
        from transformers import AutoConfig, AutoModel, AutoModelForMaskedLM

        self.dedupe, self._random_seed = values["dedupe"], values["random_seed"]
        self.scoring, self.embedding = scoring, values["embedding"]
        if plugin:
            register_plugin(plugin)
        check_checkpoint(
            self.model_name,
            {
                "pretrained": pretrained,
                "trust_remote_code": trust_remote_code,
                "revision": revision,
                "scoring": scoring,
            },
        )
        self._device = self._start_data_parallel(device)
        self.batch_size = 8 if str(batch_size).startswith("auto") else int(batch_size)
        trust_remote_code = truth(trust_remote_code, "trust_remote_code")
        self.tokenizer = load_tokenizer(
            {
                "pretrained": pretrained,
                "tokenizer": tokenizer,
                "trust_remote_code": trust_remote_code,
                "revision": revision,
            }
        )
        if self.tokenizer.mask_token_id is None and self.embedding is None:
            raise OptionsError(f"{pretrained}: the tokenizer has no mask token; not a masked LM?")
        auto_class = AutoModelForMaskedLM if self.embedding is None else AutoModel
        dtype = dtype if dtype == "auto" else getattr(torch, dtype)
        with loading_errors(pretrained):
            if self._random_seed is None:
                model = auto_class.from_pretrained(
                    pretrained, trust_remote_code=trust_remote_code, revision=revision, dtype=dtype
                )
            else:
                config = AutoConfig.from_pretrained(
                    pretrained, trust_remote_code=trust_remote_code, revision=revision
                )
                model = from_config(auto_class, config, self._random_seed, dtype, trust_remote_code)
        self.model = model.to(self._device).eval()
        self.max_length = int(max_length or self._default_max_length())
        if self.embedding is not None:
            check_layer(self.embedding, self.model.config)
        self._ready(
            {
                "dtype": self.model.dtype,
                "max_length": self.max_length,
                "dedupe": self.dedupe,
                "plugin": plugin,
                "log_softmax": "float32",
                "scoring": scoring,
                **(self.embedding.settings() if self.embedding else {}),
                **random_settings(self._random_seed),
            }
        )
        if self._world_size > 1:
            log.info("dna-mlm: data parallel, process %d of %d", self._rank, self._world_size)

    @classmethod
    def argument_values(cls, model_args: dict) -> dict:
        """``random_seed`` (``random_weights.random_seed``), ``embedding``
        (``EmbeddingScore.from_arguments``) and ``dedupe`` (``PackageModel.argument_values``)."""
        return {
            "random_seed": random_seed(model_args["random_init"], model_args["seed"]),
            "embedding": EmbeddingScore.of_model_arguments(model_args),
            "dedupe": truth(model_args["dedupe"], "dedupe"),
        }

    def _default_max_length(self) -> int:
        from_tokenizer = getattr(self.tokenizer, "model_max_length", None)
        if from_tokenizer and from_tokenizer < 1_000_000:
            return from_tokenizer
        return getattr(self.model.config, "max_position_embeddings", None) or 512

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """One ``(LL, False)`` per request (``is_greedy`` has no meaning here), in order; each
        pair stored as soon as it is scored when the run has ``--use_cache``."""
        self._provenance.note(requests)
        totals = [0.0] * len(requests)
        store = self._store
        keys, todo = split_stored(store, requests, document_pairs(requests, strict=True), totals)
        if store is not None:
            store.taken("dna-mlm", len(keys) - len(todo), len(keys), "pairs")

        def downstream(index: int) -> bool:
            return self.embedding is None and reads_downstream(requests[index])

        def store_pair(pair: tuple[int, int]) -> None:
            first, second = pair
            store.put(keys[first], (totals[first], totals[second]))

        on_pair = store_pair if store is not None else None
        progress = not disable_tqdm and self._rank == 0
        if self.embedding is not None:
            self._score_by(self._embedding_scorer(), requests, todo, totals, progress, on_pair)
        else:
            masked = [pair for pair in todo if not downstream(pair[0])]
            self._score_masked(requests, masked, totals, disable_tqdm, on_pair)
            jsd = [pair for pair in todo if downstream(pair[0])]
            if jsd:
                self._score_by(self._jsd_scorer(), requests, jsd, totals, progress, on_pair)
        self._unknown_summary = self._unknown.summary(self._world_size)
        if self._rank == 0:
            self._unknown.log(self._unknown_summary, len(requests))
        return [(total, False) for total in totals]

    def _score_by(self, scorer, requests, pairs, totals, progress: bool, on_pair) -> None:
        """Each pair's score from ``scorer`` (an embedding or JSD scorer: the score on the
        reference request, 0 on the alternate) into ``totals``, then ``on_pair(pair)`` for each
        (None: nothing)."""
        scores = scorer.scores(requests, pairs, progress=progress)
        for first, second in pairs:
            totals[first], totals[second] = scores[first], scores[second]
            if on_pair is not None:
                on_pair((first, second))

    def _embedding_scorer(self) -> EmbeddingScorer:
        """The embedding distances of ``scoring=embedding`` (``embedding_scoring.py``)."""
        return EmbeddingScorer(
            self.model,
            self.tokenizer,
            self._device,
            self.batch_size,
            self.max_length,
            self.embedding,
            self._unknown,
        )

    def _jsd_scorer(self) -> JSDScorer:
        """The downstream JSD of ``score: jsd`` (``jsd_scoring.py``), read off unmasked windows."""
        return JSDScorer(
            self.model,
            self.tokenizer,
            self._device,
            self.batch_size,
            self.max_length,
            self._tokens,
            causal=False,
            name="dna-mlm",
        )

    def _tokens(self, request) -> tuple[list[int], list[int]]:
        """A request's token ids with the tokenizer's special tokens, and the positions of its
        sequence's tokens (not special, not the context's)."""
        encoding = encode_request(self.tokenizer, request, self._unknown)
        context = request.args[0]
        skip = len(self.tokenizer(context, add_special_tokens=False)["input_ids"]) if context else 0
        own = [i for i, special in enumerate(encoding["special_tokens_mask"]) if not special]
        return encoding["input_ids"], own[skip:]

    def _score_masked(self, requests, pairs, totals, disable_tqdm: bool, on_pair) -> None:
        """Masked marginals or PLLs of each pair (``masked_scoring.py``) into ``totals``, calling
        ``on_pair(pair)`` as each pair is complete (None: nothing)."""
        scorer = MaskedScorer(
            self.model,
            self.tokenizer,
            self._device,
            self.batch_size,
            self.max_length,
            self.dedupe,
            self._unknown,
            progress=not disable_tqdm and self._rank == 0,
            scoring=self.scoring,
        )
        scorer.score(requests, pairs, totals, on_pair)

    def get_model_info(self) -> dict:
        """What lm-eval records about the model in the results' config."""
        return {
            "model_dtype": str(self.model.dtype),
            "model_num_parameters": self.model.num_parameters(),
            "max_length": self.max_length,
            "unknown_tokens": self._unknown_summary,
            **self._provenance.info(),
        }

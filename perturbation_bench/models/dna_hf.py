"""``dna-hf``: lm-eval's HFLM, made exact, data-parallel everywhere, and able to score long windows.

Registered with lm-eval as ``--model dna-hf``. It reuses HFLM's loading, tokenization and
data-parallel set-up, and scores with :class:`~perturbation_bench.models.causal_scoring.CausalScorer`:

1. Exact sums: each target's log-probability in float32 whatever the weight dtype, the sum in
   float64 (~8,000 log-probs near -10,000 keep float32's resolution, not bf16's 64 nats).
2. Data parallel on any device (``accelerate launch``, ``torchrun``; gloo on CPU): each process
   scores its share of the documents and rank 0 reports; the rank is the *global* process index,
   so multi-node launches shard correctly (HFLM's local index repeats on every node).
3. Long windows: a request whose tokens do not fit in ``max_length`` is cut into overlapping
   windows. Window ``w`` scores the continuation tokens ``[t_w, e_w)`` from the inputs
   ``tokens[max(0, e_w - 1 - max_length) : e_w - 1]``; consecutive windows advance by
   ``window_stride`` scored tokens (default ``max_length // 2``), so every continuation token is
   scored exactly once and sees at least ``max_length + 1 - window_stride`` tokens of context
   (all of it inside the first window). ``LL = sum over windows``. A request that fits is one
   window equal to the request itself.
4. Guards: unknown tokens of k-mers holding ``N`` are scored and counted (``unknown_tokens`` in
   the results); an unknown token of A/C/G/T alone stops the run (``models/tokens.py``).
   ``add_bos_token`` defaults to False, so a literal DNA prefix (``<dna>``, ``<s>``) is the first
   token as in the reference scorer (an empty context starts from the ``prefix_token_id``/BOS,
   unless ``start_token: none``: the sequence's first token starts it, unscored); True with a
   prefix logs a warning. Bad model arguments are one-line errors before any weight is read.
5. Shared computation (``share_prefix``, default ``auto``): a pair's two sequences share every
   token before the change; that prefix is computed once and reused through the key/value cache
   when that pays, and identical sliding windows are scored once (``causal_plan.py``). ``auto``
   times a shared batch both ways and keeps the faster (``sharing_choice.py``); ``true`` shares
   where the cost model predicts a gain, ``false`` never. A request whose context is part of the question is never cut into windows
   (past ``max_length`` it is refused). With ``dedupe`` (default true) identical requests are
   scored once across documents, and the pairs that share one form a group (a reference window
   and its alternates) whose common prefix runs once; so do the comparisons of one document on
   one strand (``pairs/requests.comparison_links``). Each process does this for its own
   documents. Only the targets' log-probabilities are computed, in float32, a chunk at a time.
6. The windowing and the rank layout are logged once per run.
7. ``scoring=embedding`` (``distance``, ``pooling``, ``layer``) scores variants by the distance
   between the windows' hidden states of the LM's backbone (``embedding_scoring.py``); it and
   downstream JSD go through ``causal_model_scores.py``.
8. ``random_init=true`` (``seed``, default 42): the checkpoint's config and tokenizer with
   weights drawn afresh, no weight file read (``random_weights.py``).
"""

from __future__ import annotations

import logging

import torch
from lm_eval.models.huggingface import HFLM

from perturbation_bench.arguments import loading_errors, truth
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.adapter import PackageModel, registered
from perturbation_bench.models.architecture import check_checkpoint
from perturbation_bench.models.causal_model_scores import CausalModelScores
from perturbation_bench.models.causal_plan import Piece, check_stride, token_windows
from perturbation_bench.models.causal_scoring import CausalScorer
from perturbation_bench.models.document_cache import DocumentCache
from perturbation_bench.models.embedding_scoring import (
    EmbeddingScore,
    check_layer,
)
from perturbation_bench.models.jsd_scoring import reads_downstream
from perturbation_bench.models.parallel import join_process_group, use_global_rank
from perturbation_bench.models.random_weights import RandomWeightsHF, random_seed
from perturbation_bench.models.random_weights import settings as random_settings
from perturbation_bench.models.sharing_choice import SharingChoice, sharing_mode
from perturbation_bench.models.tokens import describe_request, formatting_setting, unknown_tokens
from perturbation_bench.pairs.conventions import bare_start
from perturbation_bench.pairs.requests import (
    comparison_links,
    document_pairs,
    refuse_cropped_context,
)

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply

Request = tuple  # HFLM's ((context, continuation), context_enc, continuation_enc)


@registered
class DnaHFLM(CausalModelScores, RandomWeightsHF, PackageModel, HFLM):
    """HFLM for DNA causal LMs; see the module docstring for what differs.

    Args (model_args, on top of HFLM's):
        window_stride: scored tokens per sliding window after the first (default
            ``max_length // 2``).
        share_prefix: compute what a pair's sequences share once: ``auto`` (default: where
            measured faster), true or false.
        dedupe: score identical requests once, across documents, and share one prefix pass
            among every sequence that starts with it (default true).
        scoring: ``likelihood`` (default) or ``embedding`` (rule 7 of the module docstring).
        distance, pooling, layer: the embedding score (``scoring=embedding`` only).
        random_init, seed: weights drawn afresh under ``seed`` (rule 8 of the module docstring).
    """

    def __init__(
        self,
        *args,
        window_stride: int | None = None,
        share_prefix: bool | str = "auto",
        dedupe: bool | str = True,
        scoring: str = "likelihood",
        distance: str | None = None,
        pooling: str | None = None,
        layer: str | int | None = None,
        random_init: bool | str = False,
        seed: int | str | None = None,
        **kwargs,
    ) -> None:
        pretrained = kwargs.get("pretrained", args[0] if args else None)
        named = dict(window_stride=window_stride, share_prefix=share_prefix, dedupe=dedupe,
                     distance=distance, pooling=pooling, layer=layer, random_init=random_init,
                     seed=seed, scoring=scoring, pretrained=pretrained)  # fmt: skip
        values = self._check_arguments(
            {**kwargs, **named},
            {"pretrained": pretrained, "tokenizer": kwargs.get("tokenizer")},
            kwargs.get("batch_size", 1),
            kwargs.get("trust_remote_code"),
            scoring,
        )
        check_checkpoint(self.model_name, {**kwargs, "pretrained": pretrained, "scoring": scoring})
        self._random_seed, self.embedding = values["random_seed"], values["embedding"]
        self.share_prefix, self.dedupe = values["share_prefix"], values["dedupe"]
        self._sharing = SharingChoice(self.share_prefix)
        self._pairs = self._instances = self._encodings = None  # during one loglikelihood call
        kwargs.setdefault("add_bos_token", False)
        join_process_group(kwargs.get("device"))  # HFLM's Accelerator() then joins it
        with loading_errors(pretrained):
            super().__init__(*args, **{**kwargs, "softmax_dtype": "float32"})  # argument_values
        use_global_rank(self, kwargs, "dna-hf")
        self.window_stride = window_stride or max(1, self.max_length // 2)
        token_windows(2, 1, self.max_length, self.window_stride)  # validates the stride early
        if self.embedding is not None:
            check_layer(self.embedding, self.model.config)
        self._windowing_logged = False
        self._bos_warned = False
        self._ready(
            {
                "dtype": self.model.dtype,
                "max_length": self.max_length,
                "add_bos_token": self.add_bos_token,
                "share_prefix": self.share_prefix,
                "dedupe": self.dedupe,
                "window_stride": self.window_stride,
                "log_softmax": "float32",
                **(self.embedding.settings() if self.embedding else {}),
                **random_settings(self._random_seed),
            }
        )

    @classmethod
    def argument_values(cls, model_args: dict) -> dict:
        """``random_seed`` (``random_weights.random_seed``), ``embedding``
        (``EmbeddingScore.from_arguments``), ``share_prefix`` (``sharing_choice.sharing_mode``),
        ``dedupe``; ``window_stride`` a whole number >= 1 and ``softmax_dtype`` float32 if given
        (``PackageModel.argument_values``)."""
        softmax = model_args.get("softmax_dtype")
        check_stride(model_args["window_stride"])
        if softmax not in (None, "float32", torch.float32):
            raise OptionsError(
                f"dna-hf always takes the log-softmax in float32; softmax_dtype={softmax!r} "
                "is not supported (leave it out)"
            )
        return {
            "random_seed": random_seed(model_args["random_init"], model_args["seed"], model_args),
            "embedding": EmbeddingScore.of_model_arguments(model_args),
            "share_prefix": sharing_mode(model_args["share_prefix"]),
            "dedupe": truth(model_args["dedupe"], "dedupe"),
        }

    def _loglikelihood_tokens(
        self, requests: list[Request], disable_tqdm: bool = False, override_bs=None
    ):
        """Score ``requests``, splitting those that do not fit into windows (module docstring)."""
        instances = self._instances if self._pairs_fit(requests) else [None] * len(requests)
        self._check_tokens(requests, instances)
        pieces, n_windowed = [], 0
        for (_, context_enc, continuation_enc), instance in zip(requests, instances, strict=True):
            tokens, first = context_enc + continuation_enc, len(context_enc)
            if instance is not None and bare_start(instance.doc):
                tokens, first = continuation_enc, 1
                if len(tokens) < 2:
                    raise OptionsError(
                        f"start_token 'none' leaves the first token of a sequence unscored; "
                        f"{describe_request(instance)} has a sequence of {len(tokens)} token(s)"
                    )
            if instance is not None:  # the model reads every token but the last
                refuse_cropped_context(instance, len(tokens) - 1, self.max_length, "dna-hf")
            windows = token_windows(len(tokens), first, self.max_length, self.window_stride)
            n_windowed += len(windows) > 1
            pieces.append(
                [Piece(tuple(tokens[start:end]), target - start) for start, target, end in windows]
            )
        pairs = self._pairs if self._pairs_fit(requests) else []
        self._pairs = self._instances = None
        log.info(
            "dna-hf process %d of %d: %d loglikelihood requests",
            self.rank,
            self.world_size,
            len(requests),
        )
        if n_windowed:
            self._log_windowing(n_windowed, len(requests))
        store = self._store
        on_complete = DocumentCache(store, requests, instances).complete if store else None
        return self._scorer(disable_tqdm or self.rank != 0).score(pieces, pairs, on_complete)

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        """Note which requests pair up per document (for sharing), then score as HFLM does; the
        documents of a task scored by downstream JSD by :meth:`_jsd_scores`."""
        self._provenance.note(requests)
        if self.embedding is not None:
            return self._embedding_scores(requests, disable_tqdm)
        downstream = [reads_downstream(request) for request in requests]
        rest = [r for r, jsd in zip(requests, downstream, strict=True) if not jsd]
        scored = iter(
            self._stored_or_computed(
                rest, lambda todo: self._likelihoods(todo, disable_tqdm), stores_itself=True
            )
        )
        jsd = [r for r, reads in zip(requests, downstream, strict=True) if reads]
        by_jsd = iter(self._jsd_scores(jsd, disable_tqdm) if jsd else [])
        scores = [next(by_jsd) if reads else next(scored) for reads in downstream]
        self._tally_unknown(len(requests))
        return scores

    def _likelihoods(self, requests, disable_tqdm: bool) -> list[tuple[float, bool]]:
        """HFLM's scoring of ``requests`` through :meth:`_loglikelihood_tokens`, with the
        requests that pair up per document noted for sharing."""
        if not requests:
            if self._sharing.undecided:  # every process takes part in auto's choice
                self._sharing.settle()
            return []
        sharing = self._sharing.plans_sharing or self.dedupe
        self._pairs = (
            document_pairs(requests, strict=False) + comparison_links(requests) if sharing else []
        )
        self._instances = requests
        self._encodings = {}
        try:
            return super().loglikelihood(requests, disable_tqdm=disable_tqdm)
        finally:
            self._encodings = None

    def _tally_unknown(self, n_requests: int) -> None:
        """The run's unknown tokens (``models/tokens.py``), gathered from every process and
        logged on rank 0 (lm-eval calls every rank: under ``--use_cache`` its own entries are
        cleared and the model serves what its store holds, ``result_store.py``)."""
        self._unknown_summary = self._unknown.summary(self.world_size)
        if self.rank == 0:
            self._unknown.log(self._unknown_summary, n_requests)

    def tok_encode(self, string: str, add_special_tokens=None, left_truncate_len=None, **kwargs):
        """HFLM's encoding of ``string``; during :meth:`loglikelihood` each distinct string is
        encoded once (a saturation scan's reference window is asked for by its three alternates,
        the DNA prefix by every request)."""
        if self._encodings is None or kwargs:
            return super().tok_encode(string, add_special_tokens, left_truncate_len, **kwargs)
        key = (string, add_special_tokens, left_truncate_len)
        if key not in self._encodings:
            self._encodings[key] = super().tok_encode(string, add_special_tokens, left_truncate_len)
        return list(self._encodings[key])

    def get_model_info(self) -> dict:
        """HFLM's model information, plus the unknown tokens scored (``models/tokens.py``) and
        the provenance (``models/provenance.py``), with ``share_prefix=auto``'s measured choice."""
        return {
            **super().get_model_info(),
            "unknown_tokens": self._unknown_summary,
            **self._provenance.info(self._sharing.record()),
        }

    def _pairs_fit(self, requests) -> bool:
        """Whether the pairs and instances noted by :meth:`loglikelihood` index these requests."""
        return self._instances is not None and len(self._instances) == len(requests)

    def _scorer(self, quiet: bool) -> CausalScorer:
        """The scorer at the run's batch size; ``auto`` is detected once per model (lm-eval's
        detection at ``max_length``), not again at every call."""
        batch_size = self.batch_size
        if not isinstance(batch_size, int):
            if not str(batch_size).startswith("auto"):
                batch_size = 1
            elif getattr(self, "_auto_batch_size", None) is None:
                self._auto_batch_size = batch_size = int(self._detect_batch_size())
            else:
                batch_size = self._auto_batch_size
        return CausalScorer(
            self.model,
            self.device,
            batch_size,
            share=self._sharing,
            progress=not quiet,
            dedupe=self.dedupe,
        )

    def _check_tokens(self, requests: list[Request], instances: list) -> None:
        """Count unknown tokens from non-ACGT k-mers, stop on others (``models/tokens.py``);
        warn once about BOS before a literal prefix."""
        for ((context, continuation), _, continuation_enc), instance in zip(
            requests, instances, strict=True
        ):
            setting = formatting_setting(instance.doc) if instance is not None else ""
            count = unknown_tokens(self.tokenizer, continuation, continuation_enc, setting=setting)
            if instance is not None:
                self._unknown.add(instance, count)
            if context and self.add_bos_token and not self._bos_warned:
                self._bos_warned = True
                log.warning(
                    "dna-hf: add_bos_token=True puts the BOS token before the DNA prefix %r; the "
                    "reference scorer starts from the prefix itself (leave add_bos_token out)",
                    context,
                )

    def _log_windowing(self, n_windowed: int, n_requests: int) -> None:
        if self._windowing_logged:
            return
        self._windowing_logged = True
        log.warning(
            "dna-hf: %d of %d sequences need more than max_length=%d tokens; scoring them with "
            "sliding windows (stride %d: every token scored once, with at least %d tokens of context)",
            n_windowed,
            n_requests,
            self.max_length,
            self.window_stride,
            self.max_length + 1 - self.window_stride,
        )

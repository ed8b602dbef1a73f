"""Embedding-distance scores of variants (``scoring=embedding``, ``dna-hf`` and ``dna-mlm``).

A variant's pair, reference window ``r`` and alternate window ``a``, is scored by how far the
model's hidden states move between them (the zero-shot scores of TraitGym, gpn, BEND and
Nucleotide Transformer):

1. Each window's ``context + continuation`` is tokenized with the tokenizer's special tokens
   (as ``masked_scoring.py`` does) and run through the model's backbone (no LM head); ``H``
   (tokens x D) is the hidden states of ``layer``: ``last`` (the backbone's
   ``last_hidden_state``) or ``K``, an index into its ``hidden_states`` (0 = the embeddings).
2. ``pooling`` makes ``R`` and ``A`` of the two windows' ``H``:

   ``flatten``  ``H`` itself, every token, special tokens included (gpn's and TraitGym's rule;
                the two windows must tokenize to the same number of tokens);
   ``mean``     the mean of ``H`` over the window's DNA tokens, special tokens and the DNA
                prefix excluded (Nucleotide Transformer's);
   ``variant``  the row of ``H`` of the one token covering the first base where the two
                windows differ, each window its own token (BEND's).

3. ``distance``, over every element of ``R`` and ``A``, in float64:

   ``euclidean``, ``l2``  ``||R - A||``          ``l1``  ``sum |R - A|``
   ``cosine``             ``1 - <R, A> / (||R|| ||A||)``
   ``inner_product``      ``<R, A>``

4. The score ``s`` is the distance (TraitGym's ``Embeddings.plus.<feature>``), or ``-<R, A>``
   for ``inner_product`` (``Embeddings.minus.inner_product``), so a larger ``s`` is a more
   damaging variant, as the margin ``LL(ref) - LL(alt)`` is.

lm-eval asks one log-likelihood per window, so the scorer answers each strand's reference
request with ``s`` and its alternate with 0: the task's margin is ``s``, and with
``rc_average`` the mean of both strands' ``s`` (TraitGym's). A distance has no direction, so
the paired tasks refuse this scoring (``pairs/conventions.check_model``).

Work and memory: a window is run once however many pairs hold it (pairs are taken in order of
their reference window, so a reference and its alternates meet in one batch of pairs); windows
of equal token count are batched, nothing is padded. A batch of ``batch_size`` pairs holds its
windows' ``H`` and drops them when its scores are made, so no tokens x D matrix outlives its
batch; ``mean`` and ``variant`` keep only each window's pooled vector, for the whole run.
``layer=K`` runs one window per forward pass, since transformers returns every layer's states
at once: at most one window's states of every layer exist at a time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch
from tqdm import tqdm

from perturbation_bench.errors import DataValidationError, OptionsError
from perturbation_bench.models.masked_inputs import encode_request, token_offsets, token_span
from perturbation_bench.models.tokens import describe_request
from perturbation_bench.wording import agree

log = logging.getLogger(f"lm_eval.{__name__}")  # lm-eval's handler and --verbosity apply

DISTANCES = {  # distance -> (TraitGym's feature name, sign of the score)
    "euclidean": ("euclidean_distance", "plus"),
    "l2": ("l2_distance", "plus"),
    "l1": ("l1_distance", "plus"),
    "cosine": ("cosine_distance", "plus"),
    "inner_product": ("inner_product", "minus"),
}
POOLINGS = ("flatten", "mean", "variant")
EMBEDDING_ARGUMENTS = ("distance", "pooling", "layer")
"""The model arguments of ``scoring=embedding``."""


@dataclass(frozen=True)
class EmbeddingScore:
    """One embedding score: its distance, pooling and layer (module docstring)."""

    distance: str
    pooling: str
    layer: str | int = "last"

    @classmethod
    def of_model_arguments(cls, model_args) -> EmbeddingScore | None:
        """:meth:`from_arguments` of a model's ``scoring`` and :data:`EMBEDDING_ARGUMENTS`
        (every one present in ``model_args``, None where not given)."""
        return cls.from_arguments(
            model_args["scoring"], *(model_args[name] for name in EMBEDDING_ARGUMENTS)
        )

    @classmethod
    def from_arguments(cls, scoring: str, distance=None, pooling=None, layer=None):
        """The score the model arguments ask for; None unless ``scoring`` is ``embedding``.

        Raises:
            OptionsError: ``distance``/``pooling``/``layer`` without ``scoring=embedding``, or
                one missing or not one of its choices.
        """
        given = {"distance": distance, "pooling": pooling, "layer": layer}
        if scoring != "embedding":
            extra = [name for name, value in given.items() if value is not None]
            if extra:
                raise OptionsError(
                    f"{', '.join(extra)} {agree(len(extra), 'applies', 'apply')} to "
                    f"scoring=embedding only (scoring={scoring})"
                )
            return None
        for name, value, choices in (
            ("distance", distance, tuple(DISTANCES)),
            ("pooling", pooling, POOLINGS),
        ):
            if value not in choices:
                raise OptionsError(
                    f"scoring=embedding needs {name}= one of {', '.join(choices)}, got "
                    f"{'nothing' if value is None else repr(value)}"
                )
        return cls(distance, pooling, _layer(layer))

    @property
    def name(self) -> str:
        """The score's name as TraitGym writes it, ``Embeddings.plus.euclidean_distance``, with
        the pooling and layer when they are not flatten and last."""
        feature, sign = DISTANCES[self.distance]
        base = f"Embeddings.{sign}.{feature}"
        if (self.pooling, self.layer) == ("flatten", "last"):
            return base
        return f"{base}[pooling={self.pooling},layer={self.layer}]"

    def settings(self) -> dict:
        """What the results file records of the score."""
        return {"scoring": "embedding", "embedding_score": self.name, **vars(self)}


def _layer(value) -> str | int:
    if value is None or value == "last":
        return "last"
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise OptionsError(
            f"layer must be last or a whole number K >= 0 (0 = the embeddings, K = the output of "
            f"the K-th layer), got {value!r}"
        )
    return int(value)


def check_layer(score: EmbeddingScore, config) -> None:
    """Refuse a layer index the model's config says it does not have (``num_hidden_layers + 1``
    hidden states, 0 to ``num_hidden_layers``); a config without the count is checked at the
    first forward pass. ``perturbation-bench check`` runs it on the config alone, before any
    weight is read."""
    layers = getattr(config, "num_hidden_layers", None)
    if score.layer != "last" and layers is not None and not 0 <= score.layer <= layers:
        raise OptionsError(
            f"layer={score.layer}: the model has {layers + 1} hidden states (0 = the embeddings "
            f"... {layers} = the last layer)"
        )


def signed_distance(reference: torch.Tensor, alternate: torch.Tensor, distance: str) -> float:
    """``s`` of the module docstring (steps 3 and 4) for two pooled matrices of equal shape: the
    distance, with the sign :data:`DISTANCES` gives it."""
    r, a = reference.double().flatten(), alternate.double().flatten()
    if distance in ("euclidean", "l2"):
        value = torch.linalg.vector_norm(r - a)
    elif distance == "l1":
        value = (r - a).abs().sum()
    elif distance == "cosine":
        value = 1 - (r @ a) / (torch.linalg.vector_norm(r) * torch.linalg.vector_norm(a))
    else:
        value = r @ a
    return -float(value) if DISTANCES[distance][1] == "minus" else float(value)


class EmbeddingScorer:
    """Scores variant pairs of lm-eval requests by the rules of the module docstring."""

    def __init__(
        self, backbone, tokenizer, device, batch_size: int, max_length: int, score, unknown
    ) -> None:
        self.backbone, self.tokenizer, self.device = backbone, tokenizer, device
        self.batch_size, self.max_length, self.score = batch_size, max_length, score
        self.unknown = unknown
        self.forward_passes = 0

    def scores(self, requests, pairs: list[tuple[int, int]], progress: bool = True) -> list[float]:
        """One value per request: ``s`` for each pair's reference request, 0 for its alternate
        (and for any request in no pair)."""
        totals = [0.0] * len(requests)
        encoded: dict = {}
        pooled: dict = {}  # mean/variant: a window's pooled vector, kept for the run
        ordered = sorted(pairs, key=lambda pair: requests[pair[0]].args)
        bar = tqdm(total=len(ordered), desc="embedding distances", disable=not progress)
        for start in range(0, len(ordered), self.batch_size):
            batch = ordered[start : start + self.batch_size]
            views = {}
            for first, second in batch:
                views[first], views[second] = self._views(requests, first, second, encoded)
            states = self._pooled([view for view in views.values() if view[0] not in pooled])
            if self.score.pooling != "flatten":
                pooled.update(states)
                states = pooled
            for first, second in batch:
                totals[first] = signed_distance(
                    states[views[first][0]], states[views[second][0]], self.score.distance
                )
            bar.update(len(batch))
        bar.close()
        log.info(
            "embedding scoring: %d pairs, %d windows run (%d forward passes)",
            len(pairs),
            len({requests[i].args for pair in pairs for i in pair}),
            self.forward_passes,
        )
        return totals

    def _views(self, requests, first: int, second: int, encoded: dict):
        """For both windows of a pair: ``(key, ids, rows)``, ``rows`` the token rows pooled
        (None: every row), ``key`` what makes two views one."""
        encodings = [
            encode_request(self.tokenizer, requests[i], self.unknown, encoded)
            for i in (first, second)
        ]
        texts = [requests[i].args[0] + requests[i].args[1] for i in (first, second)]
        ids = [list(e["input_ids"]) for e in encodings]
        for index, window in zip((first, second), ids, strict=True):
            if len(window) > self.max_length:
                raise DataValidationError(
                    f"{describe_request(requests[index])}: {len(window)} tokens, more than the "
                    f"model's max_length={self.max_length}; an embedding is taken of the whole "
                    "window (build shorter windows)"
                )
        if self.score.pooling == "flatten":
            if len(ids[0]) != len(ids[1]):
                raise DataValidationError(
                    f"{describe_request(requests[first])}: the windows tokenize to {len(ids[0])} "
                    f"and {len(ids[1])} tokens; pooling=flatten compares them token by token "
                    "(use pooling=mean or pooling=variant)"
                )
            return [(text, window, None) for text, window in zip(texts, ids, strict=True)]
        context = len(requests[first].args[0])
        if self.score.pooling == "mean":
            return [
                (
                    text,
                    window,
                    tuple(token_span(token_offsets(self.tokenizer, e, text), context, len(text))),
                )
                for text, window, e in zip(texts, ids, encodings, strict=True)
            ]
        base = _first_difference(texts[0], texts[1], requests[first])
        views = []
        for text, window, encoding in zip(texts, ids, encodings, strict=True):
            rows = token_span(token_offsets(self.tokenizer, encoding, text), base, base + 1)
            if len(rows) != 1:
                raise OptionsError(
                    f"pooling=variant takes the one token covering the variant's base; in "
                    f"{describe_request(requests[first])} {len(rows)} tokens cover it "
                    "(overlapping k-mers: use pooling=mean or pooling=flatten)"
                )
            views.append(((text, base), window, tuple(rows)))
        return views

    def _pooled(self, views) -> dict:
        """``key -> pooled matrix`` of distinct views, windows of equal length batched."""
        distinct = {}
        for key, ids, rows in views:
            distinct.setdefault(key, (ids, rows))
        by_length: dict[int, list] = {}
        for key, (ids, rows) in distinct.items():
            by_length.setdefault(len(ids), []).append((key, ids, rows))
        per_pass = 1 if self.score.layer != "last" else self.batch_size
        out = {}
        for group in by_length.values():
            for start in range(0, len(group), per_pass):
                chunk = group[start : start + per_pass]
                states = self._hidden([ids for _, ids, _ in chunk])
                for (key, _, rows), matrix in zip(chunk, states, strict=True):
                    out[key] = matrix if rows is None else matrix[list(rows)].double().mean(dim=0)
        return out

    @torch.no_grad()
    def _hidden(self, windows: list[list[int]]) -> torch.Tensor:
        """The ``layer`` hidden states of equal-length token windows (batch x tokens x D)."""
        ids = torch.tensor(windows, device=self.device)
        self.forward_passes += 1
        if self.score.layer == "last":
            states = getattr(self.backbone(input_ids=ids), "last_hidden_state", None)
            if states is not None:
                return states
        hidden = self.backbone(input_ids=ids, output_hidden_states=True).hidden_states
        layer = -1 if self.score.layer == "last" else self.score.layer
        if not -len(hidden) <= layer < len(hidden):
            raise OptionsError(
                f"layer={layer}: the model has {len(hidden)} hidden states (0 = the embeddings)"
            )
        return hidden[layer]


def _first_difference(reference: str, alternate: str, request) -> int:
    """The first character where two windows' texts differ (the variant's base)."""
    for index, (r, a) in enumerate(zip(reference, alternate, strict=True)):
        if r != a:
            return index
    if len(reference) != len(alternate):
        return min(len(reference), len(alternate))
    raise DataValidationError(
        f"{describe_request(request)}: the two windows are identical, so no base tells where "
        "the variant is (pooling=variant)"
    )

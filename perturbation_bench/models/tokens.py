"""Unknown tokens, shared by the model classes: scored where the data holds them, refused where
the tokenizer does not fit.

A tokenizer's unknown token has a log-probability like any other token, and a reference scorer
simply scores it. Two causes are told apart, by the characters each unknown token covers:

- a k-mer holding a base other than A/C/G/T (``N`` in an assembly gap, an IUPAC code): the data
  really holds something the vocabulary has no word for. Such tokens are scored and counted
  (:class:`UnknownTokenCounter`: pairs and tokens affected, the first pair), and the run goes on;
- a k-mer of A/C/G/T alone (a trailing partial k-mer, a tokenizer of another k): the tokenizer or
  preset does not fit the data, every such pair would score noise, and the run stops with a
  :class:`TokenizationError` naming the preset and the k-mer.

With a fast tokenizer the characters come from its offsets. A slow tokenizer gives none; then
the sequence is tokenized again with every non-ACGT base read as ``A``, and an unknown token that
remains comes from A/C/G/T alone.

Overlapping k-mers (``kmer_overlap``, the ``dnabert`` preset) reach the model as words separated
by spaces (``pairs/requests.py``). A tokenizer fits them when it reads three such words of
A/C/G/T as three known tokens (:func:`check_kmer_words`, once per tokenizer and k); any other
tokenizer would read the spaces as tokens or unknown tokens, and the run stops before scoring.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

import torch

from perturbation_bench.dna import BASES
from perturbation_bench.errors import TokenizationError
from perturbation_bench.pairs.settings import settings_of
from perturbation_bench.wording import agree, counted

log = logging.getLogger(f"lm_eval.{__name__}")

_NOT_ACGT = re.compile("[^ACGT]")
_NOT_ACGT_OR_SPACE = re.compile(r"[^ACGT\s]")  # overlapping k-mers are space-separated


def unknown_tokens(tokenizer, sequence: str, ids: list[int], setting: str = "") -> int:
    """How many of ``ids`` (the tokens of a request holding ``sequence``) are the unknown token,
    all from k-mers of ``sequence`` that hold a non-ACGT base (module docstring).

    Args:
        setting: the preset and formatting in use, for the error message.

    Raises:
        TokenizationError: an unknown token of ``sequence`` covers A/C/G/T alone.
    """
    if " " in sequence:
        check_kmer_words(tokenizer, len(sequence.split(" ", 1)[0]), setting)
    unknown = tokenizer.unk_token_id
    if unknown is None or unknown not in ids:
        return 0
    count = ids.count(unknown)
    offending = _acgt_unknown_kmer(tokenizer, sequence)
    if offending is None:
        return count
    raise TokenizationError(
        f"{tokenizer.name_or_path}: a sequence of {len(sequence)} characters tokenizes to "
        f"{len(ids)} tokens of which {count} are the unknown token {tokenizer.unk_token!r}, and "
        f"{offending} has only A/C/G/T bases, so the tokenizer does not fit the data as "
        f"formatted ({setting or 'preset unknown'}). Likely fix: the preset or k-mer size of the "
        'model\'s tokenizer (--metadata \'{"preset": "carbon"}\' or \'{"kmer_size": 6}\' for '
        "6-mer models, which read a trailing partial k-mer as unknown), or a DNA prefix the "
        "tokenizer expects (dna_prefix)."
    )


def check_kmer_words(tokenizer, k: int, setting: str = "") -> None:
    """Refuse a tokenizer that does not read space-separated k-mer words (module docstring).

    Raises:
        TokenizationError: three words of ``k`` A/C/G/T bases are not three known tokens.
    """
    ids = _kmer_word_tokens(tokenizer, k)
    if len(ids) == 3 and tokenizer.unk_token_id not in ids:
        return
    unknown = ids.count(tokenizer.unk_token_id) if tokenizer.unk_token_id is not None else 0
    raise TokenizationError(
        f"{tokenizer.name_or_path}: overlapping k-mers ({setting or 'kmer_overlap'}) reach the "
        f"model as words separated by spaces, and this tokenizer reads the three words "
        f"{_kmer_words(k)!r} as {len(ids)} tokens ({unknown} unknown): it does not read "
        "space-separated k-mers, as DNABERT's does. Leave kmer_overlap and the dnabert preset "
        "out for this model."
    )


def _kmer_words(k: int) -> str:
    bases = (BASES * k)[: k + 2]
    return " ".join(bases[i : i + k] for i in range(3))


@lru_cache(maxsize=16)
def _kmer_word_tokens(tokenizer, k: int) -> list[int]:
    return tokenizer(_kmer_words(k), add_special_tokens=False)["input_ids"]


def _acgt_unknown_kmer(tokenizer, sequence: str) -> str | None:
    """Where ``sequence`` tokenizes to an unknown token of A/C/G/T alone (a phrase for the
    message), or None if it does not."""
    unknown = tokenizer.unk_token_id
    if tokenizer.is_fast:
        encoding = tokenizer(sequence, add_special_tokens=False, return_offsets_mapping=True)
        for token, (start, end) in zip(
            encoding["input_ids"], encoding["offset_mapping"], strict=True
        ):
            if token == unknown and end > start and not _NOT_ACGT.search(sequence[start:end]):
                return f"the k-mer {sequence[start:end]!r} at bases {start}-{end}"
        return None
    as_acgt = tokenizer(_NOT_ACGT_OR_SPACE.sub("A", sequence), add_special_tokens=False)[
        "input_ids"
    ]
    return "a k-mer" if unknown in as_acgt else None


class UnknownTokenCounter:
    """Unknown tokens from non-ACGT k-mers, counted per pair across a run (all ranks).

    ``add`` notes the tokens of one request; ``summary`` gathers every rank's counts (a pair seen
    twice, e.g. lm-eval's padding of a short rank, counts once).
    """

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.by_pair: dict[tuple[str, int], int] = {}
        self.names: dict[tuple[str, int], str] = {}

    def add(self, request, tokens: int) -> None:
        """Count ``tokens`` unknown tokens of lm-eval ``Instance`` ``request``."""
        if not tokens:
            return
        key = (request.task_name, request.doc_id)
        self.by_pair[key] = self.by_pair.get(key, 0) + tokens
        self.names.setdefault(key, describe_request(request))

    def summary(self, world_size: int) -> dict:
        """``{"pairs", "tokens", "first_pair"}`` over every rank; with several processes every
        rank must call it (a collective)."""
        seen = [(self.by_pair, self.names)]
        if world_size > 1:
            seen = [None] * world_size
            torch.distributed.all_gather_object(seen, (self.by_pair, self.names))
        by_pair, names = {}, {}
        for counts, described in seen:
            by_pair.update(counts)
            names.update(described)
        first = min(by_pair) if by_pair else None
        return {
            "pairs": len(by_pair),
            "tokens": sum(by_pair.values()),
            "first_pair": names[first] if first else None,
        }

    def log(self, summary: dict, n_requests: int) -> None:
        """Warn with the counts of :meth:`summary`, if any."""
        if summary["pairs"]:
            log.warning(
                "%s: %s %s %s from k-mers with a non-ACGT base (N); they are scored like any "
                "other token (first: %s). %d requests scored.",
                self.model_name,
                counted(summary["pairs"], "pair"),
                agree(summary["pairs"], "holds", "hold"),
                counted(summary["tokens"], "unknown token"),
                summary["first_pair"],
                n_requests,
            )


def describe_request(request) -> str:
    """``task doc N (benchmark_id=...)`` for an lm-eval ``Instance``."""
    doc = request.doc if isinstance(request.doc, dict) else {}
    label = next((f" ({k}={doc[k]!r})" for k in ("benchmark_id", "variant_id") if doc.get(k)), "")
    return f"{request.task_name} doc {request.doc_id}{label}"


def formatting_setting(doc) -> str:
    """The preset and formatting a document's requests are made with, from its task's settings
    (``pairs/settings.py``); "" for a document of another task."""
    settings = settings_of(doc)
    if settings is None:
        return ""
    return (
        f"preset {settings.preset!r}, kmer_size={settings.kmer_size}, "
        f"dna_prefix={settings.dna_prefix!r}"
    )

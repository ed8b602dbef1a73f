"""The inputs of masked scoring (``masked_scoring.py``): one forward pass with its masks and what
it reads (:class:`MaskedInput`), the windows that fit an input to ``max_length`` (rule 4 of
``masked_scoring.py``), identical inputs merged (rule 6), and the tokens that cover a span of
bases: each token's offsets in the text and the tokens a changed span touches (rules 2 and 3,
and the overlapping k-mers), counting unknown tokens as they are encoded (rule 7), and the
inputs of a continuation asked after its context, masked whole (rule 8).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perturbation_bench.errors import OptionsError
from perturbation_bench.models.tokens import formatting_setting, unknown_tokens
from perturbation_bench.pairs.requests import refuse_cropped_context
from perturbation_bench.pairs.settings import settings_of
from perturbation_bench.pairs.windows import centred_start


@dataclass
class MaskedInput:
    """One forward pass: a window's token ids, the positions in it to mask, and what to read.

    ``tokens`` may be shared by many inputs (a PLL masks one position of the same window in
    each). ``reads`` holds ``(position, token_id, request_index)``: ``log P(token_id | input)``
    at ``position`` is added to the LL of request ``request_index``.
    """

    tokens: list[int]
    masked: tuple[int, ...]
    mask_id: int
    reads: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        """The input's token ids, masks applied."""
        ids = list(self.tokens)
        for position in self.masked:
            ids[position] = self.mask_id
        return ids


def windows(n_tokens: int, masked: list[int], max_length: int) -> list[tuple[int, list[int]]]:
    """Cut the masked positions into runs that fit ``max_length`` tokens (rule 4 of the module).

    Returns:
        ``(start, run)`` pairs: the window is ``[start, start + max_length)`` (the whole input
        if it fits) and scores the positions of ``run``; the runs partition ``masked``.
    """
    if n_tokens <= max_length:
        return [(0, list(masked))]
    out, first = [], 0
    while first < len(masked):
        last = first
        while last + 1 < len(masked) and masked[last + 1] - masked[first] < max_length:
            last += 1
        run = masked[first : last + 1]
        centre = (run[0] + run[-1] + 1) // 2
        start = centred_start(centre, max_length, n_tokens)
        out.append((start, run))
        first = last + 1
    return out


def merge_identical(inputs: list[MaskedInput]) -> list[MaskedInput]:
    """One input per distinct masked input (its token list with the masks applied), carrying
    the reads of all of them: inputs that differ only under their masks (a site's four alleles,
    masked there) are one forward pass."""
    merged: dict[tuple, MaskedInput] = {}
    for item in inputs:
        key = (tuple(item.ids), item.masked)
        if key in merged:
            merged[key].reads += item.reads
        else:
            merged[key] = MaskedInput(item.tokens, item.masked, item.mask_id, list(item.reads))
    return list(merged.values())


def literal_offsets(tokenizer, ids: list[int], text: str) -> list[tuple[int, int]]:
    """Character offsets of ``ids`` in ``text`` for a slow tokenizer whose tokens are literal
    pieces of the text (Nucleotide Transformer's ``EsmTokenizer``: 6-mers and single letters):
    special tokens get ``(0, 0)``, whitespace between tokens is skipped.

    Raises:
        OptionsError: a token that is not the next piece of the text (an unknown token, a
            tokenizer that rewrites the text): its offsets cannot be known.
    """
    specials = set(tokenizer.all_special_ids) - {
        tokenizer.unk_token_id
    }  # an unknown token has text
    position, offsets = 0, []
    for token_id, token in zip(ids, tokenizer.convert_ids_to_tokens(ids), strict=True):
        if token_id in specials:
            offsets.append((0, 0))
            continue
        while position < len(text) and text[position].isspace():
            position += 1
        if not text.startswith(token, position):
            raise OptionsError(
                f"{tokenizer.name_or_path}: the two sequences of a pair tokenize to different "
                f"lengths, and token {token!r} is not the text at character {position}, so its "
                "place in the sequence is unknown (a fast tokenizer, which gives offsets, is needed)"
            )
        offsets.append((position, position + len(token)))
        position += len(token)
    return offsets


def covering(positions: list[int], k: int) -> list[list[int]]:
    """Per base, the token positions covering it, when ``positions`` are a sequence's tokens
    as overlapping ``k``-mers (token ``i`` covers bases ``i .. i + k - 1``; ``k = 1``: each
    token alone)."""
    last = len(positions) - 1
    return [positions[max(0, b - k + 1) : min(b, last) + 1] for b in range(last + k)]


def overlap_size(request) -> int:
    """The ``k`` of a request's overlapping k-mers (its task's settings), 1 without them."""
    settings = settings_of(getattr(request, "doc", None))
    return settings.kmer_size if settings is not None and settings.kmer_overlap else 1


def token_span(offsets: list[tuple[int, int]], start: int, end: int) -> list[int]:
    """Token positions whose characters overlap ``[start, end)`` (special tokens have none)."""
    return [i for i, (s, e) in enumerate(offsets) if e > s and s < end and e > start]


def encode_texts(tokenizer, texts, encoded: dict) -> None:
    """Add to ``encoded`` (``text -> encoding``) the tokenizer's encoding of each of ``texts`` it
    lacks, with its special tokens (``input_ids``, ``special_tokens_mask``; ``offset_mapping``
    if fast): one batch call, which a fast tokenizer runs in parallel."""
    todo = list(dict.fromkeys(text for text in texts if text not in encoded))
    if not todo:
        return
    batch = tokenizer(
        todo, return_offsets_mapping=tokenizer.is_fast, return_special_tokens_mask=True
    )
    keys = [key for key in batch if key != "token_type_ids"]
    for i, text in enumerate(todo):
        encoded[text] = {key: batch[key][i] for key in keys}


def encode_request(tokenizer, request, unknown, encoded: dict | None = None):
    """The encoding of a request's ``context + continuation`` (:func:`encode_texts`), taken
    from and kept in ``encoded`` unless it is None; its unknown tokens counted in ``unknown``
    (rule 7)."""
    context, continuation = request.args
    text = context + continuation
    store = encoded if encoded is not None else {}
    encode_texts(tokenizer, [text], store)
    encoding = store[text]
    count = unknown_tokens(
        tokenizer, continuation, encoding["input_ids"], formatting_setting(request.doc)
    )
    unknown.add(request, count)
    return encoding


def token_offsets(tokenizer, encoding, text: str) -> list[tuple[int, int]]:
    """Each token's characters in ``text``: a fast tokenizer's offsets, else read off the tokens
    themselves (:func:`literal_offsets`)."""
    if "offset_mapping" in encoding:
        return encoding["offset_mapping"]
    return literal_offsets(tokenizer, encoding["input_ids"], text)


def continuation_inputs(tokenizer, requests, pair, encode, max_length: int) -> list[MaskedInput]:
    """Rule 8 of ``masked_scoring.py``: one input per request of ``pair`` (indices into
    ``requests``, each asking its continuation after its context), with every token of the
    continuation (not special, starting at or after the context's end) masked and read;
    ``encode(request)`` is the request's encoding. A request longer than ``max_length`` tokens
    is refused, never cropped (``pairs/requests.refuse_cropped_context``)."""
    inputs = []
    for index in pair:
        request = requests[index]
        context, continuation = request.args
        encoding = encode(request)
        ids, specials = encoding["input_ids"], encoding["special_tokens_mask"]
        refuse_cropped_context(request, len(ids), max_length, "dna-mlm")
        offsets = token_offsets(tokenizer, encoding, context + continuation)
        scored = [
            i for i, (start, _) in enumerate(offsets) if not specials[i] and start >= len(context)
        ]
        reads = [(i, ids[i], index) for i in scored]
        inputs.append(MaskedInput(ids, tuple(scored), tokenizer.mask_token_id, reads))
    return inputs

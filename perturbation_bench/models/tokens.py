"""A guard shared by the model classes: the tokenizer must be able to read the sequences."""

from __future__ import annotations

from perturbation_bench.errors import TokenizationError


def refuse_unknown_tokens(tokenizer, text: str, ids: list[int]) -> None:
    """Raise :class:`TokenizationError` if ``ids`` (the tokens of ``text``) hold the unknown token.

    A sequence the model reads as unknown tokens scores as noise, so every such pair would count
    as a random outcome; the usual cause is a k-mer tokenizer given a sequence whose length is
    not a multiple of k.
    """
    unknown = tokenizer.unk_token_id
    if unknown is None or unknown not in ids:
        return
    raise TokenizationError(
        f"{tokenizer.name_or_path}: a sequence of {len(text)} characters tokenizes to {len(ids)} "
        f"tokens of which {ids.count(unknown)} are the unknown token {tokenizer.unk_token!r}, so "
        "the model cannot read it. Likely fix: the preset or k-mer size of the model's tokenizer "
        '(--metadata \'{"preset": "carbon"}\' or \'{"kmer_size": 6}\' for 6-mer models, which '
        "read a trailing partial k-mer as unknown), or a DNA prefix the tokenizer expects "
        "(dna_prefix)."
    )

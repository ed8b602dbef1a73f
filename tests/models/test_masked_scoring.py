"""dna-mlm's masking rules (``models/masked_scoring.py``, ``models/masked_inputs.py``): windows of masked positions."""

from __future__ import annotations

from perturbation_bench.models.masked_inputs import windows
from perturbation_bench.models.masked_scoring import MaskedScorer


def test_masked_runs_exactly_max_length_apart_are_split():
    """Mutant: ``<`` turned into ``<=`` when a run grows (a window would hold max_length + 1)."""
    assert [run for _, run in windows(100, [10, 26], 16)] == [[10], [26]]
    assert [run for _, run in windows(100, [10, 25], 16)] == [[10, 25]]


class MaskTokenizer:
    mask_token_id = -1


def test_every_masked_position_is_masked_in_every_window_that_holds_it():
    """Mutant: each window masks only the positions of its own run."""
    model = object.__new__(MaskedScorer)
    model.tokenizer, model.max_length = MaskTokenizer(), 16
    ids = list(range(100))
    masked = [5, 14, 21]  # runs [5, 14] (window 2-18) and [21] (window 13-29, which holds 14)
    inputs = model._windowed(ids, masked, {i: [(ids[i], 0)] for i in masked})
    starts = [start for start, _ in windows(len(ids), masked, 16)]
    assert starts == [2, 13]
    for start, item in zip(starts, inputs, strict=True):
        for position in range(start, start + 16):
            assert (item.ids[position - start] == -1) == (position in masked), (start, position)


class LiteralWords:
    """A slow tokenizer's token strings: the text's space-separated words, after a [CLS]."""

    all_special_ids, unk_token_id, name_or_path = [1], 0, "words"

    def convert_ids_to_tokens(self, ids):
        words = {2: "ACG", 3: "CGT", 4: "GTA"}
        return ["[CLS]" if i == 1 else words[i] for i in ids]


def test_literal_offsets_skip_the_spaces_between_tokens():
    from perturbation_bench.models.masked_inputs import literal_offsets

    offsets = literal_offsets(LiteralWords(), [1, 2, 3, 4], "ACG CGT  GTA")
    assert offsets == [(0, 0), (0, 3), (4, 7), (9, 12)]


def test_each_distinct_sequence_is_tokenized_once_and_as_alone():
    """``encode_texts``: the distinct texts in one batch call, each encoded as the tokenizer
    encodes it alone; ``encode_request`` then reads the stored encoding, counting its unknown
    tokens per request, and tokenizes only a text the store lacks."""
    from types import SimpleNamespace

    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer
    from perturbation_bench.models.masked_inputs import encode_request, encode_texts

    tokenizer = as_masked_lm_tokenizer(build_tokenizer("char"))
    calls = []

    class Counting:
        """The tokenizer, its calls noted."""

        def __call__(self, texts, **options):
            calls.append(list(texts))
            return tokenizer(texts, **options)

        def __getattr__(self, name):
            return getattr(tokenizer, name)

    texts = ["ACGTA", "ACGTT", "ACGTA"]
    encoded: dict = {}
    encode_texts(Counting(), texts, encoded)
    assert calls == [["ACGTA", "ACGTT"]]
    for text in ("ACGTA", "ACGTT"):
        alone = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
        assert encoded[text] == {key: alone[key] for key in encoded[text]}
        assert set(encoded[text]) >= {"input_ids", "special_tokens_mask", "offset_mapping"}
    counted = []
    unknown = SimpleNamespace(add=lambda request, count: counted.append(count))
    request = SimpleNamespace(args=("", "ACGTA"), doc=None)
    assert encode_request(Counting(), request, unknown, encoded) is encoded["ACGTA"]
    assert calls == [["ACGTA", "ACGTT"]] and counted == [0]
    encode_request(Counting(), SimpleNamespace(args=("", "GGGG"), doc=None), unknown, encoded)
    assert calls[-1] == ["GGGG"] and "GGGG" in encoded

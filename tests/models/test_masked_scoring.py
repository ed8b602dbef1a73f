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

"""The changed span of a pair (``pairs/changes.py``): whole columns at once, against a per-row
reference written out here."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from perturbation_bench.pairs.changes import changed_spans, changed_text


def reference_span(a: str, b: str, ignore_case: bool):
    """First to last differing position, written out; None for identical strings."""
    if ignore_case:
        a, b = a.upper(), b.upper()
    differing = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return (differing[0], differing[-1] + 1) if differing else None


def random_pair_strings(rng: random.Random, count: int):
    pairs = []
    for _ in range(count):
        original = "".join(rng.choice("ACGTNacgt") for _ in range(rng.randrange(1, 40)))
        perturbed = list(original)
        for _ in range(rng.choice([0, 0, 1, 3])):  # some pairs identical
            i = rng.randrange(len(perturbed))
            perturbed[i] = rng.choice([perturbed[i].swapcase(), rng.choice("ACGT")])
        pairs.append((original, "".join(perturbed)))
    return pairs


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("ignore_case", [False, True])
def test_changed_spans_match_a_per_row_reference(kind, ignore_case):
    pairs = random_pair_strings(random.Random(5), 300)
    original = pa.array([a for a, _ in pairs], kind)
    perturbed = pa.array([b for _, b in pairs], kind)
    for offset in (0, 7):  # sliced arrays start inside their buffers
        spans = changed_spans(original[offset:], perturbed[offset:], ignore_case)
        changes = changed_text(perturbed[offset:], spans).to_pylist()
        for row, (a, b) in enumerate(pairs[offset:]):
            expected = reference_span(a, b, ignore_case)
            assert bool(spans.changed[row]) == (expected is not None)
            if expected is not None:
                assert (spans.starts[row], spans.ends[row]) == expected
                if not ignore_case:
                    assert changes[row] == b[expected[0] : expected[1]]

"""Counts in messages: a plural only when the count is not 1, and tallies as text, never a dict's
repr."""

from __future__ import annotations

from collections import Counter

import pytest

from perturbation_bench.wording import agree, counted, did_you_mean, tally


@pytest.mark.parametrize(
    "count, noun, plural, text",
    [
        (1, "pair", None, "1 pair"),
        (0, "pair", None, "0 pairs"),
        (2, "pair", None, "2 pairs"),
        (1, "variant", None, "1 variant"),
        (3, "mouse", "mice", "3 mice"),
        (1, "mouse", "mice", "1 mouse"),
    ],
)
def test_a_noun_is_plural_unless_its_count_is_one(count, noun, plural, text):
    assert counted(count, noun, plural) == text


def test_a_tally_lists_the_nonzero_counts_by_name():
    counts = Counter({"shuffle_unchanged": 1, "element_not_acgt": 2, "duplicate_pair": 0})
    assert tally(counts) == "element_not_acgt 2, shuffle_unchanged 1"
    assert tally({}) == "none" and tally(Counter(a=0), "none read") == "none read"


def test_a_verb_agrees_with_its_count():
    assert [agree(n, "has", "have") for n in (0, 1, 2)] == ["have", "has", "have"]


def test_a_misspelt_name_is_offered_its_nearest_choice_and_a_far_one_nothing():
    choices = ("carbon", "generator", "dnabert")
    assert did_you_mean("carbn", choices) == " (did you mean 'carbon'?)"
    assert did_you_mean("dnabert2", choices) == " (did you mean 'dnabert'?)"
    assert did_you_mean("xyz", choices) == ""


def test_some_names_show_the_first_five_and_count_the_rest():
    from perturbation_bench.wording import some

    names = [f"chr{i}" for i in range(1, 9)]
    assert some(names) == "chr1, chr2, chr3, chr4, chr5 (+3 more)"
    assert some(names[:5]) == "chr1, chr2, chr3, chr4, chr5"
    assert some(names, shown=2) == "chr1, chr2 (+6 more)"
    assert some([]) == ""


def test_a_builds_exclusions_print_one_line_per_reason_by_reason(capsys):
    from perturbation_bench.wording import say_excluded

    say_excluded({"too_short": 2, "not_acgt": 5})
    assert capsys.readouterr().out == "excluded 5 (not_acgt)\nexcluded 2 (too_short)\n"
    say_excluded({})
    assert capsys.readouterr().out == ""

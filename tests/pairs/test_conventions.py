"""Upstream conventions (``pairs/conventions.py``): ``start_token: none`` against an independent
computation of the upstream rule (the raw window, its first token unscored), the named
conventions' pieces, and the refusals of settings that do not apply."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from dna_fixtures import (
    evaluate,
    reverse_complement,
    upstream_ll,
)
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.markov_chain import chain_for
from perturbation_bench.pairs.conventions import CONVENTIONS
from perturbation_bench.tasks.options import parse_options
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"
TOLERANCE = 1e-4
"""nats: float32 model, float64 sums on both sides."""


def token_count(tokenizer, sequence: str) -> int:
    return len(tokenizer(sequence, add_special_tokens=False)["input_ids"])


@pytest.mark.parametrize("kind", ["char", "kmer6", "bpe"])
def test_no_start_token_scores_the_raw_window_with_its_first_token_unscored(
    tiny_models, pair_data, kind
):
    path = tiny_models[kind]
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    kmer = {"kmer6": {"kmer_size": 6}}.get(kind, {})
    result = evaluate(
        path, [TASK], {"data_dir": str(pair_data), "start_token": "none", **kmer}, model="dna-hf"
    )
    rows = pd.read_parquet(pair_data / "syn_human")
    k = kmer.get("kmer_size", 1)
    for (ll_o, ll_p), (_, row) in zip(logged_pairs(result, TASK), rows.iterrows(), strict=True):
        original, perturbed = (
            s[: len(s) - len(s) % k] for s in (row["original_sequence"], row["sequence"])
        )
        assert ll_o == pytest.approx(upstream_ll(model, tokenizer, original), abs=TOLERANCE)
        assert ll_p == pytest.approx(upstream_ll(model, tokenizer, perturbed), abs=TOLERANCE)


def test_evo2s_default_mean_divides_by_the_scored_tokens(tiny_models, pair_data):
    """Evo 2's ``score_sequences(prepend_bos=False, reduce_method='mean')``: the mean over the
    ``L - 1`` scored tokens, here with a BPE tokenizer whose counts differ within pairs."""
    path = tiny_models["bpe"]
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        path,
        [TASK],
        {"data_dir": str(pair_data), "start_token": "none", "reduction": "mean"},
        model="dna-hf",
    )
    rows = pd.read_parquet(pair_data / "syn_human")
    for (ll_o, ll_p), (_, row) in zip(logged_pairs(result, TASK), rows.iterrows(), strict=True):
        for got, sequence in ((ll_o, row["original_sequence"]), (ll_p, row["sequence"])):
            expected = upstream_ll(model, tokenizer, sequence) / (
                token_count(tokenizer, sequence) - 1
            )
            assert got == pytest.approx(expected, abs=TOLERANCE / 10)


def test_the_traitgym_convention_averages_both_strands_of_the_raw_windows(tiny_models, pair_data):
    path = tiny_models["char"]
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        path, [TASK], {"data_dir": str(pair_data), "convention": "traitgym"}, model="dna-hf"
    )
    rows = pd.read_parquet(pair_data / "syn_human")
    for (ll_o, ll_p), (_, row) in zip(logged_pairs(result, TASK), rows.iterrows(), strict=True):
        for got, sequence in ((ll_o, row["original_sequence"]), (ll_p, row["sequence"])):
            strands = [
                upstream_ll(model, tokenizer, s) for s in (sequence, reverse_complement(sequence))
            ]
            assert got == pytest.approx(sum(strands) / 2, abs=TOLERANCE)
    assert result["configs"][TASK]["metadata"]["convention"] == "traitgym"


def test_kmer_markov_leaves_the_first_base_unscored_too(pair_data, tmp_path):
    fasta = tmp_path / "genome.fa"
    rows = pd.read_parquet(pair_data / "syn_human")
    fasta.write_text(">g\n" + "".join(rows["original_sequence"]) + "\n")
    result = evaluate(
        str(fasta), [TASK], {"data_dir": str(pair_data), "start_token": "none"}, model="kmer-markov"
    )
    chain = chain_for(fasta, 3)
    for (ll_o, _), (_, row) in zip(logged_pairs(result, TASK), rows.iterrows(), strict=True):
        sequence = row["original_sequence"]
        assert ll_o == pytest.approx(
            chain.log_likelihood("", sequence) - chain.log_likelihood("", sequence[0]), abs=1e-9
        )  # the chain's first base is scored alone, so leaving it out removes that term
        assert ll_o != pytest.approx(chain.log_likelihood("", sequence), abs=1e-9)


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_a_convention_sets_its_pieces_and_refuses_a_contradicting_one(name):
    convention = CONVENTIONS[name]
    options = parse_options({"convention": name})
    assert (
        options.settings.start_token,
        options.settings.reduction,
        options.settings.rc_average,
        options.settings.one_class_chromosomes,
        options.settings.convention,
    ) == (
        convention.start_token,
        convention.reduction,
        convention.rc_average,
        convention.one_class_chromosomes,
        name,
    )
    flipped = {"rc_average": not convention.rc_average}
    with pytest.raises(OptionsError, match=f"convention '{name}' sets rc_average="):
        parse_options({"convention": name, **flipped})
    assert (
        parse_options({"convention": name, "reduction": convention.reduction}).settings.convention
        == name
    )


def test_the_conventions_table_is_the_upstream_rules():
    """vep-definitions: TraitGym and biofoundation sum, Evo 2 means; TraitGym and GPN average
    both strands, Evo 2's notebook and biofoundation use the forward one; GPN, TraitGym and
    biofoundation pad with N, Evo 2 truncates."""
    table = {
        name: (c.start_token, c.reduction, c.rc_average, c.edge, c.one_class_chromosomes)
        for name, c in CONVENTIONS.items()
    }
    assert table == {
        "traitgym": ("none", "sum", True, "pad", "keep"),
        "gpn": ("model", "sum", True, "pad", "drop"),
        "evo2": ("none", "mean", False, "truncate", "drop"),
        "biofoundation": ("none", "sum", False, "pad", "drop"),
        "dart_eval": ("none", "sum", False, "shift", "drop"),
    }
    assert CONVENTIONS["gpn"].models == ("dna-mlm",)
    dart = CONVENTIONS["dart_eval"]
    assert (dart.ties, dart.masked_scoring) == ("correct", "pll")
    assert all(c.ties is None for name, c in CONVENTIONS.items() if name != "dart_eval")


def test_dart_eval_sets_the_ties_rule_and_a_start_token_for_causal_models_only():
    """DART-Eval scores a causal model with nothing before the sequence and a masked one by
    pseudo-log-likelihood; both count a tie as right in the per-motif accuracy."""
    from perturbation_bench.active_models import as_scoring
    from perturbation_bench.pairs.conventions import check_model

    with as_scoring("dna-hf"):
        causal = parse_options({"convention": "dart_eval"}).settings
    with as_scoring("dna-mlm", "pll"):
        masked = parse_options({"convention": "dart_eval"}).settings
    assert (causal.start_token, causal.ties) == ("none", "correct")
    assert (masked.start_token, masked.ties) == ("model", "correct")
    check_model("dna-mlm", masked, "pll")
    with pytest.raises(OptionsError, match=r"scores a masked model by scoring=pll: add it to"):
        check_model("dna-mlm", masked, None)
    with pytest.raises(OptionsError, match=r"convention 'dart_eval' sets ties='correct'"):
        parse_options({"convention": "dart_eval", "ties": "strict"})


@pytest.mark.parametrize(
    "metadata, message",
    [
        ({"convention": "gpt"}, "unknown convention 'gpt'; conventions: traitgym, gpn, evo2"),
        ({"start_token": "bos"}, "start_token must be one of model, none, got 'bos'"),
        ({"start_token": "none", "preset": "carbon"}, "the DNA prefix is '<dna>' .preset 'carbon'"),
        ({"one_class_chromosomes": "weight"}, "one_class_chromosomes must be one of drop, keep"),
        ({"start_tokens": "none"}, "did you mean 'start_token'"),
    ],
)
def test_bad_convention_options_are_one_line(metadata, message):
    with pytest.raises(OptionsError, match=message):
        parse_options(metadata)


def test_settings_that_do_not_apply_to_the_model_are_refused_before_scoring(tiny_models, pair_data):
    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    with pytest.raises(OptionsError, match="convention 'gpn' scores with dna-mlm, not dna-hf"):
        evaluate(
            tiny_models["char"],
            [TASK],
            {"data_dir": str(pair_data), "convention": "gpn"},
            model="dna-hf",
        )
    masked = save_random_bert(
        pair_data.parent / "mlm-conventions", as_masked_lm_tokenizer(build_tokenizer("char"))
    )
    with pytest.raises(OptionsError, match="start_token 'none' applies to causal models"):
        evaluate(
            str(masked),
            [TASK],
            {"data_dir": str(pair_data), "start_token": "none"},
            model="dna-mlm",
        )


def test_lm_evals_hf_model_is_refused_a_masked_models_convention_as_it_loads(
    tiny_models, pair_data
):
    with pytest.raises(OptionsError, match="convention 'gpn' scores with dna-mlm, not lm-eval's"):
        evaluate(tiny_models["char"], [TASK], {"data_dir": str(pair_data), "convention": "gpn"})


def test_lm_evals_hf_model_cannot_drop_its_start_token(pair_data):
    from perturbation_bench.tasks.loading import load_pairs

    with pytest.raises(OptionsError, match="needs one of this package's models"):
        load_pairs("syn_human", data_dir=str(pair_data), start_token="none")


def test_only_a_document_that_says_start_token_none_starts_bare():
    from perturbation_bench.pairs.conventions import bare_start
    from perturbation_bench.pairs.fields import TASK
    from perturbation_bench.pairs.settings import TaskSettings

    settings = TaskSettings()
    assert not bare_start(None) and not bare_start({}) and not bare_start({TASK: settings})
    assert bare_start({TASK: TaskSettings(start_token="none")})


@pytest.mark.parametrize(
    "name, key",
    [(name, key) for name in sorted(CONVENTIONS) for key in CONVENTIONS[name].pieces()],
)
def test_every_piece_a_convention_sets_is_refused_when_given_otherwise(name, key):
    from perturbation_bench.pairs.settings import SETTING

    value = CONVENTIONS[name].pieces()[key]
    other = next(choice for choice in SETTING[key].choices if choice != value)
    with pytest.raises(
        OptionsError,
        match=f"convention '{name}' sets {key}={value!r}, and {key}={other!r} was given",
    ):
        parse_options({"convention": name, key: other})
    assert getattr(parse_options({"convention": name, key: value}).settings, key) == value


REFUSED = [  # (model, scoring, settings) refused first by the row of the table at its index
    ("dna-hf", "embedding", {}),
    ("dna-hf", "embedding", {"score": "abs_llr"}),
    ("kmer-markov", None, {"score": "jsd"}),
    ("dna-mlm", None, {"convention": "traitgym"}),
    ("dna-mlm", "marginal", {"convention": "dart_eval"}),
    ("kmer-markov", None, {"kmer_overlap": True}),
    (None, None, {"start_token": "none"}),
    ("dna-mlm", None, {"start_token": "none"}),
]


def test_each_model_refusal_is_the_first_that_applies_to_its_case():
    """One case per row of ``MODEL_REFUSALS``, which no row before it applies to, refused with
    that row's message; every row has its case."""
    from perturbation_bench.pairs.conventions import MODEL_REFUSALS, ModelCase, check_model
    from perturbation_bench.pairs.settings import TaskSettings

    assert len(REFUSED) == len(MODEL_REFUSALS)
    for row, (model, scoring, values) in enumerate(REFUSED):
        case = ModelCase(model, scoring, TaskSettings(**{"score": None, "ties": None, **values}))
        assert [k for k, r in enumerate(MODEL_REFUSALS) if r.applies(case)][0] == row
        with pytest.raises(OptionsError) as refused:
            check_model(model, case.settings, scoring)
        assert str(refused.value) == MODEL_REFUSALS[row].says(case)
    check_model("dna-hf", TaskSettings(score="jsd", start_token="none"))

"""Upstream conventions (``pairs/conventions.py``): ``start_token: none`` against an independent
computation of the upstream rule (the raw window, its first token unscored), the named
conventions' pieces, and the refusals of settings that do not apply."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from dna_fixtures import evaluate, expected_edge_pair, random_genome, reverse_complement
from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.models.markov_chain import chain_for
from perturbation_bench.pairs.conventions import CONVENTIONS
from perturbation_bench.tasks.options import parse_options
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"
TOLERANCE = 1e-4
"""nats: float32 model, float64 sums on both sides."""


def upstream_ll(model, tokenizer, sequence: str) -> float:
    """TraitGym's, biofoundation's and Evo 2's sum: the raw window's tokens, nothing before
    them, ``sum_{t >= 1} log p(x_t | x_<t)`` in float32 log-softmax, summed in float64."""
    ids = torch.tensor([tokenizer(sequence, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        log_probs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
    return log_probs.gather(1, ids[0, 1:, None])[:, 0].double().sum().item()


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
    }
    assert CONVENTIONS["gpn"].models == ("dna-mlm",)


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


def test_lm_evals_hf_model_cannot_drop_its_start_token(pair_data, monkeypatch):
    from perturbation_bench import active_models
    from perturbation_bench.tasks.loading import load_pairs

    monkeypatch.setattr(active_models, "_created", set())
    with pytest.raises(OptionsError, match="needs one of this package's models"):
        load_pairs("syn_human", data_dir=str(pair_data), start_token="none")


VARIANT_TASK = "perturbation_variants"
VW = 64
"""Window of the convention checks: variants at both ends of a 400 bp chromosome reach past it."""


@pytest.fixture(scope="module")
def hidden_genome(tmp_path_factory):
    """Two random chromosomes and variants the package never saw built: SNVs in the middle and
    at both ends of each chromosome, an insertion and deletions (one near the start)."""
    root = tmp_path_factory.mktemp("hidden")
    fasta, sequences = random_genome(root, {"chr1": 400, "chr2": 300}, 29)
    other = lambda b: "ACGT"[("ACGT".index(b) + 1) % 4]  # noqa: E731
    variants = []
    for chrom, seq in sequences.items():
        for pos in (1, 3, 20, len(seq) // 2, len(seq) - 10, len(seq)):
            variants.append((chrom, pos, seq[pos - 1], other(seq[pos - 1])))
        variants.append((chrom, 150, seq[149], seq[149] + "GAT"))  # insertion
        variants.append((chrom, 100, seq[99:103], seq[99]))  # deletion
        variants.append((chrom, 4, seq[3:6], seq[3]))  # deletion near the start
    table = pd.DataFrame(variants, columns=["chrom", "pos", "ref", "alt"])
    table.to_csv(root / "v.tsv", sep="\t", index=False)
    return fasta, sequences, table


def built_variants(hidden_genome, root, edge: str) -> pd.DataFrame:
    fasta, _, _ = hidden_genome
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(fasta.with_name("v.tsv")),
                "--fasta",
                str(fasta),
                "--config",
                "hidden",
                "--out",
                str(root),
                "--window",
                str(VW),
                "--edge",
                edge,
            ]
        )
        == 0
    )
    return pd.read_parquet(root / "hidden")


@pytest.mark.parametrize("name", ["traitgym", "evo2", "biofoundation"])
def test_causal_conventions_equal_their_upstream_rule_on_hidden_variants(
    tiny_models, hidden_genome, tmp_path, name
):
    """Each variant's windows cut again by the upstream's edge rule from the genome (not from
    the built rows), scored by the upstream's reduction and strands."""
    _, sequences, table = hidden_genome
    convention = CONVENTIONS[name]
    rows = built_variants(hidden_genome, tmp_path, convention.edge)
    path = tiny_models["char"]
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        path,
        [VARIANT_TASK],
        {"config": "hidden", "data_dir": str(tmp_path), "convention": name},
        model="dna-hf",
    )

    def score(sequence: str) -> float:
        strands = [sequence, reverse_complement(sequence)] if convention.rc_average else [sequence]
        lls = [upstream_ll(model, tokenizer, s) for s in strands]
        if convention.reduction == "mean":
            lls = [ll / (len(s) - 1) for ll, s in zip(lls, strands)]
        return sum(lls) / len(lls)

    pairs = logged_pairs(result, VARIANT_TASK)
    assert len(pairs) == len(rows) == len(table)
    at_ends = 0
    for (ll_ref, ll_alt), row in zip(pairs, rows.to_dict("records"), strict=True):
        reference, alternate, _, _ = expected_edge_pair(
            sequences, row["chrom"], row["pos"], row["ref"], row["alt"], VW, convention.edge
        )
        assert ll_ref == pytest.approx(score(reference), abs=TOLERANCE), (row["chrom"], row["pos"])
        assert ll_alt == pytest.approx(score(alternate), abs=TOLERANCE), (row["chrom"], row["pos"])
        at_ends += bool(row["is_clamped"])
    assert at_ends >= 8


def test_the_gpn_convention_equals_gpns_masked_llr_on_padded_windows(hidden_genome, tmp_path):
    """GPN's run_vep, written out: the variant base masked in the N-padded window, LLR =
    log P(alt) - log P(ref) there, the reverse strand's at ``W - 1 - W // 2`` with complemented
    alleles, averaged; dna-mlm's margin LL(ref) - LL(alt) is minus that."""
    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    _, sequences, _ = hidden_genome
    rows = built_variants(hidden_genome, tmp_path / "data", "pad")
    snvs = rows[(rows["ref"].str.len() == 1) & (rows["alt"].str.len() == 1)]
    path = save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer("char")))
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    result = evaluate(
        str(path),
        [VARIANT_TASK],
        {"config": "hidden", "data_dir": str(tmp_path / "data"), "convention": "gpn"},
        model="dna-mlm",
    )
    margins = {
        (r["chrom"], r["pos"], r["alt"]): a - b
        for (a, b), r in zip(
            logged_pairs(result, VARIANT_TASK), rows.to_dict("records"), strict=True
        )
    }

    def llr(window: str, index: int, ref: str, alt: str) -> float:
        masked = window[:index] + tokenizer.mask_token + window[index + 1 :]
        ids = tokenizer(masked, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            log_probs = torch.log_softmax(model(ids).logits[0, index + 1].float(), dim=-1)
        return (
            log_probs[tokenizer.convert_tokens_to_ids(alt)]
            - log_probs[tokenizer.convert_tokens_to_ids(ref)]
        ).item()

    complement = dict(zip("ACGT", "TGCA"))
    for row in snvs.to_dict("records"):
        window, _, _, index = expected_edge_pair(
            sequences, row["chrom"], row["pos"], row["ref"], row["alt"], VW, "pad"
        )
        forward = llr(window, index, row["ref"], row["alt"])
        reverse = llr(
            reverse_complement(window),
            VW - 1 - index,
            complement[row["ref"]],
            complement[row["alt"]],
        )
        got = margins[(row["chrom"], row["pos"], row["alt"])]
        assert got == pytest.approx(-(forward + reverse) / 2, abs=TOLERANCE), (
            row["chrom"],
            row["pos"],
        )
    assert len(snvs) >= 12 and snvs["is_clamped"].sum() >= 8


def test_a_convention_whose_edge_rule_differs_from_the_datas_says_so(
    hidden_genome, tmp_path, caplog, monkeypatch
):
    from perturbation_bench import active_models
    from perturbation_bench.tasks.variants import load_variant_pairs

    monkeypatch.setattr(active_models, "_created", {"dna-hf"})
    built_variants(hidden_genome, tmp_path / "shift", "shift")
    load_variant_pairs(
        config="hidden", data_dir=str(tmp_path / "shift"), convention="biofoundation"
    )
    assert (
        "convention 'biofoundation' cuts windows at chromosome ends by 'pad', this data by "
        "'shift'; 12 of 18 variants lie at a chromosome end"
    ) in caplog.text
    caplog.clear()
    built_variants(hidden_genome, tmp_path / "pad", "pad")
    load_variant_pairs(config="hidden", data_dir=str(tmp_path / "pad"), convention="biofoundation")
    assert "cuts windows" not in caplog.text


def traitgym_by_chrom(metric, labels, scores, chroms) -> float:
    """TraitGym's get_metric_by_block + weighted average, written out: scikit-learn's metric on
    every chromosome (a one-class chromosome's AUROC is NaN, read back as null), each weighted by
    its share of all variants, nulls adding nothing to the sum."""
    import warnings

    frame = pd.DataFrame({"label": labels, "score": scores, "chrom": chroms})
    total, weighted = len(frame), 0.0
    for _, block in frame.groupby("chrom"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = metric(block["label"], block["score"])
            except ValueError:
                value = float("nan")
        if value == value:
            weighted += value * len(block) / total
    return weighted


def one_class_variants(seed: int = 4) -> pd.DataFrame:
    """Three chromosomes with both classes, one with negatives only, one with positives only."""
    rng = random.Random(seed)
    rows = []
    for chrom, positives, negatives in (
        ("1", 4, 9),
        ("2", 3, 11),
        ("3", 5, 7),
        ("4", 0, 6),
        ("5", 2, 0),
    ):
        rows += [(chrom, True) for _ in range(positives)] + [
            (chrom, False) for _ in range(negatives)
        ]
    frame = pd.DataFrame(rows, columns=["chrom", "label"])
    frame["score"] = [rng.gauss(1.0 if label else 0.0, 1.0) for label in frame["label"]]
    return frame


def test_kept_one_class_chromosomes_follow_traitgyms_pipeline():
    from sklearn.metrics import average_precision_score, roc_auc_score

    from perturbation_bench.pairs.ranking import by_chromosome

    frame = one_class_variants()
    args = list(frame["label"]), list(frame["score"]), list(frame["chrom"])
    for name, metric in (("auroc", roc_auc_score), ("auprc", average_precision_score)):
        kept = by_chromosome(name, *args, one_class="keep")
        assert kept.value == pytest.approx(traitgym_by_chrom(metric, *args), abs=1e-12)
        assert kept.kept == ["4", "5"] and kept.left_out == []
        dropped = by_chromosome(name, *args)
        assert dropped.left_out == ["4", "5"] and dropped.kept == []
        assert dropped.value != pytest.approx(kept.value)


def test_the_standard_errors_are_traitgyms_formulas_on_the_documented_draws():
    """Stratified: positives then negatives drawn with replacement from one seeded generator per
    replicate set; chromosomes: rows drawn with replacement, weights renormalised, a NaN metric
    adding 0; both read as the sample standard deviation (ddof=1, polars' .std())."""
    import statistics

    import numpy as np
    from sklearn.metrics import average_precision_score

    from perturbation_bench.pairs.ranking import by_chromosome
    from perturbation_bench.report.statistics import (
        chromosome_bootstrap,
        standard_error,
        stratified_bootstrap,
    )

    frame = one_class_variants()
    labels, scores = np.array(frame["label"]), np.array(frame["score"])
    rng = np.random.default_rng(7)
    positives, negatives = np.flatnonzero(labels), np.flatnonzero(~labels)
    values = []
    for _ in range(100):
        rows = list(rng.choice(positives, len(positives))) + list(
            rng.choice(negatives, len(negatives))
        )
        values.append(average_precision_score(labels[rows], scores[rows]))
    got = standard_error(
        stratified_bootstrap(average_precision_score, labels, scores, seed=7, n_boot=100)
    )
    assert got == pytest.approx(statistics.stdev(values), rel=1e-12)

    rows = by_chromosome("auroc", list(labels), list(scores), list(frame["chrom"]), "keep").rows
    rng = np.random.default_rng(3)
    values = []
    for picks in rng.integers(0, len(rows), size=(1000, len(rows))):
        chosen = [rows[i] for i in picks]
        values.append(
            sum(n * (m if m == m else 0.0) for _, n, m in chosen) / sum(n for _, n, _ in chosen)
        )
    assert standard_error(chromosome_bootstrap(rows, seed=3, n_boot=1000)) == pytest.approx(
        statistics.stdev(values), rel=1e-12
    )
    assert standard_error([0.5]) != standard_error([0.5])  # one replicate: no error (NaN)


def report_pairs(frame: pd.DataFrame, one_class: str = "drop", convention=None) -> pd.DataFrame:
    return frame.assign(
        model="m",
        task="t",
        score_kind="llr",
        margin=frame["score"],
        correct=frame["score"] > 0,
        one_class_chromosomes=one_class,
        convention=convention,
        pair_id=[f"{i:04x}" for i in range(len(frame))],
    )


def test_the_report_resamples_the_same_whatever_the_row_order():
    from perturbation_bench.report.variant_metrics import auprc_differences, ranking_summary

    frame = report_pairs(one_class_variants())
    two = pd.concat([frame, frame.assign(model="n", score=frame["score"] * -1.0)])
    shuffled = two.sample(frac=1.0, random_state=11)
    assert list(shuffled["pair_id"]) != list(two["pair_id"])
    assert ranking_summary(shuffled, n_boot=300) == ranking_summary(two, n_boot=300)
    assert auprc_differences(shuffled, n_boot=300) == auprc_differences(two, n_boot=300)


def test_the_report_keeps_one_class_chromosomes_under_the_traitgym_convention():
    from sklearn.metrics import average_precision_score

    from perturbation_bench.report.variant_metrics import markdown, ranking_summary, thin_notes

    frame = one_class_variants()
    (kept,) = ranking_summary(
        report_pairs(frame, "keep", "traitgym"), n_boot=200, se_boot=50, se_chrom_boot=300
    )
    (dropped,) = ranking_summary(report_pairs(frame), n_boot=200)
    args = list(frame["label"]), list(frame["score"]), list(frame["chrom"])
    assert kept["auprc_by_chrom"] == pytest.approx(
        traitgym_by_chrom(average_precision_score, *args)
    )
    assert (kept["chromosomes_kept"], kept["chromosomes_left_out"]) == (["4", "5"], [])
    assert (dropped["chromosomes_kept"], dropped["chromosomes_left_out"]) == ([], ["4", "5"])
    assert kept["se_resamples"] == 50 and kept["se_chrom_resamples"] == 300
    assert kept["auprc_se"] > 0 and kept["auroc_by_chrom_se"] > 0
    lines = "\n".join(markdown([kept], [], [], []))
    assert f"| traitgym | 47 (14) | {kept['auroc']:.3f} ± {kept['auroc_se']:.3f} [" in lines
    assert "| kept: 4, 5 |" in lines and "50 stratified resamples" in lines
    assert any(
        "chromosome(s) 4, 5 hold variants of one class and are kept" in n
        for n in thin_notes([kept])
    )


def test_the_tasks_by_chromosome_metrics_follow_the_tasks_one_class_rule(caplog):
    from sklearn.metrics import average_precision_score

    from perturbation_bench.tasks.variants import auprc_by_chrom

    frame = one_class_variants()
    args = list(frame["label"]), list(frame["score"]), list(frame["chrom"])
    items = [(s, y, c, "keep") for y, s, c in zip(*args)]
    assert auprc_by_chrom(items) == pytest.approx(traitgym_by_chrom(average_precision_score, *args))
    assert "kept in the average as TraitGym does" in caplog.text
    assert auprc_by_chrom([]) != auprc_by_chrom([])  # no variant: NaN, not an error
    dropped = auprc_by_chrom([(s, y, c, "drop") for s, y, c, _ in items])
    both = frame[frame["chrom"].isin(["1", "2", "3"])]
    assert dropped == pytest.approx(
        traitgym_by_chrom(
            average_precision_score, list(both["label"]), list(both["score"]), list(both["chrom"])
        )
    )


def test_only_a_document_that_says_start_token_none_starts_bare():
    from perturbation_bench.pairs.conventions import bare_start
    from perturbation_bench.pairs.fields import TASK
    from perturbation_bench.pairs.settings import TaskSettings

    settings = TaskSettings()
    assert not bare_start(None) and not bare_start({}) and not bare_start({TASK: settings})
    assert bare_start({TASK: TaskSettings(start_token="none")})


def test_a_chromosome_shorter_than_the_window_is_excluded_only_when_shifting(tmp_path, capsys):
    """Shifting needs W real bases; padding reads N past the ends, truncation cuts there."""
    from perturbation_bench.variants.windows import _window_span

    (tmp_path / "g.fa").write_text(">short\nACGTACGTACGTACGTACGT\n")
    pd.DataFrame([("short", 10, "C", "G")], columns=["chrom", "pos", "ref", "alt"]).to_csv(
        tmp_path / "v.csv", index=False
    )
    lengths = {}
    for edge in ("shift", "pad", "truncate"):
        code = main(
            [
                "build",
                "variants",
                "--variants",
                str(tmp_path / "v.csv"),
                "--fasta",
                str(tmp_path / "g.fa"),
                "--config",
                edge,
                "--out",
                str(tmp_path / "out"),
                "--window",
                "32",
                "--edge",
                edge,
            ]
        )
        if edge == "shift":
            assert code != 0 and "'chromosome_shorter_than_window': 1" in capsys.readouterr().err
            continue
        report = json.loads((tmp_path / "out" / edge / "_build_report.json").read_text())
        assert report["excluded"] == {} and report["settings"]["edge"] == edge
        lengths[edge] = len(pd.read_parquet(tmp_path / "out" / edge)["original_sequence"][0])
    assert lengths == {"pad": 32, "truncate": 20}
    with pytest.raises(ValueError, match="unknown edge rule 'mirror'; rules: shift, pad, truncate"):
        _window_span(0, 32, 100, "mirror")

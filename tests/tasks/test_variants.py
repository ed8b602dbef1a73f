"""The variant task's label kinds (``tasks/variants.py``): a float label column is quantitative and
reported as Spearman's and Pearson's correlations, equal to scipy's; binary labels keep the
ranking metrics."""

from __future__ import annotations

import json
import logging
import math
import random
import re
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from dna_fixtures import build_variants, evaluate, random_genome, snvs_at
from perturbation_bench.cli import main
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_variants"


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    return random_genome(tmp_path_factory.mktemp("sge"), {"chr17": 1500, "chr13": 900}, 18)


def screen(sequences, n: int = 36, seed: int = 1) -> pd.DataFrame:
    """A saturation-genome-editing-like table: SNVs with a function score (a few missing), a
    class, and hg19-style chromosome names without 'chr'."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        chrom = "chr17" if i % 3 else "chr13"
        pos = rng.randrange(100, len(sequences[chrom]) - 100)
        ref = sequences[chrom][pos - 1]
        alt = rng.choice([b for b in "ACGT" if b != ref])
        score = None if i % 11 == 5 else round(rng.gauss(-0.5, 1.0), 3)
        rows.append(
            {
                "chrom": chrom[3:],
                "pos": pos,
                "ref": ref,
                "alt": alt,
                "label": score,
                "func_class": rng.choice(["FUNC", "INT", "LOF"]),
            }
        )
    return pd.DataFrame(rows).drop_duplicates(["chrom", "pos", "alt"])


def build(root, table: pd.DataFrame, fasta, config: str = "sge") -> pd.DataFrame:
    table.to_csv(root / f"{config}.csv", index=False)
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(root / f"{config}.csv"),
                "--fasta",
                str(fasta),
                "--config",
                config,
                "--out",
                str(root / "out"),
                "--window",
                "64",
            ]
        )
        == 0
    )
    return pd.read_parquet(root / "out" / config)


@pytest.mark.parametrize(
    "column, expected",
    [
        ([0.25, -1.5, None, 2.0], "double"),  # scores
        ([1, 0, 0, 1], "bool"),  # numbers 1/0 are a binary label
        ([1.0, None, 0.0, 1.0], "bool"),  # so are 1.0/0.0 with gaps
        (["true", "false", "1", ""], "bool"),  # and text
        ([3, 0, 1, 2], "double"),  # integers other than 0/1 are scores
    ],
)
def test_a_label_column_is_quantitative_when_it_holds_numbers_other_than_0_and_1(
    genome, tmp_path, column, expected
):
    fasta, sequences = genome
    table = screen(sequences, n=4)
    table["label"] = column
    built = build(tmp_path, table, fasta)
    import pyarrow.parquet as pq

    assert (
        str(pq.read_schema(next((tmp_path / "out" / "sge").glob("*.parquet"))).field("label").type)
        == expected
    )
    if expected == "double":
        assert built["label"].tolist()[:2] == [float(column[0]), float(column[1])]


def run_task(tiny_models, tmp_path, config: str, **metadata) -> dict:
    """The variant task on ``tmp_path/out/<config>`` with the character-level model, its
    samples logged under ``tmp_path/run``."""
    return evaluate(
        tiny_models["char"],
        [TASK],
        {"config": config, "data_dir": str(tmp_path / "out"), **metadata},
        model="dna-hf",
        output_path=tmp_path / "run",
    )


def test_the_variant_task_reports_scipys_correlations_for_quantitative_labels(
    tiny_models, genome, tmp_path
):
    fasta, sequences = genome
    rows = build(tmp_path, screen(sequences), fasta)
    result = run_task(tiny_models, tmp_path, "sge")
    margins = [a - b for a, b in logged_pairs(result, TASK)]
    labelled = [(m, y) for m, y in zip(margins, rows["label"], strict=True) if y == y]
    assert len(labelled) < len(rows) and len(labelled) > 25
    got = result["results"][TASK]
    assert got["spearman,pairs"] == pytest.approx(
        stats.spearmanr(*zip(*labelled, strict=True))[0], abs=1e-12
    )
    assert got["pearson,pairs"] == pytest.approx(
        stats.pearsonr(*zip(*labelled, strict=True))[0], abs=1e-12
    )
    assert not any(key.startswith(("auroc", "auprc")) for key in got)
    from perturbation_bench.report.make import make_report

    report = make_report(
        [next((tmp_path / "run").iterdir())], tmp_path / "report", n_boot=200, se_boot=2,
        se_chrom_boot=2,
    )  # fmt: skip
    (row,) = report["variants"]["correlations"]
    assert (row["n"], row["spearman"]) == (len(labelled), pytest.approx(got["spearman,pairs"]))
    assert report["variants"]["summary"] == []
    assert (
        "## Variant effect (quantitative labels)" in (tmp_path / "report" / "report.md").read_text()
    )
    assert report["figures"]["score_against_label"] and not report["figures"]["roc"]
    assert (tmp_path / "report" / "score_against_label.png").is_file()


def test_binary_labels_keep_their_ranking_metrics_only(tiny_models, genome, tmp_path):
    fasta, sequences = genome
    table = screen(sequences, n=20)
    table["label"] = table["label"].fillna(0) < -0.5
    build(tmp_path, table, fasta, "binary")
    result = evaluate(
        tiny_models["char"],
        [TASK],
        {"config": "binary", "data_dir": str(tmp_path / "out")},
        model="dna-hf",
    )
    keys = {key.split(",")[0] for key in result["results"][TASK]}
    assert {"auroc", "auprc"} <= keys and not keys & {"spearman", "pearson"}


NABENCH = Path(__file__).parent.parent / "data" / "nabench"


def test_real_nabench_assays_are_scored_apart_and_macro_averaged(tiny_models, tmp_path):
    """Two real NABench assays: the task's and the report's per-assay Spearman equal scipy's on
    each assay alone (LLR against the fitness score turned to damaging), the macro their mean,
    and no pooled correlation is reported."""
    from perturbation_bench.report.make import make_report

    files = sorted(map(str, NABENCH.glob("*.csv")))
    args = ["build", "variants", "--from", "nabench", "--variants", *files]
    assert main([*args, "--config", "nabench", "--out", str(tmp_path / "out")]) == 0
    built = pd.read_parquet(tmp_path / "out" / "nabench")
    result = run_task(tiny_models, tmp_path, "nabench")
    margins = dict(
        zip(built["sequence"], (a - b for a, b in logged_pairs(result, TASK)), strict=True)
    )
    expected = {}
    for assay, rows in built.groupby("assay"):
        llr = [margins[s] for s in rows["sequence"]]
        expected[assay] = stats.spearmanr(llr, -rows["label"])[0]
    got = result["results"][TASK]
    assert len(expected) == 2 and got["spearman_macro,pairs"] == pytest.approx(
        sum(expected.values()) / 2, abs=1e-12
    )
    assert not any(key.startswith(("spearman,", "pearson,", "auroc")) for key in got)
    report = make_report(
        [next((tmp_path / "run").iterdir())], tmp_path / "report", n_boot=50, se_boot=2,
        se_chrom_boot=2,
    )  # fmt: skip
    variants = report["variants"]
    cells = {c["assay"]: c for c in variants["assays"] if c["column"] == "all"}
    assert {a: c["spearman"] for a, c in cells.items()} == pytest.approx(expected, abs=1e-12)
    assert {a: c["n"] for a, c in cells.items()} == built.groupby("assay").size().to_dict()
    (macro,) = variants["assay_macros"]
    assert macro["spearman_macro"] == pytest.approx(got["spearman_macro,pairs"], abs=1e-12)
    assert variants["correlations"] == [] and variants["summary"] == []
    assert "## Variant effect per assay" in (tmp_path / "report" / "report.md").read_text()


def test_binary_assays_are_gated_per_class_and_the_gated_one_reports_its_n(
    tiny_models, genome, tmp_path
):
    from sklearn.metrics import roc_auc_score

    from perturbation_bench.report.make import make_report

    fasta, sequences = genome
    table = screen(sequences, n=48, seed=4).reset_index(drop=True)
    table["label"] = (table.index % 2 == 0) & (table.index < 40) | (table.index % 5 == 1)
    table["screen_id"] = ["big" if i < 40 else "small" for i in table.index]
    table["region"] = ["exon" if i % 3 else "intron" for i in table.index]
    table.to_csv(tmp_path / "screens.csv", index=False)
    args = ["build", "variants", "--variants", str(tmp_path / "screens.csv"), "--fasta"]
    args += [str(fasta), "--config", "screens", "--out", str(tmp_path / "out"), "--window", "64"]
    assert main([*args, "--assay-column", "screen_id"]) == 0
    built = pd.read_parquet(tmp_path / "out" / "screens")
    result = run_task(tiny_models, tmp_path, "screens", min_per_class=4)
    margins = [a - b for a, b in logged_pairs(result, TASK)]
    big = built["assay"] == "big"
    labels = built["label"].astype(bool)
    small_positives = int(labels[~big].sum())
    assert small_positives < 4 <= min(labels[big].sum(), (~labels[big]).sum())
    scores = pd.Series(margins)
    auroc_big = roc_auc_score(labels[big], scores[big])
    got = result["results"][TASK]
    assert got["auroc_macro,pairs"] == pytest.approx(auroc_big, abs=1e-12)
    assert "auroc,pairs" not in got and "auroc_by_chrom,pairs" not in got
    report = make_report(
        [next((tmp_path / "run").iterdir())], tmp_path / "report", by=["region"], n_boot=50,
        se_boot=2, se_chrom_boot=2,
    )  # fmt: skip
    cells = {(c["column"], c["value"], c["assay"]): c for c in report["variants"]["assays"]}
    small = cells[("all", "all", "small")]
    assert (small["auroc"], small["n"], small["n_positive"]) == (None, 8, small_positives)
    for region in ("exon", "intron"):
        rows = big & (built["region"] == region)
        cell = cells[("region", region, "big")]
        if min(labels[rows].sum(), (~labels[rows]).sum()) >= 4:
            assert cell["auroc"] == pytest.approx(roc_auc_score(labels[rows], scores[rows]))
        else:
            assert cell["auroc"] is None
    macros = {(m["column"], m["value"]): m for m in report["variants"]["assay_macros"]}
    assert macros[("all", "all")]["auroc_macro"] == pytest.approx(auroc_big, abs=1e-12)
    assert macros[("all", "all")]["assays_gated"] == ["small"]
    assert "below the gate (n=8" in (tmp_path / "report" / "report.md").read_text()


@pytest.fixture(scope="module")
def snvs(genome, tmp_path_factory) -> pd.DataFrame:
    """A config of 24 labelled single-base variants (window 64) and its rows."""
    from dna_fixtures import labelled_snvs

    root = tmp_path_factory.mktemp("marginal")
    table = labelled_snvs(genome[1], 24, 5, 40, lambda i, rng: i % 3 == 0)
    return root, build(root, table, genome[0], "snvs")


def _scores(root, path: str, score: str, model: str = "dna-hf", **options) -> dict:
    """The task's per-variant score ``s`` (the item its ranking metrics read) and its margin
    ``LL(ref) - LL(alt)``, by doc id."""
    metadata = {"config": "snvs", "data_dir": str(root / "out"), "score": score, **options}
    result = evaluate(path, [TASK], metadata, model=model)
    return {s["doc_id"]: (s["auroc"][0], s["margin"]) for s in result["samples"][TASK]}


def _allele_windows(row) -> tuple[int, dict[str, str]]:
    original, perturbed = row["original_sequence"], row["sequence"]
    (site,) = [i for i, (a, b) in enumerate(zip(original, perturbed, strict=True)) if a != b]
    return site, {x: original[:site] + x + original[site + 1 :] for x in "ACGT"}


def _entropy(lls: dict[str, float]) -> float:
    top = max(lls.values())
    total = sum(math.exp(v - top) for v in lls.values())
    return -sum(math.exp(v - top) / total * (v - top - math.log(total)) for v in lls.values())


def test_the_marginal_llr_is_the_llr_and_the_entropy_a_direct_four_window_computation(
    tiny_models, snvs, caplog, sharing_pays
):
    """Causal: LL(w_x) for x in ACGT, each window scored alone in float32 with transformers;
    the four windows of a site cost one prefix pass and four suffixes."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dna_fixtures import reference_ll

    root, rows = snvs
    path = tiny_models["char"]
    marginal_llr = _scores(root, path, "marginal_llr")
    assert set(marginal_llr) == set(range(len(rows)))
    assert max(abs(score - margin) for score, margin in marginal_llr.values()) < 1e-4
    with caplog.at_level("INFO", logger="lm_eval.perturbation_bench.models.causal_scoring"):
        entropy = _scores(root, path, "entropy")
    shared = (
        f"{len(rows)} piece groups share a prefix (one prefix pass each, {4 * len(rows)} pieces)"
    )
    assert shared in caplog.text
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    for i, row in rows.iterrows():
        _, windows = _allele_windows(row)
        lls = {x: reference_ll(model, tokenizer, "", w) for x, w in windows.items()}
        assert entropy[i][0] == pytest.approx(_entropy(lls), abs=1e-4)
        assert entropy[i][1] == pytest.approx(lls[row["ref"]] - lls[row["alt"]], abs=1e-4)
        assert 0 <= entropy[i][0] <= math.log(4) + 1e-9
    assert len({round(score, 6) for score, _ in entropy.values()}) > 1


def test_with_both_strands_each_alleles_ll_is_its_strand_mean(tiny_models, snvs):
    """rc_average: LL(w_x) is the mean of the forward and reverse-complement windows of the
    same forward allele."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dna_fixtures import reference_ll, reverse_complement

    root, rows = snvs
    path = tiny_models["char"]
    entropy = _scores(root, path, "entropy", rc_average=True)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)

    def both_strands(window: str) -> float:
        forward = reference_ll(model, tokenizer, "", window)
        return (forward + reference_ll(model, tokenizer, "", reverse_complement(window))) / 2

    for i, row in rows.head(8).iterrows():
        _, windows = _allele_windows(row)
        lls = {x: both_strands(w) for x, w in windows.items()}
        assert entropy[i][0] == pytest.approx(_entropy(lls), abs=1e-4)


def test_a_masked_models_entropy_is_the_masked_distribution_at_the_site(tmp_path, snvs, caplog):
    """Masked: one input, the site masked; its log-probabilities of A, C, G, T, renormalised.
    The four alleles' windows masked at the site are one input: one forward pass per site."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from dna_fixtures import build_tokenizer, log_probs
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    root, rows = snvs
    path = str(save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer("char"))))
    with caplog.at_level("INFO", logger="lm_eval.perturbation_bench.models.masked_scoring"):
        entropy = _scores(root, path, "entropy", model="dna-mlm")
    sites = len({(row["chrom"], row["pos"]) for _, row in rows.iterrows()})
    assert f"{2 * len(rows)} masked inputs, {sites} distinct" in caplog.text
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    for i, row in rows.iterrows():
        site, _ = _allele_windows(row)
        encoded = tokenizer(row["original_sequence"], return_offsets_mapping=True)
        (token,) = [k for k, (a, b) in enumerate(encoded["offset_mapping"]) if a <= site < b]
        ids = list(encoded["input_ids"])
        ids[token] = tokenizer.mask_token_id
        table = log_probs(model, ids)
        lls = {x: table[token, tokenizer.convert_tokens_to_ids(x)].item() for x in "ACGT"}
        assert entropy[i][0] == pytest.approx(_entropy(lls), abs=1e-4)


def test_a_marginal_score_refuses_a_variant_that_is_not_one_base(tiny_models, genome, tmp_path):
    from perturbation_bench.errors import OptionsError

    sequences = genome[1]
    table = pd.DataFrame(
        [
            {
                "chrom": "chr17",
                "pos": 300,
                "ref": sequences["chr17"][299],
                "alt": "A" if sequences["chr17"][299] != "A" else "C",
                "label": True,
            },
            {
                "chrom": "chr17",
                "pos": 500,
                "ref": sequences["chr17"][499:501],
                "alt": sequences["chr17"][499],
                "label": False,
            },
        ]
    )
    build(tmp_path, table, genome[0], "snvs")
    with pytest.raises(OptionsError, match=r"reads single-base variants; 1 of 2 variants of snvs"):
        _scores(tmp_path, tiny_models["char"], "entropy")


def test_the_report_reads_a_marginal_score_as_the_task_gave_it(tiny_models, snvs, tmp_path):
    from perturbation_bench.report.make import make_report

    root, rows = snvs
    metadata = {"config": "snvs", "data_dir": str(root / "out"), "score": "entropy"}
    result = evaluate(tiny_models["char"], [TASK], metadata, "dna-hf", tmp_path / "run")
    by_doc = {s["doc_id"]: s["auroc"][0] for s in result["samples"][TASK]}
    make_report([tmp_path / "run"], tmp_path / "report", n_boot=20, se_boot=2, se_chrom_boot=2)
    pairs = pd.read_parquet(tmp_path / "report" / "pairs.parquet").sort_values("doc_id")
    assert pairs["score"].tolist() == pytest.approx([by_doc[i] for i in pairs["doc_id"]], abs=1e-9)
    assert set(pairs["score_kind"]) == {"entropy"}
    assert pairs["margin_forward"].isna().all()  # four requests, one strand: no strand margins


@pytest.mark.parametrize("model, share", [("dna-hf", True), ("dna-hf", False), ("dna-mlm", None)])
def test_the_downstream_jsd_is_a_direct_two_window_computation(
    model, share, tiny_models, snvs, tmp_path, caplog
):
    """dna-hf: the next-base predictions after the site (the tokens before it run once for
    both windows, or each window whole); dna-mlm: the unmasked window's own predictions of the
    bases after the site; each against scipy on a float64 softmax."""
    import numpy as np
    import torch
    from scipy.spatial.distance import jensenshannon
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    from dna_fixtures import build_tokenizer, reverse_complement
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert
    from perturbation_bench.report.make import make_report

    root, rows = snvs
    path = tiny_models["char"]
    if model == "dna-mlm":
        tokenizer = as_masked_lm_tokenizer(build_tokenizer("char"))
        path = str(save_random_bert(tmp_path / "mlm", tokenizer))
    metadata = {"config": "snvs", "data_dir": str(root / "out"), "score": "jsd"}
    metadata["rc_average"] = model == "dna-mlm"  # the mean of both strands' s
    options = {} if share is None else {"share_prefix": share}
    with caplog.at_level("INFO", logger="lm_eval.perturbation_bench.models.jsd_scoring"):
        result = evaluate(path, [TASK], metadata, model, tmp_path / "run", **options)
    shared = re.search(r"downstream JSD of (\d+) pairs, (\d+) sharing", caplog.text).groups()
    strands = 2 if metadata["rc_average"] else 1
    assert shared == (str(strands * len(rows)), str(len(rows) if share else 0))
    samples = {s["doc_id"]: s for s in result["samples"][TASK]}
    assert "pairwise_acc" not in result["results"][TASK]  # a JSD has no direction
    loader = AutoModelForMaskedLM if model == "dna-mlm" else AutoModelForCausalLM
    network = loader.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    bases = tokenizer.convert_tokens_to_ids(list("ACGT"))

    def base_predictions(window: str) -> np.ndarray:
        """Row j: the prediction of base j (causal: from the row before it; masked: its own
        row after <s>, nothing masked)."""
        ids = tokenizer(window, add_special_tokens=False)["input_ids"]
        tail = [tokenizer.eos_token_id] if model == "dna-mlm" else []  # <s> ... </s>
        with torch.no_grad():
            logits = (
                network(torch.tensor([[tokenizer.bos_token_id, *ids, *tail]]))
                .logits[0]
                .double()
                .numpy()
            )
        chosen = logits[:, bases]
        chosen = np.exp(chosen - chosen.max(axis=1, keepdims=True))
        chosen /= chosen.sum(axis=1, keepdims=True)
        return chosen[1 : len(window) + 1] if model == "dna-mlm" else chosen[: len(window)]

    def jsd(reference: str, alternate: str, site: int) -> float:
        p, q = base_predictions(reference), base_predictions(alternate)
        return np.mean([jensenshannon(p[j], q[j]) ** 2 for j in range(site + 1, len(p))])

    for i, row in rows.iterrows():
        site, _ = _allele_windows(row)
        expected = jsd(row["original_sequence"], row["sequence"], site)
        if metadata["rc_average"]:
            flipped = [reverse_complement(row[c]) for c in ("original_sequence", "sequence")]
            expected = (expected + jsd(*flipped, len(row["sequence"]) - 1 - site)) / 2
        assert samples[i]["auroc"][0] == pytest.approx(expected, abs=1e-5)
    if not share:
        return
    make_report([tmp_path / "run"], tmp_path / "report", n_boot=20, se_boot=2, se_chrom_boot=2)
    pairs = pd.read_parquet(tmp_path / "report" / "pairs.parquet")
    assert set(pairs["scale"]) == {"jsd"} and set(pairs["score_kind"]) == {"jsd"}
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["summary"] == [] and len(report["variants"]["summary"]) == 1


@pytest.mark.parametrize(
    "model, kind, message",
    [
        ("kmer-markov", "", r"score jsd is computed by dna-hf or dna-mlm .* not by kmer-markov"),
        ("dna-mlm", "pll", r"score jsd is computed by .* not by dna-mlm scoring=pll"),
        ("dna-hf", "kmer6", r"score jsd .* needs A, C, G and T as single tokens .* none for A, C"),
        ("dna-mlm", "kmer6", r"score jsd .* needs A, C, G and T as single tokens"),
        ("dna-hf", "bpe", r"score jsd reads one token per base; .* has 64 bases in \d+ tokens"),
    ],
)
def test_jsd_refuses_other_models_and_tokenizers_in_one_line(
    model, kind, message, snvs, genome, tiny_models, tmp_path
):
    from dna_fixtures import build_tokenizer
    from perturbation_bench.errors import OptionsError
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    root, _ = snvs
    tokenizer = "char" if kind == "pll" else kind
    path = tiny_models[tokenizer] if kind else str(genome[0])
    if model == "dna-mlm":  # a masked model of the same tokenizer
        path = str(
            save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer(tokenizer)))
        )
    metadata = {"config": "snvs", "data_dir": str(root / "out"), "score": "jsd"}
    scoring = {"scoring": "pll"} if kind == "pll" else {}
    with pytest.raises(OptionsError, match=message):
        evaluate(path, [TASK], metadata, model, **scoring)


def test_a_dna_hf_jsd_run_is_served_from_its_cache_when_run_again(
    snvs, tiny_models, tmp_path, monkeypatch
):
    """``--use_cache`` keeps each JSD answer in the model's store: a second run scores nothing
    and gives the first run's values."""
    from perturbation_bench.models.jsd_scoring import JSDScorer

    root, _ = snvs
    jsd = {"config": "snvs", "data_dir": str(root / "out"), "score": "jsd"}
    cache = str(tmp_path / "cache")
    first = logged_pairs(
        evaluate(tiny_models["char"], [TASK], jsd, "dna-hf", use_cache=cache), TASK
    )

    def refuse(*args, **kwargs):
        raise AssertionError("a cached run scored again")

    monkeypatch.setattr(JSDScorer, "scores", refuse)
    again = logged_pairs(
        evaluate(tiny_models["char"], [TASK], jsd, "dna-hf", use_cache=cache), TASK
    )
    assert again == first and all(s > 0 and alternate == 0 for s, alternate in first)


@pytest.mark.parametrize("start", [{"dna_prefix": "<dna>"}, {"start_token": "none"}])
def test_the_jsd_reads_the_bases_after_a_dna_prefix_or_none(tiny_models, snvs, start):
    """With a DNA prefix (``dna_prefix: <dna>``) before every window, the rows that predict
    the bases after the site are counted from the prefix's tokens; with nothing before the
    window (``start_token: none``), from its first base."""
    import numpy as np
    import torch
    from scipy.spatial.distance import jensenshannon
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root, rows = snvs
    path = tiny_models["char"]
    metadata = {"config": "snvs", "data_dir": str(root / "out"), "score": "jsd"}
    result = evaluate(path, [TASK], {**metadata, **start}, "dna-hf")
    samples = {s["doc_id"]: s for s in result["samples"][TASK]}
    network = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    bases = tokenizer.convert_tokens_to_ids(list("ACGT"))
    prefix = tokenizer(start.get("dna_prefix", ""), add_special_tokens=False)["input_ids"]

    def base_predictions(window: str) -> np.ndarray:
        """Row j: the prediction of base j (none for the first base without a prefix)."""
        ids = prefix + tokenizer(window, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = network(torch.tensor([ids])).logits[0, :, bases].double().numpy()
        chosen = np.exp(logits - logits.max(axis=1, keepdims=True))
        chosen /= chosen.sum(axis=1, keepdims=True)
        first = len(prefix) - 1  # the row that predicts base 0 (-1: none)
        return np.concatenate([np.full((max(0, -first), 4), np.nan), chosen[max(0, first) :]])[
            : len(window)
        ]

    for i, row in rows.iterrows():
        site, _ = _allele_windows(row)
        p, q = base_predictions(row["original_sequence"]), base_predictions(row["sequence"])
        expected = np.mean([jensenshannon(p[j], q[j]) ** 2 for j in range(site + 1, len(p))])
        assert samples[i]["auroc"][0] == pytest.approx(expected, abs=1e-5)


def test_replicate_assay_files_are_two_assays_in_the_task_and_the_report(tiny_models, tmp_path):
    """NABench's replicates ``..._R1_...`` and ``..._R2_...``: the same wild type and mutants,
    other scores (R2's reversed). Every pair is kept in both assays, each assay scored alone
    (scipy on its own rows) and the macro their mean, in the task and the report."""
    from perturbation_bench.report.make import make_report

    first = pd.read_csv(NABENCH / "Eilon_2012_dna_R1_promoter.csv")
    second = first.assign(DMS_score=first["DMS_score"].to_numpy()[::-1])
    files = [
        tmp_path / "Eilon_2012_dna_R1_promoter.csv",
        tmp_path / "Eilon_2012_dna_R2_promoter.csv",
    ]
    first.to_csv(files[0], index=False)
    second.to_csv(files[1], index=False)
    args = ["build", "variants", "--from", "nabench", "--variants", *map(str, files)]
    assert main([*args, "--config", "reps", "--out", str(tmp_path / "out")]) == 0
    built = pd.read_parquet(tmp_path / "out" / "reps")
    report = json.loads((tmp_path / "out" / "reps" / "_build_report.json").read_text())
    sizes = built.groupby("assay").size().to_dict()
    assert "duplicate_pair" not in report["excluded"] and len(sizes) == 2
    assert sizes["Eilon_2012_dna_R1_promoter"] == sizes["Eilon_2012_dna_R2_promoter"]
    result = run_task(tiny_models, tmp_path, "reps")
    margins = [a - b for a, b in logged_pairs(result, TASK)]
    expected = {
        assay: stats.spearmanr([margins[i] for i in rows.index], -rows["label"])[0]
        for assay, rows in built.groupby("assay")
    }
    assert expected["Eilon_2012_dna_R1_promoter"] != pytest.approx(
        expected["Eilon_2012_dna_R2_promoter"]
    )
    got = result["results"][TASK]["spearman_macro,pairs"]
    assert got == pytest.approx(sum(expected.values()) / 2, abs=1e-12)
    made = make_report(
        [next((tmp_path / "run").iterdir())], tmp_path / "report", n_boot=20, se_boot=2,
        se_chrom_boot=2,
    )  # fmt: skip
    cells = {c["assay"]: c for c in made["variants"]["assays"] if c["column"] == "all"}
    assert {a: c["spearman"] for a, c in cells.items()} == pytest.approx(expected, abs=1e-12)
    assert {a: c["n"] for a, c in cells.items()} == sizes
    (macro,) = made["variants"]["assay_macros"]
    assert (macro["assays"], macro["spearman_macro"]) == (2, pytest.approx(got, abs=1e-12))


@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
def test_a_jsd_at_a_chromosome_s_last_base_is_nan_named_and_left_out(
    genome, tiny_models, tmp_path, caplog, model
):
    """No base follows the variant: its s is NaN, the log counts and names it, and the ranking
    metrics are those of the other variants."""
    from sklearn.metrics import roc_auc_score

    from dna_fixtures import build_tokenizer
    from perturbation_bench.fixtures.random_models import as_masked_lm_tokenizer, save_random_bert

    fasta, sequences = genome
    last = len(sequences["chr13"])
    sites = [("chr13", p) for p in [*range(100, 700, 100), last]]
    snvs_at(sequences, sites, lambda i: i % 2 == 0).to_csv(tmp_path / "v.csv", index=False)
    build_variants(tmp_path, tmp_path / "v.csv", fasta, "v", window=40)
    path = tiny_models["char"]
    if model == "dna-mlm":
        path = str(
            save_random_bert(tmp_path / "mlm", as_masked_lm_tokenizer(build_tokenizer("char")))
        )
    metadata = {"config": "v", "data_dir": str(tmp_path / "out"), "score": "jsd"}
    with caplog.at_level(logging.WARNING):
        result = evaluate(path, [TASK], metadata, model, output_path=tmp_path / "run")
    samples = sorted(result["samples"][TASK], key=lambda s: s["doc_id"])
    score, label = samples[-1]["auroc"][:2]
    assert math.isnan(score) and label is None
    assert (
        f"{model}: 1 variant(s) are the last base of their window (a chromosome's last base): no "
        "base after them to read, so their jsd is NaN and the ranking metrics leave them out "
        f"(first: {TASK} doc 6 (variant_id='chr13:{last}:"
    ) in caplog.text
    kept = [s["auroc"] for s in samples[:-1]]
    expected = roc_auc_score([bool(k[1]) for k in kept], [k[0] for k in kept])
    assert result["results"][TASK]["auroc,pairs"] == pytest.approx(expected, abs=1e-12)
    from perturbation_bench.report.make import make_report

    make_report([tmp_path / "run"], tmp_path / "report", n_boot=20, se_boot=2, se_chrom_boot=2)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (row,) = report["variants"]["summary"]
    assert (row["auroc"], row["n"]) == (pytest.approx(expected, abs=1e-12), 6)

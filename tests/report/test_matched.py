"""Matched-group metrics (``report/matched.py``): match-group accuracy, pairwise accuracy with its
Wald SE, Global and Macro Avg over consequences, against an independent computation from the
run's logged samples."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pandas as pd
import pytest

from dna_fixtures import build_variants, evaluate, random_genome
from perturbation_bench.report.make import make_report
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_variants"


def test_matched_groups_give_the_leaderboards_numbers(tiny_models, tmp_path):
    fasta, sequences = random_genome(tmp_path, {"chr1": 3000, "chr2": 2500}, 17)
    rng = random.Random(6)
    rows = []
    for group in range(30):  # 1 positive and 3 matched negatives each, one consequence a group
        consequence = "missense_variant" if group < 20 else "intron_variant"
        for member in range(4):
            chrom = rng.choice(["chr1", "chr2"])
            pos = rng.randrange(40, len(sequences[chrom]) - 40)
            ref = sequences[chrom][pos - 1]
            alt = rng.choice([b for b in "ACGT" if b != ref])
            rows.append(
                {"chrom": chrom, "pos": pos, "ref": ref, "alt": alt, "label": member == 0,
                 "match_group": f"g{group}", "consequence": consequence}
            )  # fmt: skip
    pd.DataFrame(rows).drop_duplicates(["chrom", "pos", "alt"]).to_csv(
        tmp_path / "v.csv", index=False
    )
    table = build_variants(tmp_path, tmp_path / "v.csv", fasta, "matched", window=48)
    metadata = {"data_dir": str(tmp_path / "out"), "config": "matched"}
    result = evaluate(
        tiny_models["char"], [TASK], metadata, model="dna-hf", output_path=tmp_path / "run"
    )
    report = make_report(
        [next((tmp_path / "run").iterdir())], tmp_path / "report", n_boot=20, se_boot=5,
        se_chrom_boot=5, min_subset=45,
    )  # fmt: skip
    (got,) = report["variants"]["matched"]
    scores = [o - p for o, p in logged_pairs(result, TASK)]
    frame = table.assign(score=scores)
    correct, by_consequence, tops = [], {}, []
    for _, members in frame.groupby("match_group"):
        positives, negatives = members[members["label"]], members[~members["label"]]
        if positives.empty or negatives.empty:
            continue
        tops.append(positives["score"].max() > negatives["score"].max())
        for (_, p), (_, n) in itertools.product(positives.iterrows(), negatives.iterrows()):
            correct.append(p["score"] > n["score"])
            by_consequence.setdefault(p["consequence"], []).append(p["score"] > n["score"])
    p = np.mean(correct)
    assert got["global"]["n_pairs"] == len(correct) and len(correct) > 60
    assert got["global"]["pairwise_acc"] == pytest.approx(p)
    assert got["global"]["se"] == pytest.approx(math.sqrt(p * (1 - p) / len(correct)))
    assert got["group_accuracy"] == pytest.approx(np.mean(tops))
    for name, values in by_consequence.items():
        assert got["by_subset"][name]["pairwise_acc"] == pytest.approx(np.mean(values))
    kept = {k: v for k, v in by_consequence.items() if len(v) >= 45}
    assert set(kept) == {"missense_variant"}  # 20 groups x 3 pairs; introns 30 pairs left out
    assert got["subsets_left_out"] == {"intron_variant": len(by_consequence["intron_variant"])}
    assert got["macro_avg"]["pairwise_acc"] == pytest.approx(np.mean(kept["missense_variant"]))
    assert "## Matched groups" in (tmp_path / "report" / "report.md").read_text()
    by_chrom = make_report(
        [next((tmp_path / "run").iterdir())], tmp_path / "r2", by=["chrom"], n_boot=20,
        se_boot=5, se_chrom_boot=5,
    )["variants"]["matched"][0]["by_subset"]  # fmt: skip
    positives = frame[frame["label"]].set_index("match_group")["chrom"]
    for chrom, cell in by_chrom.items():  # subsets by the first --by column, of the positive
        pairs_of = [g for g in positives.index if positives[g] == chrom]
        assert cell["n_pairs"] == sum((frame["match_group"] == g).sum() - 1 for g in pairs_of)


def test_both_strands_of_an_rc_average_run_are_compared(genome_and_snvs, tmp_path):
    """kmer-markov on both strands: the forward and reverse-complement scores, read here from
    lm-eval's raw responses, give the report's Spearman, sign agreement and per-strand AUPRC."""
    import json

    from scipy.stats import spearmanr
    from sklearn.metrics import average_precision_score

    fasta, data = genome_and_snvs
    metadata = {"data_dir": str(data), "config": "snvs", "rc_average": True}
    evaluate(
        str(fasta), [TASK], metadata, model="kmer-markov", order=3, output_path=tmp_path / "run"
    )
    folder = next((tmp_path / "run").iterdir())
    report = make_report([folder], tmp_path / "report", n_boot=20, se_boot=5, se_chrom_boot=5)
    (row,) = report["variants"]["strands"]
    samples = [json.loads(line) for line in next(folder.glob("samples_*.jsonl")).open()]
    lls = np.array([[float(r[0][0]) for r in s["resps"]] for s in samples])
    forward, reverse = lls[:, 0] - lls[:, 1], lls[:, 2] - lls[:, 3]
    labels = np.array([bool(s["doc"]["label"]) for s in samples])
    assert row["n"] == len(samples) > 30
    assert row["spearman"] == pytest.approx(spearmanr(forward, reverse)[0])
    assert row["sign_agreement"] == pytest.approx(np.mean(np.sign(forward) == np.sign(reverse)))
    assert row["auprc_forward"] == pytest.approx(average_precision_score(labels, forward))
    assert row["auprc_reverse"] == pytest.approx(average_precision_score(labels, reverse))
    assert row["auprc_average"] == pytest.approx(
        average_precision_score(labels, (forward + reverse) / 2)
    )
    assert row["spearman"] < 1.0  # an order-3 chain reads the two strands differently
    assert "## Strand consistency" in (tmp_path / "report" / "report.md").read_text()


@pytest.fixture
def genome_and_snvs(tmp_path):
    from dna_fixtures import labelled_snvs

    fasta, sequences = random_genome(tmp_path, {"chr1": 2000, "chr2": 1500}, 23)
    labelled_snvs(sequences, 50, 3, 40, lambda i, rng: rng.random() < 0.4).to_csv(
        tmp_path / "snvs.csv", index=False
    )
    build_variants(tmp_path, tmp_path / "snvs.csv", fasta, "snvs", window=40)
    return fasta, tmp_path / "out"


def test_traitgym_s_rule_takes_the_first_top_row_and_weights_groups_by_size():
    """Three groups by hand, in data order (doc_id): g1 a tie between its positive (first) and a
    negative: TraitGym's argmax takes the positive, 1 (the strict rule: 0); g2 the same tie with
    the negative first: 0; g3 its positive on top: 1. Weighted by size (3, 4, 2):
    (3 + 0 + 2) / 9 (the last top row winning would give 6 / 9). g4, with two positives, is left out (TraitGym asserts one). The
    strict rule stays for a run without the convention: g1 0, g2 0, g3 1, g4 1, 2 / 4. The SE is the standard deviation of
    the 27 equally likely resamples of three groups, to the bootstrap's precision."""
    from perturbation_bench.report.matched import matched_metrics

    rows = [  # (match_group, label, score)
        ("g1", True, 0.5), ("g1", False, 0.5), ("g1", False, 0.1),
        ("g2", False, 0.7), ("g2", True, 0.7), ("g2", False, 0.2), ("g2", False, 0.1),
        ("g3", True, 0.9), ("g3", False, 0.1),
        ("g4", True, 0.3), ("g4", True, 0.2), ("g4", False, 0.1),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["match_group", "label", "score"]).assign(
        doc_id=range(len(rows)), model="m", task="t", score_kind="llr", labels="binary"
    )
    frame["pair_id"] = [f"{9 - i:02d}" for i in range(len(rows))]  # against the data's order
    (strict,) = matched_metrics(frame.assign(convention=None))
    assert (strict["group_rule"], strict["group_accuracy"]) == ("strict", pytest.approx(0.5))
    (traitgym,) = matched_metrics(frame.assign(convention="traitgym"))
    assert traitgym["group_rule"] == "traitgym" and traitgym["groups_left_out"] == 1
    assert traitgym["group_accuracy"] == pytest.approx(5 / 9, abs=1e-12)
    blocks = [(3, 1.0), (4, 0.0), (2, 1.0)]
    draws = [
        sum(n * v for n, v in pick) / sum(n for n, _ in pick)
        for pick in itertools.product(blocks, repeat=3)
    ]
    mean = sum(draws) / len(draws)
    exact = math.sqrt(sum((d - mean) ** 2 for d in draws) / len(draws))
    assert traitgym["group_accuracy_se"] == pytest.approx(exact, rel=0.1)


def matched_frame(groups: dict[str, tuple[str, list[float], list[float]]]) -> pd.DataFrame:
    """The report's rows of a model's variants: per match group, the positive's consequence and
    the positives' and negatives' scores."""
    rows = []
    for name, (consequence, positives, negatives) in groups.items():
        for label, scores in ((True, positives), (False, negatives)):
            rows += [
                {"model": "m", "task": TASK, "score_kind": "llr", "match_group": name,
                 "consequence": consequence, "label": label, "score": score}
                for score in scores
            ]  # fmt: skip
    return pd.DataFrame(rows).assign(pair_id=lambda f: [f"p{i:02d}" for i in range(len(f))])


def test_ties_are_wrong_one_class_groups_are_left_out_and_the_macro_is_unweighted():
    """A model that ties: g1's positive ties a negative (pairs: wrong, right; group: 0), g4's too
    (wrong, right; 0); g2 (right, wrong; 0), g3 (right; 1), g7 (right; 1). g5 and g6 hold one
    class: no pair, no group accuracy. Pairs: missense 3 of 5, intron 1 of 2, splice 1 of 1;
    with min_subset 2 the intron subset enters at exactly 2 pairs and splice is left out."""
    from perturbation_bench.report.matched import matched_metrics

    frame = matched_frame(
        {
            "g1": ("missense_variant", [1.0], [1.0, 0.0]),
            "g2": ("missense_variant", [2.0], [1.0, 3.0]),
            "g3": ("missense_variant", [5.0], [1.0]),
            "g4": ("intron_variant", [0.5], [0.5, 0.1]),
            "g5": ("intron_variant", [], [0.0, 1.0]),
            "g6": ("intron_variant", [1.0, 2.0], []),
            "g7": ("splice_variant", [3.0], [2.0]),
        }
    )
    (got,) = matched_metrics(frame, min_subset=2)
    assert got["groups"] == 7 and got["group_accuracy"] == 2 / 5
    assert (got["global"]["n_pairs"], got["global"]["pairwise_acc"]) == (8, 5 / 8)
    assert got["global"]["se"] == pytest.approx(math.sqrt(5 / 8 * 3 / 8 / 8), rel=1e-12)
    cells = {name: (c["n_pairs"], c["pairwise_acc"]) for name, c in got["by_subset"].items()}
    assert cells == {
        "intron_variant": (2, 0.5),
        "missense_variant": (5, 0.6),
        "splice_variant": (1, 1.0),
    }
    assert got["subsets_left_out"] == {"splice_variant": 1}
    se = {"missense": math.sqrt(0.6 * 0.4 / 5), "intron": math.sqrt(0.5 * 0.5 / 2)}
    assert got["macro_avg"]["subsets"] == 2
    assert got["macro_avg"]["pairwise_acc"] == pytest.approx((0.6 + 0.5) / 2, rel=1e-12)
    expected_se = math.sqrt(se["missense"] ** 2 + se["intron"] ** 2) / 2
    assert got["macro_avg"]["se"] == pytest.approx(expected_se, rel=1e-12)


def test_the_matched_section_shows_each_run_s_numbers_in_one_row():
    from perturbation_bench.report.matched import markdown

    row = {
        "model": "m", "task": TASK, "score": "llr", "groups": 7, "group_accuracy": 0.4,
        "group_rule": "strict", "global": {"n_pairs": 8, "pairwise_acc": 0.625, "se": 0.171},
        "macro_avg": {"pairwise_acc": 0.55, "se": 0.208, "subsets": 2},
        "subsets_left_out": {"splice_variant": 1, "stop_lost": 3}, "min_subset": 2,
    }  # fmt: skip
    bare = {**row, "model": "b", "macro_avg": None, "subsets_left_out": {}}
    lines = markdown([row, bare])
    assert "Macro Avg over the subsets with at least 2 pairs" in lines[3]
    assert "(strict)" in lines[3]
    assert lines[lines.index("## Matched groups") + 4 :] == [
        "| model | task | score | groups | group accuracy | Global (pairs) | Macro Avg (subsets) "
        "| left out |",
        "|---|---|---|---|---|---|---|---|",
        f"| m | {TASK} | llr | 7 | 0.400 | 0.625 ± 0.171 (8) | 0.550 ± 0.208 (2) | "
        "splice_variant (1), stop_lost (3) |",
        f"| b | {TASK} | llr | 7 | 0.400 | 0.625 ± 0.171 (8) | - | none |",
    ]
    assert markdown([]) == []

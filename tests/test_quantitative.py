"""Quantitative labels (a function score per variant): read as floats, reported as Spearman's and
Pearson's correlations by the variant task and the report, equal to scipy's."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from scipy import stats

from dna_fixtures import evaluate, random_genome
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


def test_the_variant_task_reports_scipys_correlations_for_quantitative_labels(
    tiny_models, genome, tmp_path
):
    fasta, sequences = genome
    rows = build(tmp_path, screen(sequences), fasta)
    result = evaluate(
        tiny_models["char"],
        [TASK],
        {"config": "sge", "data_dir": str(tmp_path / "out")},
        model="dna-hf",
        output_path=tmp_path / "run",
    )
    margins = [a - b for a, b in logged_pairs(result, TASK)]
    labelled = [(m, y) for m, y in zip(margins, rows["label"]) if y == y]
    assert len(labelled) < len(rows) and len(labelled) > 25
    got = result["results"][TASK]
    assert got["spearman,pairs"] == pytest.approx(stats.spearmanr(*zip(*labelled))[0], abs=1e-12)
    assert got["pearson,pairs"] == pytest.approx(stats.pearsonr(*zip(*labelled))[0], abs=1e-12)
    assert not any(key.startswith(("auroc", "auprc")) for key in got)
    from perturbation_bench.report.make import make_report

    report = make_report([next((tmp_path / "run").iterdir())], tmp_path / "report", n_boot=200)
    (row,) = report["variants"]["correlations"]
    assert (row["n"], row["spearman"]) == (len(labelled), pytest.approx(got["spearman,pairs"]))
    assert report["variants"]["summary"] == []
    assert (
        "## Variant effect (quantitative labels)" in (tmp_path / "report" / "report.md").read_text()
    )


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


def report_frame(seed: int = 3, n: int = 60) -> pd.DataFrame:
    rng = random.Random(seed)
    labels = [rng.gauss(0, 1) for _ in range(n)]
    return pd.DataFrame(
        {
            "model": "m",
            "task": "t",
            "score_kind": "llr",
            "labels": "quantitative",
            "label": labels,
            "score": [-y + rng.gauss(0, 1.5) for y in labels],
            "chrom": [rng.choice(["13", "17"]) for _ in range(n)],
            "consequence": [
                rng.choice(["missense_variant", "synonymous_variant"]) for _ in range(n)
            ],
            "pair_id": [f"{i:04x}" for i in range(n)],
        }
    )


def test_the_reports_correlations_equal_scipys_by_chromosome_and_stratum_whatever_the_order():
    from perturbation_bench.report.variant_correlations import (
        correlation_strata,
        correlation_summary,
        markdown,
    )

    frame = report_frame()
    (row,) = correlation_summary(frame, n_boot=300)
    assert row["spearman"] == pytest.approx(
        stats.spearmanr(frame["score"], frame["label"])[0], abs=1e-12
    )
    assert row["pearson"] == pytest.approx(
        stats.pearsonr(frame["score"], frame["label"])[0], abs=1e-12
    )
    low, high = row["spearman_95"]
    assert low < row["spearman"] < high < 0
    shuffled = frame.sample(frac=1.0, random_state=2)
    assert correlation_summary(shuffled, n_boot=300) == [row]
    strata = correlation_strata(frame, ["consequence"])
    for stratum in strata:
        group = frame[frame[stratum["column"]].astype(str) == stratum["value"]]
        assert stratum["n"] == len(group)
        assert stratum["spearman"] == pytest.approx(
            stats.spearmanr(group["score"], group["label"])[0], abs=1e-12
        )
    assert [(s["column"], s["value"]) for s in strata] == [
        ("chrom", "13"),
        ("chrom", "17"),
        ("consequence", "missense_variant"),
        ("consequence", "synonymous_variant"),
    ]
    text = "\n".join(markdown([row], strata))
    assert f"| m | t | llr | 60 | {row['spearman']:.3f} [{low:.3f}, {high:.3f}] |" in text
    first = strata[0]
    assert (
        f"| m | t | chrom | 13 | {first['n']} | {first['spearman']:.3f} | {first['pearson']:.3f} |"
    ) in text


def test_quantitative_labels_are_not_read_as_binary_by_the_ranking_section():
    from perturbation_bench.report.variant_metrics import labelled, ranking_summary

    frame = report_frame()
    assert labelled(frame).empty and ranking_summary(frame) == []
    binary = frame.assign(labels="binary", label=frame["label"] > 0)
    assert len(labelled(binary)) == len(frame)


def test_correlations_of_too_few_or_constant_values_are_nan():
    from perturbation_bench.pairs.ranking import pearson, spearman

    assert spearman([1.0, 2.0], [3.0, 1.0]) != spearman([1.0, 2.0], [3.0, 1.0])
    assert pearson([1.0, 1.0, 1.0], [3.0, 1.0, 2.0]) != pearson([1.0, 1.0, 1.0], [3.0, 1.0, 2.0])
    assert spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)


def test_a_stratum_column_given_again_with_by_is_reported_once():
    from perturbation_bench.report.variant_metrics import ranking_strata

    binary = report_frame().assign(labels="binary", label=lambda f: f["score"] + f["label"] > 0)
    strata = [(s["column"], s["value"]) for s in ranking_strata(binary, ["consequence"])]
    assert sorted(strata) == sorted(set(strata)) and len(strata) == 2

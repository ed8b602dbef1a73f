"""The variant task's label kinds (``tasks/variants.py``): a float label column is quantitative and
reported as Spearman's and Pearson's correlations, equal to scipy's; binary labels keep the
ranking metrics."""

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

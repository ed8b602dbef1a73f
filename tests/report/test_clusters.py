"""Intervals by cluster: the unit each task's pairs resample by, the cluster bootstrap, the
design effect, and the pair unit giving the report's pair-independent numbers exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dna_fixtures import write_run
from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.report.clusters import assign_clusters
from perturbation_bench.report.make import make_report
from perturbation_bench.report.statistics import (
    bootstrap_interval,
    cluster_bootstrap,
    design_effect,
    paired_bootstrap_difference,
    paired_cluster_bootstrap,
    percentile_interval,
    wilson_interval,
)
from perturbation_bench.report.summaries import model_comparisons, summarize

GENE_OUTCOMES = [1, 0, 1, 1, 0, 1]
"""One outcome per gene; every pair of a gene has it (identical pairs within a cluster)."""
PER_GENE = 10


def outcomes(n: int, p: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < p).astype(int)


def gene_pairs(model: str = "A", outcome=GENE_OUTCOMES) -> pd.DataFrame:
    """``PER_GENE`` identical pairs per gene, genes interleaved (the clusters are not runs of rows)."""
    rows = [
        {
            "pair_id": f"g{g}p{i}",
            "task": "perturbation_syn_human",
            "model": model,
            "correct": value,
            "tie": 0,
            "margin": 1.0 if value else -1.0,
            "gene_id": f"G{g}",
        }
        for i in range(PER_GENE)
        for g, value in enumerate(outcome)
    ]
    return pd.DataFrame(rows)


def test_pairs_identical_within_their_gene_count_once_per_gene():
    clusters = np.repeat(np.arange(6), PER_GENE)
    values = np.repeat(GENE_OUTCOMES, PER_GENE)
    count, deff, effective = design_effect(values, clusters)
    assert count == 6
    assert deff == pytest.approx(PER_GENE, rel=1e-12)
    assert effective == pytest.approx(6, rel=1e-12)
    # the cluster bootstrap of 60 such pairs is the pair bootstrap of the 6 genes' outcomes
    by_gene = cluster_bootstrap(values, clusters, seed=5, n_boot=300)
    np.testing.assert_allclose(
        by_gene, cluster_bootstrap(GENE_OUTCOMES, None, seed=5, n_boot=300), rtol=1e-12
    )


def test_the_report_rows_read_the_gene_as_their_unit():
    (row,) = summarize(assign_clusters(gene_pairs()), seed=2, n_boot=400)
    k, n = sum(GENE_OUTCOMES) * PER_GENE, 6 * PER_GENE
    assert (row["cluster_unit"], row["n_clusters"]) == ("gene_id", 6)
    assert row["effective_n"] == pytest.approx(6) and row["design_effect"] == pytest.approx(10)
    # Wilson's interval at the effective n: that of 4 successes in 6
    assert row["wilson_95"] == pytest.approx(list(wilson_interval(4, 6)), rel=1e-9)
    assert row["wilson_95"][1] - row["wilson_95"][0] > 2 * np.diff(wilson_interval(k, n))[0]
    genes = percentile_interval(cluster_bootstrap(GENE_OUTCOMES, None, seed=2, n_boot=400))
    assert row["bootstrap_95"] == pytest.approx(list(genes), rel=1e-12)


def test_one_pair_per_cluster_is_the_pair_bootstrap_exactly():
    values = outcomes(60, 0.7, seed=0)
    other = outcomes(60, 0.5, seed=1)
    # the numbers of the pair bootstrap before clusters existed (seed 3, 500 resamples)
    assert bootstrap_interval(values, seed=3, n_boot=500) == (0.5833333333333334, 0.8)
    assert paired_bootstrap_difference(values, other, seed=3, n_boot=500) == (
        0.26666666666666666,
        0.0745833333333335,
        0.45874999999999966,
    )
    rows = [f"r{i}" for i in range(60)]
    assert design_effect(values, rows) == (60, 1.0, 60.0)
    assert np.array_equal(
        cluster_bootstrap(values, rows, seed=3, n_boot=500),
        cluster_bootstrap(values, None, seed=3, n_boot=500),
    )
    assert paired_cluster_bootstrap(values, other, rows, seed=3, n_boot=500)[:3] == (
        paired_bootstrap_difference(values, other, seed=3, n_boot=500)
    )


def test_cluster_none_gives_the_pair_numbers_of_the_report():
    frame = gene_pairs()
    plain = summarize(frame, seed=1, n_boot=300)[0]
    by_pair = summarize(assign_clusters(frame, "none"), seed=1, n_boot=300)[0]
    assert by_pair == plain
    assert plain["wilson_95"] == list(wilson_interval(40, 60))
    assert plain["bootstrap_95"] == list(
        bootstrap_interval(frame["correct"].to_numpy(), seed=1, n_boot=300)
    )
    assert (plain["cluster_unit"], plain["n_clusters"], plain["design_effect"]) == ("pair", 60, 1.0)


def window_pairs(windows, genes=None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task": "perturbation_syn_human",
            "window_chrom": [w[0] for w in windows],
            "window_start": [w[1] for w in windows],
            "window_end": [w[2] for w in windows],
            "gene_id": genes if genes is not None else [None] * len(windows),
        }
    )


def test_overlapping_windows_chain_into_one_cluster_and_touching_ones_do_not():
    windows = [
        ("chr1", 0, 100), ("chr1", 250, 350), ("chr1", 90, 200), ("chr1", 190, 250),
        ("chr2", 50, 150), ("chr1", 1000, 1100), (None, None, None),
    ]  # fmt: skip
    out = assign_clusters(window_pairs(windows))
    assert set(out["cluster_unit"]) == {"overlap"}
    labels = list(out["cluster"])
    # 0-100, 90-200 and 190-250 chain; 250-350 only touches 190-250 (half-open): apart
    assert labels[0] == labels[2] == labels[3] == "overlap chr1:0"
    assert labels[1] == "overlap chr1:250" and labels[5] == "overlap chr1:1000"
    assert labels[4] == "overlap chr2:50" and labels[6] == "row 6"  # no window: its own


def test_the_gene_wins_over_the_windows_and_a_pair_without_one_stands_alone():
    windows = [("chr1", 0, 100), ("chr1", 50, 150), ("chr1", 50, 150)]
    out = assign_clusters(window_pairs(windows, ["G1", "G2", None]))
    assert list(out["cluster"]) == ["gene_id G1", "gene_id G2", "row 2"]
    assert list(assign_clusters(window_pairs(windows), "none")["cluster_unit"]) == ["pair"] * 3
    by_overlap = assign_clusters(window_pairs(windows, ["G1", "G2", None]), "overlap")
    assert by_overlap["cluster"].nunique() == 1


def test_a_cluster_column_no_pair_has_is_refused():
    with pytest.raises(OptionsError, match=r"--cluster exon_id: no pair has this column"):
        assign_clusters(window_pairs([("chr1", 0, 10)]), "exon_id")


def test_paired_comparisons_resample_the_genes_of_both_runs_together():
    a = gene_pairs("A")
    b = gene_pairs("B", outcome=[0, 0, 1, 0, 0, 1])
    (row,) = model_comparisons(assign_clusters(pd.concat([a, b])), seed=4, n_boot=1000)
    assert (row["cluster_unit"], row["n_clusters"]) == ("gene_id", 6)
    # per gene the difference is 1, 0, 0, 1, 0, 0: the 6 genes' paired bootstrap
    diff, low, high, p = paired_cluster_bootstrap(
        [1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 1], None, 4, 1000
    )
    assert row["acc_difference"] == pytest.approx(diff)
    assert row["paired_bootstrap_95"] == pytest.approx([low, high], rel=1e-12)
    assert row["paired_bootstrap_p"] == pytest.approx(p)
    replicates = cluster_bootstrap(np.array([1, 0, 0, 1, 0, 0]), None, 4, 1000)
    tail = min((replicates <= 0).sum(), (replicates >= 0).sum())
    assert p == pytest.approx(min(1, 2 * (1 + tail) / 1001))
    (by_pair,) = model_comparisons(pd.concat([a, b]), seed=4, n_boot=1000)
    assert by_pair["mcnemar_exact_p"] == row["mcnemar_exact_p"]  # McNemar: pairs independent
    assert by_pair["paired_bootstrap_p"] < row["paired_bootstrap_p"]


def test_no_difference_has_p_one():
    assert paired_cluster_bootstrap([1, 0, 1], [1, 0, 1], None, 0, 200)[3] == 1.0


def gene_run(tmp_path, name: str, lls, genes):
    return write_run(
        tmp_path / name,
        "perturbation_syn_human",
        lls,
        model="dna-hf",
        model_args={"pretrained": f"org/{name}"},
        docs=[{"gene_id": g, "chr": "chr1", "window_genome_start": 0, "window_genome_end": 9}
              for g in genes],
    )  # fmt: skip


def test_the_report_reads_gene_ids_from_the_samples_and_prints_the_unit(tmp_path, capsys):
    genes = ["G1"] * 4 + ["G2"] * 4 + ["G3"] * 4
    lls = [(-1.0, -2.0)] * 8 + [(-2.0, -1.0)] * 4  # G1, G2 right, G3 wrong
    run = gene_run(tmp_path, "m", lls, genes)
    report = make_report([run], tmp_path / "auto", n_boot=50)
    (row,) = report["summary"]
    assert (row["cluster_unit"], row["n_clusters"], row["effective_n"]) == ("gene_id", 3, 3.0)
    overlap = make_report([run], tmp_path / "overlap", n_boot=50, cluster="overlap")
    assert overlap["summary"][0]["n_clusters"] == 1  # every window is chr1:0-9
    markdown = (tmp_path / "auto" / "report.md").read_text()
    assert "| gene_id | 3 | 3.0 | 4.00 |" in markdown
    assert main(["report", str(run), "--out", str(tmp_path / "none"), "--cluster", "none"]) == 0
    assert "12 clusters by pair, effective n 12.0" in capsys.readouterr().out
    assert main(["report", str(run), "--out", str(tmp_path / "x"), "--cluster", "exon_id"]) == 2
    assert "--cluster exon_id: no pair has this column" in capsys.readouterr().err


def test_the_beyond_the_floor_rows_resample_genes():
    from perturbation_bench.report.floors import floor_comparisons

    model = gene_pairs("M").assign(floor=False, floor_kind=None, score_kind=None)
    floor = gene_pairs("F", outcome=[0, 0, 1, 0, 1, 1]).assign(
        floor=True, floor_kind="composition", score_kind=None
    )
    (row,) = floor_comparisons(assign_clusters(pd.concat([model, floor])), seed=0, n_boot=200)
    beyond = row["beyond_floor"]  # the floor's wrong genes 0, 1, 3: the model gets 0 and 3
    assert (beyond["n"], beyond["n_clusters"], beyond["effective_n"]) == (30, 3, pytest.approx(3))
    assert beyond["wilson_95"] == pytest.approx(list(wilson_interval(2, 3)), rel=1e-9)
    assert row["cluster_unit"] == "gene_id" and row["acc_difference"] == pytest.approx(1 / 6)


def test_clusters_less_alike_than_chance_never_narrow_the_interval_below_the_pairs():
    # each gene holds one right and one wrong pair: no variance between genes
    count, deff, effective = design_effect([1, 0, 1, 0], ["a", "a", "b", "b"])
    assert (count, deff, effective) == (2, 0.0, 4.0)


def test_an_interval_over_fewer_than_ten_clusters_is_thin_and_said_so():
    """A bootstrap over a few clusters is rough whatever the pairs: the row is thin and a note
    names the clusters."""
    from perturbation_bench.report.summaries import accuracy, thin_notes

    rows = assign_clusters(gene_pairs("M"))
    row = accuracy(rows, seed=0, n_boot=200)
    assert (row["n"], row["n_clusters"], row["thin"]) == (60, 6, True)
    note = thin_notes([{**row, "model": "M", "task": "t"}])
    assert note == ["M t: the intervals rest on 6 clusters by gene_id (fewer than 10): read them "
                    "as rough"]  # fmt: skip
    pairs = assign_clusters(gene_pairs("M"), "none")
    assert accuracy(pairs, seed=0, n_boot=200)["thin"] is False

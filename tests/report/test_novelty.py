"""The report's novelty section (``report/novelty.py``): accuracy by novelty bin and the
membership floor, known answers on a run whose documents carry novelty columns; no section
without them."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from dna_fixtures import write_run
from perturbation_bench.pairs.settings import TaskSettings
from perturbation_bench.report.make import make_report

TASK = "perturbation_syn_human"
RIGHT, WRONG, TIE = (-1.0, -2.0), (-2.0, -1.0), (-1.0, -1.0)


def test_membership_floor_and_bins_equal_counts_written_out(tmp_path):
    """10 pairs, (novel original, novel perturbed) and the model's outcome:
    d = 21 on 4 pairs (model right on all), d = 2 on 2 (right on 1), d = 0 on 3 (a membership
    tie each; the model right on 1, ties 1, wrong on 1), d = -5 on 1 (the model right).
    Membership floor: right on 6 of 10, 3 ties; beyond it (4 pairs): the model right on 2, in
    two genes of two pairs, one right on both, one wrong on both: two clusters, design effect 2,
    effective n 2, the bootstrap over the genes spanning [0, 1]."""
    counts = [(0, 21)] * 4 + [(1, 3)] * 2 + [(0, 0), (2, 2), (5, 5)] + [(5, 0)]
    lls = [RIGHT] * 4 + [RIGHT, WRONG] + [RIGHT, TIE, WRONG] + [RIGHT]
    genes = ["g3"] * 4 + ["g4", "g5"] + ["g1", "g2", "g2"] + ["g1"]
    docs = [
        {"novel_k21_original": o, "novel_k21_perturbed": p, "gene_id": gene}
        for (o, p), gene in zip(counts, genes, strict=True)
    ]
    settings = TaskSettings(data="sha256:aa", score=None)
    run = write_run(tmp_path / "m", TASK, lls, "dna-hf", {"pretrained": "m"}, settings, docs=docs)
    report = make_report([run], tmp_path / "r", n_boot=200)
    (floor,) = report["novelty"]["membership"]
    assert (floor["k"], floor["n"], floor["membership_accuracy"]) == (21, 10, 0.6)
    assert (floor["membership_ties"], floor["model_accuracy"]) == (3, 0.7)
    beyond = floor["beyond_membership"]
    assert (beyond["n"], beyond["pairwise_acc"]) == (4, 0.5)
    assert (beyond["cluster_unit"], beyond["n_clusters"]) == ("gene_id", 2)
    assert (beyond["design_effect"], beyond["effective_n"]) == pytest.approx((2.0, 2.0))
    wilson = binomtest(1, 2).proportion_ci(0.95, method="wilson")  # at the effective n
    assert beyond["wilson_95"] == pytest.approx([wilson.low, wilson.high], abs=1e-6)
    assert beyond["bootstrap_95"] == [0.0, 1.0]
    bins = {row["bin"]: (row["n"], row["pairwise_acc"]) for row in report["novelty"]["bins"]}
    assert bins == {"<= 0": (4, 0.5), "1-3": (2, 0.5), "16-63": (4, 1.0)}
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## Novelty against the genome" in text
    assert (
        "| m | perturbation_syn_human | 21 | 10 | 0.600 (3) | 0.700 | 0.500 [0.000, 1.000] "
        "(4; 2 by gene_id, thin) |" in text
    )


def test_no_novelty_section_without_the_columns(tmp_path):
    settings = TaskSettings(data="sha256:aa", score=None)
    run = write_run(tmp_path / "m", TASK, [RIGHT, WRONG], "dna-hf", {"pretrained": "m"}, settings)
    report = make_report([run], tmp_path / "r", n_boot=20)
    assert report["novelty"] == {"bins": [], "membership": []}
    assert "Novelty" not in (tmp_path / "r" / "report.md").read_text()

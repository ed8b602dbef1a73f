"""Saturation scans (``build saturation``): every base of a region to each of the other three."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dna_fixtures import run_two_processes
from perturbation_bench.cli import main


@pytest.fixture
def fasta(tmp_path):
    path = tmp_path / "g.fa"
    path.write_text(">chr1\nACGTNNACGTACGTTTGCA\n>chr2\nGGGGCCCC\n")
    return path


def test_every_base_gets_its_three_alternates_and_n_is_left_out(fasta, tmp_path, capsys):
    (tmp_path / "r.bed").write_text("track name=x\nchr2\t2\t5\tpromoter\nchr2\t6\t8\n")
    out = tmp_path / "sat.parquet"
    assert (
        main(
            [
                "build",
                "saturation",
                "--fasta",
                str(fasta),
                "--region",
                "1:3-8",
                "--bed",
                str(tmp_path / "r.bed"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    table = pd.read_parquet(out)
    genome = {"chr1": "ACGTNNACGTACGTTTGCA", "chr2": "GGGGCCCC"}
    expected = [
        (chrom, pos, genome[fasta_name][pos - 1], alt, region)
        for chrom, fasta_name, positions, region in (
            ("1", "chr1", range(3, 9), "1:3-8"),
            ("chr2", "chr2", range(3, 6), "promoter"),
            ("chr2", "chr2", range(7, 9), "chr2:7-8"),
        )  # an unnamed region: 1-based, closed
        for pos in positions
        if genome[fasta_name][pos - 1] != "N"
        for alt in "ACGT"
        if alt != genome[fasta_name][pos - 1]
    ]
    assert list(table.itertuples(index=False, name=None)) == expected
    summary = json.loads((tmp_path / "sat.parquet.summary.json").read_text())
    assert summary["left_out_non_acgt"] == 2 and summary["regions"]["1:3-8"]["rows"] == 12
    assert "2 non-ACGT bases left out" in capsys.readouterr().out


def test_a_saturation_table_feeds_build_variants(fasta, tmp_path):
    import random

    rng = random.Random(1)  # not a periodic genome: its windows at two positions would be equal
    long = tmp_path / "long.fa"
    long.write_text(">chr1\n" + "".join(rng.choice("ACGT") for _ in range(400)) + "\n")
    assert (
        main(
            [
                "build",
                "saturation",
                "--fasta",
                str(long),
                "--region",
                "chr1:150-159",
                "--out",
                str(tmp_path / "s.parquet"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(tmp_path / "s.parquet"),
                "--fasta",
                str(long),
                "--config",
                "sat",
                "--out",
                str(tmp_path / "out"),
                "--window",
                "64",
            ]
        )
        == 0
    )
    pairs = pd.read_parquet(tmp_path / "out" / "sat")
    assert len(pairs) == 30 and set(pairs["region"]) == {"chr1:150-159"}
    for row in pairs.to_dict("records"):
        offset = row["variant_offset"]
        assert (
            row["sequence"]
            == row["original_sequence"][:offset]
            + row["alt"]
            + row["original_sequence"][offset + 1 :]
        )


@pytest.mark.parametrize(
    "region, message",
    [
        ("chr1:0-5", "need 1 <= START <= END"),
        ("chr1-5", "expected CHROM:START-END"),
        ("chr9:1-5", "chromosome 'chr9' is not in"),
        ("chr1:10-40", "past the end of chr1"),
    ],
)
def test_bad_regions_are_refused_in_one_line(fasta, tmp_path, capsys, region, message):
    assert (
        main(
            [
                "build",
                "saturation",
                "--fasta",
                str(fasta),
                "--region",
                region,
                "--out",
                str(tmp_path / "s.parquet"),
            ]
        )
        == 2
    )
    assert message in capsys.readouterr().err


@pytest.fixture(scope="module")
def saturation_pairs(tmp_path_factory):
    """A 12-base saturation scan (36 variants) in 64 bp windows, and a random masked model."""
    import random

    from perturbation_bench.fixtures.random_models import (
        as_masked_lm_tokenizer,
        save_random_bert,
        single_nucleotide_tokenizer,
    )

    root = tmp_path_factory.mktemp("saturation")
    rng = random.Random(4)
    (root / "g.fa").write_text(">chr1\n" + "".join(rng.choice("ACGT") for _ in range(400)) + "\n")
    assert (
        main(
            [
                "build",
                "saturation",
                "--fasta",
                str(root / "g.fa"),
                "--region",
                "chr1:190-201",
                "--out",
                str(root / "s.parquet"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "build",
                "variants",
                "--variants",
                str(root / "s.parquet"),
                "--fasta",
                str(root / "g.fa"),
                "--config",
                "sat",
                "--out",
                str(root / "out"),
                "--window",
                "64",
            ]
        )
        == 0
    )
    model = save_random_bert(root / "mlm", as_masked_lm_tokenizer(single_nucleotide_tokenizer()))
    return root / "out", str(model)


@pytest.mark.parametrize("rc_average, passes", [(False, 12), (True, 24)])
def test_dna_mlm_runs_one_pass_per_distinct_masked_input(
    saturation_pairs, caplog, rc_average, passes
):
    """3n pairs of a saturation scan: n masked inputs (2n with rc_average), the same values."""
    import logging

    from dna_fixtures import evaluate
    from perturbation_bench.tasks.pairing import logged_pairs

    data, model = saturation_pairs
    metadata = {"data_dir": str(data), "config": "sat", "rc_average": rc_average}
    with caplog.at_level(logging.INFO):
        shared = evaluate(model, ["perturbation_variants"], metadata, model="dna-mlm")
    inputs = 36 * (2 if rc_average else 1)
    assert (
        f"dna-mlm: {inputs} masked inputs, {passes} distinct (one forward pass each)" in caplog.text
    )
    plain = evaluate(model, ["perturbation_variants"], metadata, model="dna-mlm", dedupe="false")
    got, expected = (logged_pairs(r, "perturbation_variants") for r in (shared, plain))
    assert [x for pair in got for x in pair] == pytest.approx(
        [x for pair in expected for x in pair], abs=1e-5
    )
    assert (
        shared["results"]["perturbation_variants"]["pairwise_acc,pairs"]
        == (plain["results"]["perturbation_variants"]["pairwise_acc,pairs"])
    )


@pytest.fixture(scope="module")
def causal_model(tmp_path_factory):
    from perturbation_bench.fixtures.random_models import (
        save_random_llama,
        single_nucleotide_tokenizer,
    )

    return str(
        save_random_llama(tmp_path_factory.mktemp("lm") / "m", single_nucleotide_tokenizer())
    )


def test_dna_hf_scores_a_reference_and_its_alternates_as_one_group(
    saturation_pairs, causal_model, caplog, sharing_pays
):
    """12 positions x 3 alternates: 12 groups of 4 distinct sequences (the reference once), one
    prefix pass each; the same values as pair-by-pair sharing and as plain scoring."""
    import logging

    from dna_fixtures import evaluate
    from perturbation_bench.tasks.pairing import logged_pairs

    data, _ = saturation_pairs
    metadata = {"data_dir": str(data), "config": "sat"}
    with caplog.at_level(logging.INFO):
        grouped = evaluate(causal_model, ["perturbation_variants"], metadata, model="dna-hf")
    assert "12 piece groups share a prefix (one prefix pass each, 48 pieces)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO):
        pairwise = evaluate(
            causal_model, ["perturbation_variants"], metadata, model="dna-hf", dedupe="false"
        )
    assert "36 piece groups share a prefix (one prefix pass each, 72 pieces)" in caplog.text
    plain = evaluate(
        causal_model,
        ["perturbation_variants"],
        metadata,
        model="dna-hf",
        dedupe="false",
        share_prefix="false",
    )
    expected = logged_pairs(plain, "perturbation_variants")
    for run in (grouped, pairwise):
        for a, b in zip(logged_pairs(run, "perturbation_variants"), expected, strict=True):
            assert a == pytest.approx(b, rel=1e-6, abs=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["dna-hf", "dna-mlm"])
def test_two_processes_with_dedupe_match_one(saturation_pairs, causal_model, tmp_path, model):
    """lm-eval splits the documents among processes; each dedupes its own share."""

    from dna_fixtures import assert_same_results, evaluate
    from perturbation_bench.tasks.pairing import logged_pairs

    data, masked = saturation_pairs
    path = causal_model if model == "dna-hf" else masked
    single = evaluate(
        path, ["perturbation_variants"], {"data_dir": str(data), "config": "sat"}, model=model
    )
    _, parallel = run_two_processes(
        path, data, tmp_path, model, "perturbation_variants", json.dumps({"config": "sat"})
    )
    assert_same_results(parallel["results"], single["results"]["perturbation_variants"])
    for a, b in zip(parallel["lls"], logged_pairs(single, "perturbation_variants"), strict=True):
        assert a == pytest.approx(list(b), rel=1e-6, abs=1e-3)


def test_the_saturation_map_draws_every_llr_where_it_belongs(monkeypatch, tmp_path):
    import math

    import numpy as np

    from perturbation_bench.report import variant_plots

    kept = []
    monkeypatch.setattr(variant_plots.plt, "close", kept.append)
    reference = "ACGTA"
    rows = pd.DataFrame(
        [
            {
                "model": "m",
                "chrom": "1",
                "pos": 101 + i,
                "ref": ref,
                "alt": alt,
                "margin": -(10 * i + "ACGT".index(alt)),
            }  # LLR = -margin = 10 i + index of alt
            for i, ref in enumerate(reference)
            for alt in "ACGT"
            if alt != ref
        ]
    )
    variant_plots.saturation_map(
        rows, "1:101-105", tmp_path / "map.png", features=[("chr1", 102, 104)]
    )
    (figure,) = kept
    grid = np.ma.filled(figure.axes[0].images[0].get_array(), np.nan)
    for i, ref in enumerate(reference):
        for b, base in enumerate("ACGT"):
            value = float(grid[b, i])
            assert math.isnan(value) if base == ref else value == 10 * i + b
    (track,) = [a for a in figure.axes if a.get_ylabel() == "mean LLR"]
    assert [t.get_text() for t in track.get_xticklabels()] == list(reference)
    from matplotlib.colors import to_rgb

    spans = [p for p in track.patches if tuple(p.get_facecolor()[:3]) == to_rgb("orange")]
    (span,) = spans  # the CDS exon [102, 104) 0-based holds the 1-based positions 103 and 104
    assert (span.get_x(), span.get_x() + span.get_width()) == (1.5, 3.5)
    assert (tmp_path / "map.png").is_file() and (tmp_path / "map.svg").is_file()

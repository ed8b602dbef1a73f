"""Saturation scans (``build saturation``): every base of a region to each of the other three."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from perturbation_bench.cli import main


@pytest.fixture
def fasta(tmp_path):
    path = tmp_path / "g.fa"
    path.write_text(">chr1\nACGTNNACGTACGTTTGCA\n>chr2\nGGGGCCCC\n")
    return path


def test_every_base_gets_its_three_alternates_and_n_is_left_out(fasta, tmp_path, capsys):
    (tmp_path / "r.bed").write_text("track name=x\nchr2\t2\t5\tpromoter\n")
    out = tmp_path / "sat.parquet"
    assert main(["build", "saturation", "--fasta", str(fasta), "--region", "1:3-8",
                 "--bed", str(tmp_path / "r.bed"), "--out", str(out)]) == 0  # fmt: skip
    table = pd.read_parquet(out)
    genome = {"chr1": "ACGTNNACGTACGTTTGCA", "chr2": "GGGGCCCC"}
    expected = [(chrom, pos, genome[fasta_name][pos - 1], alt, region)
                for chrom, fasta_name, positions, region in
                (("1", "chr1", range(3, 9), "1:3-8"), ("chr2", "chr2", range(3, 6), "promoter"))
                for pos in positions if genome[fasta_name][pos - 1] != "N"
                for alt in "ACGT" if alt != genome[fasta_name][pos - 1]]  # fmt: skip
    assert list(table.itertuples(index=False, name=None)) == expected
    summary = json.loads((tmp_path / "sat.parquet.summary.json").read_text())
    assert summary["left_out_non_acgt"] == 2 and summary["regions"]["1:3-8"]["rows"] == 12
    assert "2 non-ACGT bases left out" in capsys.readouterr().out


def test_a_saturation_table_feeds_build_variants(fasta, tmp_path):
    long = tmp_path / "long.fa"
    long.write_text(">chr1\n" + "ACGT" * 100 + "\n")
    assert main(["build", "saturation", "--fasta", str(long), "--region", "chr1:150-159",
                 "--out", str(tmp_path / "s.parquet")]) == 0  # fmt: skip
    assert main(["build", "variants", "--variants", str(tmp_path / "s.parquet"), "--fasta",
                 str(long), "--config", "sat", "--out", str(tmp_path / "out"), "--window", "64"]) == 0  # fmt: skip
    pairs = pd.read_parquet(tmp_path / "out" / "sat")
    assert len(pairs) == 30 and set(pairs["region"]) == {"chr1:150-159"}
    for row in pairs.to_dict("records"):
        offset = row["variant_offset"]
        assert row["sequence"] == row["original_sequence"][:offset] + row["alt"] + row["original_sequence"][offset + 1 :]


@pytest.mark.parametrize("region, message", [("chr1:0-5", "need 1 <= START <= END"),
                                             ("chr1-5", "expected CHROM:START-END"),
                                             ("chr9:1-5", "chromosome 'chr9' is not in"),
                                             ("chr1:10-40", "past the end of chr1")])  # fmt: skip
def test_bad_regions_are_refused_in_one_line(fasta, tmp_path, capsys, region, message):
    assert main(["build", "saturation", "--fasta", str(fasta), "--region", region,
                 "--out", str(tmp_path / "s.parquet")]) == 2  # fmt: skip
    assert message in capsys.readouterr().err


@pytest.fixture(scope="module")
def saturation_pairs(tmp_path_factory):
    """A 12-base saturation scan (36 variants) in 64 bp windows, and a random masked model."""
    import random

    from perturbation_bench.random_models import (
        as_masked_lm_tokenizer,
        save_random_bert,
        single_nucleotide_tokenizer,
    )

    root = tmp_path_factory.mktemp("saturation")
    rng = random.Random(4)
    (root / "g.fa").write_text(">chr1\n" + "".join(rng.choice("ACGT") for _ in range(400)) + "\n")
    assert main(["build", "saturation", "--fasta", str(root / "g.fa"), "--region", "chr1:190-201",
                 "--out", str(root / "s.parquet")]) == 0  # fmt: skip
    assert main(["build", "variants", "--variants", str(root / "s.parquet"), "--fasta",
                 str(root / "g.fa"), "--config", "sat", "--out", str(root / "out"),
                 "--window", "64"]) == 0  # fmt: skip
    model = save_random_bert(root / "mlm", as_masked_lm_tokenizer(single_nucleotide_tokenizer()))
    return root / "out", str(model)


@pytest.mark.parametrize("rc_average, passes", [(False, 12), (True, 24)])
def test_dna_mlm_runs_one_pass_per_distinct_masked_input(saturation_pairs, caplog, rc_average, passes):
    """3n pairs of a saturation scan: n masked inputs (2n with rc_average), the same values."""
    import logging

    from dna_fixtures import evaluate
    from perturbation_bench.tasks.pairing import logged_pairs

    data, model = saturation_pairs
    metadata = {"data_dir": str(data), "config": "sat", "rc_average": rc_average}
    with caplog.at_level(logging.INFO):
        shared = evaluate(model, ["perturbation_variants"], metadata, model="dna-mlm")
    inputs = 36 * (2 if rc_average else 1)
    assert f"dna-mlm: {inputs} masked inputs, {passes} distinct (one forward pass each)" in caplog.text
    plain = evaluate(model, ["perturbation_variants"], metadata, model="dna-mlm", dedupe="false")
    got, expected = (logged_pairs(r, "perturbation_variants") for r in (shared, plain))
    assert [x for pair in got for x in pair] == pytest.approx([x for pair in expected for x in pair], abs=1e-5)
    assert shared["results"]["perturbation_variants"]["pairwise_acc,pairs"] == (
        plain["results"]["perturbation_variants"]["pairwise_acc,pairs"]
    )

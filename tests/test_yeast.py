"""A real genome, offline: S. cerevisiae chrI + chrII with SGD's GFF3 (Debian's gbrowse-data,
fetched by scripts/fetch_yeast.sh, which .ci/run calls). Builds syn_yeast and motif_yeast with
2,048 bp windows, validates them against the genome, checks independently that every CDS used
translates without an internal stop, and scores the chrI pairs with kmer-markov trained on chrII.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from Bio.Seq import Seq

from perturbation_bench.cli import main
from perturbation_bench.comparison import pairwise_accuracy
from perturbation_bench.models.markov_chain import chain_for

YEAST = Path(os.environ.get("PERTURBATION_BENCH_YEAST", Path(__file__).parents[1] / ".yeast"))
GFF3 = "yeast_chr1+2.gff3"


@pytest.fixture(scope="module")
def yeast() -> Path:
    if not (YEAST / GFF3).is_file():
        message = f"no yeast data in {YEAST}: run bash scripts/fetch_yeast.sh {YEAST}"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI fetches it; its absence there is a failure
        pytest.skip(message)
    return YEAST


@pytest.fixture(scope="module")
def built(yeast, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("yeast")
    genome = root / "genome.fa"
    genome.write_text((yeast / "chr1.fa").read_text() + (yeast / "chr2.fa").read_text())
    for kind in ("syn", "motif"):
        assert main(["build", kind, "--fasta", str(genome), "--gff3", str(yeast / GFF3),
                     "--species", "yeast", "--window", "2048", "--flank", "512",
                     "--out", str(root / "out")]) == 0  # fmt: skip
    return {"genome": genome, "out": root / "out", "root": root}


def test_the_yeast_datasets_validate_against_the_genome(built, capsys):
    assert main(["validate", str(built["out"]), "--fasta", str(built["genome"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.startswith(("FAIL", "SKIP"))], lines
    for config, codon_source in (("syn_yeast", "s_cerevisiae_4932"), ("motif_yeast", None)):
        table = pq.read_table(built["out"] / config)
        assert table.num_rows > 500 and set(table.column("chr").to_pylist()) == {"chrI", "chrII"}
        if codon_source:
            assert set(table.column("codon_usage_source").to_pylist()) == {
                f"python-codon-tables:{codon_source}"
            }


def read_fasta(path: Path) -> dict[str, str]:
    sequences, name = defaultdict(list), None
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            name = line[1:].split()[0]
        else:
            sequences[name].append(line.strip())
    return {name: "".join(parts).upper() for name, parts in sequences.items()}


def test_every_cds_used_translates_without_an_internal_stop(yeast, built):
    """Parsed here line by line, not with the package's annotation reader."""
    genome = read_fasta(built["genome"])
    parts = defaultdict(list)
    for line in (yeast / GFF3).read_text().splitlines():
        fields = line.split("\t")
        if len(fields) == 9 and fields[2] == "CDS":
            attributes = dict(kv.split("=", 1) for kv in fields[8].strip(";").split(";"))
            for parent in attributes["Parent"].split(","):
                parts[parent].append(
                    (fields[0], int(fields[3]), int(fields[4]), fields[6], int(fields[7]))
                )
    used = set()
    for config in ("syn_yeast", "motif_yeast"):
        used |= set(
            pq.read_table(built["out"] / config, columns=["transcript_id"]).column(0).to_pylist()
        )
    assert len(used) > 500
    for transcript in used:
        exons = sorted(
            parts[transcript], key=lambda p: p[1], reverse=parts[transcript][0][3] == "-"
        )
        cds = "".join(
            genome[c][s - 1 : e]
            if strand == "+"
            else str(Seq(genome[c][s - 1 : e]).reverse_complement())
            for c, s, e, strand, _ in exons
        )[exons[0][4] :]
        protein = str(Seq(cds[: len(cds) - len(cds) % 3]).translate())
        assert "*" not in protein[:-1], f"{transcript}: internal stop at codon {protein.index('*')}"


@pytest.fixture(scope="module")
def chr1_pairs(built) -> Path:
    """The chrI pairs of both configs, for scoring with a chain counted on chrII only."""
    data = built["root"] / "chrI"
    for config in ("syn_yeast", "motif_yeast"):
        table = pq.read_table(built["out"] / config)
        (data / config).mkdir(parents=True)
        pq.write_table(
            table.filter(pc.equal(table.column("chr"), "chrI")), data / config / "test.parquet"
        )
    return data


def test_the_kmer_markov_floor_through_the_lm_eval_command_line(yeast, chr1_pairs, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "kmer-markov", "--model_args",
         f"fasta={yeast / 'chr2.fa'},order=5,counts={tmp_path / 'chr2-order5.npz'}",
         "--tasks", "perturbation_custom", "--log_samples", "--output_path", str(out),
         "--metadata", json.dumps({"data_dir": str(chr1_pairs), "config": "syn_yeast"})],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = out.glob("**/results_*.json")
    accuracy = json.loads(results.read_text())["results"]["perturbation_custom"][
        "pairwise_acc,pairs"
    ]
    chain = chain_for(yeast / "chr2.fa", 5, counts=str(tmp_path / "chr2-order5.npz"))
    rows = pq.read_table(chr1_pairs / "syn_yeast").to_pylist()
    direct = [
        (chain.log_likelihood("", r["original_sequence"]), chain.log_likelihood("", r["sequence"]))
        for r in rows
    ]
    assert accuracy == pytest.approx(pairwise_accuracy(direct))
    assert {r["chr"] for r in rows} == {"chrI"}  # the chain never saw these sequences

"""Building datasets from a genome and a GTF (dataset/build.py): rows, recoding, motifs, the codon control, reproducibility."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import pyarrow.parquet as pq
import pytest
from Bio import bgzf

from dna_fixtures import TOY_FLANK, build_arguments, build_toy_dataset, evaluate
from perturbation_bench.cli import main
from perturbation_bench.dataset.codons import load_codon_table
from perturbation_bench.dna import reverse_complement
from perturbation_bench.formats.annotation import read_cds_exons
from perturbation_bench.formats.fasta import Genome


def test_every_exon_is_written_or_counted_with_a_reason(built, genome_files):
    n_exons = len(read_cds_exons(genome_files[1]))
    for path in built.values():
        summary = json.loads((path.parent / "_build_report.json").read_text())
        assert summary["written"] == pq.read_metadata(path).num_rows
        assert summary["written"] + sum(summary["excluded"].values()) == n_exons
    assert json.loads((built["syn"].parent / "_build_report.json").read_text())["excluded"] == {
        "n_in_patch": 1
    }
    motif_excluded = json.loads((built["motif"].parent / "_build_report.json").read_text())[
        "excluded"
    ]
    assert motif_excluded["n_in_patch"] == 1 and motif_excluded["cds_too_short"] >= 1


def test_a_gtf_phase_that_breaks_the_frame_is_excluded_and_counted(genome_files, built, tmp_path):
    fasta, gtf = genome_files
    lines = gtf.read_text().splitlines(keepends=True)
    second_exon = next(  # the second CDS exon of T0: its phase must continue exon 1's frame
        i
        for i, line in enumerate(lines)
        if 'transcript_id "T0"' in line and i and 'transcript_id "T0"' in lines[i - 1]
    )
    fields = lines[second_exon].split("\t")
    fields[7] = str((int(fields[7]) + 1) % 3)
    lines[second_exon] = "\t".join(fields)
    broken = tmp_path / "broken.gtf"
    broken.write_text("".join(lines))
    path = build_toy_dataset("syn", fasta, broken, tmp_path / "out")
    summary = json.loads((path.parent / "_build_report.json").read_text())
    assert summary["excluded"] == {"n_in_patch": 1, "phase_inconsistent": 1}
    assert summary["written"] == pq.read_metadata(built["syn"]).num_rows - 1
    ids = set(pq.read_table(path, columns=["benchmark_id"]).column(0).to_pylist())
    assert "syn_human:T0:exon2" not in ids and "syn_human:T0:exon1" in ids


def test_strands_phases_clamping_and_transcript_choice(built, genome_files):
    rows = pq.read_table(built["syn"]).to_pylist()
    genome = Genome(genome_files[0])
    assert {r["strand"] for r in rows} == {"+", "-"}
    assert {r["phase_gtf"] for r in rows} == {0, 1, 2}
    for r in rows:
        window = genome.fetch(r["chr"], r["window_genome_start"], r["window_genome_end"])
        assert r["original_sequence"] == (
            reverse_complement(window) if r["strand"] == "-" else window
        )
        if r["exon_rank"] == 1:  # GTF phase honoured: the first complete codon is the start codon
            assert r["original_sequence"][r["cds_start_in_seq"] + r["phase_gtf"] :][:3] == "ATG"
    clamped = [r for r in rows if r["is_clamped"]]
    assert any(r["window_genome_start"] == 0 and r["strand"] == "+" for r in clamped)
    assert any(r["window_genome_end"] == r["chrom_length"] and r["strand"] == "-" for r in clamped)
    assert all(r["upstream_actual"] == TOY_FLANK for r in rows if not r["is_clamped"])
    assert "T1b" not in {r["transcript_id"] for r in rows} and "T1" in {
        r["transcript_id"] for r in rows
    }


def test_syn_recodes_every_eligible_codon_to_the_most_frequent_synonym(built):
    table = load_codon_table("human")
    for r in pq.read_table(built["syn"]).to_pylist():
        start, end = r["patch_start_in_seq"], r["patch_end_in_seq"]
        before, after = r["original_sequence"][start:end], r["sequence"][start:end]
        pairs = [(before[i : i + 3], after[i : i + 3]) for i in range(0, end - start, 3)]
        assert len(pairs) == r["n_codons_total"]
        for old, new in pairs:
            aa = table.code[old]
            assert new == (old if aa in "MW*" else max(table.usage[aa], key=table.usage[aa].get))
        assert r["n_codons_changed"] == sum(a != b for a, b in pairs)
        assert r["fraction_codons_changed"] == r["n_codons_changed"] / r["n_codons_total"]


def test_partial_recoding_changes_a_seeded_share(genome_files, tmp_path):
    full = pq.read_table(build_toy_dataset("syn", *genome_files, tmp_path / "a")).to_pylist()
    half = pq.read_table(
        build_toy_dataset("syn", *genome_files, tmp_path / "b", "--optimization-rate", "0.5")
    ).to_pylist()
    for f, h in zip(full, half, strict=True):
        assert h["n_codons_eligible"] == round(0.5 * f["n_codons_eligible"])
        assert h["n_codons_changed"] <= f["n_codons_changed"]


def test_motif_options_change_the_repeat(genome_files, tmp_path):
    build_toy_dataset(
        "motif",
        *genome_files,
        tmp_path,
        "--motif",
        "gaa",
        "--repeats",
        "4",
        "--offset",
        "9",
        "--config",
        "motif_gaa_human",
    )
    path = tmp_path / "motif_gaa_human" / "test-00000-of-00001.parquet"
    for r in pq.read_table(path).to_pylist():
        assert r["sequence"][r["patch_start_in_seq"] : r["patch_end_in_seq"]] == "GAA" * 4
        assert r["patch_start_in_seq"] == r["cds_start_in_seq"] + r["phase_gtf"] + 9


def test_build_is_reproducible_byte_for_byte_and_seeded(genome_files, tmp_path):
    runs = [
        build_toy_dataset("syn", *genome_files, tmp_path / name, "--max-pairs", "5", "--seed", seed)
        for name, seed in (("a", "1"), ("b", "1"), ("c", "2"))
    ]
    assert runs[0].read_bytes() == runs[1].read_bytes()
    ids = [pq.read_table(p, columns=["benchmark_id"])["benchmark_id"].to_pylist() for p in runs]
    assert len(ids[0]) == 5 and ids[0] != ids[2]


def test_compressed_inputs_give_the_same_dataset(genome_files, built, tmp_path):
    fasta, gtf = genome_files
    with open(fasta, "rb") as src, bgzf.BgzfWriter(str(tmp_path / "genome.fa.gz"), "wb") as out:
        shutil.copyfileobj(src, out)
    with open(gtf, "rb") as src, gzip.open(tmp_path / "annotation.gtf.gz", "wb") as out:
        shutil.copyfileobj(src, out)
    path = build_toy_dataset(
        "syn", tmp_path / "genome.fa.gz", tmp_path / "annotation.gtf.gz", tmp_path / "out"
    )
    assert path.read_bytes() == built["syn"].read_bytes()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--motif", "TAA", "--config", "motif_taa_human"], "in-frame stop codon.s. TAA"),
        (["--motif", "CTAG", "--repeats", "3", "--config", "m"], "in-frame stop codon.s. TAG"),
        (["--motif", "CA", "--repeats", "4", "--config", "m"], "shifts the reading frame"),
        (["--motif", "GAA"], "motif_human is the published config"),
        (["--repeats", "12"], "motif_human is the published config"),
    ],
)
def test_motif_build_refuses_stops_frameshifts_and_the_published_name(
    genome_files, tmp_path, capsys, extra, message
):
    args = build_arguments("motif", *genome_files, tmp_path, *extra)
    assert main(args) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "motif_human").exists()
    if "published" not in message:  # asked for explicitly, it builds
        assert main([*args, "--allow-stop-or-frameshift", "--window", "400", "--flank", "100"]) == 0


def test_tasks_run_on_a_built_dataset(built, genome_files, tiny_models, tmp_path):
    data_dir = built["syn"].parents[1]
    result = evaluate(
        tiny_models["char"],
        ["perturbation_syn_human", "perturbation_motif_human"],
        {"data_dir": str(data_dir)},
    )
    for task, path in (
        ("perturbation_syn_human", built["syn"]),
        ("perturbation_motif_human", built["motif"]),
    ):
        assert result["results"][task]["sample_len"] == pq.read_metadata(path).num_rows
    build_toy_dataset(
        "motif", *genome_files, tmp_path, "--motif", "GAA", "--config", "motif_gaa_human"
    )
    custom = tmp_path / "motif_gaa_human" / "test-00000-of-00001.parquet"
    result = evaluate(
        tiny_models["char"],
        ["perturbation_custom"],
        {"data_dir": str(tmp_path), "config": "motif_gaa_human"},
    )
    assert (
        result["results"]["perturbation_custom"]["sample_len"] == pq.read_metadata(custom).num_rows
    )
    # the built config also runs under its own name, from the YAML build wrote beside it,
    # whatever data_dir the run gives the other tasks
    assert (tmp_path / "perturbation_motif_gaa_human.yaml").is_file()
    named = evaluate(
        tiny_models["char"],
        ["perturbation_motif_gaa_human", "perturbation_syn_human"],
        {"data_dir": str(data_dir)},
        include=[tmp_path],
    )
    assert (
        named["results"]["perturbation_motif_gaa_human"]["alias"] == "perturbation_motif_gaa_human"
    )
    assert (
        named["results"]["perturbation_motif_gaa_human"]["sample_len"]
        == pq.read_metadata(custom).num_rows
    )
    assert (
        named["results"]["perturbation_syn_human"]["sample_len"]
        == pq.read_metadata(built["syn"]).num_rows
    )


def test_two_genes_sharing_an_exon_give_one_pair_and_a_duplicate_count(genome_files, tmp_path):
    """An annotation with a second gene whose CDS copies another gene's: the same pair twice."""
    fasta, gtf = genome_files
    lines = [line for line in gtf.read_text().splitlines() if "\tCDS\t" in line]
    first_gene = re.search(r'gene_id "([^"]+)"', lines[0]).group(1)
    copy = [
        line.replace(f'gene_id "{first_gene}"', 'gene_id "COPY"').replace(
            'transcript_id "', 'transcript_id "COPY_'
        )
        for line in lines
        if f'gene_id "{first_gene}"' in line
    ]
    doubled = tmp_path / "doubled.gtf"
    doubled.write_text(gtf.read_text() + "\n".join(copy) + "\n")
    single = pq.read_table(build_toy_dataset("syn", fasta, gtf, tmp_path / "a")).num_rows
    twice = pq.read_table(build_toy_dataset("syn", fasta, doubled, tmp_path / "b")).num_rows
    report = json.loads((tmp_path / "b" / "syn_human" / "_build_report.json").read_text())
    assert twice == single and report["excluded"]["duplicate_pair"] == len(copy)


def test_the_codon_control_permutes_synonymous_codons_only(genome_files, built, tmp_path, capsys):
    """``--recode shuffle``: the same rows as the published recoding, each patch's codons permuted
    among the positions of their amino acid: protein, codon counts and composition kept, M, W and
    stop codons in place, some codon moved; an order-0 chain ties on every pair."""
    build_toy_dataset("syn", *genome_files, tmp_path, "--recode", "shuffle")
    path = tmp_path / "syn_shuffle_human" / "test-00000-of-00001.parquet"  # a name of its own
    shuffled, published = pq.read_table(path).to_pylist(), pq.read_table(built["syn"]).to_pylist()
    assert [r["benchmark_id"].split(":", 1)[1] for r in shuffled] == [
        r["benchmark_id"].split(":", 1)[1] for r in published
    ]
    code = load_codon_table("human")
    for row in shuffled:
        assert row["recoding_mode"] == "synonymous_codon_shuffle"
        start, end = row["patch_start_in_seq"], row["patch_end_in_seq"]
        a, b = row["original_sequence"], row["sequence"]
        assert a[:start] == b[:start] and a[end:] == b[end:]
        before = [a[i : i + 3] for i in range(start, end, 3)]
        after = [b[i : i + 3] for i in range(start, end, 3)]
        assert sorted(before) == sorted(after) and before != after
        assert [code.code[c] for c in before] == [code.code[c] for c in after]
        assert all(x == y for x, y in zip(before, after, strict=True) if code.code[x] in "MW*")
        assert row["n_codons_changed"] == sum(x != y for x, y in zip(before, after, strict=True))
    build_toy_dataset(
        "syn", *genome_files, tmp_path / "seed1", "--recode", "shuffle", "--seed", "1"
    )
    other = pq.read_table(tmp_path / "seed1" / "syn_shuffle_human").column("sequence").to_pylist()
    assert other != [row["sequence"] for row in shuffled]  # drawn by the seeded generator
    result = evaluate(
        str(genome_files[0]),
        ["perturbation_custom"],
        {"data_dir": str(tmp_path), "config": "syn_shuffle_human"},
        model="kmer-markov",
        order=0,
    )
    assert result["results"]["perturbation_custom"]["tie_rate,pairs"] == 1.0


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--config", "syn_human"], "syn_human is a published config"),
        (["--optimization-rate", "0.5"], "--optimization-rate applies to --recode most_frequent"),
    ],
)
def test_the_codon_control_refuses_published_names_and_partial_rates(
    genome_files, tmp_path, capsys, extra, message
):
    assert main(build_arguments("syn", *genome_files, tmp_path, "--recode", "shuffle", *extra)) == 2
    assert message in capsys.readouterr().err


def test_a_codon_shuffle_draws_again_until_a_codon_moves():
    """Two codons of one amino acid: half the permutations leave them in place; every seed still
    gives the swapped pair, M and the stop staying where they are."""
    import random

    from perturbation_bench.dataset.build import shuffle_synonymous

    codons, table = ["ATG", "GCT", "GCC", "TAA"], load_codon_table("human")
    for seed in range(20):
        assert shuffle_synonymous(codons, [1, 2], table, random.Random(seed)) == [
            "ATG",
            "GCC",
            "GCT",
            "TAA",
        ]
    stuck = ["ATG", "GCT", "GCT", "TAA"]  # nothing can move: the codons as given (a no_change row)
    assert shuffle_synonymous(stuck, [1, 2], table, random.Random(0)) == stuck

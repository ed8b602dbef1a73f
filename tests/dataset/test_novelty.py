"""Novelty against the genome (``dataset/novelty.py``, ``perturbation-bench annotate novelty``):
each window's count of canonical k-mers absent from the genome equals a brute-force count over
Python sets of both strands' k-mers, per record; a window on the minus strand alone has none, a
k-mer with N is skipped, a k-mer across two records or two chunks is handled as the genome has
it; the files keep their rows and columns; bad input is refused before anything is read."""

from __future__ import annotations

import gzip
import random

import pyarrow.parquet as pq
import pytest

from dna_fixtures import reverse_complement
from perturbation_bench.cli import main
from perturbation_bench.dataset import novelty
from perturbation_bench.fixtures.random_pairs import write_parquet

K = 11


def genome_kmers(records: dict[str, str], k: int) -> set[str]:
    """Every k-mer of either strand of each record, without N (the test's own reference)."""
    found = set()
    for sequence in records.values():
        for strand in (sequence, reverse_complement(sequence)):
            found |= {strand[i : i + k] for i in range(len(strand) - k + 1)}
    return {kmer for kmer in found if "N" not in kmer}


def expected_novel(window: str, known: set[str], k: int) -> int:
    kmers = (window[i : i + k].upper() for i in range(len(window) - k + 1))
    return sum(1 for kmer in kmers if "N" not in kmer and kmer not in known)


def wrapped(sequence: str, width: int = 60) -> str:
    return "".join(sequence[i : i + width] + "\n" for i in range(0, len(sequence), width))


@pytest.fixture
def case(tmp_path):
    """A 2-record genome (an N run in chr2) and a data dir of windows with known answers."""
    rng = random.Random(4)
    chr1 = "".join(rng.choice("ACGT") for _ in range(3000))
    chr2 = "".join(rng.choice("ACGT") for _ in range(1500)) + "N" * 30
    chr2 += "".join(rng.choice("ACGT") for _ in range(1500))
    records = {"chr1": chr1, "chr2": chr2}
    fasta = tmp_path / "genome.fa"
    fasta.write_text("".join(f">{n} description\n{wrapped(s)}" for n, s in records.items()))
    minus = reverse_complement(chr2[200:260])

    def changed(window: str, at: int, base: str) -> str:
        return window[:at] + base + window[at + 1 :]

    plus = chr1[100:160]
    other = "ACGT".replace(plus[30], "")[0]
    with_n = changed(chr1[500:560], 20, "N")
    across = chr1[-30:] + chr2[:30]  # k-mers across the two records are in neither
    pairs = [
        (plus, changed(plus, 30, other)),  # one changed base: k novel k-mers at most
        (minus, changed(minus, 10, "ACGT".replace(minus[10], "")[0])),  # minus strand alone
        (with_n, changed(with_n, 25, "ACGT".replace(with_n[25], "")[1])),  # N: k-mers skipped
        (across, across.lower()),  # case ignored
        (chr1[2000:2060], "".join(rng.choice("ACGT") for _ in range(60))),
        (chr1[1050:1110], chr1[1050:1110]),  # across two chunks of 120 bases (below): in it
    ]
    rows = [
        {"pair_id": f"p{i}", "original_sequence": o, "sequence": p}
        for i, (o, p) in enumerate(pairs)
    ]
    write_parquet(rows, tmp_path / "data", "syn_human")
    write_parquet(rows[:2], tmp_path / "data", "motif_human", "other.parquet")
    return fasta, tmp_path / "data", records, pairs


def annotated(data, config: str, name: str = "test-00000-of-00001.parquet") -> list[dict]:
    return pq.read_table(data / config / name).to_pylist()


def test_each_window_s_novel_kmers_equal_a_count_over_both_strands(case, monkeypatch, capsys):
    fasta, data, records, pairs = case
    monkeypatch.setattr(novelty, "CHUNK", 70)  # chunks of 2 lines: k-mers across them are kept
    assert (
        main(["annotate", "novelty", "--fasta", str(fasta), "--data", str(data), "--k", str(K)])
        == 0
    )
    known = genome_kmers(records, K)
    rows = annotated(data, "syn_human")
    got = [(r[f"novel_k{K}_original"], r[f"novel_k{K}_perturbed"]) for r in rows]
    expected = [tuple(expected_novel(w, known, K) for w in pair) for pair in pairs]
    assert got == expected
    assert got[1][0] == 0  # in the genome on the minus strand alone
    assert got[0] == (0, K) and got[2][0] == 0  # a base changed mid-window; N's k-mers skipped
    assert got[2][1] == expected_novel(pairs[2][1], known, K) < K  # k-mers over the N not counted
    assert got[3][0] == got[3][1] > 0  # across two records: novel; lower case read as upper
    assert got[5] == (0, 0)
    assert [r["pair_id"] for r in rows] == [f"p{i}" for i in range(6)]  # rows and columns kept
    assert list(rows[0]) == [
        "pair_id",
        "original_sequence",
        "sequence",
        f"novel_k{K}_original",
        f"novel_k{K}_perturbed",
    ]
    assert [r[f"novel_k{K}_original"] for r in annotated(data, "motif_human", "other.parquet")] == [
        0,
        0,
    ]
    assert "syn_human" in capsys.readouterr().out


def test_counts_are_reproducible_a_gzipped_genome_reads_alike_and_k_is_replaced(case):
    fasta, data, _, _ = case
    args = ["annotate", "novelty", "--data", str(data), "--k", str(K)]
    assert main([*args, "--fasta", str(fasta)]) == 0
    first = annotated(data, "syn_human")
    zipped = fasta.with_suffix(".fa.gz")
    zipped.write_bytes(gzip.compress(fasta.read_bytes()))
    assert main([*args, "--fasta", str(zipped)]) == 0
    assert annotated(data, "syn_human") == first
    assert (
        main(["annotate", "novelty", "--data", str(data), "--fasta", str(fasta), "--k", "5"]) == 0
    )
    columns = list(annotated(data, "syn_human")[0])
    assert columns[-2:] == ["novel_k5_original", "novel_k5_perturbed"] and len(columns) == 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--k": "0"}, "--k must be a whole number from 1 to 31, got 0"),
        ({"--k": "32"}, "--k must be a whole number from 1 to 31, got 32"),
        ({"--fasta": "missing.fa"}, "--fasta missing.fa: no such file"),
        ({"--data": "nowhere"}, "--data nowhere: no such folder"),
        ({"--data": "empty"}, r"--data .*empty: no pair files \(\*.parquet\) below it"),
        ({"--fasta": "header.fa"}, r"header.fa: 0 bases read, fewer than one \d+-mer"),
    ],
)
def test_bad_input_is_refused_in_one_line_before_anything_is_read(
    case, tmp_path, capsys, change, message
):
    fasta, data, _, _ = case
    (tmp_path / "empty").mkdir()
    (tmp_path / "header.fa").write_text(">chr1\n")
    options = {"--fasta": str(fasta), "--data": str(data), "--k": str(K)}
    made = ("empty", "header.fa")
    options |= {k: (str(tmp_path / v) if v in made else v) for k, v in change.items()}
    before = (data / "syn_human" / "test-00000-of-00001.parquet").read_bytes()
    assert main(["annotate", "novelty", *[x for item in options.items() for x in item]]) == 2
    import re

    assert re.search(message, capsys.readouterr().err)
    assert (data / "syn_human" / "test-00000-of-00001.parquet").read_bytes() == before


def test_a_bad_pair_file_is_named_with_its_row_and_nothing_is_written(case, capsys):
    fasta, data, _, _ = case
    write_parquet([{"original_sequence": "ACGT", "sequence": "ACG"}], data, "broken")
    args = ["annotate", "novelty", "--fasta", str(fasta), "--data", str(data), "--k", "3"]
    assert main(args) == 2
    assert (
        "broken/test-00000-of-00001.parquet: row 0: original_sequence and sequence differ in length"
        in capsys.readouterr().err
    )
    assert (
        "novel_k3_original"
        not in pq.read_schema(data / "syn_human" / "test-00000-of-00001.parquet").names
    )

"""The kmer-markov floor: counts against a naive counter, LLs against the formula written out
independently (1e-9 relative), the cache, and a run through lm-eval."""

from __future__ import annotations

import math
import os
import random
from collections import Counter

import pyarrow.parquet as pq
import pytest

from dna_fixtures import reverse_complement, run_two_processes
from perturbation_bench.dna import random_dna
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.models import markov_chain
from perturbation_bench.models.markov_chain import MarkovChain, chain_for

GENOME = {
    "chrA": "ACGTTGCAacgtNNACGTACGGGTTTAAACCCGGGTACGATCGATCGNACGT" * 3,
    "chrB": random_dna(random.Random(5), 700),
    "chrC": "AC",
}


@pytest.fixture
def fasta(tmp_path):
    path = tmp_path / "genome.fa"
    path.write_text("".join(f">{name}\n{seq}\n" for name, seq in GENOME.items()))
    return path


def naive_counts(genome: dict, k_max: int) -> Counter:
    """Every j-mer (j <= k_max) of ACGT only, upper-cased, on both strands."""
    counts = Counter()
    for sequence in genome.values():
        sequence = sequence.upper()
        for j in range(1, k_max + 1):
            for i in range(len(sequence) - j + 1):
                kmer = sequence[i : i + j]
                if set(kmer) <= set("ACGT"):
                    counts[kmer] += 1
                    counts[reverse_complement(kmer)] += 1
    return counts


def kmer_index(kmer: str) -> int:
    return sum("ACGT".index(b) * 4 ** (len(kmer) - 1 - t) for t, b in enumerate(kmer))


@pytest.mark.parametrize("chunk", [7, 50, 10_000])
def test_counts_equal_a_naive_counter_across_chunk_boundaries(fasta, monkeypatch, chunk):
    monkeypatch.setattr(markov_chain, "CHUNK", chunk)
    chain = MarkovChain.count_genome(fasta, order=3)
    expected = naive_counts(GENOME, 4)
    for j, table in enumerate(chain.tables, start=1):
        got = {i: int(n) for i, n in enumerate(table) if n}
        want = {kmer_index(k): n for k, n in expected.items() if len(k) == j}
        assert got == want


def reference_ll(counts: Counter, order: int, a: float, context: str, continuation: str) -> float:
    """The formula of markov_chain's docstring, base by base with strings."""
    text = (context + continuation).upper()
    total = 0.0
    for t in range(len(context), len(text)):
        base = text[t]
        if base not in "ACGT":
            total += math.log(0.25)
            continue
        before = text[max(0, t - order) : t]
        while before and not set(before) <= set("ACGT"):
            before = before[1:]  # back off to the longest suffix without other letters
        n_context = (
            sum(counts[before + b] for b in "ACGT") if before else sum(counts[b] for b in "ACGT")
        )
        total += math.log((counts[before + base] + a) / (n_context + 4 * a))
    return total


@pytest.mark.parametrize(
    "context, continuation",
    [
        ("", "ACGTACGTTTGA"),  # the first bases use shorter contexts
        ("", "ACGNNTGCAT"),  # N as target and inside contexts
        ("GGA", "CGTAC"),  # a context string conditions the first bases
        ("<dna>", "acgtTTGCA"),  # a non-DNA prefix backs off; lower case reads as bases
        ("", "N"),
    ],
)
@pytest.mark.parametrize("order, pseudocount", [(0, 1.0), (3, 1.0), (5, 0.5)])
def test_log_likelihoods_equal_the_formula(fasta, context, continuation, order, pseudocount):
    chain = MarkovChain.count_genome(fasta, order=order, pseudocount=pseudocount)
    counts = naive_counts(GENOME, order + 1)
    expected = reference_ll(counts, order, pseudocount, context, continuation)
    assert chain.log_likelihood(context, continuation) == pytest.approx(expected, rel=1e-9)


def test_counts_are_cached_next_to_the_fasta_and_recounted_when_it_changes(fasta, monkeypatch):
    first = chain_for(fasta, order=2)
    cache = fasta.with_name("genome.fa.kmer-markov-order2.npz")
    assert cache.is_file()

    def no_counting(*args, **kwargs):
        raise AssertionError("counted again instead of reading the cache")

    monkeypatch.setattr(MarkovChain, "count_genome", no_counting)
    again = chain_for(fasta, order=2)
    assert all((a == b).all() for a, b in zip(first.tables, again.tables, strict=True))
    monkeypatch.undo()
    fasta.write_text(fasta.read_text() + ">chrD\nGGGGGGGG\n")
    changed = chain_for(fasta, order=2)
    assert changed.tables[0][kmer_index("G")] == first.tables[0][kmer_index("G")] + 8


def test_kmer_markov_scores_a_task_through_lm_eval(fasta, tmp_path):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    import perturbation_bench.models.kmer_markov  # noqa: F401  (registers the model)
    from perturbation_bench.paths import tasks_dir
    from perturbation_bench.tasks.pairing import logged_pairs

    write_parquet(random_pairs(6, 80, seed=4), tmp_path / "data", "syn_human")
    manager = TaskManager(
        include_path=str(tasks_dir()),
        include_defaults=False,
        metadata={"data_dir": str(tmp_path / "data")},
    )
    result = simple_evaluate(
        model="kmer-markov",
        model_args={"fasta": str(fasta), "order": 3},
        tasks=["perturbation_syn_human"],
        task_manager=manager,
        log_samples=True,
    )
    counts = naive_counts(GENOME, 4)
    rows = pq.read_table(tmp_path / "data" / "syn_human").to_pylist()
    for pair, row in zip(logged_pairs(result, "perturbation_syn_human"), rows, strict=True):
        expected = [
            reference_ll(counts, 3, 1.0, "", row[c]) for c in ("original_sequence", "sequence")
        ]
        assert pair == pytest.approx(expected, rel=1e-9)


def test_a_bgzip_fasta_counts_the_same(fasta, tmp_path):
    from Bio import bgzf

    with open(fasta, "rb") as src, bgzf.BgzfWriter(str(tmp_path / "genome.fa.gz"), "wb") as out:
        out.write(src.read())
    plain = MarkovChain.count_genome(fasta, order=3)
    packed = MarkovChain.count_genome(tmp_path / "genome.fa.gz", order=3)
    assert all((a == b).all() for a, b in zip(plain.tables, packed.tables, strict=True))


@pytest.mark.slow
def test_kmer_markov_in_two_processes_matches_one_and_each_holds_its_share(tmp_path):

    from dna_fixtures import assert_same_results, evaluate
    from perturbation_bench.fixtures.random_pairs import write_random_genome
    from perturbation_bench.tasks.pairing import logged_pairs

    fasta = write_random_genome(tmp_path / "g.fa", 20_000)
    write_parquet(random_pairs(9, 120, seed=8), tmp_path / "data", "syn_human")
    task = "perturbation_syn_human"
    single = evaluate(str(fasta), [task], {"data_dir": str(tmp_path / "data")}, model="kmer-markov")
    run, parallel = run_two_processes(fasta, tmp_path / "data", tmp_path, "kmer-markov")
    assert_same_results(parallel["results"], single["results"][task])
    assert parallel["lls"] == [list(pair) for pair in logged_pairs(single, task)]
    assert "this process scores 5 of the 9 pairs and holds only those" in run.stderr
    assert "this process scores 4 of the 9 pairs and holds only those" in run.stderr


def test_the_count_cache_is_counted_again_when_the_fasta_changes_at_the_same_size(tmp_path):
    """Mutant: the cache key without ``mtime_ns``."""
    fasta = tmp_path / "g.fa"
    fasta.write_text(">c\n" + "A" * 200 + "\n")
    before = chain_for(fasta, order=1)
    stat = fasta.stat()
    fasta.write_text(">c\n" + "ACGT" * 50 + "\n")  # same size, other bases
    os.utime(fasta, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    after = chain_for(fasta, order=1)
    assert fasta.stat().st_size == stat.st_size
    assert after.log_likelihood("A", "C") > before.log_likelihood("A", "C") + 1


def test_the_evo2_convention_divides_the_chains_sum_by_the_bases_it_scores(fasta, tmp_path):
    """Evo 2's mean over the L - 1 scored terms, for a model that reads bases: no tokenizer."""
    from dna_fixtures import evaluate
    from perturbation_bench.tasks.pairing import logged_pairs

    write_parquet(random_pairs(5, 70, seed=6), tmp_path / "data", "syn_human")
    metadata = {"data_dir": str(tmp_path / "data"), "convention": "evo2"}
    result = evaluate(str(fasta), ["perturbation_syn_human"], metadata, model="kmer-markov")
    counts = naive_counts(GENOME, 4)
    rows = pq.read_table(tmp_path / "data" / "syn_human").to_pylist()
    for pair, row in zip(logged_pairs(result, "perturbation_syn_human"), rows, strict=True):
        expected = [
            reference_ll(counts, 3, 1.0, row[c][0], row[c][1:]) / (len(row[c]) - 1)
            for c in ("original_sequence", "sequence")
        ]
        assert pair == pytest.approx(expected, rel=1e-9)

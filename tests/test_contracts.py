"""Contracts that mutants of the code showed untested: each test fails on the mutant named in it."""

from __future__ import annotations

import os
import types

import pytest

from dna_fixtures import crop_one
from perturbation_bench.active_models import document_share
from perturbation_bench.dataset.annotation import choose_transcripts, read_gff3_cds
from perturbation_bench.errors import UnsupportedTaskError
from perturbation_bench.models.dna_mlm import DnaMaskedLM, windows
from perturbation_bench.models.markov_chain import chain_for
from perturbation_bench.models.parallel import DataParallel
from perturbation_bench.models.requests import document_pairs


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


def test_masked_runs_exactly_max_length_apart_are_split():
    """Mutant: ``<`` turned into ``<=`` when a run grows (a window would hold max_length + 1)."""
    assert [run for _, run in windows(100, [10, 26], 16)] == [[10], [26]]
    assert [run for _, run in windows(100, [10, 25], 16)] == [[10, 25]]


class MaskTokenizer:
    mask_token_id = -1


def test_every_masked_position_is_masked_in_every_window_that_holds_it():
    """Mutant: each window masks only the positions of its own run."""
    model = object.__new__(DnaMaskedLM)
    model.tokenizer, model.max_length = MaskTokenizer(), 16
    ids = list(range(100))
    masked = [5, 14, 21]  # runs [5, 14] (window 2-18) and [21] (window 13-29, which holds 14)
    inputs = model._windowed(ids, masked, {i: [(ids[i], 0)] for i in masked})
    starts = [start for start, _ in windows(len(ids), masked, 16)]
    assert starts == [2, 13]
    for start, item in zip(starts, inputs):
        for position in range(start, start + 16):
            assert (item.ids[position - start] == -1) == (position in masked), (start, position)


def request(task: str, doc: int, idx: int, continuation: str):
    return types.SimpleNamespace(task_name=task, doc_id=doc, idx=idx, args=("", continuation))


def test_pairs_never_cross_tasks_that_share_a_doc_id():
    """Mutant: documents keyed by ``doc_id`` alone."""
    requests = [request("a", 0, 0, "AAAA"), request("b", 0, 0, "CC"),
                request("a", 0, 1, "AAAT"), request("b", 0, 1, "CG")]  # fmt: skip
    pairs = document_pairs(requests, strict=True)
    assert sorted(pairs) == [(0, 2), (1, 3)]


def test_strict_pairing_refuses_a_pair_of_unequal_lengths():
    """Mutant: the length comparison dropped (two requests: no odd count to raise first)."""
    requests = [request("a", 0, 0, "ACGT"), request("a", 0, 1, "AC")]
    with pytest.raises(UnsupportedTaskError, match=r"continuations of \[4, 2\] characters"):
        document_pairs(requests, strict=True)
    assert document_pairs(requests, strict=False) == []


@pytest.mark.parametrize("span, overflows", [(20, False), (21, True)])
def test_a_changed_span_of_exactly_the_crop_length_does_not_overflow(span, overflows):
    """Mutant: ``>=`` instead of ``>``."""
    original = "A" * 100
    changed = list(original)
    changed[30] = changed[30 + span - 1] = "C"  # the changed span is [30, 30 + span)
    assert crop_one(original, "".join(changed), 20)[1] is overflows


def cds_table(rows):
    import pandas as pd

    columns = ["seqname", "start", "end", "strand", "frame", "transcript_id", "gene_id", "tag"]
    return pd.DataFrame(rows, columns=columns).assign(gene_name="")


def test_a_tie_in_cds_length_without_a_canonical_tag_picks_the_smallest_transcript_id():
    """Mutant: the transcript id sorted descending (or not at all)."""
    table = cds_table([
        ("c", 1, 90, "+", 0, "T2", "G", ""), ("c", 201, 290, "+", 0, "T1", "G", ""),
        ("c", 1, 60, "+", 0, "T3", "G", ""),
    ])  # fmt: skip
    assert {exon.transcript_id for exon in choose_transcripts(table)} == {"T1"}
    canonical = cds_table([("c", 1, 90, "+", 0, "T2", "G", "Ensembl_canonical"),
                           ("c", 201, 290, "+", 0, "T1", "G", "")])  # fmt: skip
    assert {exon.transcript_id for exon in choose_transcripts(canonical)} == {"T2"}


def test_a_gff3_cds_with_several_parents_belongs_to_each(tmp_path):
    """Mutant: only the first ``Parent`` kept."""
    gff3 = tmp_path / "a.gff3"
    gff3.write_text(
        "##gff-version 3\n"
        "c\tt\tgene\t1\t300\t.\t+\t.\tID=G\n"
        "c\tt\tmRNA\t1\t300\t.\t+\t.\tID=T1;Parent=G\n"
        "c\tt\tmRNA\t1\t300\t.\t+\t.\tID=T2;Parent=G\n"
        "c\tt\tCDS\t10\t99\t.\t+\t0\tID=cds1;Parent=T1,T2\n"
    )
    table = read_gff3_cds(gff3)
    assert sorted(table["transcript_id"]) == ["T1", "T2"]
    assert set(table["gene_id"]) == {"G"}


def test_data_parallel_shards_by_the_global_process_index(monkeypatch):
    """Mutant: the local process index (node 2 of 2, local 1 of 2 is global 3 of 4)."""
    import accelerate

    class NodeTwoProcessOne:
        def __init__(self, cpu):
            self.process_index, self.local_process_index, self.num_processes = 3, 1, 4
            self.device = "cpu"

    monkeypatch.setattr(accelerate, "Accelerator", NodeTwoProcessOne)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setattr("perturbation_bench.models.parallel.join_process_group", lambda d: None)
    monkeypatch.setattr("perturbation_bench.active_models._share", None)  # restored afterwards
    model = DataParallel()
    model._start_data_parallel("cpu")
    assert (model._rank, model._world_size) == (3, 4)
    assert document_share() == (3, 4)  # the tasks hold the documents of the global rank

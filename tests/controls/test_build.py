"""One element's control pair (``controls/build.control_pair``) and the elements of an annotation
(``controls/elements.py``), each rule of their docstrings held directly."""

from __future__ import annotations

import random

import pytest

from perturbation_bench.controls import build
from perturbation_bench.controls.elements import Element, annotation_elements
from perturbation_bench.formats.annotation import CdsExon
from perturbation_bench.formats.fasta import Genome


def genome_of(tmp_path, sequence: str) -> Genome:
    (tmp_path / "g.fa").write_text(f">c\n{sequence}\n")
    return Genome(tmp_path / "g.fa")


def element(start: int, end: int) -> Element:
    return Element("c", start, end, "e", "test")


def random_bases(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("ACGT") for _ in range(n))


def test_an_element_past_the_chromosome_s_end_is_cut_there_before_it_is_centred(tmp_path):
    genome = genome_of(tmp_path, random_bases(100))
    pair = build.control_pair(genome, element(70, 130), "c", 20, "mononucleotide", 0)
    # cut to [70, 100): centre 85, window [75, 95); uncut it would centre on 100 (window [80, 100))
    assert (pair["window_start"], pair["element_start"], pair["element_end"]) == (75, 75, 95)
    short = build.control_pair(genome, element(98, 130), "c", 20, "mononucleotide", 0)
    assert short == "element_shorter_than_3bp"  # 2 bp once cut, though 32 bp as given


def test_only_the_element_s_own_bases_decide_whether_it_is_acgt(tmp_path):
    sequence = "N" * 10 + random_bases(20, 1) + "N" * 10
    genome = genome_of(tmp_path, sequence)
    pair = build.control_pair(genome, element(12, 28), "c", 40, "mononucleotide", 0)
    assert isinstance(pair, dict) and pair["original_sequence"] == sequence  # Ns in the flanks
    inside = genome_of(tmp_path, sequence[:20] + "N" + sequence[21:])
    assert build.control_pair(inside, element(12, 28), "c", 40, "mononucleotide", 0) == (
        "element_not_acgt"
    )


@pytest.mark.parametrize("unchanged_draws, made", [(build.TRIES - 1, True), (build.TRIES, False)])
def test_a_shuffle_is_drawn_again_up_to_tries_times_while_it_returns_the_element(
    tmp_path, monkeypatch, unchanged_draws, made
):
    genome = genome_of(tmp_path, random_bases(60, 2))
    draws = []

    def shuffle(bases, kind, rng):
        draws.append(bases)
        return bases if len(draws) <= unchanged_draws else bases[::-1]

    monkeypatch.setattr(build, "shuffle", shuffle)
    pair = build.control_pair(genome, element(20, 40), "c", 40, "mononucleotide", 0)
    assert isinstance(pair, dict) is made and len(draws) == min(unchanged_draws + 1, build.TRIES)
    assert made or pair == "shuffle_unchanged"


def test_a_chromosome_exactly_one_window_long_is_used_and_a_shorter_one_is_not(tmp_path):
    sequence = random_bases(40, 3)
    pair = build.control_pair(
        genome_of(tmp_path, sequence), element(10, 20), "c", 40, "dinucleotide", 0
    )
    assert pair["window_start"] == 0 and pair["original_sequence"] == sequence
    shorter = build.control_pair(
        genome_of(tmp_path, sequence[:39]), element(10, 20), "c", 40, "dinucleotide", 0
    )
    assert shorter == "chromosome_shorter_than_window"


def cds(start: int, end: int, rank: int) -> CdsExon:
    return CdsExon("c", start, end, "+", 0, rank, "t1", "g1", "G", 0)


def test_a_transcript_without_exon_records_takes_its_cds_exons_for_its_exons():
    coding = [cds(100, 160, 1), cds(300, 390, 2)]
    exons = annotation_elements("a.gtf", coding, {}, "exon")
    assert [(e.start, e.end) for e in exons] == [(100, 160), (300, 390)]
    introns = annotation_elements("a.gtf", coding, {"t1": []}, "intron")
    assert [(e.start, e.end) for e in introns] == [(160, 300)]
    with_records = annotation_elements("a.gtf", coding, {"t1": [(50, 160), (300, 420)]}, "exon")
    assert [(e.start, e.end) for e in with_records] == [(50, 160), (300, 420)]

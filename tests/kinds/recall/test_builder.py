"""``build recall`` (``kinds/recall/builder.py``, ``rules.py``): the windows, their pieces and
the seeding, checked against the genome read here."""

from __future__ import annotations

import json

import pytest

from perturbation_bench.cli import main
from perturbation_bench.dna import reverse_complement
from perturbation_bench.errors import OptionsError
from perturbation_bench.kinds.recall.builder import distances
from perturbation_bench.kinds.recall.rules import parse_copy, piece_lengths

from .recall_doubles import build


def test_the_target_and_the_bases_before_it_are_one_stretch_of_genome_in_both_windows(tmp_path):
    """Each row: both contexts of one length, the last d bases the same, the repeat context's
    copy equal to the target, and the control window (native) a contiguous piece of a stretch."""
    _, rows, stretches = build(tmp_path)
    assert len(rows) == 6
    for row in rows:
        assert (row["random_seed"], row["align"], row["copy"], row["control"]) == (
            0, 1, "exact", "native",
        )  # fmt: skip
        lead, segment, distance = piece_lengths(row["distance"], 64, 1)
        repeat, control, target = row["context_repeat"], row["context_control"], row["target"]
        assert len(repeat) == len(control) == lead + segment + distance
        assert len(target) == row["target_bp"] == segment
        assert repeat[-distance:] == control[-distance:]
        assert repeat[lead : lead + segment] == target
        assert repeat[:lead] == control[:lead]
        assert any(control + target in stretch for stretch in stretches)


def test_one_seed_gives_the_same_windows_under_every_option(tmp_path):
    """lead, D and A are the same whatever --copy and --control; the copy is A's reverse
    complement under revcomp, a substitution of A at about the rate under mutate, and the
    foreign piece another place of the genome."""
    _, exact, _ = build(tmp_path / "a")
    _, revcomp, _ = build(tmp_path / "b", copy="revcomp", control="foreign")
    _, mutated, _ = build(tmp_path / "c", copy="mutate:0.5")
    _, other_seed, _ = build(tmp_path / "d", seed=1)
    differing = 0
    for e, r, m, o in zip(exact, revcomp, mutated, other_seed, strict=True):
        lead, segment, distance = piece_lengths(e["distance"], 64, 1)
        assert e["target"] == r["target"] == m["target"] != o["target"]
        for row in (r, m):
            assert row["context_repeat"][:lead] == e["context_repeat"][:lead]
            assert row["context_repeat"][-distance:] == e["context_repeat"][-distance:]
        assert r["context_repeat"][lead : lead + segment] == reverse_complement(e["target"])
        assert r["context_control"][lead : lead + segment] != e["context_control"][lead:][:segment]
        copy = m["context_repeat"][lead : lead + segment]
        differing += sum(a != b for a, b in zip(copy, e["target"], strict=True))
    assert 0.35 < differing / (len(exact) * 64) < 0.65
    assert mutated[0]["copy"] == "mutate:0.5"


def test_pieces_are_whole_kmers_with_align(tmp_path):
    _, rows, _ = build(tmp_path, align=6)
    for row in rows:
        assert len(row["context_repeat"]) % 6 == 0 == len(row["target"]) % 6
        assert row["target_bp"] == 60 and row["distance"] in (60, 252)


def test_a_distance_longer_than_every_stretch_is_excluded_and_counted(tmp_path, capsys):
    from dna_fixtures import random_genome

    fasta, _ = random_genome(tmp_path, {"c1": 3000}, seed=1)
    out = tmp_path / "out"
    arguments = ["--fasta", str(fasta), "--out", str(out), "--config", "rc", "--trials", "2"]
    assert main(["build", "recall", *arguments, "--distances", "64,5000", "--segment", "32"]) == 0
    printed = capsys.readouterr().out
    assert "wrote 2 rows of 4" in printed
    assert "excluded 2 (window_longer_than_longest_n_free_stretch)" in printed
    assert "5000\t2\twindow_longer" in (out / "rc" / "_excluded.tsv").read_text()
    assert "warning: distance 5000 has no row: every trial was excluded" in printed
    assert "distance 64 has no row" not in printed
    report = json.loads((out / "rc" / "_build_report.json").read_text())
    assert report["rows_by_distance"] == {"64": 2, "5000": 0}
    assert report["settings"]["fasta"] == str(fasta)
    assert "read 1 N-free stretch (longest 3000 bp); wrote 2 rows of 4" in printed
    assert (out / "perturbation_rc.yaml").exists()


@pytest.mark.parametrize("text", ["mutate", "mutate:2", "revcomp:1", "copy"])
def test_a_copy_option_out_of_range_is_refused(text):
    with pytest.raises(ValueError, match="exact, revcomp or mutate:P"):
        parse_copy(text)


def test_distances_given_twice_or_rounded_to_one_are_refused(tmp_path):
    """Nothing merged in silence: 64 twice, or 60 and 64 that --align 6 both makes 60."""
    with pytest.raises(OptionsError, match="--distances: 64 is given twice"):
        distances("64, 256,64")
    assert distances("1,64") == (1, 64)
    with pytest.raises(OptionsError, match="--distances 60 and 64 both round to 60 bp"):
        build(tmp_path, distances=(60, 64), align=6)
    _, rows, _ = build(tmp_path / "apart", distances=(60, 66), align=6)
    assert sorted({row["distance"] for row in rows}) == [60, 66]


def test_build_refuses_bad_options_in_one_line(tmp_path):
    with pytest.raises(OptionsError, match="--copy 'mutate:x'"):
        build(tmp_path, copy="mutate:x")
    with pytest.raises(OptionsError, match="--trials must be at least 1"):
        build(tmp_path, trials=0)


def test_a_row_the_build_makes_wrong_is_refused_naming_it_and_the_invariant(tmp_path):
    from perturbation_bench.errors import DataValidationError
    from perturbation_bench.kinds.recall.builder import check_row

    _, rows, _ = build(tmp_path)
    check_row(rows[0])
    rows[0]["window_bp"] += 6
    with pytest.raises(
        DataValidationError, match=f"^recall row {rows[0]['benchmark_id']}: breaks window_as_built$"
    ):
        check_row(rows[0])


def test_a_trial_whose_native_control_equals_its_copy_is_excluded_and_counted(tmp_path):
    """A tandem repeat of period s + d: the bases before D are the target itself, so the two
    windows are one (copy advantage 0 by construction). Such trials are excluded and counted,
    the others written: read = written + excluded, and validate passes every written row."""
    import random

    from perturbation_bench.dataset.validate import validate
    from perturbation_bench.kinds.recall.builder import build_recall
    from perturbation_bench.kinds.recall.rules import Stretches

    rng = random.Random(5)
    unit = "".join(rng.choice("ACGT") for _ in range(128))  # s + d = 64 + 64
    stretches = ["".join(rng.choice("ACGT") for _ in range(6000)), unit * 60]
    settings = {"config": "rc", "distances": (64,), "segment": 64, "trials": 40, "copy": "exact",
                "control": "native", "align": 1, "seed": 0}  # fmt: skip
    _, report = build_recall(Stretches(stretches), settings, tmp_path)
    excluded = report["excluded"]["control_equals_copy"]
    assert 0 < excluded < 40 and report["written_rows"] + excluded == report["read"] == 40
    assert f"64\t{excluded}\tcontrol_equals_copy" in (tmp_path / "rc" / "_excluded.tsv").read_text()
    checks, rows = validate(tmp_path / "rc")
    assert rows == report["written_rows"] and not [c.name for c in checks if c.broken]


def test_trials_that_draw_the_same_windows_are_one_pair_kept_once_and_counted(tmp_path):
    """A genome with room for a window at three offsets only: 20 trials draw at most three
    distinct (target, contexts); each repeat is excluded as duplicate_pair, read = written +
    excluded, and validate's distinct_pairs passes every written row. A row copied with only its
    trial and benchmark_id changed is the same pair to validate."""
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    from perturbation_bench.dataset.validate import validate
    from perturbation_bench.kinds.recall.builder import build_recall
    from perturbation_bench.kinds.recall.rules import Stretches, piece_lengths

    lengths = piece_lengths(64, 64, 1)
    rng = random.Random(7)
    stretch = "".join(rng.choice("ACGT") for _ in range(sum(lengths) + lengths[1] + 2))
    settings = {"config": "rc", "distances": (64,), "segment": 64, "trials": 20, "copy": "exact",
                "control": "native", "align": 1, "seed": 0}  # fmt: skip
    path, report = build_recall(Stretches([stretch, stretch[::-1]]), settings, tmp_path)
    rows = pq.read_table(path).to_pylist()
    duplicates = report["excluded"]["duplicate_pair"]
    assert duplicates > 0 and report["written_rows"] + sum(report["excluded"].values()) == 20
    contents = {(r["target"], r["context_repeat"], r["context_control"]) for r in rows}
    assert len(contents) == len(rows) == report["written_rows"]
    checks, _ = validate(tmp_path / "rc")
    distinct = next(c for c in checks if c.name == "distinct_pairs")
    assert (distinct.checked, distinct.broken) == (len(rows), 0)
    renamed = rows[0] | {"trial": 99, "benchmark_id": "recall:64:99"}
    table = pq.read_table(path)
    pq.write_table(pa.Table.from_pylist([*rows, renamed], schema=table.schema), path)
    checks, _ = validate(tmp_path / "rc")
    distinct = next(c for c in checks if c.name == "distinct_pairs")
    assert distinct.broken == 1 and distinct.first.endswith(f"repeats the pair of {path} row 0")


@pytest.mark.parametrize("align", [1, 3, 6])
def test_rounded_pieces_are_whole_k_mers_and_never_outgrow_the_window(align):
    """Over distances and segments that round down, and segments under one k-mer that round up
    (3 -> 6 under --align 6): every piece a positive multiple of align, the segment and the
    distance each within one k-mer of what was asked, the pieces' sum at most the window."""
    from perturbation_bench.kinds.recall.rules import window_bp

    for distance in (1, 5, 64, 100, 1000, 4099):
        for segment in (1, 3, 5, 64, 257):
            lead, s, d = piece_lengths(distance, segment, align)
            assert all(piece % align == 0 and piece >= align for piece in (lead, s, d))
            assert abs(s - segment) < align and abs(d - distance) < align
            assert lead + 2 * s + d <= window_bp(distance, segment)


def test_the_build_says_what_align_rounds():
    from perturbation_bench.kinds.recall.builder import rounding

    assert (
        rounding((64, 96, 100), 3, 6) == "--segment 3 -> 6, distance 64 -> 60, distance 100 -> 96"
    )
    assert rounding((60, 96), 64, 1) == ""

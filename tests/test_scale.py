"""Scale: documents that hold each window once, vectorised spans, a process holding only its own
pairs, kmer-markov under torchrun, and the scale benchmark's instrument."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dna_fixtures import launch
from perturbation_bench.errors import DataValidationError, PairingError
from perturbation_bench.pair_changes import changed_spans, changed_text, perturbed_sequence
from perturbation_bench.random_pairs import random_pair_table, random_pairs, write_parquet
from perturbation_bench.tasks.documents import NOT_HELD
from perturbation_bench.tasks.hooks import doc_to_sequences, load_pairs


def reference_span(a: str, b: str, ignore_case: bool):
    """First to last differing position, written out; None for identical strings."""
    if ignore_case:
        a, b = a.upper(), b.upper()
    differing = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return (differing[0], differing[-1] + 1) if differing else None


def random_pair_strings(rng: random.Random, count: int):
    pairs = []
    for _ in range(count):
        original = "".join(rng.choice("ACGTNacgt") for _ in range(rng.randrange(1, 40)))
        perturbed = list(original)
        for _ in range(rng.choice([0, 0, 1, 3])):  # some pairs identical
            i = rng.randrange(len(perturbed))
            perturbed[i] = rng.choice([perturbed[i].swapcase(), rng.choice("ACGT")])
        pairs.append((original, "".join(perturbed)))
    return pairs


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("ignore_case", [False, True])
def test_changed_spans_match_a_per_row_reference(kind, ignore_case):
    pairs = random_pair_strings(random.Random(5), 300)
    original = pa.array([a for a, _ in pairs], kind)
    perturbed = pa.array([b for _, b in pairs], kind)
    for offset in (0, 7):  # sliced arrays start inside their buffers
        spans = changed_spans(original[offset:], perturbed[offset:], ignore_case)
        changes = changed_text(perturbed[offset:], spans).to_pylist()
        for row, (a, b) in enumerate(pairs[offset:]):
            expected = reference_span(a, b, ignore_case)
            assert bool(spans.changed[row]) == (expected is not None)
            if expected is not None:
                assert (spans.starts[row], spans.ends[row]) == expected
                if not ignore_case:
                    assert changes[row] == b[expected[0] : expected[1]]


def test_documents_hold_the_window_once_and_rebuild_the_perturbed_copy(tmp_path):
    rows = random_pairs(40, 60, seed=2) + random_pairs(3, 60, seed=3, patch=59)
    rows[5]["sequence"] = rows[5]["original_sequence"]  # an identical pair
    rows[6]["sequence"] = rows[6]["sequence"][:30].lower() + rows[6]["sequence"][30:]
    write_parquet(rows, tmp_path, "syn_human")
    docs = load_pairs("syn_human", data_dir=str(tmp_path))["test"]
    assert len(docs) == len(rows) and "sequence" not in docs.features
    for doc, row in zip(docs, rows, strict=True):
        assert "sequence" not in doc
        assert doc["original_sequence"] == row["original_sequence"]
        assert perturbed_sequence(doc) == row["sequence"]
        assert doc["scoring_soft_masked"] == (row is rows[6])
        assert len(doc["scoring_change"]) <= len(row["sequence"])
    assert docs[5]["scoring_change"] == ""


def test_files_with_other_columns_give_every_document_every_column(tmp_path):
    rows = random_pairs(4, 30)
    write_parquet([{**r, "label": True} for r in rows[:2]], tmp_path, "syn_human", "a.parquet")
    write_parquet(rows[2:], tmp_path, "syn_human", "b.parquet")
    docs = load_pairs("syn_human", data_dir=str(tmp_path))["test"]
    assert "label" in docs.features
    assert [doc["label"] for doc in docs] == [True, True, None, None]
    assert len({frozenset(doc) for doc in docs}) == 1


def test_an_upper_case_sequence_reaches_lm_eval_uncopied(tmp_path):
    rows = random_pairs(2, 30)
    rows[1]["original_sequence"] = rows[1]["original_sequence"].lower()
    write_parquet(rows, tmp_path, "syn_human")
    plain, masked = load_pairs("syn_human", data_dir=str(tmp_path))["test"]
    assert doc_to_sequences(plain)[0] is plain["original_sequence"]
    assert doc_to_sequences(masked)[0] == masked["original_sequence"].upper()


@pytest.mark.parametrize("world_size", [2, 3])
@pytest.mark.parametrize("shard", [None, "1/2", "2/3"])
def test_each_process_holds_only_its_own_documents(tmp_path, monkeypatch, world_size, shard):
    monkeypatch.setattr("perturbation_bench.pair_files.BATCH_ROWS", 2)  # several batches a file
    rows = random_pairs(11, 30, seed=4)
    write_parquet(rows[:5], tmp_path, "syn_human", "a.parquet")
    write_parquet(rows[5:], tmp_path, "syn_human", "b.parquet")
    options = {"data_dir": str(tmp_path), **({"shard": shard} if shard else {})}
    whole = load_pairs("syn_human", **options)["test"]
    index, count = map(int, (shard or "0/1").split("/"))
    assert [d["benchmark_id"] for d in whole] == [r["benchmark_id"] for r in rows[index::count]]
    seen = {}
    for rank in range(world_size):
        monkeypatch.setattr("perturbation_bench.active_models._share", (rank, world_size))
        docs = load_pairs("syn_human", **options)["test"]
        assert len(docs) == len(whole)
        for position, doc in enumerate(docs):
            if position % world_size == rank or position == 0:  # lm-eval checks the task on doc 0
                assert doc == whole[position]
                seen.setdefault(position, rank)
            else:
                assert doc is NOT_HELD
                with pytest.raises(PairingError, match="another process scores"):
                    doc_to_sequences(doc)
    assert sorted(seen) == list(range(len(whole)))


def test_a_zero_shot_task_keeps_no_few_shot_copy_of_its_documents(tmp_path):
    from lm_eval.tasks import TaskManager

    from perturbation_bench.paths import tasks_dir

    write_parquet(random_pairs(5, 30), tmp_path, "syn_human")
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                          metadata={"data_dir": str(tmp_path)})  # fmt: skip
    task = manager.load(["perturbation_syn_human"])["tasks"]["perturbation_syn_human"]
    assert len(task.eval_docs) == 5 and list(task.sampler.df) == []


def test_a_bad_row_in_a_later_batch_is_named_by_its_row_in_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr("perturbation_bench.pair_files.BATCH_ROWS", 3)
    rows = random_pairs(12, 30)
    for bad in (7, 10):
        rows[bad]["sequence"] = rows[bad]["sequence"][:29] + "X"
    write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(DataValidationError, match="row 7: 'sequence' has letters outside ACGTN .first: 'X' at position 29.; 1 more row"):
        load_pairs("syn_human", data_dir=str(tmp_path))


def test_a_letter_outside_ascii_in_the_changed_span_is_refused(tmp_path):
    rows = random_pairs(3, 30)
    rows[2]["sequence"] = rows[2]["sequence"][:10] + "é" + rows[2]["sequence"][11:]
    write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(DataValidationError, match=r"row 2: 'sequence' has letters outside ACGTN \(first: 'é' at position 10\)"):
        load_pairs("syn_human", data_dir=str(tmp_path))


def test_random_pair_tables_change_one_patch_per_window():
    table = random_pair_table(50, 100, seed=3, patch=12)
    for row in table.to_pylist():
        start = row["patch_start_in_seq"]
        original, perturbed = row["original_sequence"], row["sequence"]
        assert len(original) == len(perturbed) == 100 and set(original + perturbed) <= set("ACGT")
        assert original[:start] == perturbed[:start]
        assert original[start + 12 :] == perturbed[start + 12 :]


def test_kmer_markov_in_two_processes_matches_one_and_each_holds_its_share(tmp_path):
    from pathlib import Path

    from dna_fixtures import assert_same_results, evaluate
    from perturbation_bench.random_pairs import write_random_genome
    from perturbation_bench.tasks.pairing import logged_pairs

    fasta = write_random_genome(tmp_path / "g.fa", 20_000)
    write_parquet(random_pairs(9, 120, seed=8), tmp_path / "data", "syn_human")
    task = "perturbation_syn_human"
    single = evaluate(str(fasta), [task], {"data_dir": str(tmp_path / "data")}, model="kmer-markov")
    out = tmp_path / "dp.json"
    run = launch([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                  str(Path(__file__).with_name("dp_driver.py")), str(fasta),
                  str(tmp_path / "data"), str(out), "kmer-markov"])  # fmt: skip
    parallel = json.loads(out.read_text())
    assert_same_results(parallel["results"], single["results"][task])
    assert parallel["lls"] == [list(pair) for pair in logged_pairs(single, task)]
    assert "this process scores 5 of the 9 pairs and holds only those" in run.stderr
    assert "this process scores 4 of the 9 pairs and holds only those" in run.stderr


def test_the_scale_instrument_times_every_stage_and_its_peaks_only_grow(tmp_path):
    from perturbation_bench.random_pairs import write_random_genome

    data = tmp_path / "data"
    (data / "scale").mkdir(parents=True)
    pq.write_table(random_pair_table(30, 200), data / "scale" / "t.parquet")
    spec = {"data_dir": str(data), "fasta": str(write_random_genome(tmp_path / "g.fa", 5_000)),
            "order": 2, "log_samples": True, "out": str(tmp_path / "stages"),
            "output_path": str(tmp_path / "run")}  # fmt: skip
    subprocess.run([sys.executable, "-m", "perturbation_bench.bench.scale", json.dumps(spec)],
                   check=True, capture_output=True)  # fmt: skip
    stages = json.loads((tmp_path / "stages.rank0.json").read_text())
    from perturbation_bench.bench.scale import MEMORY_STAGES, STAGES

    assert set(stages["seconds"]) == set(STAGES)
    assert all(value >= 0 for value in stages["seconds"].values())
    assert stages["seconds"]["scoring"] > 0 and stages["seconds"]["read"] > 0
    assert stages["seconds"]["write"] > 0  # the samples file was written
    peaks = [stages["peaks"][stage] for stage in MEMORY_STAGES]
    assert peaks == sorted(peaks)  # a high-water mark never falls
    assert list((tmp_path / "run").rglob("samples_perturbation_custom_*.jsonl"))


def test_the_scale_targets_count_the_twenty_pair_run_as_fixed():
    from perturbation_bench.bench.scale import Row, parse_sizes

    def stages(rank, scoring, other, peak):
        seconds = {"start-up": 9.0, "task": 0.0, "read": other, "requests": 0.0,
                   "scoring": scoring, "results": 0.0, "env": 1.0, "write": 0.0}  # fmt: skip
        return {"rank": rank, "seconds": seconds, "peaks": {"write": peak}}

    row = Row(1000, 8192, 2, stages(1, 10.0, 6.5, 12 << 20), stages(1, 0.1, 2.0, 2 << 20))
    assert row.scored_pairs == 500 and row.sequence_bytes == 2 * 8192 * 500
    assert row.outside == pytest.approx((6.5 + 1.0 - 2.0 - 1.0) / 10.0)
    assert row.growth == 10 << 20 and row.growth_ratio == pytest.approx(1.28, abs=0.01)
    assert row.within_targets()
    assert not Row(1000, 1024, 1, stages(0, 1.0, 3.0, 0), stages(0, 1.0, 0.0, 0)).within_targets()
    three_times = {length: Row(1000, length, 1, stages(0, 10.0, 1.0, 3 * 2 * length * 1000),
                               stages(0, 0.1, 1.0, 0)) for length in (1024, 8192)}  # fmt: skip
    assert three_times[1024].within_targets() and not three_times[8192].within_targets()
    assert parse_sizes("20000x8192, 5x1024") == [(20000, 8192), (5, 1024)]
    for bad in ("20000", "x8192", "0x100", "10x12"):
        with pytest.raises(Exception, match="PAIRSxBP"):
            parse_sizes(bad)

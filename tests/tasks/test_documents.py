"""A task's documents (``tasks/documents.py``): each window held once and the perturbed copy
rebuilt from its changed span, a process holding only its own pairs, shards that are disjoint and
hold every pair, bad rows named by their row in the file."""

from __future__ import annotations

import pytest

from dna_fixtures import reverse_complement as revcomp
from perturbation_bench.errors import DataValidationError, OptionsError, PairingError
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.kinds.footprints.shape import BACKGROUND
from perturbation_bench.pairs.changes import copy_sequence, perturbed_sequence
from perturbation_bench.pairs.fields import TASK
from perturbation_bench.tasks.document_requests import doc_to_sequences, requests_per_document
from perturbation_bench.tasks.documents import NOT_HELD
from perturbation_bench.tasks.loading import load_pairs


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


def test_a_footprint_document_holds_its_background_as_a_span_and_asks_for_three_pairs(tmp_path):
    """The background is kept as its changed span against the original and rebuilt exactly;
    the requests are (o, p), (o, r), (p, r), each a pair's (both strands with rc_average)."""
    rows = random_pairs(6, 40, seed=4)
    for k, row in enumerate(rows):
        o = row["original_sequence"]
        row["background_sequence"] = o[:10] + ("acgt"[k % 4] * 5) + o[15:]  # soft-masked too
    write_parquet(rows, tmp_path, "fp")
    for rc in (False, True):
        metadata = {"data_dir": str(tmp_path), "config": "fp", "rc_average": rc}
        docs = load_pairs(**metadata)["test"]
        for doc, row in zip(docs, rows, strict=True):
            assert "background_sequence" not in doc
            assert copy_sequence(doc, BACKGROUND) == row["background_sequence"]
            o, p, r = (
                row[k].upper() for k in ("original_sequence", "sequence", "background_sequence")
            )
            pairs = [(o, p), (o, r), (p, r)]
            if rc:
                pairs = [x for a, b in pairs for x in ((a, b), (revcomp(a), revcomp(b)))]
            assert doc_to_sequences(doc) == [s for pair in pairs for s in pair]
            assert requests_per_document(doc) == len(doc_to_sequences(doc)) == (12 if rc else 6)


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
    monkeypatch.setattr("perturbation_bench.pairs.files.BATCH_ROWS", 2)  # several batches a file
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
    manager = TaskManager(
        include_path=str(tasks_dir()), include_defaults=False, metadata={"data_dir": str(tmp_path)}
    )
    task = manager.load(["perturbation_syn_human"])["tasks"]["perturbation_syn_human"]
    assert len(task.eval_docs) == 5 and list(task.sampler.df) == []


def test_a_bad_row_in_a_later_batch_is_named_by_its_row_in_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr("perturbation_bench.pairs.files.BATCH_ROWS", 3)
    rows = random_pairs(12, 30)
    for bad in (7, 10):
        rows[bad]["sequence"] = rows[bad]["sequence"][:29] + "X"
    write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(
        DataValidationError,
        match="row 7: 'sequence' has letters outside ACGTN .first: 'X' at position 29.; 1 more row",
    ):
        load_pairs("syn_human", data_dir=str(tmp_path))


def test_a_letter_outside_ascii_in_the_changed_span_is_refused(tmp_path):
    rows = random_pairs(3, 30)
    rows[2]["sequence"] = rows[2]["sequence"][:10] + "é" + rows[2]["sequence"][11:]
    write_parquet(rows, tmp_path, "syn_human")
    with pytest.raises(
        DataValidationError,
        match=r"row 2: 'sequence' has letters outside ACGTN \(first: 'é' at position 10\)",
    ):
        load_pairs("syn_human", data_dir=str(tmp_path))


@pytest.mark.parametrize("count", [1, 3, 8])
def test_the_shards_are_disjoint_and_hold_every_pair(pair_data, count):
    whole = [
        d["original_sequence"] for d in load_pairs("syn_human", data_dir=str(pair_data))["test"]
    ]
    shards = [
        load_pairs("syn_human", data_dir=str(pair_data), shard=f"{i}/{count}")["test"]
        for i in range(count)
    ]
    assert sorted(d["original_sequence"] for shard in shards for d in shard) == sorted(whole)
    assert all(
        {d[TASK]["shard"] for d in shard} == {f"{i}/{count}"} for i, shard in enumerate(shards)
    )


@pytest.mark.parametrize("value", ["3/3", "-1/2", "a/b", "2"])
def test_a_bad_shard_is_refused(pair_data, value):
    with pytest.raises(OptionsError, match="shard must be I/N with 0 <= I < N"):
        load_pairs("syn_human", data_dir=str(pair_data), shard=value)
    with pytest.raises(
        OptionsError, match="shard 8/9 of syn_human holds no pair: the config has 8"
    ):
        load_pairs("syn_human", data_dir=str(pair_data), shard="8/9")

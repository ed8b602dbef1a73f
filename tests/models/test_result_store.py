"""``--use_cache``: every model keeps its answers in a store keyed by what was computed
(``models/result_store.py``). A killed run resumes: each answer is stored as soon as its document
(dna-hf) or pair (dna-mlm) is scored, a run killed with SIGKILL part-way and started again scores
only the rest and ends with the metrics of an uninterrupted run; a score that depends on the
partner is never served to another pair; an answer computed under one scoring is never served to
a run of another."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dna_fixtures import RESUME_DRIVER, TORCHRUN, assert_same_results, evaluate
from perturbation_bench.fixtures.random_models import (
    as_masked_lm_tokenizer,
    save_random_bert,
    save_random_llama,
    single_nucleotide_tokenizer,
)
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.models.result_store import SUFFIX as STORE_SUFFIX
from perturbation_bench.tasks.pairing import logged_pairs

TASK = "perturbation_syn_human"
DRIVER = RESUME_DRIVER
PAIRS = 60


@pytest.fixture(scope="module")
def slow_setup(tmp_path_factory):
    """Models big enough that a run takes seconds at batch size 1, and 60 pairs of 1,000 bp."""
    root = tmp_path_factory.mktemp("resume")
    tokenizer = single_nucleotide_tokenizer()
    models = {
        "dna-hf": save_random_llama(
            root / "lm", tokenizer, layers=4, hidden=128, max_positions=1100
        ),
        "dna-mlm": save_random_bert(
            root / "mlm",
            as_masked_lm_tokenizer(single_nucleotide_tokenizer()),
            layers=4,
            hidden=128,
            max_positions=1100,
        ),
    }
    write_parquet(random_pairs(PAIRS, 1000, seed=6, patch=30), root / "data", "syn_human")
    return {k: str(v) for k, v in models.items()}, root / "data"


def stored(path: Path) -> int:
    """Rows in a sqlitedict file (0 while it does not exist yet)."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM unnamed").fetchone()[0]
    except sqlite3.Error:
        return 0


def command(kind, model, data, cache, out, processes: int = 1):
    launcher = (
        [sys.executable] if processes == 1 else [*TORCHRUN, "--nproc_per_node", str(processes)]
    )
    return [*launcher, str(DRIVER), kind, model, str(data), str(cache), str(out)]


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL a launcher and every process below it, and wait until all are gone: torchrun
    starts its workers in sessions of their own, out of reach of the launcher's process group,
    where a paused worker would otherwise outlive the test."""
    import psutil

    parent = psutil.Process(process.pid)
    family = [*parent.children(recursive=True), parent]
    for member in family:
        member.kill()
    psutil.wait_procs(family, timeout=60)
    process.wait()


def taken_from_cache(kind: str, log: str) -> tuple[int, int]:
    """(taken from the cache, in all) summed over the processes' log lines."""
    found = re.findall(rf"{kind}: (\d+) of (\d+) \w+ taken from the cache", log)
    return sum(int(a) for a, _ in found), sum(int(b) for _, b in found)


@pytest.mark.slow  # starts processes, as the tests below but the last
@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("kind", ["dna-hf", "dna-mlm"])
def test_a_run_killed_part_way_resumes_with_identical_metrics(
    slow_setup, tmp_path, kind, processes
):
    models, data = slow_setup
    cache, out = tmp_path / "cache" / "run", tmp_path / "out.json"
    store = Path(f"{cache}_rank0.db{STORE_SUFFIX}")
    unit = 2 if kind == "dna-hf" else 1  # dna-hf stores requests, dna-mlm pairs
    total = PAIRS * unit // processes  # what rank 0's file holds at the end
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    pause = 5 * unit  # the kill point: this many entries stored, the run held there until killed
    first = subprocess.Popen(
        command(kind, models[kind], data, cache, out, processes),
        env={**env, "PB_TEST_PAUSE_AFTER": str(pause), "PB_TEST_PAUSE_STORE": STORE_SUFFIX},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600  # a bound for a broken run, not a timing the test relies on
    while stored(store) < pause and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    # stored as it goes, not in one burst at the end: the run has not finished, yet holds entries
    assert first.poll() is None, (
        "the run ended before its kill point: " + first.stderr.read()[-2000:]
    )
    assert stored(store) == pause < total and not out.exists()
    kill_tree(first)  # the launcher and every process it started
    kept = stored(store)
    assert 5 * unit <= kept < total and not out.exists()
    second = subprocess.run(
        command(kind, models[kind], data, cache, out, processes),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    taken, everything = taken_from_cache(kind, second.stderr)
    assert taken >= kept and everything == PAIRS * unit
    resumed = json.loads(out.read_text())
    clean = evaluate(models[kind], [TASK], {"data_dir": str(data)}, model=kind, batch_size=1)
    assert_same_results(resumed["results"], clean["results"][TASK])
    for got, expected in zip(resumed["lls"], logged_pairs(clean, TASK), strict=True):
        assert got == pytest.approx(list(expected), rel=1e-6, abs=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dna-hf", "dna-mlm"])
def test_a_rerun_with_fewer_processes_uses_what_its_ranks_cached(slow_setup, tmp_path, kind):
    """lm-eval keeps one cache file per rank: after 2 processes, 1 process finds rank 0's file
    (half the pairs, as lm-eval interleaves documents), scores the rest, same metrics."""
    models, data = slow_setup
    cache, out = tmp_path / "cache" / "run", tmp_path / "out.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(
        command(kind, models[kind], data, cache, tmp_path / "two.json", 2),
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    one = subprocess.run(
        command(kind, models[kind], data, cache, out, 1),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert one.returncode == 0, one.stderr[-3000:]
    taken, everything = taken_from_cache(kind, one.stderr)
    unit = 2 if kind == "dna-hf" else 1
    assert (taken, everything) == (PAIRS * unit // 2, PAIRS * unit)
    two = json.loads((tmp_path / "two.json").read_text())
    assert_same_results(json.loads(out.read_text())["results"], two["results"])


@pytest.fixture(scope="module")
def shared_windows(tmp_path_factory):
    """Two variant configs over the same 12 sites of a random genome: ``first`` an SNV at each,
    ``second`` another SNV and a 1-base deletion at each: every reference window in both."""
    import random

    import pandas as pd

    from perturbation_bench.cli import main

    root = tmp_path_factory.mktemp("shared-windows")
    rng = random.Random(12)
    genome = "".join(rng.choice("ACGT") for _ in range(3000))
    (root / "g.fa").write_text(">chr1\n" + genome + "\n")
    sites = range(500, 2500, 170)
    first = [("chr1", p, genome[p - 1], "ACGT".replace(genome[p - 1], "")[0]) for p in sites]
    second = [
        row
        for p in sites
        for row in (
            ("chr1", p, genome[p - 1], "ACGT".replace(genome[p - 1], "")[1]),
            ("chr1", p - 1, genome[p - 2 : p], genome[p - 2]),
        )
    ]
    for name, rows in (("first", first), ("second", second)):
        pd.DataFrame(rows, columns=["chrom", "pos", "ref", "alt"]).to_parquet(
            root / f"{name}.parquet"
        )
        assert (
            main(
                [
                    "build",
                    "variants",
                    "--variants",
                    str(root / f"{name}.parquet"),
                    "--fasta",
                    str(root / "g.fa"),
                    "--config",
                    name,
                    "--out",
                    str(root / "out"),
                    "--window",
                    "256",
                ]
            )
            == 0
        )
    return root


def run_variants(kind, models, root, config, cache=None):
    metadata = {"data_dir": str(root / "out"), "config": config}
    if kind != "kmer-markov":
        result = evaluate(
            models[kind], ["perturbation_variants"], metadata, model=kind, use_cache=cache
        )
        return result["results"]["perturbation_variants"], logged_pairs(
            result, "perturbation_variants"
        )
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    import perturbation_bench.models.kmer_markov  # noqa: F401
    from perturbation_bench.paths import tasks_dir

    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    result = simple_evaluate(
        model="kmer-markov",
        model_args=f"fasta={root / 'g.fa'},order=3",
        tasks=["perturbation_variants"],
        task_manager=manager,
        log_samples=True,
        use_cache=cache,
    )
    return result["results"]["perturbation_variants"], logged_pairs(result, "perturbation_variants")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["dna-hf", "dna-mlm", "kmer-markov"])
def test_one_cache_never_serves_a_score_to_another_pair(slow_setup, shared_windows, tmp_path, kind):
    """``first`` then ``second`` on one cache: ``second`` equals its uncached run although every
    reference window of it was scored (against another partner) in ``first``."""
    models, _ = slow_setup
    cache = str(tmp_path / "cache")
    run_variants(kind, models, shared_windows, "first", cache)
    cached = run_variants(kind, models, shared_windows, "second", cache)
    clean = run_variants(kind, models, shared_windows, "second")
    assert_same_results(cached[0], clean[0])
    for got, expected in zip(cached[1], clean[1], strict=True):
        assert list(got) == pytest.approx(list(expected), rel=1e-6, abs=1e-3)


@pytest.mark.slow
def test_a_rank_with_everything_cached_does_not_hang_the_others(slow_setup, tmp_path):
    """A rank whose requests are all stored is still called (its lm-eval entries are cleared),
    so dna-hf's collectives meet: rank 1 fully stored, rank 0's store removed, the rerun ends."""
    models, data = slow_setup
    cache, out = tmp_path / "cache" / "run", tmp_path / "out.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(
        command("dna-hf", models["dna-hf"], data, cache, tmp_path / "first.json", 2),
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    Path(f"{cache}_rank0.db{STORE_SUFFIX}").unlink()
    rerun = subprocess.run(
        command("dna-hf", models["dna-hf"], data, cache, out, 2),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    first = json.loads((tmp_path / "first.json").read_text())
    assert_same_results(json.loads(out.read_text())["results"], first["results"])


def test_a_key_is_the_hash_of_what_the_answer_depends_on():
    """The model's identity, the settings the model reads from the document (the score, the
    start token), the request and, for an answer that depends on it, the partner."""
    import hashlib
    from types import SimpleNamespace

    from perturbation_bench.models.result_store import ResultStore
    from perturbation_bench.pairs.settings import TASK, TaskSettings

    store = SimpleNamespace(model=["dna-mlm", "m", {"scoring": "marginal"}])
    doc = {TASK: TaskSettings(score="jsd", start_token="none")}

    def sha(*parts) -> str:
        return hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()

    read = {"score": "jsd", "start_token": "none"}
    assert ResultStore.key(store, doc, "", "ACGT", "ACGA") == sha(
        "dna-mlm", "m", {"scoring": "marginal"}, read, "", "ACGT", "ACGA"
    )
    assert ResultStore.key(store, None, "<s>", "ACGT") == sha(
        "dna-mlm", "m", {"scoring": "marginal"}, None, "<s>", "ACGT"
    )


SCORINGS = {  # name -> (model arguments, task metadata): each computes another answer
    "dna-hf": {
        "llr": ({}, {}),
        "llr, no start token": ({}, {"start_token": "none"}),
        "jsd": ({}, {"score": "jsd"}),
        "embedding cosine, mean": (
            {"scoring": "embedding", "distance": "cosine", "pooling": "mean"},
            {},
        ),
        "embedding l2, flatten, layer 1": (
            {"scoring": "embedding", "distance": "l2", "pooling": "flatten", "layer": 1},
            {},
        ),
    },
    "dna-mlm": {
        "marginal llr": ({}, {}),
        "pll llr": ({"scoring": "pll"}, {}),
        "jsd": ({}, {"score": "jsd"}),
        "embedding cosine, mean": (
            {"scoring": "embedding", "distance": "cosine", "pooling": "mean"},
            {},
        ),
    },
}


@pytest.fixture(scope="module")
def cache_case(tmp_path_factory):
    """A config of 8 labelled SNVs (window 48) on a random genome, and a causal and a masked
    single-nucleotide model."""
    import random

    import pandas as pd

    from perturbation_bench.cli import main

    root = tmp_path_factory.mktemp("scorings")
    rng = random.Random(3)
    genome = "".join(rng.choice("ACGT") for _ in range(600))
    (root / "g.fa").write_text(">chr1\n" + genome + "\n")
    rows = [
        {
            "chrom": "chr1",
            "pos": p,
            "ref": genome[p - 1],
            "alt": "ACGT".replace(genome[p - 1], "")[i % 3],
            "label": i % 2 == 0,
        }
        for i, p in enumerate(range(100, 500, 50))
    ]
    pd.DataFrame(rows).to_csv(root / "v.csv", index=False)
    args = ["build", "variants", "--variants", str(root / "v.csv"), "--fasta", str(root / "g.fa")]
    assert main([*args, "--config", "v", "--out", str(root / "out"), "--window", "48"]) == 0
    tokenizer = single_nucleotide_tokenizer()
    models = {
        "dna-hf": str(save_random_llama(root / "lm", tokenizer)),
        "dna-mlm": str(save_random_bert(root / "mlm", as_masked_lm_tokenizer(tokenizer))),
    }
    return root, models


def scored(case, kind: str, scoring: str, cache: str) -> list:
    """Each pair's two logged values of the run ``scoring`` on the cache path ``cache``."""
    root, models = case
    arguments, metadata = SCORINGS[kind][scoring]
    metadata = {"data_dir": str(root / "out"), "config": "v", **metadata}
    result = evaluate(
        models[kind], ["perturbation_variants"], metadata, kind, use_cache=cache, **arguments
    )
    return logged_pairs(result, "perturbation_variants")


@pytest.mark.slow  # 41 runs
@pytest.mark.parametrize("kind", sorted(SCORINGS))
def test_no_answer_of_one_scoring_is_served_to_a_run_of_another(cache_case, tmp_path, kind):
    """Every ordered pair of scorings (a, b) on one cache path: b's run equals b's run on a cache
    of its own, whatever a left there; and every scoring's answers differ from every other's
    (so a served answer would show)."""
    import shutil

    fresh = {}
    for scoring in SCORINGS[kind]:
        folder = tmp_path / scoring.replace(" ", "_").replace(",", "")
        fresh[scoring] = (folder, scored(cache_case, kind, scoring, str(folder / "cache")))
    values = [tuple(map(tuple, pairs)) for _, pairs in fresh.values()]
    assert len(set(values)) == len(values)
    for first, (folder, _) in fresh.items():
        for second, (_, expected) in fresh.items():
            if first == second:
                continue
            shared = tmp_path / "shared"
            shutil.rmtree(shared, ignore_errors=True)
            shutil.copytree(folder, shared)
            got = scored(cache_case, kind, second, str(shared / "cache"))
            flat = [value for pair in got for value in pair]
            assert flat == pytest.approx(
                [v for pair in expected for v in pair], rel=1e-6, abs=1e-6
            ), (
                first,
                second,
            )


def test_a_source_is_its_absolute_path_and_its_files(tmp_path, monkeypatch):
    """A hub id as given; a folder by its absolute path and each file's (name, size, mtime):
    the same relative path from another folder, or a checkpoint saved again, is another model."""
    import os

    from perturbation_bench.models.result_store import source_identity

    for name in ("a", "b"):
        (tmp_path / name / "m").mkdir(parents=True)
        (tmp_path / name / "m" / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path / "a")
    stat = os.stat(tmp_path / "a" / "m" / "config.json")
    first = source_identity("m")
    assert first == [str(tmp_path / "a" / "m"), ["config.json", 2, stat.st_mtime_ns]]
    monkeypatch.chdir(tmp_path / "b")
    assert source_identity("m") != first
    monkeypatch.chdir(tmp_path / "a")
    (tmp_path / "a" / "m" / "config.json").write_text('{"x": 1}')  # saved again
    assert source_identity("m") != first
    assert source_identity("org/model") == ["org/model"]


def test_a_genome_rewritten_at_the_same_path_is_scored_afresh(tmp_path):
    """kmer-markov on one cache path: the FASTA rewritten in place, the second run equals a run
    on a fresh cache (its chain is the new genome's)."""
    import random

    data = tmp_path / "data"
    write_parquet(random_pairs(6, 80, seed=2), data, "syn_human")
    fasta = tmp_path / "g.fa"

    def genome(seed: int) -> None:
        rng = random.Random(seed)
        fasta.write_text(">chr1\n" + "".join(rng.choice("ACGT") for _ in range(3000)) + "\n")

    def run(cache):
        result = evaluate(
            str(fasta), [TASK], {"data_dir": str(data)}, "kmer-markov", use_cache=cache
        )
        return logged_pairs(result, TASK)

    genome(1)
    run(str(tmp_path / "cache"))
    genome(2)
    fresh = run(None)
    assert run(str(tmp_path / "cache")) == fresh


def test_a_pair_answer_is_kept_under_its_partner_and_the_store_says_what_it_served(
    tmp_path, caplog
):
    """An answer that depends on the partner is served to the same pair only; the store clears
    lm-eval's entries from the file when it opens and logs both counts exactly."""
    from types import SimpleNamespace

    from sqlitedict import SqliteDict

    from perturbation_bench.models.result_store import ResultStore, split_stored

    lm_eval_cache = SqliteDict(str(tmp_path / "run_rank0.db"), autocommit=True)
    lm_eval_cache["a"], lm_eval_cache["b"] = 1.0, 2.0
    assert ResultStore.for_hook(SimpleNamespace(), ["dna-mlm"]) is None
    with caplog.at_level("INFO", logger="lm_eval"):
        store = ResultStore.for_hook(SimpleNamespace(dbdict=lm_eval_cache), ["dna-mlm"])
    assert len(lm_eval_cache) == 0
    path = f"{tmp_path / 'run_rank0.db'}{STORE_SUFFIX}"
    assert caplog.messages == [
        f"{tmp_path / 'run_rank0.db'}: 2 per-request entries cleared (this model keeps its "
        f"answers in {path})"
    ]

    def request(sequence: str):
        return SimpleNamespace(args=("", sequence), doc=None)

    requests = [request("ACGT"), request("ACGA"), request("ACGT"), request("ACGC")]
    pairs = [(0, 1), (2, 3)]
    totals = [None] * 4
    keys, todo = split_stored(store, requests, pairs, totals)
    assert todo == pairs and keys[0] != keys[2]
    store.put(keys[0], (-1.5, -2.5))
    totals = [None] * 4
    assert split_stored(store, requests, pairs, totals)[1] == [(2, 3)]
    assert totals == [-1.5, -2.5, None, None]
    caplog.clear()
    with caplog.at_level("INFO", logger="lm_eval"):
        store.taken("dna-mlm", 1, 2, "pairs")
    assert caplog.messages == [f"dna-mlm: 1 of 2 pairs taken from the cache {path}"]

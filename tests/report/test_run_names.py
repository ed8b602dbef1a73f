"""One row per run (``report/run_names.py``): runs that differ in what changes scores are separate
rows named by how they differ, the same pairs never enter one row twice, ``--name`` names a run."""

from __future__ import annotations

import random

import pytest

from dna_fixtures import write_run
from perturbation_bench.cli import main
from perturbation_bench.errors import DataValidationError
from perturbation_bench.pairs.settings import TaskSettings
from perturbation_bench.report.make import make_report

TASK = "perturbation_syn_human"


def lls(n: int, seed: int) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    return [(-rng.uniform(10, 20), -rng.uniform(10, 20)) for _ in range(n)]


def rows_by_model(report: dict) -> dict[str, int]:
    return {row["model"]: row["n"] for row in report["summary"]}


def test_two_markov_orders_are_two_named_rows(tmp_path):
    """Both runs have lm-eval's random folder name; only the order tells them apart."""
    runs = [
        write_run(
            tmp_path / f"order{k}", TASK, lls(24, k), model_args={"fasta": "g.fa", "order": k}
        )
        for k in (2, 5)
    ]
    report = make_report(runs, tmp_path / "report", n_boot=50)
    assert rows_by_model(report) == {"kmer-markov order=2": 24, "kmer-markov order=5": 24}
    assert len(report["comparisons"]) == 1


def test_a_model_with_rc_average_off_and_on_is_two_rows(tmp_path):
    runs = [
        write_run(
            tmp_path / f"rc{rc}",
            TASK,
            lls(12, 3),
            model="dna-hf",
            model_args={"pretrained": "org/dna-lm"},
            settings=TaskSettings(rc_average=rc, data="sha256:aa"),
        )
        for rc in (False, True)
    ]
    report = make_report(runs, tmp_path / "report", n_boot=50)
    assert rows_by_model(report) == {
        "dna-lm rc_average=False": 12,
        "dna-lm rc_average=True": 12,
    }


def test_one_model_on_two_versions_of_a_config_is_two_rows_or_refused(tmp_path):
    old = write_run(
        tmp_path / "old",
        TASK,
        lls(24, 1),
        model_args={"order": 5},
        settings=TaskSettings(data="sha256:0123456789ab"),
    )
    new = write_run(
        tmp_path / "new",
        TASK,
        lls(21, 1),
        model_args={"order": 5},
        settings=TaskSettings(data="sha256:fedcba987654"),
    )
    with pytest.raises(DataValidationError, match="scored on different data"):
        make_report([old, new], tmp_path / "report", n_boot=50)
    report = make_report([old, new], tmp_path / "report", n_boot=50, allow_different_data=True)
    assert rows_by_model(report) == {
        "kmer-markov syn_human:data=01234567": 24,
        "kmer-markov syn_human:data=fedcba98": 21,
    }


def test_the_same_run_twice_is_refused_naming_both_folders(tmp_path):
    first = write_run(tmp_path / "first", TASK, lls(8, 4), model_args={"order": 3})
    again = write_run(tmp_path / "again", TASK, lls(8, 4), model_args={"order": 3})
    with pytest.raises(DataValidationError, match=f"{first} and {again} would both be the row"):
        make_report([first, again], tmp_path / "report", n_boot=50)


def test_a_name_given_is_the_whole_name(tmp_path):
    runs = [
        write_run(tmp_path / f"order{k}", TASK, lls(12, k), model_args={"order": k}) for k in (2, 5)
    ]
    names = {str(runs[0]): "low order", str(runs[1]): "high order"}
    report = make_report(runs, tmp_path / "report", n_boot=50, names=names)
    assert rows_by_model(report) == {"low order": 12, "high order": 12}
    same = {str(run): "mine" for run in runs}  # one name for two runs: their pairs would pool
    with pytest.raises(DataValidationError, match="would both be the row 'mine'"):
        make_report(runs, tmp_path / "report", n_boot=50, names=same)


@pytest.mark.parametrize("n, thin", [(9, True), (10, False)])
def test_an_interval_is_thin_below_ten_pairs(tmp_path, n, thin):
    run = write_run(tmp_path / "run", TASK, lls(n, 1), model_args={"order": 2})
    report = make_report([run], tmp_path / "report", n_boot=50)
    assert report["summary"][0]["thin"] is thin
    assert any("fewer than 10" in note for note in report["notes"]) is thin


def test_name_labels_runs_and_tells_identical_ones_apart(tmp_path, capsys):
    first = write_run(tmp_path / "first", TASK, lls(8, 4), model_args={"order": 3})
    again = write_run(tmp_path / "again", TASK, lls(8, 5), model_args={"order": 3})
    assert (
        main(
            [
                "report",
                str(first),
                str(again),
                "--out",
                str(tmp_path / "report"),
                "--bootstrap",
                "50",
                "--name",
                f"{first}=seed A",
                "--name",
                f"{again}=seed B",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "seed A perturbation_syn_human" in out and "seed B perturbation_syn_human" in out
    assert (
        main(
            [
                "report",
                str(first),
                "--out",
                str(tmp_path / "r2"),
                "--name",
                f"{tmp_path / 'nowhere'}=x",
            ]
        )
        == 2
    )
    assert "is not one of the RUN folders" in capsys.readouterr().err


EDGES = {  # task -> LL pairs: accuracy 1, accuracy 0, a single pair, every pair tied
    "perturbation_syn_human": [(-1.0, -2.0)] * 6,
    "perturbation_syn_mouse": [(-2.0, -1.0)] * 6,
    "perturbation_motif_human": [(-1.0, -3.0)],
    "perturbation_custom": [(-4.0, -4.0)] * 5,
}


def test_the_report_draws_every_figure_at_the_edges(tmp_path):
    """Accuracy 1 and 0, one pair, all ties, a variant task without labels, one run: no crash,
    every interval within [0, 1] and around its point, thin intervals flagged, every figure that
    applies drawn."""
    run = tmp_path / "run"
    for task, pairs in EDGES.items():
        write_run(run, task, pairs, model_args={"order": 2})
    write_run(
        run,
        "perturbation_variants",
        [(-1.0, -2.0), (-2.0, -1.0)],
        model_args={"order": 2},
        docs=[{"chrom": "1", "pos": 5, "ref": "A", "alt": "C"}] * 2,
    )
    report = make_report([run], tmp_path / "report", n_boot=50)
    by_task = {row["task"]: row for row in report["summary"]}
    assert by_task["perturbation_syn_human"]["pairwise_acc"] == 1.0
    assert by_task["perturbation_syn_mouse"]["pairwise_acc"] == 0.0
    assert by_task["perturbation_custom"]["tie_rate"] == 1.0
    for row in report["summary"]:
        for low, high in (row["wilson_95"], row["bootstrap_95"]):
            assert 0.0 <= low <= row["pairwise_acc"] <= high <= 1.0, row
        assert row["thin"] == (row["n"] < 10)
    assert sum("fewer than 10" in note for note in report["notes"]) == len(by_task)
    assert report["variants"]["summary"] == []  # no labels: no ranking metrics
    for name, drawn in report["figures"].items():
        assert (tmp_path / "report" / f"{name}.png").is_file() == drawn, name
    assert report["figures"]["accuracy"] and not report["figures"]["roc"]
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "6 (thin)" in markdown and "Published reference" in markdown


def test_only_the_sections_that_apply(tmp_path):
    """A variant-only run: no codon figure, no published numbers, no per-class AUROC table when
    each class holds one kind of label; two chromosomes make a thin by-chromosome interval."""
    rng = random.Random(8)
    docs = [
        {
            "chrom": chrom,
            "pos": i,
            "ref": "A",
            "alt": "C",
            "label": consequence == "stop_gained",
            "consequence": consequence,
        }
        for i, (chrom, consequence) in enumerate(
            [(c, k) for c in "12" for k in ("stop_gained", "synonymous_variant")] * 6
        )
    ]
    run = write_run(
        tmp_path / "run",
        "perturbation_variants",
        [(-rng.uniform(1, 5), -rng.uniform(1, 5)) for _ in docs],
        docs=docs,
    )
    report = make_report([run], tmp_path / "report", n_boot=50)
    assert not report["figures"]["accuracy_by_codons_changed"]
    assert not (tmp_path / "report" / "accuracy_by_codons_changed.png").exists()
    assert report["published_reference"] == {} and report["variants"]["strata"] == []
    (ranked,) = report["variants"]["summary"]
    assert ranked["chromosomes"] == 2 and ranked["by_chrom_thin"]
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Published reference" not in markdown and "codons changed" not in markdown
    assert "(thin: 2 chromosomes)" in markdown
    assert any("resample 2 chromosome(s)" in note for note in report["notes"])
    assert report["figures"]["class_ladder"] and report["figures"]["roc"]


def named(*identities) -> list[str]:
    from perturbation_bench.report.run_names import run_names

    runs = [
        {"folder": f"r{i}", "base": "m", "identity": item, "shards": {TASK: None}}
        for i, item in enumerate(identities)
    ]
    names = run_names(runs)
    return [names[run["folder"]] for run in runs]


def test_the_weights_dtype_tells_runs_apart_and_where_they_run_does_not():
    from perturbation_bench.report.run_names import identity

    settings = {TASK: TaskSettings(data="sha256:aa")}
    bf16, fp32 = (
        identity("dna-hf", {"pretrained": "m", "dtype": d}, {}, settings)
        for d in ("bfloat16", "float32")
    )
    assert named(bf16, fp32) == ["m dtype=bfloat16", "m dtype=float32"]
    cpu, gpu = (
        identity("dna-hf", {"pretrained": "m", "device": d}, {}, settings) for d in ("cpu", "cuda")
    )
    assert cpu == gpu


@pytest.mark.parametrize(
    "name, value",
    [("start_token", "none"), ("reduction", "mean"), ("score", "abs_llr"), ("convention", "evo2"),
     ("one_class_chromosomes", "keep"), ("context_bp", 512), ("kmer_overlap", True)],
)  # fmt: skip
def test_every_setting_that_identifies_a_run_names_two_runs_apart(name, value):
    from perturbation_bench.report.run_names import identity

    plain, changed = (
        identity("dna-hf", {"pretrained": "m"}, {}, {TASK: TaskSettings(data="sha256:aa", **extra)})
        for extra in ({}, {name: value})
    )
    first, second = named(plain, changed)
    assert first != second and second.endswith(f"{name}={value}")


def test_a_model_argument_from_a_command_line_equals_the_same_value_from_python():
    from perturbation_bench.report.run_names import identity

    settings = {TASK: TaskSettings(data="sha256:aa")}
    typed = identity("kmer-markov", {"fasta": "g.fa", "order": 5}, {}, settings)
    assert identity("kmer-markov", {"fasta": "g.fa", "order": "5"}, {}, settings) == typed


def test_a_pll_run_says_so_in_its_name_even_alone():
    from perturbation_bench.report.run_names import identity

    settings = {TASK: TaskSettings(data="sha256:aa")}
    pll, marginal = (
        identity("dna-mlm", {"pretrained": "m"}, {"scoring": s}, settings)
        for s in ("pll", "marginal")
    )
    assert named(pll) == ["m scoring=pll"]
    assert named(marginal) == ["m"]
    assert named(marginal, pll) == ["m scoring=marginal", "m scoring=pll"]


def test_naming_one_run_keeps_what_tells_the_other_apart(tmp_path):
    runs = [
        write_run(tmp_path / f"order{k}", TASK, lls(12, k), model_args={"order": k}) for k in (2, 5)
    ]
    report = make_report(runs, tmp_path / "report", n_boot=50, names={str(runs[0]): "floor"})
    assert rows_by_model(report) == {"floor": 12, "kmer-markov order=5": 12}


def test_an_embedding_run_is_named_by_its_score_and_a_likelihood_run_has_no_none_settings():
    """The likelihood run lacks the embedding settings: its name carries none of them (never
    ``=None``); the embedding run's score names its scoring, distance, pooling and layer once,
    and its TraitGym file carries it once."""
    from perturbation_bench.models.embedding_scoring import EmbeddingScore
    from perturbation_bench.report.export import traitgym_name
    from perturbation_bench.report.run_names import identity

    settings = {TASK: TaskSettings(data="sha256:aa")}
    score = EmbeddingScore("l2", "mean", 3)
    args = {"pretrained": "m", "scoring": "embedding", "distance": "l2", "pooling": "mean"}
    embedding = identity("dna-hf", {**args, "layer": "3"}, score.settings(), settings)
    likelihood = identity("dna-hf", {"pretrained": "m"}, {}, settings)
    assert named(likelihood, embedding) == ["m", f"m {score.name}"]
    assert named(embedding) == [f"m {score.name}"]
    assert traitgym_name(f"m {score.name}", score.name) == (
        "m_Embeddings.plus.l2_distance_pooling_mean_layer_3_"
    )
    assert traitgym_name("m", "llr") == "m_LLR.minus.score"


@pytest.mark.parametrize(
    "pretrained, model, short",
    [("/tmp/pytest-7/models0/tiny-dna-lm", "dna-hf", "tiny-dna-lm"),
     ("/tmp/pytest-7/models0/tiny-dna-lm/", "dna-hf", "tiny-dna-lm"),
     ("org/dna-lm", "dna-hf", "dna-lm"), (None, "kmer-markov", "kmer-markov"),
     ("/h/hub/models--org--dna-lm/snapshots/0123abcd", "dna-hf", "dna-lm"),
     ("/h/snapshots/0123abcd", "dna-hf", "0123abcd"),
     (None, None, "run-folder")],
)  # fmt: skip
def test_a_name_starts_from_the_models_short_name(pretrained, model, short):
    from perturbation_bench.report.run_names import short_name

    args = {} if pretrained is None else {"pretrained": pretrained}
    assert short_name(args, model, "run-folder") == short


def test_a_report_names_a_model_in_a_temporary_folder_by_its_last_component(tmp_path):
    model = tmp_path / "pytest-of-someone" / "pytest-12" / "models0" / "tiny-dna-lm"
    run = write_run(
        tmp_path / "run", TASK, lls(6, 1), model="dna-hf", model_args={"pretrained": str(model)}
    )
    report = make_report([run], tmp_path / "report", n_boot=50)
    assert rows_by_model(report) == {"tiny-dna-lm": 6}


def test_an_empty_or_inapplicable_setting_is_never_in_a_name():
    """Two runs differ in ``dna_prefix`` ('' against 'ACGT') and in ``score`` (None, as a
    setting that does not apply is recorded, against 'abs_llr'): the run without a prefix and
    without a score is named by its model alone, never ``dna_prefix=`` or ``score=None``."""
    from perturbation_bench.report.run_names import identity

    plain, changed = (
        identity("dna-hf", {"pretrained": "m"}, {}, {TASK: TaskSettings(data="sha256:aa", **extra)})
        for extra in ({"dna_prefix": "", "score": None},
                      {"dna_prefix": "ACGT", "score": "abs_llr"})
    )  # fmt: skip
    assert named(plain, changed) == ["m", "m dna_prefix=ACGT score=abs_llr"]

"""One applicability rule (``pairs/applicability.py``), held over every combination the tables
make: each option setting (``pairs/settings.py``), given to a task of each kind (a pair task,
``pairs/kinds.py``'s variant and footprint kinds) under each variant score (``pairs/scores.py``)
for each model (``families.MODELS``, and lm-eval's own): the task is refused in one line, or it
loads with the setting None exactly where the table says the setting does not apply, and the
run refuses an option that no task takes. A new setting, kind, score or model is covered by
its table row alone (and a sample value below, which the first test asks for)."""

from __future__ import annotations

import pytest

from dna_fixtures import build_variants, random_genome, snvs_at
from perturbation_bench.active_models import as_scoring
from perturbation_bench.cli import main
from perturbation_bench.errors import OptionsError
from perturbation_bench.families import MODELS
from perturbation_bench.fixtures.random_pairs import random_pairs, write_parquet
from perturbation_bench.pairs.applicability import check_every_option_taken
from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.scores import SCORES
from perturbation_bench.pairs.settings import SETTING, SETTINGS, applies

SAMPLES = {  # a value other than the default, for the option settings without fixed choices
    "preset": "carbon",
    "dna_prefix": "<dna>",
    "kmer_size": 3,
    "context_bp": 30,
    "calibration": "no-such-calibration-run",
    "shard": "0/2",
    "convention": "evo2",
    "min_per_class": 2,
}
OPTIONS = [s.name for s in SETTINGS if s.option]
KINDS = (None, "variants", "footprints")


def sample(name: str):
    """A value of option ``name`` other than its default."""
    setting = SETTING[name]
    if name in SAMPLES:
        return SAMPLES[name]
    return next(choice for choice in setting.choices if choice != setting.default)


def test_every_option_setting_has_a_sample_value():
    assert all(sample(name) != SETTING[name].default for name in OPTIONS)


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """A pair config, a labelled SNV config and a footprint config, 60-120 bp windows."""
    root = tmp_path_factory.mktemp("applicability")
    write_parquet(random_pairs(4, 60), root / "out", "syn_human")
    fasta, sequences = random_genome(root, {"chr1": 600}, 4)
    sites = [("chr1", p) for p in range(100, 500, 50)]
    snvs_at(sequences, sites, lambda i: i % 4 == 0).to_csv(root / "v.csv", index=False)
    build_variants(root, root / "v.csv", fasta, "v", window=60)
    genome = sequences["chr1"]
    (root / "m.meme").write_text(
        "MEME version 5\n\nALPHABET= ACGT\n\nstrands: + -\n\n"
        "Background letter frequencies\nA 0.25 C 0.25 G 0.25 T 0.25\n\n"
        "MOTIF TF1 TF1\n\nletter-probability matrix: alength= 4 w= 4 nsites= 20 E= 0\n"
        "0.7 0.1 0.1 0.1\n0.1 0.7 0.1 0.1\n0.1 0.1 0.7 0.1\n0.1 0.1 0.1 0.7\n"
    )
    (root / "bg.fa").write_text(">bg0\n" + genome[:120] + "\n>bg1\n" + genome[200:320] + "\n")
    inputs = ["--motifs", str(root / "m.meme"), "--backgrounds", str(root / "bg.fa")]
    assert main(["build", "footprints", *inputs, "--config", "fp", "--out", str(root / "out")]) == 0
    return root / "out"


def load(configs, kind, metadata):
    """The settings of the first document of a task of ``kind`` given ``metadata``."""
    from perturbation_bench.kinds.footprints.task import load_footprint_pairs
    from perturbation_bench.tasks.loading import load_pairs
    from perturbation_bench.tasks.variants import load_variant_pairs

    loader, config = {
        None: (load_pairs, "syn_human"),
        "variants": (load_variant_pairs, "v"),
        "footprints": (load_footprint_pairs, "fp"),
    }[kind]
    (doc, *_) = loader(config, data_dir=str(configs), **metadata)["test"]
    return doc[TASK]


@pytest.mark.parametrize("model", [None, *MODELS])
@pytest.mark.parametrize("option", OPTIONS)
def test_a_task_takes_an_option_exactly_where_the_table_says_it_applies(configs, option, model):
    for kind in KINDS:
        for score in [s.name for s in SCORES] if kind == "variants" else [None]:
            metadata = {option: sample(option)} | ({"score": score} if score else {})
            with as_scoring(model):
                try:
                    settings = load(configs, kind, metadata)
                except OptionsError as err:
                    assert "\n" not in str(err)
                    continue
                takes = applies(option, kind, settings.score)
                if option == "context_bp":  # it applies where it crops: every window here
                    takes = True
                if takes:
                    assert settings[option] is not None, (option, kind, score)
                    check_every_option_taken()
                else:
                    assert settings[option] is None, (option, kind, score)
                    with pytest.raises(OptionsError, match=rf"^the {option} option applies to "):
                        check_every_option_taken()


def test_an_option_one_task_takes_is_kept_by_it_and_said_once_for_the_others(configs, caplog):
    given = {"ties": "correct", "score": "jsd"}
    with caplog.at_level("WARNING"), as_scoring("dna-hf"):
        pair = load(configs, None, given)
        footprint = load(configs, "footprints", given)
        with pytest.raises(OptionsError) as refused:
            check_every_option_taken()
    assert (pair.ties, pair.score, footprint.ties, footprint.score) == (None, None, "correct", None)
    assert str(refused.value) == (
        "the score option applies to perturbation_variants (and built variants configs); no task "
        "of this run takes it (fp, syn_human): leave it out"
    )
    said = [r.getMessage() for r in caplog.records if "option applies to" in r.getMessage()]
    assert said == [
        "perturbation-bench syn_human: the ties option applies to perturbation_footprints (and "
        "built footprints configs); this task and the other tasks it does not apply to ignore it",
        "perturbation-bench syn_human: the score option applies to perturbation_variants (and "
        "built variants configs); this task and the other tasks it does not apply to ignore it",
    ]
    with as_scoring("dna-hf"):
        load(configs, None, {"ties": "correct"})
        load(configs, "footprints", {"ties": "correct"})
        check_every_option_taken()


def test_a_calibration_under_a_score_that_calibrates_nothing_is_not_recorded(configs):
    with as_scoring("dna-hf"):
        settings = load(configs, "variants", {"score": "llr", "calibration": "somewhere"})
        assert settings.calibration is None
        with pytest.raises(OptionsError, match="scored by calibrated_llr or calibrated_entropy"):
            check_every_option_taken()


def test_a_context_longer_than_every_window_crops_nothing_and_is_not_recorded(configs):
    with as_scoring("dna-hf"):
        settings = load(configs, None, {"context_bp": 60})
        assert settings.context_bp is None
        with pytest.raises(OptionsError, match=r"^the context_bp option applies to tasks whose"):
            check_every_option_taken()
        assert load(configs, None, {"context_bp": 59}).context_bp == 59
        check_every_option_taken()


def test_a_setting_of_one_score_is_kept_under_that_score_only():
    """A score-bound setting (``calibration``) is kept under a score that reads it and dropped
    under another; a setting bound to no kind applies to every task."""
    from perturbation_bench.pairs.applicability import applicable
    from perturbation_bench.pairs.settings import TaskSettings, applies_to

    def calibration_under(score: str):
        given = TaskSettings(score=score, calibration="run.json")
        with as_scoring("dna-hf"):
            return applicable("v", "variants", given, ["calibration"]).calibration

    assert (calibration_under("calibrated_llr"), calibration_under("llr")) == ("run.json", None)
    unbound = next(s.name for s in SETTINGS if s.option and not s.kinds and not s.scores)
    assert applies_to(unbound) == "every task"

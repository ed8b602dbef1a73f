"""A task's settings (``pairs/settings.py``): one object per task, shared by its documents, written
into logged samples as plain JSON and read back, also from samples files of earlier versions."""

from __future__ import annotations

import json

import pytest

from perturbation_bench.errors import OptionsError
from perturbation_bench.pairs.fields import TASK
from perturbation_bench.pairs.requests import Formatting
from perturbation_bench.pairs.settings import SETTING, SETTINGS, TaskSettings, logged_settings
from perturbation_bench.tasks.loading import load_pairs
from perturbation_bench.tasks.options import parse_options


def test_every_document_of_a_task_holds_the_one_settings_object(pair_data):
    docs = load_pairs(
        "syn_human", data_dir=str(pair_data), preset="carbon", rc_average=True, context_bp=60
    )["test"]
    assert len({id(doc[TASK]) for doc in docs}) == 1 and len(docs) == 8
    shared = docs[0][TASK]
    assert shared.formatting == Formatting(dna_prefix="<dna>", kmer_size=6, rc_average=True)
    assert shared["context_bp"] == 60 and shared["data"].startswith("sha256:")


def test_settings_are_logged_as_json_and_read_back():
    settings = TaskSettings(
        kmer_size=6,
        rc_average=True,
        data="sha256:ab",
        shard="1/4",
        context_bp=512,
        reduction="mean",
        score="abs_llr",
        start_token="none",
        convention="traitgym",
        one_class_chromosomes="keep",
        config="syn_human",
    )
    logged = json.loads(json.dumps({"doc": {"original_sequence": "ACGT", TASK: settings}}))
    assert logged_settings(logged["doc"]) == {
        "data": "sha256:ab",
        "shard": "1/4",
        "preset": "default",
        "dna_prefix": "",
        "kmer_size": 6,
        "kmer_overlap": False,
        "rc_average": True,
        "context_bp": 512,
        "reduction": "mean",
        "score": "abs_llr",
        "start_token": "none",
        "convention": "traitgym",
        "one_class_chromosomes": "keep",
        "config": "syn_human",
        "labels": None,
        "ties": "strict",
        "min_per_class": 30,
        "dose_axes": None,
        "calibration": None,
    }


def test_samples_of_versions_before_conventions_read_as_those_versions_scored():
    settings = dict(TaskSettings(data="sha256:ab"))
    for key in ("start_token", "convention", "one_class_chromosomes", "labels", "kmer_overlap"):
        del settings[key]
    read = logged_settings({"original_sequence": "ACGT", TASK: settings})
    assert (
        read["start_token"],
        read["convention"],
        read["one_class_chromosomes"],
        read["labels"],
        read["kmer_overlap"],
    ) == ("model", None, "drop", None, False)


def test_samples_of_earlier_versions_give_the_same_settings():
    """Version 0.1.0 wrote each setting into a ``scoring_*`` field of its own."""
    doc = {
        "original_sequence": "ACGT",
        "scoring_data": "sha256:ab",
        "scoring_shard": "1/4",
        "scoring_preset": "carbon",
        "scoring_prefix": "<dna>",
        "scoring_kmer_size": 6,
        "scoring_rc_average": True,
        "scoring_context_bp": 512,
        "scoring_score": "abs_llr",
        "scoring_token_counts": [3, 3],
    }
    expected = TaskSettings(
        preset="carbon",
        dna_prefix="<dna>",
        kmer_size=6,
        rc_average=True,
        data="sha256:ab",
        shard="1/4",
        context_bp=512,
        reduction="mean",
        score="abs_llr",
    )
    assert logged_settings(doc) == dict(expected)
    assert (
        logged_settings({k: v for k, v in doc.items() if k != "scoring_token_counts"})["reduction"]
        == "sum"
    )


@pytest.mark.parametrize(
    "setting", [s for s in SETTINGS if s.option and s.choices], ids=lambda s: s.name
)
def test_an_option_with_choices_takes_each_of_them_and_refuses_anything_else(setting):
    for choice in setting.choices:
        assert getattr(parse_options({setting.name: choice}).settings, setting.name) == choice
    for wrong in ("yes", 1) if isinstance(setting.choices[0], bool) else ("Sum", 1):
        with pytest.raises(OptionsError, match=f"^{setting.name} must be .*got {wrong!r}"):
            parse_options({setting.name: wrong})


def test_an_option_left_empty_takes_its_default():
    settings = parse_options({"reduction": None, "score": "", "rc_average": None}).settings
    assert (settings.reduction, settings.score, settings.rc_average) == ("sum", "llr", False)
    assert parse_options({"preset": "carbon", "dna_prefix": ""}).settings.dna_prefix == ""


def test_settings_are_read_as_attributes_and_refuse_names_that_are_not_settings():
    settings = TaskSettings(kmer_size=6, reduction="mean")
    assert {s.name: getattr(settings, s.name) for s in SETTINGS} == dict(settings)
    assert settings.formatting == Formatting(kmer_size=6)
    with pytest.raises(AttributeError):
        _ = settings.reductions
    with pytest.raises(TypeError, match="not task settings: reductions$"):
        TaskSettings(reductions="mean")
    with pytest.raises(TypeError, match="not task settings: overlap, reductions$"):
        TaskSettings(reductions="mean", overlap=True)
    assert TaskSettings(kmer_size=6, kmer_overlap=True).formatting == Formatting(
        kmer_size=6, kmer_overlap=True
    )
    assert settings.replaced(score=None).score is None and settings.score == "llr"


def test_settings_are_frozen_and_copies_are_equal_settings():
    import copy
    import pickle

    settings = TaskSettings(kmer_size=6, reduction="mean")
    for change in (
        lambda s: s.__setitem__("kmer_size", 3),
        lambda s: s.update(kmer_size=3),
        lambda s: s.setdefault("kmer_size", 3),
        lambda s: s.pop("kmer_size"),
        lambda s: s.popitem(),
        lambda s: s.clear(),
        lambda s: s.__delitem__("kmer_size"),
        lambda s: s.__ior__({"kmer_size": 3}),
    ):
        with pytest.raises(TypeError) as refused:
            change(settings)
        assert str(refused.value) == (
            "task settings are frozen: make others with replaced(name=value)"
        )
    assert settings.kmer_size == 6 and len(settings) == len(SETTINGS)
    for copied in (copy.deepcopy(settings), pickle.loads(pickle.dumps(settings))):
        assert type(copied) is TaskSettings and copied == settings
        assert copied.formatting == settings.formatting


@pytest.mark.parametrize(
    ("name", "value"),
    [("kmer_size", "6"), ("kmer_size", True), ("rc_average", 1), ("score", 3), ("dose_axes", "x")],
)
def test_a_setting_of_the_wrong_type_is_refused_when_the_settings_are_made(name, value):
    with pytest.raises(TypeError, match=rf"^task settings of the wrong type: {name}="):
        TaskSettings(**{name: value})


def test_every_default_is_of_its_setting_s_type_and_a_kind_s_own_rows_are_its_alone():
    from perturbation_bench.pairs.kinds import KINDS

    assert all(setting.holds(setting.default) for setting in SETTINGS)
    assert TaskSettings(kmer_size=6, rc_average=True, dose_axes=["copies"]).kmer_size == 6
    own = {row.name: kind.name for kind in KINDS for row in kind.setting_rows()}
    assert own == {"ties": "footprints", "dose_axes": "footprints"}
    assert all(SETTING[name].kinds == (kind,) for name, kind in own.items())

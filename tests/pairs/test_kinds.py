"""The kinds table (pairs/kinds.py): each row agrees with the files, tasks, templates, builds,
settings and checks it names, and a file's kind is told by its columns."""

from __future__ import annotations

import pytest
import yaml

from perturbation_bench.commands import build
from perturbation_bench.dataset.invariants import invariants
from perturbation_bench.dataset.schema import SCHEMAS
from perturbation_bench.pairs.kinds import (
    KIND,
    KINDS,
    kind_of,
    sample_fields,
)
from perturbation_bench.pairs.settings import SETTING
from perturbation_bench.paths import tasks_dir


def kind_options(kind) -> list[str]:
    """The options whose rows name ``kind``."""
    return [
        name for name, setting in SETTING.items() if kind.name in setting.kinds and setting.option
    ]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_kinds_task_yaml_includes_its_template(kind):
    spec = yaml.safe_load((tasks_dir() / f"{kind.task}.yaml").read_text())
    assert spec["include"] == kind.template
    assert (tasks_dir() / kind.template).is_file()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_kinds_builds_settings_and_options_exist(kind):
    assert kind.name in build.BUILDS  # the build of its name writes it
    taken = [name for name, setting in SETTING.items() if kind.name in setting.kinds]
    assert all(
        SETTING[name].kinds == (kind.name,) for name in kind_options(kind) if kind.own_settings
    )
    assert set(kind_options(kind)) <= set(taken)


def test_every_build_that_writes_pairs_has_its_kind_and_the_others_write_tables():
    writes = {name: b.writes for name, b in build.BUILDS.items()}
    assert {name for name, kind in writes.items() if kind is None} == {"mutations", "saturation"}
    assert writes["calibration"] == "variants"
    assert set(writes.values()) - {None} == set(KIND)


def test_the_published_schemas_are_told_by_their_columns():
    for name, schema in SCHEMAS.items():
        assert kind_of(schema.names) == name


def test_where_several_markers_are_present_the_kind_listed_last_wins():
    footprint_columns = ["original_sequence", "sequence", "motif", "background_sequence"]
    assert kind_of(footprint_columns) == "footprints"
    assert kind_of(["original_sequence", "sequence", "motif"]) == "motif"
    assert kind_of(["original_sequence", "sequence", "chrom", "pos", "ref", "alt"]) == "variants"
    assert kind_of(["original_sequence", "sequence"]) is None


def test_every_validation_check_names_kinds_of_the_table():
    for check in invariants():
        assert set(check.kinds) <= set(KIND), check.name


def test_one_kind_options_and_sample_fields_come_from_the_rows():
    one_kind_options = {option: kind for kind in KINDS for option in kind_options(kind)}
    assert one_kind_options == {
        "score": KIND["variants"],
        "min_per_class": KIND["variants"],
        "calibration": KIND["variants"],
        "ties": KIND["footprints"],
    }
    fields = sample_fields()
    assert fields[:2] == ("label", "chrom")
    assert len(fields) == len(set(fields))
    assert set(fields) == {n for kind in KINDS for n in kind.document.sample_fields}

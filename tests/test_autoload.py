"""The autoload hook: installed, free at start-up, transparent to importlib, fail-safe, and
overridable by the user's own tasks. These must FAIL, not skip, where the .pth is missing."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import sysconfig
import types
from pathlib import Path

import pytest

from perturbation_bench import _autoload
from perturbation_bench.families import MODELS
from perturbation_bench.paths import tasks_dir


def python(code: str, **env: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_the_pth_file_is_installed_in_site_packages():
    pth = Path(sysconfig.get_paths()["purelib"]) / "perturbation_bench_autoload.pth"
    assert pth.is_file(), "install the package (pip install . or -e .); the hook comes with it"


def without_and_with_the_hook(code: str) -> tuple[dict, dict]:
    """The JSON ``code`` prints, in a Python without the hook and in one with it."""
    return json.loads(python(code, PERTURBATION_BENCH_NO_AUTOLOAD="1")), json.loads(python(code))


@pytest.mark.slow
def test_a_plain_start_imports_nothing_heavy_and_the_hook_can_be_turned_off():
    code = (
        "import json, sys; print(json.dumps({"
        "'finder': any(type(f).__name__ == 'PostImportFinder' for f in sys.meta_path), "
        "'ours': sorted(m for m in sys.modules if m.startswith('perturbation_bench')), "
        "'heavy': sorted(m for m in ('lm_eval', 'torch', 'datasets', 'pyarrow', 'inspect', "
        "'importlib.abc', 'pathlib', 'logging') if m in sys.modules)}))"
    )
    bare, hooked = without_and_with_the_hook(code)
    assert hooked["finder"] and not bare["finder"]
    assert hooked["ours"] == ["perturbation_bench", "perturbation_bench._autoload"]
    assert bare["ours"] == []
    assert hooked["heavy"] == bare["heavy"]  # the hook adds no import of its own


@pytest.mark.slow
def test_importlib_resources_sees_the_same_files_with_and_without_the_hook():
    code = (
        "import importlib.resources, json, lm_eval.models, lm_eval.tasks.manager as m; "
        "from lm_eval.api.registry import model_registry; "
        "print(json.dumps({'files': sorted(p.name for p in importlib.resources.files("
        "'lm_eval.models').iterdir()), 'loader': type(lm_eval.models.__loader__).__name__, "
        "'spec_loader': type(lm_eval.models.__spec__.loader).__name__, "
        "'manager_loader': type(m.__loader__).__name__, 'dna_hf': 'dna-hf' in model_registry}))"
    )
    bare, hooked = without_and_with_the_hook(code)
    assert len(bare["files"]) > 10
    assert {k: v for k, v in hooked.items() if k != "dna_hf"} == {
        k: v for k, v in bare.items() if k != "dna_hf"
    }
    assert hooked["dna_hf"] and not bare["dna_hf"]


def run_hooked(module_name: str, source: str, hook) -> types.ModuleType:
    """Execute ``source`` as a module through the hook's loader, as an import would."""

    class SourceLoader:
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            exec(source, module.__dict__)

    module = types.ModuleType(module_name)
    _autoload._HookedLoader(SourceLoader(), hook).exec_module(module)
    return module


@pytest.fixture
def fresh_report(monkeypatch):
    monkeypatch.setattr(_autoload, "_reported", [])


CHANGED_SIGNATURE = """
class TaskManager:
    def __init__(self, task_dirs=None, defaults=True):
        self.task_dirs, self.defaults = task_dirs, defaults
"""


def test_a_changed_task_manager_runs_untouched_and_the_failure_is_logged_once(fresh_report, caplog):
    with caplog.at_level(logging.WARNING, logger="lm_eval.perturbation_bench"):
        module = run_hooked("fake_manager", CHANGED_SIGNATURE, _autoload.add_tasks_to_defaults)
        run_hooked("fake_manager_2", CHANGED_SIGNATURE, _autoload.add_tasks_to_defaults)
    manager = module.TaskManager(["mine"], defaults=False)
    assert (manager.task_dirs, manager.defaults) == (["mine"], False)
    assert "__wrapped__" not in vars(module.TaskManager.__init__)
    assert caplog.text.count("could not hook into lm-eval") == 1
    assert "--include_path" in caplog.text


KNOWN_SIGNATURE = """
class TaskManager:
    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
        self.include_path = include_path
"""


def test_a_failure_inside_the_wrapper_falls_back_to_the_original_call(
    fresh_report, monkeypatch, caplog
):
    module = run_hooked("fake_manager", KNOWN_SIGNATURE, _autoload.add_tasks_to_defaults)
    assert module.TaskManager(include_path="x").include_path == [str(tasks_dir()), "x"]
    assert module.TaskManager(include_path="x", include_defaults=False).include_path == "x"

    def broken():
        raise OSError("tasks folder gone")

    monkeypatch.setattr("perturbation_bench.paths.tasks_dir", broken)
    with caplog.at_level(logging.WARNING, logger="lm_eval.perturbation_bench"):
        assert module.TaskManager(include_path="x").include_path == "x"
    assert "OSError: tasks folder gone" in caplog.text


@pytest.mark.slow
def test_a_users_task_of_the_same_name_wins(tmp_path):
    """lm-eval's rule: later include paths override earlier ones; ours comes first."""
    (tmp_path / "mine.yaml").write_text(
        "task: perturbation_syn_human\ndataset_path: x\noutput_type: loglikelihood\n"
        "doc_to_text: ''\ndoc_to_target: ''\ntest_split: test\n"
    )
    code = (
        "from lm_eval.tasks import TaskManager; "
        f"m = TaskManager(include_path={str(tmp_path)!r}); "
        "print(m.task_index['perturbation_syn_human'].yaml_path); "
        "print(m.task_index['perturbation_syn_mouse'].yaml_path)"
    )
    users, ours = python(code).split()
    assert Path(users) == tmp_path / "mine.yaml"
    assert Path(ours).parent == tasks_dir()


def test_the_upcoming_lm_eval_plugin_entry_points_are_declared():
    from importlib.metadata import entry_points

    (model,) = entry_points(group="lm_eval.models", name="dna-hf")
    assert model.load().__name__ == "DnaHFLM"
    (tasks,) = entry_points(group="lm_eval.tasks", name="perturbation_bench")
    assert tasks.load()() == tasks_dir()
    assert MODELS["dna-hf"].target == model.value


def test_the_model_table_is_the_one_every_door_reads():
    """setup.cfg's entry points, the autoload hook's registrations and each adapter's lm-eval
    name all come from ``perturbation_bench.families.MODELS``."""
    import importlib
    from importlib.metadata import entry_points

    from lm_eval.api.registry import get_model

    declared = {point.name: point.value for point in entry_points(group="lm_eval.models")}
    assert declared == {name: model.target for name, model in MODELS.items()}
    for name, model in MODELS.items():
        target = model.target
        importlib.import_module(target.split(":")[0])  # registers it, with the hook on or off
        cls = get_model(name)
        assert f"{cls.__module__}:{cls.__qualname__}" == target
        assert cls.model_name == name


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, name, cls",
    [("dna_mlm", "dna-mlm", "DnaMaskedLM"), ("kmer_markov", "kmer-markov", "KmerMarkovLM")],
)
def test_importing_our_models_first_leaves_lm_evals_own_models_loadable(module, name, cls):
    """lm-eval imports its models only on a lookup in an empty registry; ours must not fill it
    first (a script that imports dna_mlm, then asks lm-eval for hf)."""
    out = python(
        f"import perturbation_bench.models.{module}\n"
        "from lm_eval.api.registry import get_model\n"
        f"print(get_model('hf').__name__, get_model('{name}').__name__)",
        PERTURBATION_BENCH_NO_AUTOLOAD="1",
    )
    assert out.split() == ["HFLM", cls]

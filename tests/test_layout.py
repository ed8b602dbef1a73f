"""The package's architecture: which subpackage may import which (read from the source, so a lazy
import inside a function counts too), and every subpackage imports on its own."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "perturbation_bench"
SUBPACKAGES = ("tasks", "models", "dataset", "report", "variants", "bench")
FORBIDDEN = {  # importer -> subpackages it must never import
    "tasks": {"dataset", "models", "report", "variants", "bench"},
    "dataset": {"tasks", "models", "report", "variants", "bench"},
    "models": {"tasks", "dataset", "report", "variants", "bench"},
    "report": {"models", "tasks", "dataset", "variants", "bench"},
    "variants": {"tasks", "models", "report", "bench"},  # it builds on dataset/ (genome, annotation)
    "bench": set(),  # an entry point, like cli.py: it drives the models and the tasks
    "shared": set(SUBPACKAGES),  # top-level modules the subpackages share
}
SHARED = ("dna", "comparison", "pair_files", "pair_changes", "errors", "paths", "random_pairs",
          "random_models",
          "active_models", "ranking")


def imported_subpackages(source: Path) -> set[str]:
    """The ``perturbation_bench.<subpackage>`` names that ``source`` imports anywhere."""
    found = set()
    for node in ast.walk(ast.parse(source.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "perturbation_bench" and len(parts) > 1 and parts[1] in SUBPACKAGES:
                found.add(parts[1])
    return found


def sources_of(group: str) -> list[Path]:
    if group == "shared":
        return [PACKAGE / f"{name}.py" for name in SHARED]
    return sorted((PACKAGE / group).glob("*.py"))


@pytest.mark.parametrize("group", sorted(FORBIDDEN))
def test_dependencies_run_one_way(group):
    for source in sources_of(group):
        wrong = imported_subpackages(source) & FORBIDDEN[group]
        assert not wrong, f"{source.relative_to(PACKAGE.parent)} imports {sorted(wrong)}"


def test_the_scan_sees_lazy_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from perturbation_bench.tasks.options import PRESETS\n")
    assert imported_subpackages(source) == {"tasks"}
    source.write_text("from perturbation_bench import dataset\n")
    assert imported_subpackages(source) == {"dataset"}


@pytest.mark.parametrize(
    "module",
    [f"perturbation_bench.{group}.{p.stem}" for group in SUBPACKAGES for p in sources_of(group)]
    + [f"perturbation_bench.{name}" for name in SHARED],
)
def test_every_module_imports(module):
    importlib.import_module(module)

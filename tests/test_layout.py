"""The package's architecture, read from the source (so a lazy import inside a function counts):
every module belongs to a layer, a layer imports only the layers below it, no two modules import
each other however indirectly, every module imports on its own, and every object a table names
by dotted path (``paths.named``: a lower layer naming a kind's module or a model's class)
exists."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "perturbation_bench"
ARCHITECTURE = Path(__file__).parents[1] / "docs" / "architecture.md"
GROUND = {"errors", "dna", "paths", "active_models", "arguments", "families", "wording"}
"""Top-level modules every layer may use, with the package's ``__init__`` (its version)."""
ALLOWED = {  # layer -> the layers its modules may import (besides its own and GROUND)
    "ground": set(),
    "pairs": set(),
    "fixtures": {"pairs"},
    "tasks": {"pairs", "report"},
    "models": {"pairs"},
    "formats": {"pairs"},
    "dataset": {"pairs", "formats"},
    "variants": {"pairs", "formats", "dataset"},
    "report": {"pairs"},
    "controls": {"pairs", "formats", "dataset", "variants"},
    "bench": {"pairs", "fixtures", "tasks", "models", "formats", "dataset", "variants"},
    "kinds": {"pairs", "formats", "dataset", "variants", "controls", "tasks", "models", "report"},
    "commands": {
        "kinds",
        "pairs",
        "fixtures",
        "formats",
        "tasks",
        "models",
        "dataset",
        "variants",
        "report",
        "bench",
        "controls",
    },
    "cli": {"commands"},
    "_autoload": set(),
}
TOP_LEVEL_MODULES = 10
MODULE_LINES = 330
"""The longest a module may grow; past it, it is split by job."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    """The layer of ``perturbation_bench[.x[.y]]``."""
    parts = module.split(".")
    return "ground" if len(parts) == 1 or parts[1] in GROUND else parts[1]


def imported_modules(source: Path, modules=MODULES) -> set[str]:
    """The package's modules that ``source`` imports anywhere in it (``from P import m`` counts
    as module ``P.m`` where that is a module, else as ``P``)."""
    found = set()
    for node in ast.walk(ast.parse(source.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in modules
                else node.module
                for alias in node.names
            ]
        found |= {name for name in names if name.split(".")[0] == "perturbation_bench"}
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle's modules, one list per strongly connected component of more than one module
    (or a module importing itself), by Tarjan's algorithm."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            on_stack.difference_update(component)
            if len(component) > 1 or node in graph.get(node, ()):
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_every_module_belongs_to_a_layer():
    unknown = sorted(m for m in MODULES if layer_of(m) not in ALLOWED)
    assert not unknown, f"modules outside every layer of tests/test_layout.py: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_dependencies_run_one_way(module):
    layer = layer_of(module)
    allowed = ALLOWED[layer] | {layer, "ground"}
    wrong = sorted(m for m in imported_modules(MODULES[module]) if layer_of(m) not in allowed)
    assert not wrong, f"{module} ({layer}) imports {wrong}"


def test_no_import_cycles():
    graph = {module: imported_modules(path) & set(MODULES) for module, path in MODULES.items()}
    assert import_cycles(graph) == []


def test_the_scan_sees_lazy_imports_and_cycles(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from perturbation_bench.tasks.options import PRESETS\n")
    assert imported_modules(source) == {"perturbation_bench.tasks.options"}
    source.write_text("from perturbation_bench import __version__, dataset\n")
    assert imported_modules(source) == {"perturbation_bench", "perturbation_bench.dataset"}
    source.write_text("from perturbation_bench.pairs import fields\n")
    assert imported_modules(source) == {"perturbation_bench.pairs.fields"}
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"a"}}) == [["a"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_the_top_level_keeps_a_few_modules():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, top


def test_no_module_is_longer_than_the_limit():
    lines = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    assert {name: n for name, n in lines.items() if n > MODULE_LINES} == {}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports(module):
    importlib.import_module(module)


def test_every_subpackage_is_installed():
    """``pip install .`` installs the packages setup.cfg lists: a subpackage missing there works
    in an editable install and is absent from a real one."""
    import configparser

    config = configparser.ConfigParser()
    config.read(PACKAGE.parent / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = {
        ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        for init in PACKAGE.rglob("__init__.py")
    }
    assert found <= listed, sorted(found - listed)


def _named(cell: str) -> set[str]:
    """The layers a cell of the architecture page's layer table names: ``pairs/`` -> pairs."""
    return {re.sub(r"(/|\.py)$", "", name) for name in re.findall(r"`([\w./]+)`", cell)}


def named_targets(source: Path) -> set[str]:
    """The dotted paths a module's code holds: ``"perturbation_bench.module:name"``, or a
    module's own ``"perturbation_bench.module"``."""
    return {
        text
        for text in code_strings(source)
        if re.fullmatch(r"perturbation_bench(\.\w+)+(:\w+)?", text)
    }


def test_every_named_target_exists():
    from perturbation_bench.paths import named

    targets = {t for path in MODULES.values() for t in named_targets(path)}
    assert len(targets) >= 5  # the package's models, the footprint kind's shape and section
    missing = []
    for target in sorted(targets):
        try:
            named(target) if ":" in target else importlib.import_module(target)
        except (ImportError, AttributeError):
            missing.append(target)
    assert missing == []


def test_no_lower_layer_imports_a_kind_s_module():
    importers = {
        module
        for module, path in MODULES.items()
        if layer_of(module) != "kinds"
        and any(layer_of(m) == "kinds" for m in imported_modules(path))
    }
    assert {layer_of(m) for m in importers} <= {"commands"}


def test_the_architecture_page_s_layer_table_is_the_one_this_test_holds():
    page = ARCHITECTURE.read_text()
    table = page[page.index("| layer | may import") :].split("\n\n")[0].splitlines()[2:]
    documented, ground = {}, set()
    for row in table:
        layer, allowed = row.strip("|").split("|")
        if layer.strip().startswith("ground floor"):
            ground = _named(layer)
            documented["ground"] = _named(allowed)
        else:
            (name,) = _named(layer)
            documented[name] = _named(allowed)
    assert ground == GROUND and documented == ALLOWED


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.count(".") >= 2))
def test_every_module_is_named_by_its_package_and_the_architecture_page(module):
    package, name = module.rsplit(".", 1)
    file_name = f"{name}/" if MODULES[module].name == "__init__.py" else f"{name}.py"
    assert file_name in (importlib.import_module(package).__doc__ or ""), package
    assert file_name in ARCHITECTURE.read_text()


@pytest.mark.parametrize(
    "module",
    sorted(m for m, path in MODULES.items() if m.count(".") == 1 and path.name != "__init__.py"),
)
def test_every_top_level_module_is_named_by_the_architecture_page(module):
    assert f"{module.rsplit('.', 1)[1]}.py" in ARCHITECTURE.read_text()


def code_strings(source: Path) -> set[str]:
    """The string constants of a module's code, its docstrings left out."""
    tree = ast.parse(source.read_text())
    documented = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


def names_in_code(source: Path):
    """The names a module's code uses: identifiers, imported names and the string constants
    that are names (no spaces; docstrings and prose messages left out)."""
    yield from (text for text in code_strings(source) if re.fullmatch(r"[\w./-]+", text))
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield node.name
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def example_table(heading: str) -> set[str]:
    """The modules the table of the architecture page's example ``heading`` lists, and checks
    that its prose counts them."""
    page = ARCHITECTURE.read_text()
    example = page[page.index(f"### One real example: {heading}") :]
    table = (example + "\n\n")[: (example + "\n\n").index("\n\n", example.index("| module |"))]
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", table, flags=re.MULTILINE))
    assert f"these {len(listed)} package modules" in example
    return listed


KIND_TABLES = {"pairs/kinds.py", "commands/build.py", "report/sections.py"}
"""The three table modules a kind may have one line in (``docs/architecture.md``)."""


def kind_footprint(kind: str) -> set[str]:
    """The modules outside ``kinds/<kind>/`` that import one of its modules or name one by
    dotted path."""
    folder = f"perturbation_bench.kinds.{kind}"
    return {
        str(path.relative_to(PACKAGE))
        for module, path in MODULES.items()
        if not module.startswith(folder)
        and any(m.startswith(folder) for m in imported_modules(path) | named_targets(path))
    }


def test_a_kind_is_its_folder_and_the_table_lines_that_import_or_name_it():
    """The footprint kind: the example's table of the architecture page, and no more than
    three."""
    outside = kind_footprint("footprints")
    assert outside == example_table("the footprint kind")
    assert len(outside) <= 3


@pytest.mark.parametrize(
    "kind", sorted(p.parent.name for p in (PACKAGE / "kinds").glob("*/__init__.py"))
)
def test_every_kind_is_its_folder_and_at_most_the_three_table_lines(kind):
    """Every kind's folder: outside it, only the three tables import or name it."""
    assert kind_footprint(kind) <= KIND_TABLES


def naming(name: str) -> set[str]:
    """The package modules whose code (docstrings left out) holds the string ``name``."""
    return {
        str(path.relative_to(PACKAGE)) for path in MODULES.values() if name in code_strings(path)
    }


def test_an_input_format_is_its_reader_and_the_modules_the_architecture_page_lists():
    """The modules that are the MaveDB reader, import it, or name its ``--from`` choice."""
    reader = "perturbation_bench.formats.mavedb"
    using = {
        str(path.relative_to(PACKAGE))
        for module, path in MODULES.items()
        if module == reader or reader in imported_modules(path)
    }
    assert using | naming("mavedb") == example_table("the MaveDB format")


def test_a_variant_score_is_named_by_its_row_alone():
    """Every other module reads what a score does off its row (``docs/architecture.md``, a new
    variant score); ``llr`` is also named as the score setting's default and where a distance
    reads a log-likelihood ratio."""
    from perturbation_bench.pairs.scores import SCORES

    named = {score.name: naming(score.name) for score in SCORES}
    assert all(modules == {"pairs/scores.py"} for name, modules in named.items() if name != "llr")
    assert named["llr"] == example_table("a new variant score")


def test_the_bases_are_spelled_in_dna_py_alone():
    spelled = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.upper().startswith("ACGT")
    }
    assert spelled == {"dna.py"}

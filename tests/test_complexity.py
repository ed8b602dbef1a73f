"""The complexity gate: no function of ``perturbation_bench/`` or ``scripts/`` passes a
cyclomatic complexity of 10 (radon's, which counts each ``and``/``or``) unless
``tests/complexity_allowed.txt`` lists it with its complexity and a reason, and the list only
shrinks: a listed function that no longer passes 10, or no longer exists, is struck from it.
``scripts/complexity.py`` computes the figures and prints the list anew."""

from __future__ import annotations

import importlib.util
import os
import textwrap

import pytest

from dna_fixtures import REPO


def _load_script():
    spec = importlib.util.spec_from_file_location("complexity", REPO / "scripts" / "complexity.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


complexity = _load_script()
REFRESH = "python scripts/complexity.py --write"
READS_SOURCE = pytest.mark.skipif(
    "MUTANT_UNDER_TEST" in os.environ,
    reason="under mutmut the package is its mutated copy, whose functions are not the source's",
)


def gate_failures(found: dict, allowed: dict, limit: int = complexity.LIMIT) -> list[str]:
    """One line per breach of the gate, given the offenders ``found`` (name -> (complexity,
    path:line)) and the list ``allowed`` (name -> (complexity, reason))."""
    failures = []
    for name, (value, where) in sorted(found.items()):
        if name not in allowed:
            failures.append(
                f"{where} {name}: complexity {value}, over {limit}: split it by job, or list it "
                f"in tests/complexity_allowed.txt with a reason (docs/contributing.md)"
            )
        elif allowed[name][0] != value:
            failures.append(
                f"{where} {name}: complexity {value}, listed at {allowed[name][0]}: "
                f"update its line ({REFRESH} keeps the reasons)"
            )
        elif not allowed[name][1]:
            failures.append(f"{where} {name}: complexity {value}, listed without a reason")
    for name in sorted(set(allowed) - set(found)):
        failures.append(
            f"{name}: listed at {allowed[name][0]}, now at most {limit} or gone: strike its line "
            f"({REFRESH})"
        )
    return failures


@READS_SOURCE
def test_every_function_over_10_is_listed_with_its_complexity_and_a_reason():
    found = complexity.offenders()
    failures = gate_failures(found, complexity.read_allowed())
    print(f"{len(found)} functions over {complexity.LIMIT}:")
    for name, (value, where) in sorted(found.items(), key=lambda item: -item[1][0]):
        print(f"  {value:>3}  {name}  ({where})")
    if failures:
        pytest.fail("the complexity gate (docs/contributing.md):\n" + "\n".join(failures))


def test_the_list_is_what_the_script_writes():
    """Sorted, aligned and with the header: a refresh changes only what changed."""
    text = complexity.ALLOWED.read_text()
    allowed = complexity.read_allowed()
    listed = {name: (value, "") for name, (value, _) in allowed.items()}
    assert complexity.format_allowed(listed, allowed) == text


def test_boolean_operators_count():
    """1, +1 per if/elif/loop/comprehension clause/conditional expression, +1 per and/or."""
    source = textwrap.dedent(
        """
        def f(a, b, c):
            if a and b or c:
                return [x for x in a if x]
            elif b:
                return 1 if c else 2
            while c:
                c -= 1
        """
    )
    # 1 + if + elif + while + (and, or) + (for, if) of the comprehension + conditional expression
    assert complexity.complexities(source) == {"f": (9, 2)}


def test_methods_and_nested_functions_are_read_on_their_own():
    source = textwrap.dedent(
        """
        class A:
            def m(self, a):
                def inner(b):
                    return a or b
                return inner if a else None
            class B:
                def n(self, a):
                    return a and self
        def f(a):
            return a
        """
    )
    assert complexity.complexities(source) == {
        "f": (1, 10),
        "A.m": (2, 3),  # its own conditional expression; the nested function is not added in
        "A.m.inner": (2, 4),
        "A.B.n": (2, 8),
    }


def test_offenders_name_module_qualname_and_place(tmp_path):
    package = tmp_path / "perturbation_bench" / "sub"
    package.mkdir(parents=True)
    (tmp_path / "scripts").mkdir()
    branches = "".join(f"    if a == {k}:\n        return {k}\n" for k in range(10))
    (package / "__init__.py").write_text(f"def wide(a):\n{branches}")
    (package / "narrow.py").write_text("def narrow(a):\n    return a\n")
    method = textwrap.indent(branches, "    ")
    (tmp_path / "scripts" / "tool.py").write_text(f"class T:\n    def wide(self, a):\n{method}")
    assert complexity.offenders(tmp_path) == {
        "perturbation_bench.sub:wide": (11, "perturbation_bench/sub/__init__.py:1"),
        "scripts.tool:T.wide": (11, "scripts/tool.py:2"),
    }
    assert complexity.offenders(tmp_path, limit=10) == complexity.offenders(tmp_path)
    assert set(complexity.offenders(tmp_path, limit=0)) == {
        "perturbation_bench.sub:wide",
        "perturbation_bench.sub.narrow:narrow",
        "scripts.tool:T.wide",
    }


def test_the_gate_refuses_new_grown_shrunk_gone_and_unexplained_entries():
    found = {
        "m:new": (12, "m.py:1"),
        "m:grown": (15, "m.py:5"),
        "m:bare": (11, "m.py:9"),
        "m:kept": (13, "m.py:20"),
    }
    allowed = {
        "m:grown": (14, "one job"),
        "m:bare": (11, ""),
        "m:kept": (13, "one dispatch over the eight build kinds"),
        "m:shrunk_or_gone": (11, "one job"),
    }
    failures = gate_failures(found, allowed)
    assert len(failures) == 4
    assert failures[0].startswith("m.py:9 m:bare: complexity 11, listed without a reason")
    assert failures[1].startswith("m.py:5 m:grown: complexity 15, listed at 14")
    assert failures[2].startswith("m.py:1 m:new: complexity 12, over 10")
    assert failures[3].startswith("m:shrunk_or_gone: listed at 11, now at most 10 or gone")
    assert gate_failures({"m:kept": found["m:kept"]}, {"m:kept": allowed["m:kept"]}) == []


def test_a_refresh_keeps_the_reasons_and_leaves_a_new_entry_without_one(tmp_path):
    found = {"b:g": (12, "b.py:3"), "a:f": (11, "a.py:1")}
    text = complexity.format_allowed(found, {"b:g": (14, "one table of rules"), "z:h": (11, "x")})
    path = tmp_path / "allowed.txt"
    path.write_text(text)
    assert text.splitlines()[-2:] == ["a:f  11", "b:g  12  one table of rules"]
    assert complexity.read_allowed(path) == {"a:f": (11, ""), "b:g": (12, "one table of rules")}


@pytest.mark.parametrize(
    "line",
    ["perturbation_bench.a:f twelve  reason", "perturbation_bench.a.f  12  reason", "a:f"],
)
def test_a_malformed_line_is_refused_naming_file_and_line(tmp_path, line):
    """A complexity that is not a number, a name without ``module:``, no complexity."""
    path = tmp_path / "allowed.txt"
    path.write_text(f"# header\n{line}\n")
    expected = "allowed.txt line 2: not 'module:qualname  complexity  reason'"
    with pytest.raises(ValueError, match=expected):
        complexity.read_allowed(path)


def test_a_name_listed_twice_is_refused(tmp_path):
    path = tmp_path / "allowed.txt"
    path.write_text("a:f  11  one job\n\na:f  11  one job\n")
    with pytest.raises(ValueError, match="allowed.txt line 3: a:f is listed twice"):
        complexity.read_allowed(path)

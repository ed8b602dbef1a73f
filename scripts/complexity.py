"""The functions whose cyclomatic complexity passes 10, in the format of the list of allowed
exceptions (``tests/complexity_allowed.txt``, held by ``tests/test_complexity.py``).

    python scripts/complexity.py            # print the current offenders, with their listed reasons
    python scripts/complexity.py --write    # rewrite tests/complexity_allowed.txt with them

Complexity is radon's cyclomatic complexity: 1, plus 1 for each ``if``, ``elif``, loop,
``except``, ``with``, ``assert``, comprehension ``for`` and ``if``, conditional expression and
``match`` case, plus 1 for each ``and``/``or`` (``a and b or c`` adds 2). ruff's mccabe check
(also at 10, ``pyproject.toml``) does not count the boolean operators. Every function and
method of ``perturbation_bench/`` and ``scripts/`` is read, a nested function on its own (named
``outer.inner``, a method ``Class.method``); a class's own figure (radon's average of its
methods) is not a function's and is not read.

A line of the list is ``module:qualname  complexity  reason``; ``#`` starts a comment line. The
printout keeps each listed function's reason and leaves a new one's empty, which the test
refuses until someone writes it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("perturbation_bench", "scripts")
"""The folders whose Python the gate reads."""
ALLOWED = REPO / "tests" / "complexity_allowed.txt"
LIMIT = 10
"""The most complexity a function may have without a line in the list (radon's grade B)."""
HEADER = """\
# Functions allowed a cyclomatic complexity over 10 (radon's, counting each and/or), held by
# tests/test_complexity.py; docs/contributing.md says when a function belongs here.
# module:qualname  complexity  why it is one job ("to split:" names the jobs it still mixes)
"""


def module_name(path: Path, repo: Path = REPO) -> str:
    """``perturbation_bench.tasks.pairing`` from ``<repo>/perturbation_bench/tasks/pairing.py``
    (a package's ``__init__.py`` is the package)."""
    parts = path.relative_to(repo).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _functions(functions, classes=(), prefix: str = ""):
    """``(qualname, block)`` of radon's ``functions`` and of the methods of its ``classes``, with
    the functions nested in each."""
    for block in functions:
        name = f"{prefix}{block.name}"
        yield name, block
        yield from _functions(block.closures, prefix=f"{name}.")
    for block in classes:
        inner = f"{prefix}{block.name}."
        yield from _functions(block.methods, block.inner_classes, inner)


def complexities(source: str) -> dict[str, tuple[int, int]]:
    """``qualname -> (complexity, line)`` of every function of one module's ``source``."""
    from radon.visitors import ComplexityVisitor

    visitor = ComplexityVisitor.from_code(source)
    return {
        name: (block.complexity, block.lineno)
        for name, block in _functions(visitor.functions, visitor.classes)
    }


def offenders(repo: Path = REPO, limit: int = LIMIT) -> dict[str, tuple[int, str]]:
    """``module:qualname -> (complexity, path:line)`` of every function over ``limit`` in the
    :data:`ROOTS` of ``repo``."""
    found = {}
    for root in ROOTS:
        for path in sorted((repo / root).rglob("*.py")):
            for name, (complexity, line) in complexities(path.read_text()).items():
                if complexity > limit:
                    where = f"{path.relative_to(repo)}:{line}"
                    found[f"{module_name(path, repo)}:{name}"] = (complexity, where)
    return found


def read_allowed(path: Path = ALLOWED) -> dict[str, tuple[int, str]]:
    """``module:qualname -> (complexity, reason)`` of the list; a line that is not
    ``name  number  [reason]`` is refused naming the file and the line."""
    allowed = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(maxsplit=2)
        if len(fields) < 2 or not fields[1].isdigit() or ":" not in fields[0]:
            raise ValueError(f"{path} line {number}: not 'module:qualname  complexity  reason'")
        if fields[0] in allowed:
            raise ValueError(f"{path} line {number}: {fields[0]} is listed twice")
        allowed[fields[0]] = (int(fields[1]), fields[2].strip() if len(fields) > 2 else "")
    return allowed


def format_allowed(found: dict[str, tuple[int, str]], allowed: dict[str, tuple[int, str]]) -> str:
    """The list's text for the offenders ``found``, sorted by name, each with its reason in
    ``allowed`` (none for a function not listed there)."""
    width = max((len(name) for name in found), default=0)
    lines = [
        f"{name:<{width}}  {found[name][0]:>2}  {allowed.get(name, (0, ''))[1]}".rstrip()
        for name in sorted(found)
    ]
    return HEADER + "".join(line + "\n" for line in lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {ALLOWED.name}")
    args = parser.parse_args(argv)
    allowed = read_allowed() if ALLOWED.exists() else {}
    text = format_allowed(offenders(), allowed)
    if args.write:
        ALLOWED.write_text(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()

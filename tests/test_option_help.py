"""Every option of every ``perturbation-bench`` subcommand states its default in its help once,
through argparse's ``%(default)s``, never as a copy of the value: a default changed in one place
cannot leave its help saying the old one; and a command line the parser refuses is refused in
one line."""

from __future__ import annotations

import argparse
import re

import pytest

from perturbation_bench.cli import command_parser


def options(parser: argparse.ArgumentParser, command: str = ""):
    """``(command, option, action)`` of every option of ``parser`` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from options(sub, f"{command} {name}".strip())
        else:
            yield command, (action.option_strings or [action.dest])[0], action


def restated(action: argparse.Action) -> bool:
    """Whether the help spells the default's value where it names a default: after "default",
    or in parentheses (up to a closing parenthesis, a comma or a semicolon)."""
    default = action.default
    if not action.help or default is None or isinstance(default, bool):
        return False
    if default is argparse.SUPPRESS:
        return False
    spellings = {str(default), f"{default:g}" if isinstance(default, float) else str(default)}
    text = action.help.replace("%(default)s", "").replace("%(default)g", "")
    return any(
        re.search(rf"default:? {re.escape(v)}(?![\w.])|\({re.escape(v)}[);,]", text)
        for v in spellings
    )


def test_no_help_restates_its_default():
    found = [(c, o, a.help) for c, o, a in options(command_parser()) if restated(a)]
    assert found == []


def test_the_check_finds_a_restated_default():
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=8192, help="window bp (default 8192)")
    parser.add_argument("--rate", type=float, default=1.0, help="share (1)")
    parser.add_argument("--k", type=int, default=21, help="k (default %(default)s)")
    assert [o for _, o, a in options(parser) if restated(a)] == ["--window", "--rate"]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["bench", "--pairs", "-1"], "perturbation-bench bench: error: argument --pairs: must be "
         "at least 1, got -1 (see perturbation-bench bench --help)"),
        (["validate"], "perturbation-bench validate: error: the following arguments are required: "
         "path (see perturbation-bench validate --help)"),
    ],
)  # fmt: skip
def test_a_refused_command_line_is_one_line_the_usage_left_to_help(argv, said, capsys):
    from perturbation_bench.cli import main

    with pytest.raises(SystemExit) as refused:
        main(argv)
    assert refused.value.code == 2
    assert capsys.readouterr().err.splitlines() == [said]

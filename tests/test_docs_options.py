"""Every option of every command is on the command's page in docs/commands/, with its default and its
choices, and the page documents no option the parser does not have.

The options are read from the argparse parser itself (``theorycheck.cli.parser.build_parser``); a page
lists them in tables headed ``| option | default | meaning |`` whose first cell names the option's
spellings in backticks (`` `--depth L`, `-L` ``; a positional argument by its metavar, `` `FILE` ``)."""

from __future__ import annotations

import argparse
import re

import pytest
from _docs import COMMANDS, OPTION_HEADER, code_names, tables

from theorycheck.cli.parser import build_parser


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def spellings(action: argparse.Action) -> list[str]:
    """How the page names an argument: its option strings, or a positional's metavar."""
    if action.option_strings:
        return list(action.option_strings)
    return [action.metavar or action.dest.upper()]


def parser_options(command: str) -> dict[str, argparse.Action]:
    out = {}
    for action in _subparsers()[command]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        for s in spellings(action):
            out[s] = action
    return out


def page_options(command: str) -> dict[str, list[str]]:
    """Spelling → the row of the page's option tables that documents it."""
    text = (COMMANDS / f"{command}.md").read_text(encoding="utf-8")
    out = {}
    for _, head, rows, _ in tables(text):
        if head != OPTION_HEADER:
            continue
        for row in rows:
            for name in code_names(row[0]):
                out[name.split(" ")[0].split("=")[0]] = row
    return out


def _numbers(text: str) -> list[float]:
    return [float(m) for m in re.findall(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])", text)]


def _default_documented(action: argparse.Action, cell: str) -> bool:
    """The default cell names the parser's default: ``off`` for a flag, the number or the word otherwise
    (a default the command resolves later, None in the parser, is described in words)."""
    d = action.default
    if d is None or d is argparse.SUPPRESS:
        return True
    if d is False:
        return "off" in cell
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return any(x == d for x in _numbers(cell))
    return str(d) in cell


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_the_page_lists_every_option_of_the_parser_and_no_other(command):
    page = f"docs/commands/{command}.md"
    have, doc = parser_options(command), page_options(command)
    assert doc, f"{page}: no option table (a table headed | {' | '.join(OPTION_HEADER)} |)"
    missing = [s for s in have if s not in doc]
    extra = [s for s in doc if s not in have]
    assert not missing, f"{page}: option(s) {missing} of `theorycheck {command}` are not documented"
    assert not extra, f"{page}: documents option(s) {extra}, which `theorycheck {command}` does not accept"


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_every_option_row_gives_the_default_and_every_choice(command):
    page = f"docs/commands/{command}.md"
    doc = page_options(command)
    for spelling, action in parser_options(command).items():
        row = doc.get(spelling)
        if row is None:
            continue  # reported by the test above
        assert len(row) == len(OPTION_HEADER) and all(row), f"{page}, {spelling}: an empty cell in {row}"
        assert _default_documented(action, row[1]), (f"{page}, {spelling}: the default column says {row[1]!r}; "
                                                     f"the parser's default is {action.default!r}")
        for choice in action.choices or ():
            assert f"`{choice}`" in " ".join(row), (f"{page}, {spelling}: the choice `{choice}` is not named "
                                                     f"(the parser offers {list(action.choices)})")

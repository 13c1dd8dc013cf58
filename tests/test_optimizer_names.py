"""No optimizer is named in the library outside its registry: code asks the optimizer object
(:mod:`theorycheck.optimizers`) what it is instead of comparing names. Every string literal of
every module of ``theorycheck/`` (the packs' folders excepted: they name optimizers as a user does)
is parsed with :mod:`ast`; one equal to a registered name fails the test, with its file and line,
unless the module is in ``theorycheck/optimizers/``."""

from __future__ import annotations

import ast
from pathlib import Path

from theorycheck import optimizers

ROOT = Path(__file__).resolve().parents[1] / "theorycheck"
#: where the names are written: one module per optimizer and the registry
ALLOWED = ROOT / "optimizers"


def name_literals(root: Path = ROOT) -> list[str]:
    """``file:line: 'name'`` for each string literal equal to a registered optimizer name."""
    names = set(optimizers.names())
    out = []
    for path in sorted(root.rglob("*.py")):
        if ALLOWED in path.parents or "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {node.value!r}")
    return out


def test_no_optimizer_name_outside_the_registry():
    assert name_literals() == []


def test_the_check_finds_a_name(tmp_path):
    """The scan itself: a module that writes a name is caught, one in the optimizers' folder is not."""
    pkg = tmp_path / "theorycheck"
    (pkg / "optimizers").mkdir(parents=True)
    (pkg / "solver.py").write_text('def f(o):\n    return o == "sam-linf"\n', encoding="utf-8")
    (pkg / "optimizers" / "mine.py").write_text('NAME = "sam-linf"\n', encoding="utf-8")
    global ALLOWED
    saved, ALLOWED = ALLOWED, pkg / "optimizers"
    try:
        assert name_literals(pkg) == ["theorycheck/solver.py:2: 'sam-linf'"]
    finally:
        ALLOWED = saved


def test_the_cli_choices_are_the_registry():
    from theorycheck.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for cmd in ("trajectory", "derive", "setting", "heatmap", "thresholds"):
        opt = next(a for a in sub.choices[cmd]._actions if "--optimizer" in a.option_strings)
        assert tuple(opt.choices) == optimizers.names(), cmd

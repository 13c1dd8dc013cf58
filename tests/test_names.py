"""Names that say what they are: one function per public name that collided, and no text citing a module
that is gone (``compile``: the compiled forms are :mod:`theorycheck.symbolic.forms`, the compiler
:mod:`theorycheck.symbolic.compiler`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("theorycheck", "proofs", "numerics")


def _sources() -> list[Path]:
    return [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py")) if "__pycache__" not in p.parts]


def definitions(name: str, files: list[Path] | None = None) -> list[str]:
    """``file:line`` of every module-level ``def name`` (a method does not count)."""
    out = []
    for p in _sources() if files is None else files:
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                shown = p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else p.name
                out.append(f"{shown}:{node.lineno}")
    return out


@pytest.mark.parametrize("name, home", [
    ("collapse_threshold", "proofs/minor_first/predict/alpha_c.py"),  # α_c of one example, L = 2
    ("thresholds", "theorycheck/api/__init__.py"),                       # the public thresholds of a Setting
    ("alpha_gd_like", "proofs/minor_first/predict/thresholds.py"),        # beside the sympy and compiled forms
    ("initial_norm", None),                                        # only the sympy and compiled forms
])
def test_one_function_per_name(name, home):
    forms = ("theorycheck/symbolic/",)  # the sympy forms and their compiled ones
    found = [d for d in definitions(name) if not d.startswith(forms)]
    assert [d.split(":")[0] for d in found] == ([home] if home else []), found


def test_the_check_counts_module_level_definitions(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f():\n    pass\n\nclass A:\n    def f(self):\n        pass\n\ndef f():\n    pass\n")
    assert len(definitions("f", [p])) == 2


GONE = re.compile(r"(?<![\w.])compile\.[a-z_]")


def test_no_text_cites_the_gone_compile_module():
    bad = [f"{p.relative_to(ROOT)}:{n}" for p in _sources()
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if GONE.search(line)]
    assert bad == [], bad
    assert GONE.search(":func:`compile.linf_limit`") and not GONE.search("re.compile(r'x')")

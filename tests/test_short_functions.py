"""Short functions (docs/design.md, "Conventions"): at most 8 functions over 80 lines in the library, the packs'
theorems and their experiments, so that a change reads as a change. Lines are counted from ``def`` to the last line
of the body, docstring included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT, ALLOWED = 80, 8


def over_limit(source: str) -> list[tuple[str, int]]:
    """(name, lines) of every function (nested ones and methods too) longer than LIMIT lines."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > LIMIT:
                out.append((node.name, n))
    return out


def test_the_counter_counts():
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT - 1))
    assert over_limit(f"def f():\n{body}") == []  # exactly LIMIT lines
    assert over_limit(f"class A:\n    def g(self):\n    {body.replace(chr(10), chr(10) + '    ')}    y = 0\n") \
        == [("g", LIMIT + 1)]


def test_at_most_eight_functions_over_eighty_lines():
    long = [(str(p.relative_to(ROOT)), name, n)
            for folder in ("theorycheck", "proofs", "numerics") for p in sorted((ROOT / folder).rglob("*.py"))
            for name, n in over_limit(p.read_text(encoding="utf-8"))]
    assert len(long) <= ALLOWED, "\n".join(f"{p}:{f} {n} lines" for p, f, n in sorted(long, key=lambda r: -r[2]))

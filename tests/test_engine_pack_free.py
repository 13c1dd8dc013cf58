"""The engine below, the packs above: how much of the first paper the engine still holds, as a ratchet.

Two measures, read with :mod:`ast` from every module of ``theorycheck/`` (the optimizers' own folder
excepted): a module that names one optimizer, by importing its constant (``SAM_L2``, ``GD``, …) or by its
registered name as a string outside a docstring (``"sam-l2"``): it asks for one optimizer instead of asking
the object what it is; and a module with a string literal that is a claim id of a pack (``"C4"``,
``"E1.sam-order"``). The modules below still do; a new one fails the test, and a module that no
longer does fails it too until it is taken off its list, so that the lists only shrink. The goal is both
lists empty (docs/design.md, "Engine below, packs above")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from theorycheck.optimizers import names

ROOT = Path(__file__).resolve().parents[1] / "theorycheck"
CONSTANTS = {"GD", "SAM_L2", "SAM_LINF", "N_SAM", "ONE_SAM", "ASAM"}
NAMES = set(names())  # the registered optimizers' names
CLAIM_ID = re.compile(r"^(C[1-6]|E[12])(\.[\w-]+)*$")

#: modules that import an optimizer's constant: conveniences named for one optimizer (docs/design.md)
KNOWN_CONSTANTS: set[str] = set()
#: modules with a claim id of a pack as a string (none: lemmas are the pack's, proved/lemmas.LemmaBook)
KNOWN_CLAIM_IDS: set[str] = set()


def scan(root: Path = ROOT) -> tuple[set[str], set[str]]:
    constants, ids = set(), set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("optimizers/") or "__pycache__" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES \
                    and id(node) not in docs:
                constants.add(rel)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("theorycheck.optimizers"):
                if any(a.name in CONSTANTS for a in node.names):
                    constants.add(rel)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and CLAIM_ID.match(node.value):
                ids.add(rel)
    return constants, ids


def test_no_new_module_names_an_optimizer_constant_or_a_claim_id():
    constants, ids = scan()
    assert sorted(constants - KNOWN_CONSTANTS) == [], "ask the optimizer object, not for one optimizer"
    assert sorted(ids - KNOWN_CLAIM_IDS) == [], "a claim id belongs to its pack"


def test_the_lists_only_shrink():
    constants, ids = scan()
    assert sorted(KNOWN_CONSTANTS - constants) == [], "no longer imports a constant: take it off KNOWN_CONSTANTS"
    assert sorted(KNOWN_CLAIM_IDS - ids) == [], "no longer names a claim id: take it off KNOWN_CLAIM_IDS"


def test_the_scan_finds_both(tmp_path):
    pkg = tmp_path / "theorycheck"
    (pkg / "optimizers").mkdir(parents=True)
    (pkg / "a.py").write_text("from theorycheck.optimizers import SAM_L2\n", encoding="utf-8")
    (pkg / "b.py").write_text('CLAIM = "E1.sam-order"\nOTHER = "C7"\n', encoding="utf-8")
    (pkg / "d.py").write_text('"""Call it with "sam-l2"."""\ndef f(o="sam-l2"):\n    """or "gd"."""\n', encoding="utf-8")
    (pkg / "e.py").write_text('"""A docstring naming "gd" only."""\nX = "gd-like"\n', encoding="utf-8")
    (pkg / "optimizers" / "c.py").write_text("from theorycheck.optimizers.gd import GD\n", encoding="utf-8")
    assert scan(pkg) == ({"a.py", "d.py"}, {"b.py"})

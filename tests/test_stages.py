"""The stages of the pipeline are imported one way only (docs/design.md: "The stages").

Every ``.py`` under ``theorycheck/``, ``proofs/`` and ``numerics/`` (installed as ``theorycheck.proofs`` and
``theorycheck.numerics``) is parsed with :mod:`ast`; every import is collected: top level and inside
functions, ``import x``, ``from x import y``, relative imports resolved, and
``importlib.import_module("literal")``. Each module has a stage rank (:data:`RANKS`, longest
prefix wins); an import of a module of a later stage fails the test, and so does any import
cycle between modules, and any pair of top-level units of one stage (``theorycheck.X``: a subpackage or
a module) that import each other both ways, even without a module cycle — an arrow back up (the
offending ``file:line`` is reported).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "theorycheck"

#: module prefix -> stage rank; a module imports only from its own rank or a lower one
RANKS: dict[str, int] = {
    # 0: words, enums, errors and plain data; arithmetic: numbers as typed, outward decimals, arb balls
    "theorycheck.vocabulary": 0, "theorycheck.status": 0, "theorycheck.errors": 0,
    "theorycheck.record": 0, "theorycheck.jsonio": 0, "theorycheck.progress": 0, "theorycheck.version": 0,
    "theorycheck.outputs": 0, "theorycheck.markdown": 0, "theorycheck.strength": 0, "theorycheck.arith": 0,
    # 1: a validated problem
    "theorycheck.setting": 1, "theorycheck.imagedata": 1, "theorycheck.pixel_task": 1,
    # 2: sympy: model, closed forms, compile (the only lambdify); the prover's steps and theorems
    # (symbolic.theorem: above the compiler, below the lemma proofs)
    "theorycheck.symbolic": 2,
    # 3: one object per optimizer; their registry's table is plain words (rank 0), so that a Setting
    # and the symbolic layer check and resolve names (the package's __init__ fills it on import)
    "theorycheck.optimizers": 3, "theorycheck.optimizers.registry": 0,
    # 4: every floating-point integrator, and the torch pieces (the SAM step, small CNNs, Grad-CAM, image loaders)
    "theorycheck.solvers": 4, "theorycheck.batched": 4, "theorycheck.cnn": 4,
    # 5: a trajectory -> j†, switches, margins, angles
    "theorycheck.observe": 5, "theorycheck.observe_pixels": 5,
    # 6: the validated integrator, the proved-fate protocol, box proofs, certificate reading and writing (a pack's
    # float predictions and proved thresholds sit in the pack, rank 9)
    "theorycheck.proved": 6,
    # 7: grids and their execution, figures (the packs' experiments drive sweeps and draw)
    "theorycheck.sweep": 7, "theorycheck.report": 7,
    # 8: judgement
    "theorycheck.claims": 8,
    # 9: packs: the registry, the experiment runner, the packs' theorems, claims, predictions, experiments
    "theorycheck.packs": 9, "theorycheck.experiments": 9, "theorycheck.proofs": 9, "theorycheck.numerics": 9,
    # 10: experiments and outputs outside a pack
    "theorycheck.derivation": 10,
    # 11: the public API
    "theorycheck.api": 11, "theorycheck.testing": 11, "theorycheck": 11,
    # 12: the command line
    "theorycheck.cli": 12, "theorycheck.__main__": 12,
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module (a module of the package, or the package itself)
    path: Path
    line: int

    def where(self) -> str:
        try:
            shown = self.path.relative_to(ROOT)
        except ValueError:
            shown = self.path
        return f"{shown}:{self.line}"


#: folders of the repository installed under the package (setup.py): folder -> dotted name
MAPPED = {"proofs": f"{PACKAGE}.proofs", "numerics": f"{PACKAGE}.numerics"}


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package's __init__). The folders of
    :data:`MAPPED` (when ``package`` is theorycheck) count as the subpackages they install as."""
    out: dict[str, tuple[Path, bool]] = {}
    bases = [(root / package, package)]
    if package == PACKAGE:
        bases += [(root / folder, name) for folder, name in MAPPED.items()]
    for base, name in bases:
        for p in sorted(base.rglob("*.py")):
            if "__pycache__" in p.parts:
                continue
            parts = [*name.split("."), *p.relative_to(base).with_suffix("").parts]
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            out[".".join(parts)] = (p, is_pkg)
    return out


def _targets(node: ast.AST, module: str, is_pkg: bool, known: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            parts = module.split(".")
            if not is_pkg:
                parts = parts[:-1]
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        # `from a import b` imports the submodule a.b when there is one, else a name of a
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name == "import_module":
            return [node.args[0].value]
    return []


def imports(root: Path = ROOT, package: str = PACKAGE) -> list[Import]:
    """Every import of a module of the package by a module of the package."""
    known = modules(root, package)
    out: list[Import] = []
    for mod, (path, is_pkg) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for t in _targets(node, mod, is_pkg, known):
                if t != package and not t.startswith(package + "."):
                    continue
                while t not in known and "." in t:  # a name inside a module: the module
                    t = t.rsplit(".", 1)[0]
                if t != mod:
                    out.append(Import(mod, t, path, node.lineno))
    return out


#: below this stage a module may not import by a computed name (it could hide an upward import);
#: packs load their manifests' modules, the API and the CLI their commands, by name
DYNAMIC_FROM = 9


def dynamic(root: Path = ROOT, package: str = PACKAGE, ranks: dict[str, int] | None = None) -> list[str]:
    """``importlib.import_module(<not a string literal>)`` / ``__import__`` in a module of a
    stage below :data:`DYNAMIC_FROM`: one line each."""
    ranks = RANKS if ranks is None else ranks
    out = []
    for mod, (path, _) in modules(root, package).items():
        r = rank(mod, ranks)
        if r is None or r >= DYNAMIC_FROM:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                literal = node.args and isinstance(node.args[0], ast.Constant)
                if name in ("import_module", "__import__") and not literal:
                    out.append(f"{path}:{node.lineno}: {mod} imports by a computed name")
    return out


def rank(module: str, ranks: dict[str, int] = RANKS) -> int | None:
    """The stage of a module: the rank of its longest prefix in ``ranks`` (None: unmapped)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        r = ranks.get(".".join(parts[:n]))
        if r is not None:
            return r
    return None


def upward(found: list[Import], ranks: dict[str, int] = RANKS) -> list[str]:
    """One line per import of a later stage."""
    bad = []
    for imp in found:
        a, b = rank(imp.source, ranks), rank(imp.target, ranks)
        if a is not None and b is not None and b > a:
            bad.append(f"{imp.where()}: {imp.source} (stage {a}) imports {imp.target} (stage {b})")
    return bad


def unmapped(known, ranks: dict[str, int] = RANKS) -> list[str]:
    return [m for m in known if rank(m, ranks) is None]


def cycles(found: list[Import]) -> list[str]:
    """Each import cycle between modules (a strongly connected component of more than one
    module), with the file:line of its imports."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.source, set()).add(imp.target)
        graph.setdefault(imp.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan, iterative enough for a package of a few hundred modules
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:
        inside = set(comp)
        edges = [f"{i.where()} {i.source} -> {i.target}" for i in found
                 if i.source in inside and i.target in inside]
        out.append(" | ".join(edges))
    return out


def unit(module: str, package: str = PACKAGE) -> str:
    """The top-level unit of a module: ``package.X`` for ``package.X.Y...`` (the package itself for its
    ``__init__``)."""
    return ".".join(module.split(".")[:2]) if module.startswith(package + ".") else module


def both_ways(found: list[Import], ranks: dict[str, int] = RANKS, package: str = PACKAGE) -> list[str]:
    """One line per pair of distinct top-level units of the same stage that import each other in both
    directions (each direction's first file:line): the stage table orders units, so one of the two
    imports runs back up even when no module cycle closes."""
    edges: dict[tuple[str, str], Import] = {}
    for imp in found:
        a, b = unit(imp.source, package), unit(imp.target, package)
        if package not in (a, b) and a != b:
            edges.setdefault((a, b), imp)
    bad = []
    for (a, b), imp in sorted(edges.items()):
        back = edges.get((b, a))
        if a < b and back is not None and rank(a, ranks) == rank(b, ranks):
            bad.append(f"{a} <-> {b} (stage {rank(a, ranks)}): {imp.where()} {imp.source} -> {imp.target} | "
                       f"{back.where()} {back.source} -> {back.target}")
    return bad


def test_every_module_has_a_stage():
    assert unmapped(modules()) == []


def test_no_module_imports_a_later_stage():
    found = imports()
    assert len(found) > 300  # the walk saw the package (proofs/ and numerics/ included)
    assert {"theorycheck.proofs.minor_first.c4", "theorycheck.numerics.minor_first.regime_map"} <= set(modules())
    bad = upward(found)
    assert bad == [], "\n" + "\n".join(bad)


def test_no_import_by_a_computed_name_below_the_packs():
    bad = dynamic()
    assert bad == [], "\n" + "\n".join(bad)


def test_no_import_cycle():
    bad = cycles(imports())
    assert bad == [], "\n" + "\n".join(bad)


def test_no_two_units_of_one_stage_import_each_other():
    bad = both_ways(imports())
    assert bad == [], "\n" + "\n".join(bad)


def _tiny(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / "pkg" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_the_check_flags_upward_imports_and_cycles(tmp_path):
    """The check can fail: a synthetic package with an upward import hidden inside a function
    (relative, and through importlib), and a cycle between two modules of one stage."""
    root = _tiny(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from ..high import b\n    return b\n",
        "low/c.py": "import importlib\n\ndef g():\n    return importlib.import_module('pkg.high.b')\n",
        "low/x.py": "from pkg.low import y\n",
        "low/y.py": "def h():\n    import pkg.low.x\n",
        "low/z.py": "import importlib\n\ndef k(name):\n    return importlib.import_module(name)\n",
        "high/__init__.py": "",
        "high/b.py": "from pkg.low.a import f\n",
    })
    ranks = {"pkg": 9, "pkg.low": 0, "pkg.high": 1}
    found = imports(root, "pkg")
    bad = upward(found, ranks)
    assert len(bad) == 2
    assert any("pkg/low/a.py:2: pkg.low.a (stage 0) imports pkg.high.b (stage 1)" in line.replace("\\", "/")
               for line in bad)
    assert any("pkg/low/c.py:4" in line.replace("\\", "/") for line in bad)
    cyc = cycles(found)
    assert len(cyc) == 2  # low.a <-> high.b, low.x <-> low.y
    assert any("pkg/low/y.py:2 pkg.low.y -> pkg.low.x" in c.replace("\\", "/") for c in cyc)
    dyn = dynamic(root, "pkg", ranks)
    assert len(dyn) == 1 and "z.py:4" in dyn[0]
    assert sorted(unmapped(modules(root, "pkg"), {"pkg.low": 0})) == ["pkg", "pkg.high", "pkg.high.b"]


def test_the_check_flags_units_of_one_stage_that_import_each_other(tmp_path):
    """Two subpackages of one stage, each module importing the other package's other module: no
    module cycle, but an arrow back up; a third unit imported one way only is not flagged."""
    root = _tiny(tmp_path, {
        "__init__.py": "",
        "num/__init__.py": "",
        "num/a.py": "from pkg.proof.d import g\n",
        "num/b.py": "def f():\n    return 1\n",
        "proof/__init__.py": "",
        "proof/c.py": "from pkg.num.b import f\n",
        "proof/d.py": "def g():\n    return 2\n",
        "words.py": "X = 1\n",
        "proof/e.py": "from pkg import words\n",
    })
    ranks = {"pkg": 9, "pkg.num": 6, "pkg.proof": 6, "pkg.words": 0}
    found = imports(root, "pkg")
    assert cycles(found) == [] and upward(found, ranks) == []
    bad = both_ways(found, ranks, "pkg")
    assert len(bad) == 1 and bad[0].startswith("pkg.num <-> pkg.proof (stage 6)")
    assert "pkg/num/a.py:1" in bad[0].replace("\\", "/")
    assert both_ways(found, {**ranks, "pkg.proof": 7}, "pkg") == []  # across stages: upward()'s business


@pytest.mark.parametrize("module, expected", [("theorycheck.proved.validated.lohner", 6), ("theorycheck", 11),
                                              ("theorycheck.cli.commands.verify", 12)])
def test_rank_is_the_longest_prefix(module, expected):
    assert rank(module) == expected

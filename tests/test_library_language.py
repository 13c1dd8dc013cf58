"""The library speaks its own argument names: no string outside ``theorycheck/cli/`` names a
command-line flag (``--eta``, ``--t-max``, …); the CLI turns the library's argument names into
flags (``theorycheck.cli.errors``). Docstrings may say which command prints a result."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import theorycheck as tc

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: strings that are not ours to translate: pytest's own command line (the plugin's option)
ALLOWED = {("theorycheck/testing.py", "--theorycheck-profile")}


def _library_files():
    for top in ("theorycheck", "proofs", "numerics"):
        for f in sorted((ROOT / top).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if not rel.startswith("theorycheck/cli/"):
                yield rel, f


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def flags_in_library() -> list[str]:
    found = []
    for rel, f in _library_files():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        inside_fstrings = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):  # f"--{name} …": the formatted parts read as a word
                text = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
                inside_fstrings.update(id(v) for v in node.values)
                found += [f"{rel}:{node.lineno}: {f} in {text[:70]!r}" for f in FLAG.findall(text)
                          if (rel, f) not in ALLOWED]
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                    and id(node) not in inside_fstrings):
                found += [f"{rel}:{node.lineno}: {f} in {node.value[:70]!r}" for f in FLAG.findall(node.value)
                          if (rel, f) not in ALLOWED]
    return found


def test_no_library_string_names_a_flag():
    found = flags_in_library()
    assert found == [], "\n".join(found)


def test_the_finder_finds_flags():
    assert FLAG.findall("use --array-backend numpy, not -- or x--y or a-b") == ["--array-backend"]


def test_the_finder_reads_fstrings(tmp_path):
    tree = ast.parse('x = f"--{name} {v}: must be ≥ 0"')
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr))
    text = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
    assert FLAG.findall(text) == ["--x"]


# ---------------------------------------------------------------- the CLI speaks flags
def _cli(capsys, *argv):
    from theorycheck.cli.main import main

    rc = main(list(argv))
    err = capsys.readouterr().err.strip().splitlines()
    return rc, err[-1] if err else ""


@pytest.mark.parametrize("argv,line", [
    (("trajectory", "--z", "1,2,3", "--discrete"), "theorycheck trajectory: error: --discrete needs --eta and --steps"),
    (("trajectory", "--z", "1,2,3", "--eta", "0.1"),
     "theorycheck trajectory: error: --eta and --steps apply to --discrete only"),
    (("trajectory", "--z", "1,2,3", "--discrete", "--eta", "0.1", "--steps", "3", "--t-max", "4"),
     "theorycheck trajectory: error: --discrete runs a fixed number of steps of size η (t = kη): drop --t-max"),
    (("derive", "--depth", "0"), "theorycheck derive: error: --depth 0: L must be ≥ 1"),
    (("derive", "--dim", "9"), "theorycheck derive: error: --dim 9: choose 1..6 (the explicit system grows quickly)"),
    (("derive", "--balanced", "--examples", "2"),
     "theorycheck derive: error: --balanced applies to the one-example rescaled flow: drop --examples"),
    (("derive", "--param", "pm"), "theorycheck derive: error: --param pm goes with --loss squared and --depth ≥ 2"),
    (("thresholds", "--z", "1,2,3", "--rho", "1", "--digits", "500"),
     "theorycheck thresholds: error: --digits 500: give a whole number from 1 to 200"),
    (("thresholds", "--z", "1,2,3", "--rho", "1", "--optimizer", "sam-linf"),
     "theorycheck thresholds: error: ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give --alpha"),
    (("verify", "--claims", "nope"), "theorycheck verify: error: --claims nope: no claim matches "
     "(the packs' keys: packs.get(name).claims()); `theorycheck verify --list` shows them"),
    (("heatmap", "--z", "1,2", "--optimizer", "gd", "--rho", "0", "--alphas", "0.1:1:3", "--t-max", "3", "--json",
      "--workers", "0"), "theorycheck heatmap: error: --workers 0: give a number ≥ 1"),
    (("heatmap", "--z", "1,2", "--optimizer", "gd", "--rho", "0", "--alphas", "0.1:1:3", "--t-max", "3", "--json",
      "--array-backend", "numba"), "theorycheck heatmap: error: array backend 'numba' covers a theory's compiled reduction "
     "only (the first paper's: C4's reduced ℓ2 ODE, one example, ℓ2-SAM, L = 2, uniform α); use --array-backend numpy "
     "(or torch) for this sweep"),
])
def test_cli_errors_name_the_flags(capsys, argv, line):
    rc, last = _cli(capsys, *argv)
    assert rc == 2
    assert last == line


def test_library_errors_name_the_arguments():
    from theorycheck.errors import ArgumentError

    with pytest.raises(ArgumentError, match=r"^discrete=True needs eta and steps$") as e:
        tc.solve(tc.Setting.from_z([1, 2]), discrete=True)
    assert e.value.arguments == ("discrete", "eta", "steps")
    with pytest.raises(ArgumentError, match=r"^depth=0: L must be ≥ 1$"):
        tc.derive(depth=0)
    with pytest.raises(ArgumentError, match=r"^workers=0: give a number ≥ 1$"):
        tc.heatmap(tc.Setting.from_z([1.0, 2.0], optimizer="gd", rho=0.0), alphas=[0.5], times=[1.0], workers=0)


def test_render_maps_only_the_listed_names():
    import argparse

    from theorycheck.cli.errors import render
    from theorycheck.errors import ArgumentError

    p = argparse.ArgumentParser()
    p.add_argument("--t-max", type=float)
    p.add_argument("--depth", type=int)
    exc = ArgumentError("t_max=3.5 with depth=2: the depth L of t_max_x and depth_2 stay", "t_max", "depth")
    assert render(exc, "x", p) == "--t-max 3.5 with --depth 2: the --depth L of t_max_x and depth_2 stay"
    assert render(ArgumentError("depth=2 is fine"), "x", p) == "depth=2 is fine"  # no names listed: as written


def test_cli_choices_come_from_the_vocabulary():
    from theorycheck import vocabulary as v
    from theorycheck.cli.errors import subparser
    from theorycheck.cli.parser import build_parser

    parser = build_parser()
    want = {("trajectory", "method"): v.SOLVE_METHODS, ("trajectory", "time"): v.TIME_CHOICES,
            ("trajectory", "optimizer"): v.OPTIMIZERS, ("thresholds", "optimizer"): v.OPTIMIZERS,
            ("heatmap", "method"): v.SWEEP_METHODS, ("heatmap", "backend"): v.SWEEP_BACKENDS,
            ("heatmap", "array_backend"): v.ARRAY_BACKENDS, ("predict", "loss"): v.LOSSES,
            ("derive", "param"): v.PARAMETRISATIONS, ("verify", "profile"): tuple(v.PROFILES),
            ("maxmargin", "norm"): v.NORMS, ("cnn", "dataset"): v.CNN_DATASETS,
            ("cnn", "upsample"): v.CNN_UPSAMPLING, ("cnn", "device"): v.CNN_DEVICES}
    for (cmd, dest), words in want.items():
        action = next(a for a in subparser(parser, cmd)._actions if a.dest == dest)
        assert tuple(action.choices) == tuple(words), (cmd, dest)

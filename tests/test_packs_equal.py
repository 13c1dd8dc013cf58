"""Packs as equals: every folder of proofs/ is a pack of one shape (manifest, THEORY.md, theorems, claims,
predictions, and numerics/<pack>/ with experiments in the one protocol), and every pack goes through the
same code: ``prove``, ``verify --pack``, ``reproduce --pack``, ``predict --pack``."""

import functools
import importlib
import inspect
import json
from pathlib import Path

import pytest

from theorycheck import packs
from theorycheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = sorted(p.name for p in (ROOT / "proofs").iterdir() if (p / "__init__.py").is_file())
PACKS = {f: importlib.import_module(f"theorycheck.proofs.{f}").PACK for f in FOLDERS}


def test_five_packs_and_nothing_else_in_proofs():
    assert FOLDERS == ["kernel_rich", "lp_margin", "minor_first", "saddle_to_saddle", "sam_regression"]
    assert not [p for p in (ROOT / "proofs").iterdir() if p.is_dir() and p.name != "__pycache__"
                and not (p / "__init__.py").is_file()]
    assert sorted(p.name for p in (ROOT / "numerics").iterdir() if (p / "__init__.py").is_file()) == FOLDERS
    assert not any(p.is_symlink() for base in ("proofs", "numerics", "theorycheck") for p in (ROOT / base).rglob("*"))


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_pack_has_the_same_shape(folder):
    pack = PACKS[folder]
    base = ROOT / "proofs" / folder
    for f in ("__init__.py", "THEORY.md", "theorems.py", "claims.py", "predictions.py"):
        assert (base / f).is_file(), f"proofs/{folder}/{f}"
    assert isinstance(pack, packs.Pack) and pack.name == folder.replace("_", "-")
    assert pack.proofs == f"theorycheck.proofs.{folder}" and pack.numerics == f"theorycheck.numerics.{folder}"
    assert pack.theory == f"theorycheck.proofs.{folder}:THEORY.md"
    assert pack.predict == f"theorycheck.proofs.{folder}.predictions:predict"
    assert packs.get(pack.name) is pack  # found by the same discovery as every other pack
    text = pack.theory_text()
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert text.startswith("# ") and "## Setting" in text and any(h.startswith("## Claims") for h in heads)
    # theorems() and claims() live in their modules, as functions
    for module, fn in ((f"{pack.proofs}.theorems", "theorems"), (f"{pack.proofs}.claims", "claims")):
        assert callable(getattr(importlib.import_module(module), fn)), f"{module}.{fn}"
    theorems, claims = pack.theorems(), pack.claims()
    assert theorems and claims
    keys = [c.key for c in claims]
    assert len(set(keys)) == len(keys)
    for k in keys:  # THEORY.md states every claim the pack checks
        assert k.split(".")[0] in text, k
    prefix = {k.split(".")[0] for k in keys}
    assert len(prefix) == 1 or folder == "minor_first"  # minor-first's claims are C1–C6, E1, E2
    sig = inspect.signature(pack.predictor())
    assert list(sig.parameters)[:2] == ["X", "y"]


@pytest.mark.parametrize("folder", FOLDERS)
def test_claim_checks_are_module_functions(folder):
    """A claim's check (and its refined claim's) is a function of its module (or a ``functools.partial`` of one,
    fixing a flag), not a closure or a lambda."""
    for c in PACKS[folder].claims():
        for cc in (c, c.refined):
            if cc is not None:
                f = cc.check.func if isinstance(cc.check, functools.partial) else cc.check
                assert inspect.isfunction(f) and "<locals>" not in f.__qualname__ and f.__name__ != "<lambda>", cc.key


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_pack_has_experiments_in_the_one_protocol(folder):
    pack = PACKS[folder]
    numerics = importlib.import_module(pack.numerics)
    assert callable(getattr(numerics, "experiments", None))
    exps = pack.experiments()
    assert exps
    for name, module in exps.items():
        assert module.startswith(pack.numerics + "."), module
        mod = importlib.import_module(module)
        assert mod.NAME == name and isinstance(mod.TITLE, str) and mod.__doc__
        for fn in ("compute", "draw", "summarize"):
            assert callable(getattr(mod, fn)), f"{module}.{fn}"
        assert "quick" in inspect.signature(mod.compute).parameters


def test_no_pack_is_special_cased_in_the_library():
    """The library's runners name no pack: api, packs, experiments, the claims runner and the commands
    that run packs go through the manifest only."""
    names = [p.name for p in PACKS.values()] + FOLDERS
    for rel in ("theorycheck/api/__init__.py", "theorycheck/api/calls.py", "theorycheck/api/saddles.py",
                "theorycheck/api/packs.py", "theorycheck/packs.py", "theorycheck/experiments.py",
                "theorycheck/claims/runner.py", "theorycheck/cli/commands/verify.py",
                "theorycheck/cli/commands/prove.py", "theorycheck/cli/commands/reproduce.py"):
        src = (ROOT / rel).read_text()
        code = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("#"))
        for n in names:
            assert f'"{n}"' not in code and f"'{n}'" not in code, (rel, n)


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_pack_runs_through_prove_verify_and_reproduce_listings(capsys, folder):
    name = PACKS[folder].name
    rc, out, _ = run(capsys, "verify", "--pack", name, "--list")
    assert rc == 0 and all(c.key in out for c in PACKS[folder].claims())
    rc, out, _ = run(capsys, "reproduce", "--pack", name, "--list")
    assert rc == 0 and all(n in out for n in PACKS[folder].experiments())
    first = PACKS[folder].theorems()[0].key
    rc, out, _ = run(capsys, "prove", "--pack", name, "--only", first, "--json")
    res = json.loads(out)
    assert rc == 0 and [t["key"] for t in res["theorems"]] == [first] and res["theorems"][0]["pack"] == name


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_pack_predicts_through_the_same_command(capsys, folder):
    """``predict --pack`` with one example (x = (1, 2), y = 1): every pack answers with its own defaults."""
    rc, out, err = run(capsys, "predict", "--pack", PACKS[folder].name, "--z", "1,2", "--alpha", "0.5", "--json")
    assert rc == 0, err
    res = json.loads(out)
    assert isinstance(res, dict) and res


@pytest.mark.slow
@pytest.mark.parametrize("folder", FOLDERS)
def test_every_pack_verifies_through_the_same_command(capsys, folder):
    """``verify --pack`` runs a pack's first claim on its pinned inputs and gives a verdict with counts and a
    strength, for every pack alike."""
    first = PACKS[folder].claims()[0]
    rc, out, _ = run(capsys, "verify", "--pack", PACKS[folder].name, "--claims", first.key, "--examples", "1",
                     "--no-grid", "--json", "-")
    (v,) = [c for c in json.loads(out)["claims"] if c["key"] == first.key]
    assert v["pack"] == PACKS[folder].name and v["tried"] == v["pinned"] + v["drawn"] >= 1
    assert v["strength"]["kind"] in ("proved", "floating-point check", "holds on inputs", "not decided")
    assert rc == (1 if v["status"] in ("fails", "error") else 0)

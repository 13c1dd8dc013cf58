"""derive: a time budget with a partial result, progress, named intermediates that equal
the written-out flow, real LaTeX, and sizes refused up front."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from theorycheck.cli.main import main
from theorycheck.derivation import derivation, render
from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import model as sy


@pytest.mark.parametrize("optimizer", sy.OPTIMIZERS)
@pytest.mark.parametrize("L, d, n", [(1, 2, 2), (2, 2, 1), (2, 2, 2), (3, 1, 2),
                                     pytest.param(3, 2, 3, marks=pytest.mark.slow),
                                     pytest.param(2, 3, 2, marks=pytest.mark.slow)])
def test_named_system_equals_the_written_out_flow(optimizer, L, d, n):
    W, Z = sy.layer_symbols(L, d), sy.data_symbols(n, d)
    rescaled = n == 1
    ref = sy.rescaled_flow(W, Z, optimizer) if rescaled else sy.flow(W, Z, optimizer)
    defs, F = sy.flow_named(W, Z, optimizer, rescaled=rescaled)
    full = sy.expand_named(defs, F)
    syms = list(W) + list(Z) + [sy.rho]
    assert full.free_symbols <= set(syms)
    fa, fb = sp.lambdify(syms, ref, "numpy"), sp.lambdify(syms, full, "numpy")
    rng = np.random.default_rng(L * 100 + d * 10 + n)
    for _ in range(3):
        x = rng.normal(size=len(syms))
        x[-1] = abs(x[-1]) + 0.1
        np.testing.assert_allclose(np.array(fb(*x), float), np.array(fa(*x), float), rtol=1e-12, atol=1e-14)


def test_budget_gives_a_partial_result_naming_it():
    calls = []
    res = render(derivation(2, "sam-l2", balanced=False, dim=2, examples=2, max_seconds=1e-9,
                            progress=lambda *a: calls.append(a)), "json")
    assert res["complete"] is False and res["stopped_because"].startswith("max_seconds")
    full = render(derivation(2, "sam-l2", balanced=False, dim=2, examples=2, progress=lambda *a: calls.append(a)),
                  "json")
    assert full["complete"] is True and full["stopped_because"] is None
    assert len(full["system"]) == 4 and len(res.get("system", {})) < 4
    assert calls and calls[-1][0] == calls[-1][1]


def test_budget_interrupts_a_long_sympy_operation():
    """A balanced explicit system at depth 300 takes minutes in sympy; the budget stops it."""
    res = render(derivation(300, "sam-l2", balanced=True, dim=3, max_seconds=0.5), "json")
    assert res["complete"] is False and "0.5 s" in res["stopped_because"]


def test_sizes_refused_up_front():
    with pytest.raises(TheorycheckError, match="exceed the limit"):
        derivation(1000, "sam-l2", balanced=False, dim=6)
    with pytest.raises(TheorycheckError):
        derivation(2, "sam-l2", balanced=False, max_seconds=0)


def test_deep_coordinate_form_is_quick(capsys):
    assert main(["derive", "--depth", "1000", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["depth"] == 1000 and doc["complete"] is True


@pytest.mark.parametrize("argv", [["--depth", "3"], ["--depth", "4", "--examples", "2"], ["--depth", "3", "--dim", "2"],
                                  ["--depth", "5", "--balanced", "--dim", "2"]])
def test_latex_is_latex(argv, capsys):
    assert main(["derive", *argv, "--format", "latex"]) == 0
    out = capsys.readouterr().out
    body = "\n".join(line.split(" = ", 1)[1] for line in out.splitlines() if " = " in line and "flow" not in line)
    assert not any(ch in body for ch in "Πŵ≠ΣℓβΣ²"), body  # no unicode placeholders left in the formulas
    assert r"\prod" in body or r"\hat" in body or "^" in body


def test_explicit_system_from_the_cli_is_small(capsys):
    assert main(["derive", "--depth", "4", "--dim", "6", "--examples", "3", "--format", "json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert doc["complete"] and len(doc["system"]) == 24 and "S" in doc["definitions"]
    assert len(out) < 200_000

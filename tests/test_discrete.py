"""discrete.sam_step against the symbolic flow, and the η → 0 limit along the path."""

import math

import numpy as np
import pytest
import sympy as sp

from theorycheck import observe as ob
from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting
from theorycheck.solvers.discrete import run, sam_step
from theorycheck.solvers.integrate import solve
from theorycheck.symbolic import model as sy

RNG = np.random.default_rng(7)


def symbolic_field(W: np.ndarray, Z: np.ndarray, optimizer: str, rho: float, loss: str) -> np.ndarray:
    """−∇Lo(W + ε(W)) from symbolic.flow (sympy.diff of the model), evaluated at 30 digits."""
    L, d = W.shape
    Ws, Zs = sy.layer_symbols(L, d), sy.data_symbols(Z.shape[0], d)
    F = sy.flow(Ws, Zs, optimizer, loss)
    subs = {Ws[i]: sp.Float(float(W.flat[i]), 30) for i in range(W.size)}
    subs.update({Zs[i]: sp.Float(float(Z.flat[i]), 30) for i in range(Z.size)})
    subs[sy.rho] = sp.Float(rho, 30)
    return np.array(F.subs(subs).evalf(30), dtype=float)


@pytest.mark.parametrize("optimizer", ["gd", "sam-l2", "sam-linf", "asam"])
@pytest.mark.parametrize("L,n,d", [(1, 2, 2), pytest.param(2, 2, 3, marks=pytest.mark.slow), (3, 1, 2)])
@pytest.mark.parametrize("loss", ["logistic", "exponential"])
def test_sam_step_is_a_step_along_the_symbolic_flow(optimizer, L, n, d, loss):
    W = RNG.normal(size=(L, d))
    Z = RNG.normal(size=(n, d))
    eta, rho = 0.037, 0.21
    new = sam_step(W, Z, optimizer=optimizer, rho=rho, eta=eta, loss=loss)
    expected = W + eta * symbolic_field(W, Z, optimizer, rho, loss)
    np.testing.assert_allclose(new, expected, rtol=1e-13, atol=1e-15)


def test_sam_step_l2_at_zero_gradient_is_gd():
    """ε = ρ g/‖g‖ is undefined at g = 0; sam_step takes ε = 0 there (no NaN)."""
    W = np.zeros((2, 3))
    out = sam_step(W, np.array([[1.0, 2.0, 3.0]]), optimizer="sam-l2", rho=1.0, eta=0.1)
    assert np.all(out == 0)


def test_sam_step_does_not_overflow_for_huge_negative_margins():
    W = np.full((2, 2), 100.0)
    out = sam_step(W, np.array([[-1.0, -1.0]]), optimizer="sam-l2", rho=0.1, eta=1e-6)
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("kw", [dict(optimizer="adam"), dict(rho=-1.0), dict(eta=0.0), dict(eta=math.nan),
                                dict(loss="hinge")])
def test_sam_step_rejects_bad_input(kw):
    args = dict(optimizer="gd", rho=0.1, eta=0.1, loss="logistic")
    args.update(kw)
    with pytest.raises(TheorycheckError):
        sam_step(np.ones((2, 2)), np.ones((1, 2)), **args)
    with pytest.raises(TheorycheckError):
        sam_step(np.ones((2, 2)), np.ones((1, 3)), optimizer="gd", rho=0.1, eta=0.1)


def test_run_budgets():
    s = Setting.from_z([1.0, 2.0], optimizer="gd", rho=0.0, alpha=0.5)
    tr = run(s, eta=0.1, steps=50)
    assert tr.stopped_because == "steps" and tr.t[-1] == pytest.approx(5.0) and len(tr.t) == 51
    tr = run(s, eta=0.1, steps=10**6, stop_log_norm=0.0)
    assert tr.stopped_because == "norm_reached" and ob.log_norm(tr.log_abs_beta[-1]) >= 0.0
    assert ob.log_norm(tr.log_abs_beta[-2]) < 0.0
    tr = run(s, eta=0.1, steps=10**7, max_seconds=0.05)
    assert tr.stopped_because == "max_seconds"
    with pytest.raises(TheorycheckError):
        run(s, eta=0.1, steps=0)


@pytest.mark.parametrize("optimizer,rho", [("gd", 0.0), ("sam-l2", 0.3), ("asam", 0.3)])
def test_discrete_converges_to_the_flow_along_the_path(optimizer, rho):
    """At equal ‖β‖ the discrete directions approach the flow's as η → 0, with measured
    order ≈ 1 (the flow is the first-order limit)."""
    s = Setting.from_z([0.5, 1.0, 1.5], optimizer=optimizer, rho=rho, alpha=0.5)
    flow = solve(s, t_max=5.0)
    levels = [-0.5, 0.0, 0.5, 1.0]
    ref = [ob.direction_at_norm(flow, lv) for lv in levels]
    etas = [0.04, 0.02, 0.01, 0.005]
    errs = []
    for eta in etas:
        tr = run(s, eta=eta, steps=10**6, stop_log_norm=1.05)
        errs.append(max(np.linalg.norm(ob.direction_at_norm(tr, lv) - r) for lv, r in zip(levels, ref)))
    assert errs[-1] < errs[0] / 4
    order = np.polyfit(np.log(etas), np.log(errs), 1)[0]
    assert 0.8 < order < 1.2, (errs, order)

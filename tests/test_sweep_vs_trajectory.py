"""Cross-checks of the batched sweeps against the single-trajectory code of issue 3
(integrate.solve, discrete.sam_step): two independent integrators, one answer."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck import status as bst
from theorycheck import sweep as S
from theorycheck.batched import discrete as bdisc
from theorycheck.batched import engine as bt
from theorycheck.batched import systems as bsys
from theorycheck.setting import Setting
from theorycheck.solvers.discrete import sam_step
from theorycheck.solvers.integrate import solve as _solve

Z2 = np.array([[1.0, 2.0, 3.0], [1.2, 1.5, 2.5]])

#: solve with the first paper's reduction of the flow at hand (method="reduced"), as the API's has it
solve = functools.partial(_solve, reductions=REDUCTIONS)

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
S_heatmap = functools.partial(S.heatmap, reductions=REDUCTIONS)
S_depth_sweep = functools.partial(S.depth_sweep, reductions=REDUCTIONS)


def _log_beta_at(traj, ts):
    return np.array([traj.at(float(t))[0] for t in ts])


@pytest.mark.parametrize("optimizer,rho,alpha", [("gd", 0.0, 0.3), ("sam-l2", 0.5, 0.3), ("sam-linf", 0.5, 0.8)])
def test_real_time_batch_equals_solve(optimizer, rho, alpha):
    traj = solve(Setting(Z2, np.ones(2), optimizer=optimizer, rho=rho, alpha=alpha), t_max=100.0, method="scipy")
    assert traj.stopped_because == "t_max" and traj.time_kind == "real"
    ts = np.array([0.5, 2.0, 10.0, 50.0, 100.0])
    res = bt.integrate(bsys.MultiExample(Z2, [alpha], rho, optimizer=optimizer), ts)
    la = _log_beta_at(traj, ts)
    np.testing.assert_allclose(res.obs["log_beta_max"][0], la.max(axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(res.obs["jdag"][0], la.argmax(axis=1) + 1)


def test_reduced_batch_equals_solve_reduced_and_scipy():
    z = np.arange(1.0, 7.0)
    ts = np.array([0.05, 0.3, 1.0, 3.0, 8.0])
    for alpha in (0.2, 0.45, 0.6):
        res = S_heatmap(z, optimizer="sam-l2", rho=1.0, alphas=[alpha], times=ts, backend="serial")
        for method in ("reduced", "scipy"):
            traj = solve(Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=alpha), t_max=8.0, method=method)
            if traj.collapsed:
                assert res["status"][0] == bst.COLLAPSE
                assert res["event_collapse"][0] == pytest.approx(traj.collapse_time, rel=1e-6)
            alive = ts < (traj.collapse_time if traj.collapsed else np.inf)
            la = _log_beta_at(traj, ts[alive])
            np.testing.assert_array_equal(res["jdag"][0][alive], la.argmax(axis=1) + 1)


def test_linf_slides_like_solve():
    z, rho = np.array([1.0, 2.0, 3.0]), 0.5
    alpha = np.array([0.7, 0.3, 0.45])
    traj = solve(Setting.from_z(z, optimizer="sam-linf", rho=rho, alpha=alpha), t_max=5.0, method="scipy")
    res = bt.integrate(bsys.BalancedLog(z, alpha[None, :], rho, optimizer="sam-linf"), np.array([0.1, 0.5, 1.0, 5.0]))
    zero_times = sorted(e.time for e in traj.events if "zero" in e.kind or "slide" in e.kind)
    assert zero_times, [e.kind for e in traj.events]
    assert res.events["first_zero"][0] == pytest.approx(zero_times[0], abs=1e-8)
    la = _log_beta_at(traj, [0.1, 0.5, 1.0, 5.0])
    np.testing.assert_array_equal(res.obs["jdag"][0], la.argmax(axis=1) + 1)


@pytest.mark.parametrize("optimizer", ["gd", "sam-l2", "sam-linf"])
def test_discrete_run_takes_sam_steps(optimizer):
    """batch.discrete_run (θ ← θ + ln(1 + η θ')) against discrete.sam_step on the layers."""
    alpha, rho, eta = np.array([0.6, 0.9, 1.1]), 0.3, 0.05
    W = np.tile(alpha, (2, 1))
    for _ in range(20):
        W = sam_step(W, Z2, optimizer=optimizer, rho=rho, eta=eta)
    res = bdisc.discrete_run(bsys.MultiExample(Z2, alpha[None, :], rho, optimizer=optimizer), eta, np.array([20 * eta]))
    np.testing.assert_allclose(W[0], W[1], rtol=1e-14)
    np.testing.assert_allclose(res.obs["log_beta_max"][0, 0], 2 * np.log(W[0]).max(), rtol=1e-12)
    assert res.obs["jdag"][0, 0] == np.argmax(W[0]) + 1

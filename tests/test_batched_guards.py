"""Regressions: the batched engine's systems at extreme scales, on zero data and at a
critical point of the loss (no traceback, no member that runs until its step budget)."""


import functools

import numpy as np
import pytest
from _hang import hang_guard
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck.batched.systems import MultiExample
from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting
from theorycheck.solvers.guards import scaled_norm
from theorycheck.solvers.integrate import solve as _solve
from theorycheck.status import Status
from theorycheck.sweep.recipes import heatmap as _heatmap

#: solve with the first paper's reduction of the flow at hand (method="reduced"), as the API's has it
solve = functools.partial(_solve, reductions=REDUCTIONS)

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
heatmap = functools.partial(_heatmap, reductions=REDUCTIONS)


def test_scaled_norm_neither_underflows_nor_overflows():
    assert scaled_norm([3e-213, 4e-213]) == pytest.approx(5e-213, rel=1e-15)
    assert scaled_norm([3e200, 4e200]) == pytest.approx(5e200, rel=1e-15)
    np.testing.assert_array_equal(scaled_norm(np.zeros((2, 3)), axis=1), [0.0, 0.0])
    np.testing.assert_allclose(scaled_norm(np.array([[3e-300, 4e-300], [1.0, 0.0]]), axis=1), [5e-300, 1.0], rtol=1e-15)


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf"])
@pytest.mark.parametrize("c", [1e-213, 1e200, 1e300])
def test_one_example_heatmap_is_scale_invariant(optimizer, c):
    """One example, L = 2: z → cz with τ → τ/c is the same flow (was: math domain error at
    1e-213 from ln‖z‖ of an underflowed norm; at 1e200 a GD member that never moved, since
    ‖θ'‖² overflowed and its clock dτ/ds was 0, and ℓ∞ members that stopped non_finite: the
    error norm's squares overflowed and the step floor assumed a clock of size ≥ 1; ℓ∞ at 1e300:
    the sliding member ended non_finite, its event rate e^30·‖z‖ overflowed — the system now
    integrates z/2^k in the time 2^k τ)."""
    z = np.array([1.0, 2.0, 1.5])
    times = np.array([0.5, 1.0, 2.0])
    a = heatmap(z, optimizer=optimizer, rho=0.5, alphas=[0.3, 1.0, 2.0], times=times, backend="serial")
    with hang_guard(120):
        b = heatmap(z * c, optimizer=optimizer, rho=0.5, alphas=[0.3, 1.0, 2.0], times=times / c, backend="serial")
    np.testing.assert_array_equal(a["jdag"], b["jdag"])
    np.testing.assert_array_equal(a["status"], b["status"])


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf", "sam-l2"])
def test_zero_data_is_a_one_line_error(optimizer):
    for Z in ([0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]):
        with pytest.raises(TheorycheckError):
            heatmap(Z, optimizer=optimizer, rho=1.0, alphas=[0.5, 1.0], times=[1.0, 2.0], backend="serial")


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf", "sam-l2"])
def test_several_tiny_examples_run(optimizer):
    """Rows of size 1e-213 (time scale 1e213): was non_finite for every member (the clock's
    scale max_i ‖z_i‖ underflowed to 0). ℓ2-SAM still stops non_finite there: the compiled
    ln(term of S²) squares G ~ 1e-213 (an underflow in the symbolic form), and says so."""
    Z = np.array([[1.0, 2.0], [2.0, 1.0]]) * 1e-213
    res = heatmap(Z, optimizer=optimizer, rho=0.1, alphas=[0.5, 1.0], times=[1e212, 2e212], backend="serial")
    ok = {Status.DONE, Status.COLLAPSE} | ({Status.NON_FINITE} if optimizer == "sam-l2" else set())
    assert {Status.from_code(c) for c in res["status"]} <= ok
    done = res["status"] == Status.DONE.code
    assert np.all(res["jdag"][done] >= 1)


def test_l2_several_examples_stop_at_a_critical_point():
    """Mixed-sign rows that no β ≥ 0 separates: Lo has a critical point in the cone the
    balanced network reaches, where ℓ2-SAM's ε = ρ∇Lo/‖∇Lo‖ is undefined (was: each member
    chattered there until its 200 000-step budget, minutes for five members). Each member
    now stops with critical_point where the single-trajectory solver does."""
    Z = np.array([[-0.26, 0.484], [-0.042, -0.096], [-0.082, 1.064], [-1.156, -1.556], [-1.053, 0.561]])
    alphas = np.linspace(0.5, 4.8, 5)
    with hang_guard(120):
        res = heatmap(Z, optimizer="sam-l2", rho=2.0, alphas=alphas, times=np.linspace(0.1, 10.0, 10), backend="serial")
    assert np.all(res["status"] == Status.CRITICAL_POINT.code)
    assert np.all(res["steps"] < 1000)
    for a, t_stop in zip(alphas, res["t_stop"]):
        tr = solve(Setting(Z, optimizer="sam-l2", rho=2.0, alpha=a, check_separability=False), t_max=100.0)
        assert tr.stopped_because == "critical_point"
        assert t_stop == pytest.approx(tr.t_end, rel=1e-2)
    after = res["time"][None, :] > res["t_stop"][:, None]
    assert np.all(res["jdag"][after] == -1)  # unknown past the critical point


def test_l2_separable_data_run_past_the_old_false_critical_point():
    """Separable data, ℓ2-SAM, real time: ‖∇Lo(w)‖/‖∇Lo(w + ε)‖ falls below 1e-4 of its start
    near t ≈ 600 only because Lo → 0 (the perturbed point's margins are smaller), and both
    solvers stopped there with critical_point although the margins were about 21 and growing.
    The relative gradient ‖∇Lo(w)‖/Lo(w) stays above its start, so neither stops now."""
    Z = np.array([[1.573, 1.987], [0.687, 2.628]])
    times = [10.0, 100.0, 1000.0]
    with hang_guard(120):
        tr = solve(Setting(Z, y=np.ones(2), optimizer="sam-l2", rho=1.48, alpha=1.10), t_max=1000.0)
        res = heatmap(Z, optimizer="sam-l2", rho=1.48, alphas=[1.10], times=times, backend="serial")
    assert tr.stopped_because == "t_max" and tr.t_end == 1000.0
    assert not any(e.kind == "critical_point" for e in tr.events)
    assert res["status"][0] == Status.DONE.code and res["t_stop"][0] >= 1000.0
    jdag_tr = [int(np.argmax(tr.at(t)[0])) + 1 for t in times]
    np.testing.assert_array_equal(res["jdag"][0], jdag_tr)
    margins = [Z @ (tr.at(t)[1] * np.exp(tr.at(t)[0])) for t in times]
    assert np.all(margins[1] > 15.0) and np.all(margins[2] > margins[1])  # separated, margins growing
    # the mechanism: the first ratio alone would stop (fallen by more than 1e-4), the second has not fallen
    sysm = MultiExample(Z, [1.10], [1.48], optimizer="sam-l2")
    sysm.initial()
    la, sg = tr.at(1000.0)
    th = (la / 2)[None, :]  # balanced L = 2: u_j = |β_j|^{1/2}, u > 0
    idx = np.arange(1)
    rel, _, relg = sysm._ln_grad_ratio(idx, th, sysm.theta_rate(idx, np.zeros(1), th))
    assert rel[0] - sysm.rel0[0] < MultiExample.SINGULAR_LOG
    assert relg[0] - sysm.relg0[0] > 0.0
    assert not sysm._at_critical_point(idx, th, sysm.theta_rate(idx, np.zeros(1), th))[0]


@pytest.mark.parametrize("alpha", [0.5, 4.8])
def test_l2_genuine_critical_point_has_a_vanishing_relative_gradient(alpha):
    """Non-separable in the reachable cone: both solvers still stop with critical_point, at
    the same time, where Lo is bounded away from 0 and ‖∇Lo(w)‖/Lo(w) has fallen below 1e-4
    of its start (the second condition of the test holds there, not only the first)."""
    Z = np.array([[-0.26, 0.484], [-0.042, -0.096], [-0.082, 1.064], [-1.156, -1.556], [-1.053, 0.561]])
    with hang_guard(60):
        tr = solve(Setting(Z, optimizer="sam-l2", rho=2.0, alpha=alpha, check_separability=False), t_max=100.0)
        res = heatmap(Z, optimizer="sam-l2", rho=2.0, alphas=[alpha], times=[0.1, 50.0], backend="serial")
    assert tr.stopped_because == "critical_point"
    assert res["status"][0] == Status.CRITICAL_POINT.code
    assert res["t_stop"][0] == pytest.approx(tr.t_end, rel=1e-2)
    sysm = MultiExample(Z, [alpha], [2.0], optimizer="sam-l2")
    sysm.initial()
    la, sg = tr.at(tr.t_end)
    assert np.all(sg > 0)
    th = (la / 2)[None, :]
    idx = np.arange(1)
    _, _, relg = sysm._ln_grad_ratio(idx, th, sysm.theta_rate(idx, np.zeros(1), th))
    assert relg[0] - sysm.relg0[0] < MultiExample.SINGULAR_LOG
    assert sysm.risk.value(np.exp(la), Z) > 0.1  # the loss stays away from 0: a genuine critical point

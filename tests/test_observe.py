"""observe: direction, j†, switch times (exact for GD, L = 2), collapse, margins and loss."""

import math

import numpy as np
import pytest
import sympy as sp

from theorycheck import observe as ob
from theorycheck.setting import Setting
from theorycheck.solve.discrete import run
from theorycheck.solve.integrate import solve
from theorycheck.solve.trajectory import Trajectory, _Step
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy


def test_direction_is_overflow_free_and_zero_safe():
    d = ob.direction(np.array([1e5, 1e5 + math.log(2), -np.inf]), np.array([1, -1, 0]))
    # 1e5 + ln 2 is itself rounded to ~1e-11 absolute
    np.testing.assert_allclose(d, [1 / math.sqrt(5), -2 / math.sqrt(5), 0.0], rtol=1e-10)
    assert not np.any(ob.direction(np.full(3, -np.inf), np.zeros(3)))


def test_dominant_index_ties_and_zero():
    assert ob.dominant_index(np.array([0.0, 2.0, 2.0])) == 2
    assert ob.dominant_index(np.array([-np.inf, -np.inf])) == 0
    assert ob.dominant_index(np.array([-1.0, -np.inf, -0.5])) == 3


def gd_switch_times(z, alpha):
    """τ where u_j = u_k for GD, L = 2 (solved by sympy from closed_forms.gd_l2_solution)."""
    zk, ak = sp.symbols("z_k alpha_k", positive=True)
    u = cf.gd_l2_solution()
    sol = sp.solve(sp.Eq(sp.log(u), sp.log(u.subs({cf.z_j: zk, cf.alpha_j: ak}))), sy.tau)[0]
    f = sp.lambdify((cf.z_j, cf.alpha_j, zk, ak), sol, "math")
    return lambda j, k: f(z[j - 1], alpha[j - 1], z[k - 1], alpha[k - 1])


def test_switch_times_are_exact_for_gd_l2():
    z = np.array([1.0, 2.0, 3.0, 3.5])
    alpha = np.array([1.0, math.exp(-2.0), math.exp(-6.0), math.exp(-10.0)])
    tr = solve(Setting.from_z(z, optimizer="gd", rho=0.0, alpha=alpha), t_max=20.0)
    sw = ob.switches(tr)
    times = gd_switch_times(z, alpha)
    assert [(w.from_, w.to) for w in sw] == [(1, 2), (2, 3), (3, 4)]
    for w in sw:
        assert w.time == pytest.approx(times(w.from_, w.to), rel=1e-12)


def test_several_switches_inside_one_dense_step():
    """One dense piece on [0, 10] with ln|β_j| = a_j + b_j t: switches 1→2→3→4 at 2, 3, 5
    and a crossing of two non-dominant coordinates (ignored)."""
    a = np.array([0.0, -2.0, -5.0, -10.0])
    b = np.array([0.0, 1.0, 2.0, 3.0])
    b[3] = 3.0
    a[3] = (a[2] + b[2] * 5.0) - b[3] * 5.0  # 3 → 4 at t = 5

    def dense(t):
        return a + b * t

    traj = Trajectory(setting=None, time_kind="rescaled", method="test", precision=None,
                      t=np.array([0.0, 10.0]), log_abs_beta=np.array([dense(0.0), dense(10.0)]),
                      sign_beta=np.ones((2, 4), dtype=int), stopped_because="t_max", t_max=10.0,
                      _steps=[_Step(0.0, 10.0, dense, lambda t, y: (y, np.ones(4, dtype=int)))])
    sw = ob.switches(traj)
    assert [(w.from_, w.to) for w in sw] == [(1, 2), (2, 3), (3, 4)]
    np.testing.assert_allclose([w.time for w in sw], [2.0, 3.0, 5.0], rtol=1e-14)


def test_switches_with_mpmath_trajectory():
    z = np.array([1.0, 2.0])
    alpha = np.array([1.0, math.exp(-3.0)])
    tr = solve(Setting.from_z(z, optimizer="gd", rho=0.0, alpha=alpha), t_max=10.0, precision=25)
    (w,) = ob.switches(tr)
    assert (w.from_, w.to) == (1, 2) and w.time == pytest.approx(3.0, rel=1e-13)


def test_collapse_adds_a_switch_to_zero():
    tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.05), t_max=5.0)
    sw = ob.switches(tr)
    assert sw[-1].to == 0 and sw[-1].time == tr.collapse_time
    assert ob.index_path(tr)[-1] == 0 and ob.final_index(tr) == 0


def test_uniform_alpha_tie_at_start_is_not_a_switch():
    """j†(0+) = argmax z_j (1 − ρ z_j / N0) (C5) is reported as the starting index."""
    z = np.array([0.5, 1.0, 1.6, 2.3])
    tr = solve(Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=0.4), t_max=15.0, method="reduced")
    sw = ob.switches(tr)
    assert sw[0].from_ == 2  # N0 = 0.4·√2·‖z‖ ≈ 1.73: z(1 − z/N0) is largest at z = 1
    assert all(w.time > 1e-6 for w in sw)


def test_discrete_switches_interpolate_between_iterates():
    z = np.array([1.0, 2.0])
    s = Setting.from_z(z, optimizer="gd", rho=0.0, alpha=np.array([1.0, 0.9]))
    tr = run(s, eta=0.01, steps=1000)
    (w,) = ob.switches(tr)
    i = int(np.searchsorted(tr.t, w.time))
    assert tr.t[i - 1] < w.time <= tr.t[i]
    assert ob.dominant_index(tr.log_abs_beta[i - 1]) == 1 and ob.dominant_index(tr.log_abs_beta[i]) == 2


def test_margins_and_loss_real_time():
    X = np.array([[1.0, 2.0], [2.0, -1.0], [-1.0, -1.0]])
    y = np.array([1.0, 1.0, -1.0])
    tr = solve(Setting(X, y, optimizer="gd", alpha=0.3, depth=2), t_max=200.0)
    ml = ob.margins_and_loss(tr)
    assert ml["loss"][0] == pytest.approx(math.log(2) * 0 + np.mean(np.log1p(np.exp(-(tr.setting.Z @ np.full(2, 0.09))))))
    assert np.all(np.diff(ml["loss"]) <= 1e-15)  # GD flow decreases the loss
    assert ml["min_margin"][-1] > 0 and 0 < ml["normalized_margin"][-1] <= 1.5


def test_margins_and_loss_do_not_overflow():
    tr = solve(Setting.from_z([1.0, 2.0], optimizer="gd", alpha=0.5), t_max=1e4)
    ml = ob.margins_and_loss(tr)
    assert np.all(np.isfinite(ml["loss"])) and ml["loss"][-1] == 0.0
    assert ml["normalized_margin"][-1] == pytest.approx(2.0, rel=1e-12)


def test_summary_keys():
    tr = solve(Setting.from_z([1.0, 2.0], optimizer="sam-linf", rho=1.0, alpha=[0.5, 1.5]), t_max=5.0)
    s = ob.summary(tr)
    for k in ("final_index", "collapsed", "collapse_time", "blowup_time", "switches", "direction", "time_kind",
              "stopped_because"):
        assert k in s
    assert s["final_index"] == 2 and s["direction"] == [0.0, 1.0]
    assert s["events"][0]["kind"] == "slide" and s["events"][0]["index"] == 1

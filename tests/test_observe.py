"""observe: direction, j†, switch times (exact for GD, L = 2), collapse, margins and loss."""

import functools
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck import observe as ob
from theorycheck.setting import Setting
from theorycheck.solvers.discrete import run
from theorycheck.solvers.integrate import solve as _solve
from theorycheck.solvers.trajectory import Budget, Trajectory, _Step
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE

#: solve with the first paper's reduction of the flow at hand (method="reduced"), as the API's has it
solve = functools.partial(_solve, reductions=REDUCTIONS)


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
    """τ where u_j = u_k for GD, L = 2 (solved by sympy from theory_exprs.gd_l2_solution)."""
    zk, ak = sp.symbols("z_k alpha_k", positive=True)
    u = TE.gd_l2_solution()
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

    traj = Trajectory(setting=None, time_kind="rescaled", method="test", digits=None,
                      t=np.array([0.0, 10.0]), log_abs_beta=np.array([dense(0.0), dense(10.0)]),
                      sign_beta=np.ones((2, 4), dtype=int), stopped_because="t_max", t_max=10.0,
                      _steps=[_Step(0.0, 10.0, dense, lambda t, y: (y, np.ones(4, dtype=int)))])
    sw = ob.switches(traj)
    assert [(w.from_, w.to) for w in sw] == [(1, 2), (2, 3), (3, 4)]
    np.testing.assert_allclose([w.time for w in sw], [2.0, 3.0, 5.0], rtol=1e-14)


def test_switches_with_mpmath_trajectory():
    z = np.array([1.0, 2.0])
    alpha = np.array([1.0, math.exp(-3.0)])
    tr = solve(Setting.from_z(z, optimizer="gd", rho=0.0, alpha=alpha), t_max=10.0, digits=25)
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


# ---------------------------------------------------------------- one rule for j† (the index chain)
def assert_chain(tr):
    """initial_index, then each switch from → to, reaches final_index; times never decrease."""
    s = ob.summary(tr)
    cur = s["initial_index"]
    t_prev = -math.inf
    for w in s["switches"]:
        assert w["from"] == cur and w["to"] != cur and w["time"] >= t_prev
        cur, t_prev = w["to"], w["time"]
    assert cur == s["final_index"]
    assert list(ob.index_path(tr))[-1] == s["final_index"]
    return s


def test_next_index_rule():
    la = np.array([0.0, 1.0, 1.0 + 1e-12, -np.inf])
    assert ob.next_index(la, 0) == 2  # tied leaders → the smallest index
    assert ob.next_index(la, 3) == 3  # the current index stays while it is tied with the leader
    assert ob.next_index(la, 1) == 2  # ... and leaves when it is not
    assert ob.next_index(np.array([1.0, 1.0 + 1e-6]), 1) == 2  # beyond the tolerance: a real lead
    assert ob.next_index(np.full(3, -np.inf), 2) == 0


def test_chain_when_the_budget_stops_after_one_step():
    """Was: initial 1, no switches, final 3 (initial from a tie-break, final from a raw argmax).
    After one tiny step the increments already order the tied coordinates (C5: z(1 − ρz/N0)
    is largest at z = 3 for N0 = √28)."""
    tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=1.0), t_max=50.0,
               budget=Budget(max_steps=1))
    s = assert_chain(tr)
    assert (s["initial_index"], s["final_index"], s["switches"]) == (3, 3, [])


def test_chain_with_one_ulp_near_tie():
    """z_2 and z_3 one ulp apart at the C5 boundary (1 − 2ρz/N0 ≈ 0): they stay within the tie
    tolerance for the whole run, so no switch between them (was: 2→3, 3→2, 2→3 with initial 1)."""
    tr = solve(Setting.from_z([0.5, 1.0, 1.0000000000000002], optimizer="sam-l2", rho=0.7, alpha=0.6599663291074442),
               t_max=50.0)
    s = assert_chain(tr)
    assert s["switches"] == [] and s["initial_index"] == s["final_index"] == 2


@pytest.mark.parametrize("opt,rho", [("gd", 0.0), ("sam-l2", 1.0), ("sam-linf", 0.5)])
def test_exact_tie_at_the_top_is_never_a_switch(opt, rho):
    """z = (1, 2, 2), uniform α: β_2 ≡ β_3 (was: initial 1, final 2 and no switch)."""
    tr = solve(Setting.from_z([1.0, 2.0, 2.0], optimizer=opt, rho=rho, alpha=1.0), t_max=50.0)
    s = assert_chain(tr)
    assert s["initial_index"] == 2 and s["final_index"] in (0, 2)
    assert all(w["to"] in (0, 2) for w in s["switches"])


def test_chain_through_a_collapse_and_in_the_cli(capsys):
    import json

    from theorycheck.cli.main import main

    tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.05), t_max=5.0)
    s = assert_chain(tr)
    assert s["final_index"] == 0 and s["switches"][-1]["time"] == tr.collapse_time
    assert main(["trajectory", "--z", "1,2,3", "--max-steps", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cur = out["initial_index"]
    for w in out["switches"]:
        assert w["from"] == cur
        cur = w["to"]
    assert cur == out["final_index"]


def test_the_switch_time_is_the_crossing_even_when_the_lead_is_confirmed_later():
    """ln|β| linear pieces: 2 overtakes 1 at t = 1 (D(t) = 1.5e-9 (t − 1): not tied at t = 0)
    but leads by less than the tie tolerance (1e-9) at the row t = 1.5; the lead is clear at
    t = 3. The switch is reported at the crossing, not where the lead was confirmed."""
    a = np.array([0.0, -1.5e-9])
    b = np.array([0.0, 1.5e-9])
    rows = np.array([a + b * t for t in (0.0, 1.5, 3.0, 1e3)])
    rows[-2:, 1] = rows[-2:, 0] + 1.0  # clear lead from t = 3 on

    def dense_for(t0, t1, r0, r1):
        return lambda t: r0 + (r1 - r0) * (t - t0) / (t1 - t0)

    ts = [0.0, 1.5, 3.0, 1e3]
    steps = [_Step(ts[k], ts[k + 1], dense_for(ts[k], ts[k + 1], rows[k], rows[k + 1]),
                   lambda t, y: (y, np.ones(2, dtype=int))) for k in range(3)]
    traj = Trajectory(setting=None, time_kind="rescaled", method="test", digits=None, t=np.array(ts),
                      log_abs_beta=rows, sign_beta=np.ones((4, 2), dtype=int), stopped_because="t_max", t_max=1e3,
                      _steps=steps)
    ch = ob.index_chain(traj)
    assert ch.initial == 1 and ch.final == 2 and len(ch.switches) == 1
    assert ch.switches[0].time == pytest.approx(1.0, rel=1e-6)


# ---------------------------------------------------------------- margins and loss without overflow
def test_loss_and_margin_beyond_float64_are_null_and_named():
    """Misclassified example at ‖β‖ ≈ e^737: Lo ≈ |m|/2 overflows, ln Lo does not (was: inf)."""
    s = Setting([[-2.0, 1.0], [1.0, 1.0]], alpha=1e160)
    tr = solve(s, t_max=1e-300)
    out = ob.summary(tr)
    assert out["final_margin"] is None and out["final_loss"] is None
    assert set(out["overflow"]) == {"final_margin", "final_loss"}
    lb = 2 * math.log(1e160) + 0.5 * math.log(2)  # β = α²(1, 1)
    assert out["final_log_norm"] == pytest.approx(lb, rel=1e-12)
    # logistic: ℓ(m) = |m| + log1p(e^{−|m|}) for m < 0, ℓ(2α²) = 0: Lo = α²/2
    assert out["final_log_loss"] == pytest.approx(2 * math.log(1e160) - math.log(2), rel=1e-12)
    assert out["final_normalized_margin"] == pytest.approx(-1 / math.sqrt(2), rel=1e-12)


def test_exponential_loss_overflow_keeps_its_log():
    tr = solve(Setting([[-2.0, 1.0], [1.0, 1.0]], alpha=1e10, loss="exponential"), t_max=1e-300)
    out = ob.summary(tr)
    assert out["final_loss"] is None and out["overflow"] == ["final_loss"]
    assert out["final_log_loss"] == pytest.approx(1e20 - math.log(2), rel=1e-12)  # ln((e^{α²} + e^{−2α²})/2)
    assert out["final_margin"] == pytest.approx(-1e20, rel=1e-12)


def test_discrete_deep_run_records_log_beta_without_forming_the_product():
    """L = 4 ℓ∞-SAM: the layers stay finite while Π_k w_k overflowed (was: direction = [nan, …],
    final_normalized_margin = nan)."""
    s = Setting([[1.0, 2.0, 3.0]], optimizer="sam-linf", rho=0.1, depth=4, alpha=1e90)
    tr = run(s, eta=1e-3, steps=5)
    out = ob.summary(tr)
    assert np.all(np.isfinite(tr.log_abs_beta))
    np.testing.assert_allclose(tr.log_abs_beta[0], np.full(3, 4 * math.log(1e90)), rtol=1e-15)
    assert np.all(np.isfinite(out["direction"])) and math.isfinite(out["final_normalized_margin"])
    assert out["final_margin"] is None and out["final_loss"] == 0.0  # ln Lo ≈ −min_i m_i ≈ −1e360
    assert out["overflow"] == ["final_margin", "final_log_loss"]


# ---------------------------------------------------------------- the chain as a property
@st.composite
def piecewise_paths(draw):
    """ln|β| on a few stored rows, linear in between, with exact ties, near ties (1e-15) and
    zero coordinates drawn on purpose."""
    d = draw(st.integers(1, 5))
    k = draw(st.integers(2, 8))
    base = draw(st.lists(st.lists(st.floats(-5, 5), min_size=d, max_size=d), min_size=k, max_size=k))
    rows = np.array(base)
    for _ in range(draw(st.integers(0, 3))):
        i, a, b = draw(st.integers(0, k - 1)), draw(st.integers(0, d - 1)), draw(st.integers(0, d - 1))
        rows[i, b] = rows[i, a] + draw(st.sampled_from([0.0, 1e-15, -1e-15, 1e-10]))
    if draw(st.booleans()):
        rows[:, draw(st.integers(0, d - 1))] = rows[:, 0]  # a coordinate tied throughout
    if draw(st.booleans()):
        rows[draw(st.integers(0, k - 1)), draw(st.integers(0, d - 1))] = -np.inf
    ts = np.cumsum([0.0] + draw(st.lists(st.floats(1e-3, 10.0), min_size=k - 1, max_size=k - 1)))
    return ts, rows


def _piecewise_traj(ts, rows):
    d = rows.shape[1]

    def dense_for(k):
        r0, r1, t0, t1 = rows[k], rows[k + 1], ts[k], ts[k + 1]

        def at(t):
            w = (t - t0) / (t1 - t0)
            with np.errstate(invalid="ignore"):
                return np.where(np.isfinite(r0) & np.isfinite(r1), (1 - w) * r0 + w * r1, r0 if w < 0.5 else r1)

        return at

    steps = [_Step(ts[k], ts[k + 1], dense_for(k), lambda t, y: (y, np.ones(d, dtype=int))) for k in range(len(ts) - 1)]
    return Trajectory(setting=None, time_kind="rescaled", method="test", digits=None, t=ts, log_abs_beta=rows,
                      sign_beta=np.ones(rows.shape, dtype=int), stopped_because="t_max", t_max=float(ts[-1]),
                      _steps=steps)


@settings(max_examples=150, deadline=None)
@given(piecewise_paths())
def test_index_chain_is_an_invariant(path):
    ts, rows = path
    traj = _piecewise_traj(ts, rows)
    ch = ob.index_chain(traj)
    cur, t_prev = ch.initial, ts[0]
    for w in ch.switches:
        assert w.from_ == cur and w.to != cur and ts[0] <= t_prev <= w.time <= ts[-1]
        cur, t_prev = w.to, w.time
    assert cur == ch.final == ob.final_index(traj)
    assert ch.final == ob.next_index(rows[-1], ch.final)  # the final index is a leader at the end
    assert ob.initial_index(traj) == ch.initial and ob.switches(traj) == list(ch.switches)
    assert ob.index_chain(traj) == ch  # deterministic

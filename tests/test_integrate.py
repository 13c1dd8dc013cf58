"""integrate.solve against THEORY.md's closed forms, the reduced ODE of C4, and the
termination guarantees (events, budgets, edge inputs)."""

import functools
import math

import mpmath
import numpy as np
import pytest
from scipy.integrate import quad
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck import observe as ob
from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting
from theorycheck.solvers.backends import MpBackend
from theorycheck.solvers.integrate import solve as _solve
from theorycheck.solvers.steppers import gbs_fixed
from theorycheck.solvers.trajectory import Budget
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import theory_forms as MF

REL = 1e-8
gd_u = C.lambdify((cf.z_j, cf.alpha_j, sy.tau), TE.gd_l2_solution())
linf_u = C.lambdify((cf.z_j, cf.alpha_j, sy.rho, sy.tau), TE.linf_l2_solution())
linf_zero = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_l2_zero_time())

#: solve with the first paper's reduction of the flow at hand (method="reduced"), as the API's has it
solve = functools.partial(_solve, reductions=REDUCTIONS)


def blowup_time(L, opt):
    expr = TE.linf_blowup_time(L) if opt == "sam-linf" else TE.gd_blowup_time(L)
    return C.lambdify((cf.z_j, cf.alpha_j, sy.rho), expr)


def log_u(traj, t, L):
    return traj.at(t)[0] / L


# ------------------------------------------------------------------ closed forms, L = 2
@pytest.mark.parametrize("digits", [None, 30])
def test_gd_l2_closed_form(digits):
    z = np.array([0.7, 1.9, 3.1, -0.4])
    alpha = np.array([0.3, 1.2, 0.05, 2.0])
    tr = solve(Setting.from_z(z, optimizer="gd", rho=0.0, alpha=alpha), t_max=40.0, digits=digits)
    assert tr.stopped_because == "t_max" and tr.time_kind == "rescaled"
    for t in (0.5, 3.0, 17.3, 40.0):
        expected = np.log(gd_u(z, alpha, t))
        np.testing.assert_allclose(log_u(tr, t, 2), expected, rtol=0, atol=REL)


@pytest.mark.parametrize("digits", [None, 30])
def test_linf_l2_closed_form_zero_times_and_sliding(digits):
    z = np.array([0.8, 1.7, 2.6, 1.1])
    rho = 0.9
    alpha = np.array([0.35, 1.4, 0.8, 0.9])  # α_4 = ρ: stationary
    tr = solve(Setting.from_z(z, optimizer="sam-linf", rho=rho, alpha=alpha), t_max=12.0, digits=digits)
    assert tr.stopped_because == "t_max"
    slides = {e.index: e.time for e in tr.events if e.kind == "slide"}
    assert set(slides) == {1, 3}
    for j in (1, 3):
        tj = linf_zero(z[j - 1], alpha[j - 1], rho)
        assert slides[j] == pytest.approx(tj, rel=REL)
    stationary = [e.index for e in tr.events if e.kind == "stationary"]
    assert stationary == [4]
    for t in (0.2, 1.0, 5.0, 12.0):
        la = log_u(tr, t, 2)
        assert la[1] == pytest.approx(math.log(linf_u(z[1], alpha[1], rho, t)), abs=REL)
        assert la[3] == pytest.approx(math.log(rho), abs=1e-14)  # α = ρ stays exactly
        for j in (0, 2):
            tj = linf_zero(z[j], alpha[j], rho)
            if t < tj:
                assert la[j] == pytest.approx(math.log(linf_u(z[j], alpha[j], rho, t)), abs=1e-7)
            else:  # slid to 0 and stays there (no chattering)
                assert la[j] == -math.inf
    assert ob.final_index(tr) == 2


@pytest.mark.parametrize("L,opt", [(3, "sam-linf"), (4, "sam-linf"), (5, "sam-linf"), (3, "gd"), (4, "gd")])
@pytest.mark.parametrize("digits", [None, 20])
def test_blowup_times(L, opt, digits):
    z = np.array([1.3, 0.6, 2.2])
    rho = 0.5 if opt == "sam-linf" else 0.0
    alpha = np.array([1.4, 1.9, 1.05])
    tr = solve(Setting.from_z(z, optimizer=opt, rho=rho, alpha=alpha, depth=L), t_max=50.0, digits=digits)
    assert tr.stopped_because == "blowup"
    times = blowup_time(L, opt)(z, alpha, rho)
    assert tr.blowup_time == pytest.approx(np.min(times), rel=REL)
    score = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_blowup_score(L))(z, alpha, rho)
    assert ob.final_index(tr) == int(np.argmax(score)) + 1


@pytest.mark.parametrize("L", [3, 5])
def test_odd_depth_linf_below_rho_rises_to_rho(L):
    """Odd L, α < ρ: du/dτ = z(u − ρ)^{L−1} ≥ 0, so u rises toward ρ and never reaches 0."""
    z, rho, a = np.array([1.0, 2.0]), 1.0, np.array([0.5, 0.2])
    tr = solve(Setting.from_z(z, optimizer="sam-linf", rho=rho, alpha=a, depth=L), t_max=200.0)
    assert tr.stopped_because == "t_max"
    assert not [e for e in tr.events if e.kind in ("slide", "cross")]
    u = np.exp(tr.log_abs_beta / L)
    assert np.all(np.diff(u, axis=0) >= -1e-15) and np.all(u < rho)
    # the time to rise from α_j to u_j(τ) is ∫ du / f(u) (quadrature of the compiled field)
    f = C.branch_field(L, "sam-linf")
    for j in range(2):
        sig = float(np.sign(f.argument(z[j], 1.0)))
        t_rise = quad(lambda v, j=j: 1.0 / f.field(z[j], v, sig, rho), a[j], u[-1][j], epsabs=0, epsrel=1e-12,
                      limit=200)[0]
        assert t_rise == pytest.approx(200.0, rel=1e-6)


@pytest.mark.parametrize("L", [4, 6])
def test_even_depth_linf_below_rho_slides(L):
    """Even L, α < ρ: u reaches 0 at τ = ∫_α^0 du / f(u) (quadrature of the compiled field)."""
    z, rho, a = 1.5, 1.0, 0.6
    f = C.branch_field(L, "sam-linf")
    sig = float(np.sign(f.argument(z, 1.0)))
    t_zero = quad(lambda u: 1.0 / f.field(z, u, sig, rho), a, 0.0, epsabs=0, epsrel=1e-13)[0]
    tr = solve(Setting.from_z([z], optimizer="sam-linf", rho=rho, alpha=a, depth=L), t_max=t_zero * 3)
    slides = [e.time for e in tr.events if e.kind == "slide"]
    assert slides and slides[0] == pytest.approx(t_zero, rel=REL)
    assert tr.stopped_because == "collapse" and tr.collapse_time == pytest.approx(t_zero, rel=REL)


# ------------------------------------------------------------------ C4: reduced vs full
@pytest.mark.parametrize("alpha", [0.4, 1.0, 3.0])
def test_reduced_equals_full_l2(alpha):
    z = np.array([0.5, 1.0, 1.6, 2.3])
    s = Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=alpha)
    full = solve(s, t_max=15.0)
    red = solve(s, t_max=15.0, method="reduced")
    assert full.stopped_because == red.stopped_because == "t_max"
    for t in np.linspace(0, 15, 31):
        np.testing.assert_allclose(full.at(t)[0], red.at(t)[0], rtol=0, atol=1e-9 * max(1, t * 5))
    sf, sr = ob.switches(full), ob.switches(red)
    assert [(w.from_, w.to) for w in sf] == [(w.from_, w.to) for w in sr]
    for a, b in zip(sf, sr):
        assert a.time == pytest.approx(b.time, rel=1e-9)


def test_c4_switch_level():
    """C4: a switch j → k of j† happens where N̄ = τ / I(τ) = ρ (z_j + z_k)."""
    z = np.array([0.5, 1.0, 1.6, 2.3])
    rho = 1.0
    s = Setting.from_z(z, optimizer="sam-l2", rho=rho, alpha=0.4)
    red = solve(s, t_max=15.0, method="reduced")
    sw = ob.switches(red)
    assert len(sw) >= 2
    theta = MF.reduced_l2()[1]
    for w in sw:
        # recover I(τ) from θ_1 (affine in I): θ_1 = ln α + z_1 τ − ρ z_1² I
        th1 = red.at(w.time)[0][0] / 2
        I = (theta(z[0], w.time, 0.0, 0.4, rho) - th1) / (rho * z[0] ** 2)
        level = C.lambdify((cf.z_j, cf.z_k, sy.rho), TE.l2_switch_level())(z[w.from_ - 1], z[w.to - 1], rho)
        assert w.time / I == pytest.approx(level, rel=1e-8)


@pytest.mark.parametrize("alpha", [0.05, pytest.param(1e-30, marks=pytest.mark.slow)])
def test_collapse_l2_float_and_mp_agree(alpha):
    """Collapse times: full and reduced systems, float64 and 30 digits (the arc-length
    clock near the collapse makes the 30-digit runs cheap)."""
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=alpha)
    a = solve(s, t_max=10.0)
    b = solve(s, t_max=10.0, method="reduced")
    c = solve(s, t_max=10.0, digits=30)
    d = solve(s, t_max=10.0, method="reduced", digits=30)
    for tr in (a, b, c, d):
        assert tr.stopped_because == "collapse" and tr.collapsed
        assert ob.final_index(tr) == 0 and not np.any(ob.final_direction(tr))
        assert not np.any(np.isnan(tr.log_abs_beta))
        assert ob.switches(tr)[-1].to == 0
    assert c.collapse_time == pytest.approx(d.collapse_time, rel=1e-15)
    assert a.collapse_time == pytest.approx(d.collapse_time, rel=1e-10)
    assert b.collapse_time == pytest.approx(d.collapse_time, rel=1e-10)


def test_arc_clock_round_trip(monkeypatch):
    """Force the switch to the arc-length clock on a mere dip of the state (α = 0.44 dips by
    a factor 0.65 and regrows): the path must not change."""
    from theorycheck.solvers.systems import BalancedL2System

    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.44)
    plain = solve(s, t_max=30.0)
    monkeypatch.setattr(BalancedL2System, "SHRINK", math.log(0.8))
    monkeypatch.setattr(BalancedL2System, "GROW", math.log(0.9))
    seen = []
    original = BalancedL2System.on_event

    def spy(self, ev, t, y):
        seen.append(ev.name)
        return original(self, ev, t, y)

    monkeypatch.setattr(BalancedL2System, "on_event", spy)
    for digits in (None, 20):
        seen.clear()
        tr = solve(s, t_max=30.0, digits=digits)
        assert seen == ["to_arc", "to_time"]
        assert tr.stopped_because == "t_max" and tr.t_end == 30.0
        for t in (1.0, 2.0, 3.0, 10.0, 30.0):
            np.testing.assert_allclose(tr.at(t)[0], plain.at(t)[0], rtol=0, atol=1e-8)
        assert [(w.from_, w.to) for w in ob.switches(tr)] == [(w.from_, w.to) for w in ob.switches(plain)]


# ------------------------------------------------------------------ mpmath, long horizons
def test_mpmath_follows_tau_1e4_without_overflow():
    z = np.array([1.0, 2.0, 3.0])
    gd = solve(Setting.from_z(z, optimizer="gd", rho=0.0, alpha=0.5), t_max=1e4, digits=30)
    assert gd.stopped_because == "t_max"
    gd_mp = C.lambdify((cf.z_j, cf.alpha_j, sy.tau), TE.gd_l2_solution(), "mpmath")
    with mpmath.workdps(30):
        expected = [2 * float(mpmath.log(gd_mp(zj, mpmath.mpf("0.5"), 10**4))) for zj in z]
    np.testing.assert_allclose(gd.log_abs_beta[-1], expected, rtol=1e-15)
    l2 = solve(Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=0.5), t_max=1e4, digits=30)
    red = solve(Setting.from_z(z, optimizer="sam-l2", rho=1.0, alpha=0.5), t_max=1e4, method="reduced",
                digits=30)
    assert l2.stopped_because == red.stopped_because == "t_max"
    assert np.all(np.isfinite(l2.log_abs_beta[-1])) and l2.log_abs_beta[-1][2] > 5e4
    np.testing.assert_allclose(l2.log_abs_beta[-1], red.log_abs_beta[-1], rtol=1e-15)


def test_mpmath_state_is_exact_beyond_float():
    """At 40 digits the log coordinate of GD L = 2 is exact to ~30 digits at τ = 1e4."""
    tr = solve(Setting.from_z([1.0, 2.0], optimizer="gd", rho=0.0, alpha=0.5), t_max=1e4, digits=40)
    step = tr._steps[-1]
    with mpmath.workdps(52):
        v = step.dense(mpmath.mpf(10) ** 4)
        exact = mpmath.log(mpmath.mpf("0.5")) + 2 * mpmath.mpf(10) ** 4
        assert abs(v[1] - exact) < mpmath.mpf(10) ** -30 * exact


# ------------------------------------------------------------------ edge inputs terminate
@pytest.mark.parametrize("kw", [
    dict(z=[1.0, 2.0, 2.0], optimizer="sam-l2", rho=1.0, alpha=0.6),  # tie in z
    dict(z=[1.0, 1.0, 1.0], optimizer="sam-linf", rho=1.0, alpha=[1.0, 1.0, 1.0]),  # α = ρ exactly
    dict(z=[1.0, 2.0, 3.0], optimizer="sam-linf", rho=1.0, alpha=0.4),  # everything slides: collapse
    dict(z=[1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=1e-30),  # immediate collapse
    dict(z=[1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=1e30),  # huge
    dict(z=[1.0, 2.0, 3.0], optimizer="gd", rho=0.0, alpha=1e200, depth=3),  # blow-up at 1e-200
    dict(z=[1.0, 2.0, 3.0], optimizer="sam-linf", rho=1.0, alpha=1e-300, depth=4),
    dict(z=[1.0, -2.0, 3.0], optimizer="sam-linf", rho=0.5, alpha=0.8, depth=3),  # z < 0, odd L: crossing
    dict(z=[1.0, -2.0, 3.0], optimizer="sam-linf", rho=0.5, alpha=0.8, depth=2),  # z < 0, even L: sliding
    dict(z=[1e-8, 1e8], optimizer="sam-l2", rho=1.0, alpha=1.0),
])
def test_edge_inputs_finish_quickly_without_nan(kw):
    z = kw.pop("z")
    s = Setting.from_z(z, **kw)
    # "quickly" in field evaluations, not seconds (a verdict must not depend on the host's load): these
    # inputs finish in at most ~5,000
    tr = solve(s, t_max=1e4, budget=Budget(max_seconds=math.inf, max_evaluations=20_000))
    assert tr.n_evaluations <= 20_000
    assert tr.successful, (tr.stopped_because, tr.message)
    assert not np.any(np.isnan(tr.log_abs_beta))
    d = ob.final_direction(tr)
    assert np.all(np.isfinite(d))
    summary = ob.summary(tr)
    assert all(np.isfinite(w["time"]) for w in summary["switches"])


def test_ties_in_z_give_no_switch_between_tied_coordinates():
    tr = solve(Setting.from_z([1.0, 2.0, 2.0], optimizer="sam-l2", rho=1.0, alpha=0.6), t_max=30.0)
    assert np.all(tr.log_abs_beta[:, 1] == tr.log_abs_beta[:, 2])
    assert all({w.from_, w.to} != {2, 3} for w in ob.switches(tr))
    assert ob.final_index(tr) == 2


def test_negative_z_linf_crossing_and_sliding():
    """z_j < 0 with ℓ∞: û = u + ρ, u decreases to 0 at τ = ln((α + ρ)/ρ)/|z| (L = 2) and
    slides; for L = 3 it crosses 0 (u^{L−1} keeps its sign) and approaches −ρ."""
    z, rho, a = -2.0, 0.5, 0.8
    tr2 = solve(Setting.from_z([1.0, z], optimizer="sam-linf", rho=rho, alpha=a, depth=2), t_max=5.0)
    slide = [e for e in tr2.events if e.kind == "slide" and e.index == 2]
    b = C.branch_field(2, "sam-linf")
    sig = float(np.sign(b.argument(z, 1.0)))
    t_zero = quad(lambda u: 1.0 / b.field(z, u, sig, rho), a, 0.0, epsrel=1e-13)[0]
    assert slide and slide[0].time == pytest.approx(t_zero, rel=REL)
    tr3 = solve(Setting.from_z([1.0, z], optimizer="sam-linf", rho=rho, alpha=a, depth=3), t_max=0.9)
    assert [e.kind for e in tr3.events if e.index == 2] == ["cross"]
    assert tr3.sign_beta[-1][1] == -1  # β_2 = u^3 < 0 after the crossing


# ------------------------------------------------------------------ unbalanced and real time
def test_unbalanced_gd_conserves_layer_difference():
    """GD: d/dτ (w1² − w2²) = 0 coordinatewise (balancedness is conserved)."""
    W = np.array([[1.0, 0.4, 2.0], [0.5, 1.5, 0.3]])
    s = Setting.from_z([1.0, 2.0, 0.5], optimizer="gd", rho=0.0, alpha=W, depth=2)
    tr = solve(s, t_max=3.0)
    assert tr.system.startswith("layers-full")
    step = tr._steps[-1]
    Wt = step.dense(3.0).reshape(2, 3)
    np.testing.assert_allclose(Wt[0] ** 2 - Wt[1] ** 2, W[0] ** 2 - W[1] ** 2, rtol=1e-9)


def test_unbalanced_linf_first_zero_time():
    """ℓ∞, L = 2, z > 0, both weights positive: w1 + w2 − 2ρ grows like e^{zτ} and
    w1 − w2 decays like e^{−zτ}, so the smaller weight hits 0 at a root of a quadratic in e^{zτ}."""
    z, rho, a, b = 3.0, 1.0, 0.9, 0.3
    s = Setting.from_z([z], optimizer="sam-linf", rho=rho, alpha=np.array([[a], [b]]), depth=2)
    tr = solve(s, t_max=2.0)
    # (a + b − 2ρ) x² + 2ρ x − (a − b) = 0 for w2 = 0, x = e^{zτ}
    A, B, Cc = (a + b - 2 * rho), 2 * rho, -(a - b)
    x = (-B - math.sqrt(B * B - 4 * A * Cc)) / (2 * A)
    first = min(e.time for e in tr.events if e.kind == "slide")
    assert first == pytest.approx(math.log(x) / z, rel=REL)
    assert tr.stopped_because in ("collapse", "t_max")


def test_real_time_one_example_follows_the_rescaled_path():
    """Rescaling time does not change the path: directions agree at equal ‖β‖."""
    s = Setting.from_z([0.5, 1.0, 1.5], optimizer="sam-l2", rho=0.3, alpha=1.0)
    res = solve(s, t_max=6.0)
    real = solve(s, t_max=1e4, time="real")
    assert res.time_kind == "rescaled" and real.time_kind == "real"
    for level in (0.8, 1.2, 1.6):
        da = _direction_at_log_norm(res, level)
        db = _direction_at_log_norm(real, level)
        assert np.linalg.norm(da - db) < 1e-8


def _direction_at_log_norm(tr, level):
    from scipy.optimize import brentq

    def g(t):
        la = tr.at(t)[0]
        m = la.max()
        return m + 0.5 * math.log(np.sum(np.exp(2 * (la - m)))) - level

    t = brentq(g, tr.t[0], tr.t[-1], xtol=1e-14)
    return ob.direction(*tr.at(t))


def test_several_examples_real_time_all_optimizers():
    X = np.array([[1.0, 2.0, 0.5], [2.0, -1.0, 1.0], [-1.0, -1.0, -3.0]])
    y = np.array([1.0, 1.0, -1.0])
    for opt in ("gd", "sam-l2", "sam-linf"):
        tr = solve(Setting(X, y, optimizer=opt, rho=0.3, alpha=0.5, depth=2), t_max=500.0)
        assert tr.time_kind == "real" and tr.stopped_because == "t_max"
        ml = ob.margins_and_loss(tr)
        assert ml["loss"][-1] < ml["loss"][0] and ml["min_margin"][-1] > 0


def test_real_time_linf_slides_on_a_gradient_surface():
    """Mixed-sign column, L = 1: G_2 = ∂Lo/∂β_2 reaches 0 and ℓ∞'s ε_2 = ρ sign(G_2) flips;
    Filippov's convex combination then keeps G_2 = 0 (no chattering, no drift)."""
    X = np.array([[1.0, 1.0], [0.2, -1.0]])
    y = np.array([1.0, 1.0])
    s = Setting(X, y, optimizer="sam-linf", rho=1.0, alpha=0.5, depth=1)
    tr = solve(s, t_max=200.0)
    assert tr.stopped_because == "t_max"
    slides = [e for e in tr.events if e.kind == "slide"]
    assert len(slides) == 1 and slides[0].index == 2 and slides[0].detail == "G-surface"
    risk = C.empirical_risk("logistic")  # ∂Lo/∂β, the solvers' one definition (tested against sympy)
    for t in (slides[0].time + 1.0, 50.0, 200.0):
        la, sg = tr.at(t)
        beta = sg * np.exp(la)
        G = risk.gradient(beta, s.Z)
        assert abs(G[1]) < 1e-12 * abs(G[0])


def test_real_time_linf_collapse_by_sliding():
    """ρ large, L = 2: both coordinates slide to 0 in real time; the run reports a collapse."""
    X = np.array([[1.0, 1.0], [0.2, -1.0]])
    y = np.array([1.0, 1.0])
    tr = solve(Setting(X, y, optimizer="sam-linf", rho=1.0, alpha=0.5, depth=2), t_max=200.0)
    assert tr.stopped_because == "collapse"
    assert [e.index for e in tr.events if e.kind == "slide"] == [2, 1]
    assert tr.collapse_time == max(e.time for e in tr.events if e.kind == "slide")
    assert ob.final_index(tr) == 0


# ------------------------------------------------------------------ budgets and input
def test_budgets_stop_and_say_so():
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.5)
    tr = solve(s, t_max=1e4, budget=Budget(max_steps=3))
    assert tr.stopped_because == "max_steps" and tr.n_steps == 3 and not tr.successful
    tr = solve(s, t_max=1e4, budget=Budget(max_evaluations=50))
    assert tr.stopped_because == "max_evaluations"
    tr = solve(s, t_max=1e4, digits=30, budget=Budget(max_seconds=0.2))
    assert tr.stopped_because == "max_seconds"


@pytest.mark.parametrize("kw", [dict(t_max=0), dict(t_max=-1), dict(t_max=math.inf), dict(t_max=1, digits=5),
                                dict(t_max=1, method="euler"), dict(t_max=1, method="scipy", digits=30),
                                dict(t_max=1, time="rescaled")])
def test_bad_input_raises_one_line_error(kw):
    s = Setting(np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([1.0, 1.0]))
    with pytest.raises(TheorycheckError) as e:
        solve(s, **kw)
    assert "\n" not in str(e.value)


def test_reduced_requires_its_setting():
    with pytest.raises(TheorycheckError):
        solve(Setting.from_z([1.0, 2.0], optimizer="gd", alpha=0.5), t_max=1.0, method="reduced")


# ------------------------------------------------------------------ the GBS order
@pytest.mark.parametrize("k", [2, 3, 4])
def test_gbs_fixed_step_convergence_order(k):
    """Fit the order of the fixed-step GBS (order 2k) against GD L = 3's exact solution
    u(τ) = (α^{−1} − zτ)^{−1} (C3's blow-up solution at ρ = 0)."""
    exact = C.lambdify((cf.z_j, cf.alpha_j, sy.rho, sy.tau), TE.linf_blowup_solution(3), "mpmath")
    field = C.balanced_field(3, "gd", "mpmath").field
    bk = MpBackend(60)
    with mpmath.workdps(60):
        z, a, T = mpmath.mpf("1.5"), mpmath.mpf("0.5"), mpmath.mpf("0.6")

        def rhs(t, y):
            return bk.array([field(z, y[0], 0, 0)])

        ref = exact(z, a, 0, T)
        ns = [4, 8, 16, 32]
        errs = [abs(gbs_fixed(rhs, mpmath.mpf(0), bk.array([a]), T, n, k)[0] - ref) for n in ns]
        order = np.polyfit(np.log([float(T / n) for n in ns]), [float(mpmath.log(e)) for e in errs], 1)[0]
    assert abs(order - 2 * k) < 0.35, (k, order)


# ------------------------------------------------------------------ property test (new inputs)
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(z=st.lists(st.floats(0.1, 3.0), min_size=1, max_size=4),
       ratios=st.lists(st.floats(0.05, 3.0), min_size=4, max_size=4),
       rho=st.floats(0.1, 2.0))
def test_linf_l2_closed_form_property(z, ratios, rho):
    """C2 on drawn inputs: u_j(τ) = ρ + (α_j − ρ) e^{z_j τ} before its zero time, exactly 0
    after it, and the zero times τ_j = ln(ρ/(ρ − α_j))/z_j, all to 1e-8."""
    z = np.array(z)
    alpha = rho * np.array(ratios[: len(z)])
    tr = solve(Setting.from_z(z, optimizer="sam-linf", rho=rho, alpha=alpha), t_max=3.0)
    assert tr.successful
    slides = {e.index: e.time for e in tr.events if e.kind == "slide"}
    zero = [linf_zero(z[j], alpha[j], rho) if alpha[j] < rho else math.inf for j in range(len(z))]
    for j in range(len(z)):
        if zero[j] < tr.t_end:
            assert slides[j + 1] == pytest.approx(zero[j], rel=REL)
        elif zero[j] > tr.t_end * (1 + 1e-9):
            assert j + 1 not in slides
    t = tr.t_end
    la = tr.at(t)[0] / 2
    for j in range(len(z)):
        if j + 1 in slides:
            assert la[j] == -math.inf
        elif alpha[j] != rho and zero[j] > t * (1 + 1e-6):
            assert la[j] == pytest.approx(math.log(abs(linf_u(z[j], alpha[j], rho, t))), abs=REL)


@pytest.mark.parametrize("digits", [None, 20])
def test_simultaneous_events_at_ties(digits):
    """Equal z_j and α_j < ρ: two coordinates reach 0 at the same instant; both slide."""
    tr = solve(Setting.from_z([1.0, 1.0, 1.0], optimizer="sam-linf", rho=1.0, alpha=[1.5, 0.5, 0.5]), t_max=3.0,
               digits=digits)
    slides = sorted(e.index for e in tr.events if e.kind == "slide")
    assert slides == [2, 3]
    la = tr.at(3.0)[0]
    assert la[1] == la[2] == -math.inf

"""One tie rule at every scale, budgets inside an evaluation, and the edge inputs that once
crashed or returned non-finite numbers (each pinned from a fuzzer's or a user's report)."""

from __future__ import annotations

import numpy as np
import pytest
from _hang import hang_guard

import theorycheck as tc
from theorycheck import observe as ob

#: tc.solve takes a finite seconds budget only: one that no run here comes near, so that the step
#: budget (max_steps) decides how a run ends, never the host's load
NO_SECONDS = 1e9


def _consistent(tr) -> dict:
    """The reported indices obey the tie rule on the reported final state."""
    d = tr.as_dict()
    la = np.array([-np.inf if v is None else v for v in d["log_abs_beta"]])
    if not tr.collapsed and np.max(la) > -np.inf:
        lead = np.flatnonzero(la >= np.max(la) + np.log1p(-ob.TIE_RTOL)) + 1
        assert d["final_index"] in lead
        assert np.argmax(d["direction"]) + 1 in lead or d["direction"][d["final_index"] - 1] == max(d["direction"])
    path = [d["initial_index"]] + [w["to"] for w in d["switches"]]
    assert path[-1] == d["final_index"]
    assert all(np.isfinite(d["direction"]))
    return d


def test_tie_rule_is_relative_in_beta_not_in_log_beta():
    # ln|β| ~ 1e124: a relative rule in ln|β| called |β| that differ by e^(1e115) tied
    tr = tc.solve(tc.Setting.from_z([6.628326949483471e+131, 6.6283269494834715e+131], optimizer="gd", rho=2.46,
                                    loss="exponential", alpha=0.9011818900511608),
                  t_max=42.439, max_steps=500, max_seconds=NO_SECONDS)
    d = _consistent(tr)
    assert d["direction"] == [0.0, 1.0] and d["final_index"] == 2


def test_dominant_index_tie_is_relative_in_beta():
    assert ob.dominant_index(np.array([1e200, 1e200 + 1e192]), tie=1e-9) == 2  # |β| differ by a factor e^(1e192)
    assert ob.dominant_index(np.array([-700.0, -700.0 + 1e-10]), tie=1e-9) == 1  # within 1e-9 relative
    assert ob.dominant_index(np.array([700.0, 700.0 + 1e-8]), tie=1e-9) == 2


def test_exchangeable_coordinates_stay_tied_bit_for_bit():
    # equal z_j and α_j: GD at depth 3 near its blow-up amplified DOP853's position-dependent
    # rounding (BLAS) to 1.7e-6 relative, and j† became 6 instead of the smallest tied index 1
    tr = tc.solve(tc.Setting.from_z([1.984825, 0.9305255859481241, 1.11, 1.316584, 0.751, 1.984825], depth=3,
                                    optimizer="gd", rho=1.784, alpha=1.784), t_max=7.853)
    d = _consistent(tr)
    assert d["initial_index"] == 1 and d["final_index"] == 1 and d["switches"] == []
    assert np.array_equal(tr.log_abs_beta[:, 0], tr.log_abs_beta[:, 5])
    assert d["direction"][0] == d["direction"][5]


def test_twin_coordinates():
    from theorycheck.solvers.trajectory import twin_coordinates

    Z = np.array([[1.0, 2.0, 1.0, -0.0], [3.0, 1.0, 3.0, 0.0]])
    W = np.ones((2, 4))
    assert twin_coordinates(Z, W).tolist() == [0, 1, 0, 3]
    W[1, 2] = 2.0
    assert twin_coordinates(Z, W) is None


def test_linf_limit_predictor_decides_near_ties_exactly():
    from theorycheck.proofs.minor_first.predict.thresholds import linf_limit_direction, linf_prediction

    z = np.array([0.619180255064998, 0.53, 1.1981011511495594, 1.1981011511495596])  # z₄ > z₃ by 1 ulp
    a = np.array([1.0, 3.2, 12.246869, 1.5])
    assert linf_limit_direction(z, a, 0.433, 2).tolist() == [0.0, 0.0, 0.0, 1.0]
    assert linf_prediction(z, a, 0.433, 2) == 4
    # an exact tie stays a tie: ∝ (α_j − ρ)² over the tied maximisers (L = 2)
    d = linf_limit_direction(np.array([2.0, 2.0, 1.0]), np.array([1.5, 2.5, 3.0]), 0.5, 2)
    assert d == pytest.approx(np.array([1.0, 4.0, 0.0]) / np.sqrt(17.0), rel=1e-15)
    # L = 3: scores z_j (α_j − ρ) equal in exact arithmetic (3·0.5 = 1.5·1), at every scale
    for s in (1e-300, 1.0, 1e300):
        d = linf_limit_direction(np.array([3.0, 1.5]) * s, np.array([1.0, 1.5]), 0.5, 3)
        assert d[0] > 0 and d[1] > 0
    d = linf_limit_direction(np.array([3.0, np.nextafter(1.5, 2)]), np.array([1.0, 1.5]), 0.5, 3)
    assert d.tolist() == [0.0, 1.0]


def test_budget_bounds_the_work_inside_one_mpmath_evaluation():
    # a GBS trial stage near ℓ∞'s blow-up (L = 8) reached v ~ 2^(huge); mpmath's exp of it
    # computes ln 2 to that many bits, inside one lambdified call: it did not end in 120 s
    s = tc.Setting.from_z([3.67, 1.4783295006834283, 3.67, 1.26, 2.0144135532957814, 0.38, 2.042, 1.077, 0.967,
                           0.184564], depth=8, optimizer="sam-linf", rho=1.0, loss="exponential",
                          alpha=np.array([1.000000000000001, 2.5, 0.47, 0.3, 0.7, 1.0, 2.995, 2.29, 1.0, 0.7]))
    with hang_guard(60):
        tr = tc.solve(s, t_max=36.218, digits=16, max_steps=5000, max_seconds=2.0)
    assert tr.stopped_because in ("max_seconds", "blowup", "non_finite")
    assert tr.t_end <= 0.0013  # ℓ∞'s first blow-up: τ* = 1/((L−2) z₇ (α₇ − ρ)^(L−2)) ≈ 0.001294


def test_mpmath_states_beyond_the_bounded_range_are_refused():
    import mpmath

    from theorycheck.solvers.guards import MP_MAX_MAG, FieldMeter

    f = FieldMeter(max_seconds=10, max_evaluations=10).wrap(lambda t, y: np.array([mpmath.exp(v) for v in y]))
    with mpmath.workdps(20):
        assert f(0, np.array([mpmath.mpf(3)], dtype=object))[0] == mpmath.exp(3)
        with hang_guard(5), pytest.raises(OverflowError, match="beyond"):
            f(0, np.array([mpmath.ldexp(mpmath.mpf(1), 2 ** (MP_MAX_MAG + 30))], dtype=object))


def test_l2_max_margin_with_many_features_uses_the_working_set_dual():
    # SLSQP on β allocates ~d² doubles: d = 200,000 asked for 2.47 TiB
    from theorycheck.solvers.maxmargin import MAX_DENSE_VARIABLES, max_margin

    d = 60_000
    assert d > MAX_DENSE_VARIABLES
    r = max_margin(np.ones((1, d)), 2)
    assert r.method == "dual-working-set+active-set" and r.kkt_residual < 1e-10
    assert r.margin == pytest.approx(np.sqrt(d), rel=1e-12)
    assert np.allclose(r.beta, 1.0 / d, rtol=1e-12, atol=0)
    # two examples, many features: the same answer as the primal on its columns' span
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2, 5000))
    X[:, 0] = np.abs(X[:, 0]) + 1.0
    r = max_margin(X, 2)
    G = X @ X.T  # both margins active when the dual's λ are > 0: β = Xᵀ G⁻¹ 1
    lam = np.linalg.solve(G, np.ones(2))
    if np.all(lam > 0):
        assert np.allclose(r.beta, X.T @ lam, rtol=1e-9, atol=1e-12 * np.max(np.abs(X.T @ lam)))


@pytest.mark.parametrize("Z", [[[-3.817287e+262, 1.3000000000000001e+262, 9.7e+261]],
                               [[-2.007e-199, -7.059999999999999e-200, -1.092e-199, 5.46e-200],
                                [-4.46e-200, 1.992e-199, 5.98e-200, 4.4e-201]]])
def test_l2_max_margin_at_extreme_scales_is_consistent(Z):
    from theorycheck.solvers.maxmargin import max_margin

    r = max_margin(np.array(Z), 2)
    b = np.asarray(r.beta, float)
    nrm = np.linalg.norm(np.asarray(r.beta) / np.max(np.abs(r.beta))) * np.max(np.abs(r.beta))
    assert nrm > 0 and np.isfinite(nrm) and np.all(np.isfinite(b))
    assert r.margin * nrm * 2.0 ** r.log2_scale == pytest.approx(1.0, rel=1e-12)
    assert min(r.margins) == 1.0


@pytest.mark.parametrize("alpha, regime", [(0.4082482904638631, 3), (0.40824829046386296, 1), (0.3, 1)])
def test_thresholds_with_all_z_equal_decide_the_fate_exactly(alpha, regime):
    # α_c = 1/√6 in closed form (no certified bracket): reading the bracket crashed for every α
    from theorycheck.proofs.minor_first.predict.regimes import float_thresholds

    d = float_thresholds(tc.Setting.from_z([2.0, 2.0, 2.0], rho=1.0, alpha=alpha), place=True).as_dict()
    assert d["regime"] == regime
    assert d["collapsed"] == (regime == 1) and "warning" not in d


def test_thresholds_at_the_exact_saddle_say_so():
    from theorycheck.proofs.minor_first.predict.regimes import float_thresholds
    from theorycheck.proofs.minor_first.predict.thresholds import initial_norm_sign

    d = float_thresholds(tc.Setting.from_z([1.0, 1.0], rho=1.0, alpha=0.5), place=True).as_dict()  # N0 = 0.5·√2·√2 = 1 = ρ z exactly
    assert d["regime"] is None and d["regime_name"].startswith("at the saddle") and not d["collapsed"]
    for s in (1e-300, 1.0, 1e300):  # homogeneous: the same at every scale of z and ρ
        assert initial_norm_sign([s, s], 0.5, 1.0, s) == 0
        assert initial_norm_sign([s, s], np.nextafter(0.5, 1), 1.0, s) == 1


def test_linf_branch_signs_at_zero_do_not_overflow():
    # ρ = 1e300, L = 7: the sign of z(−ρσ)^6 at u = 0 was computed as a float power (OverflowError)
    s = tc.Setting.from_z([0.793, 2.373, 1.93, 3.976, 0.5167989652174004, 1.1], depth=7, optimizer="sam-linf",
                          rho=1e300, alpha=0.068)
    tr = tc.solve(s, t_max=43.387, max_steps=20_000, max_seconds=NO_SECONDS)
    assert tr.stopped_because in ("step_size_underflow", "non_finite", "t_max")
    assert [e.kind for e in tr.events[:6]] == ["cross"] * 6  # odd L: both one-sided fields point up at u = 0


@pytest.mark.parametrize("L, method", [(2, "reduced"), (2, "scipy"), (3, "scipy")])
def test_l2_runs_are_the_same_at_every_scale_of_z(L, method):
    # z_j² (and C4's I ~ 1/z²) left float64 at |z| ~ 1e178: direction NaN, no status naming it.
    # Under z → c z, τ → τ/c the path is the same: the same switches (times × c) and direction
    import warnings

    z0 = np.array([0.649399, 2.26, 0.4693070013326255])
    T = 8.0 if L == 2 else 0.5
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for c in (1.0, 2.0**600, 2.0**-600, 1e300 / 2.26, 1e-300):
            s = tc.Setting.from_z(z0 * c, depth=L, optimizer="sam-l2", rho=1.1286352878712236, loss="exponential",
                                  alpha=0.6128489613140744)
            d = _consistent(tc.solve(s, t_max=T / c, method=method, max_steps=20_000, max_seconds=NO_SECONDS))
            out.append((d["stopped_because"], d["final_index"], [(w["from"], w["to"]) for w in d["switches"]],
                        [w["time"] * c for w in d["switches"]], d["direction"]))
    for o in out[1:]:
        assert o[:3] == out[0][:3]
        assert o[3] == pytest.approx(out[0][3], rel=1e-9)
        assert o[4] == pytest.approx(out[0][4], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("z, rho, alpha, t_max", [
    ([6.49399e+178, 2.2599999999999998e+179, 4.693070013326255e+178], 1.1286352878712236, 0.6128489613140744, 42.426),
    ([2.23e+175, 0.0, 3.514849021768376e+175], 2.78, 2.78, 0.779),
    ([8.532405679962304e+233, 2.42e+234, 8.090558559411214e+233], 0.0, 0.895002, 22.478)])
def test_reduced_l2_directions_are_finite_at_large_z(z, rho, alpha, t_max):
    s = tc.Setting.from_z(z, optimizer="sam-l2", rho=rho, loss="exponential", alpha=alpha)
    d = _consistent(tc.solve(s, t_max=t_max, method="reduced", max_steps=500, max_seconds=NO_SECONDS))
    assert d["stopped_because"] == "t_max" and d["t_end"] == t_max
    assert d["final_index"] == int(np.argmax(z)) + 1  # the major coordinate takes over well before t_max


def test_l2_forms_are_homogeneous_in_z():
    """The identities the ℓ2 systems use to evaluate on z/2^k (systems.base.z_scale_exponent)."""
    import sympy as sp

    from theorycheck.symbolic import closed_forms as cf
    from theorycheck.symbolic import model as sy
    from theorycheck.symbolic import theory_exprs as TE

    c = sp.Symbol("c", positive=True)
    for L in (2, 3, 4):
        f = cf.balanced_log_field_factored(L, "sam-l2")
        g = c * f.subs({cf.z_j: cf.z_j / c, cf.lnN: cf.lnN - sp.log(c)}, simultaneous=True)
        assert sp.simplify(sp.expand_log(g - f, force=True)) == 0
        h = cf.balanced_log_norm_summand(L)
        assert sp.simplify(sp.expand_log(h.subs(cf.z_j, cf.z_j / c) + 2 * sp.log(c) - h, force=True)) == 0
    e = TE.l2_reduced_log_summand()
    e2 = e.subs({cf.z_j: cf.z_j / c, sy.tau: sy.tau * c, cf.I: cf.I * c**2}, simultaneous=True) + 2 * sp.log(c)
    assert sp.simplify(sp.expand_log(e2 - e, force=True)) == 0
    th = TE.l2_theta()
    assert sp.simplify(th.subs({cf.z_j: cf.z_j / c, sy.tau: sy.tau * c, cf.I: cf.I * c**2}, simultaneous=True) - th) == 0


def _nothing_after_the_end(tr):
    d = tr.as_dict()
    times = [e["time"] for e in d["events"]] + [w["time"] for w in d["switches"]]
    times += [v for v in (d["collapse_time"], d["blowup_time"]) if v is not None]
    assert all(t <= d["t_end"] for t in times), (times, d["t_end"])
    assert tr.t[-1] == d["t_end"] and tr.at(d["t_end"])[0].shape == (tr.d,)
    return d


def test_singular_times_end_the_run():
    # the collapse time is refined past its threshold event; it was reported after t_end
    X = np.array([[-0.028, -0.359], [0.163, 0.093], [0.178, 1.167], [-0.289, -0.587], [-1.183, 0.436],
                  [0.227, 1.051]])
    y = np.array([-1, -1, 1, -1, 1, 1])
    s = tc.Setting(X, y, optimizer="sam-l2", rho=3.108, loss="exponential", alpha=1.0484610160922816)
    d = _nothing_after_the_end(tc.solve(s, t_max=30.443))
    assert d["stopped_because"] == "collapse" and d["collapse_time"] == d["t_end"] and d["final_index"] == 0
    # a blow-up (L = 8): its refined time is the end as well
    s = tc.Setting.from_z([3.000000000000001e+57, 3e+57, 2e+57], depth=8, optimizer="sam-l2", rho=1.408081,
                          alpha=1.02789913)
    d = _nothing_after_the_end(tc.solve(s, t_max=10.407, method="scipy"))
    assert d["stopped_because"] == "blowup" and d["blowup_time"] == d["t_end"]
    _consistent(tc.solve(s, t_max=10.407, method="scipy"))


def test_thresholds_default_horizon_never_overflows():
    import warnings

    from theorycheck.proofs.minor_first.predict.regimes import MAX_DEFAULT_HORIZON, default_horizon, float_thresholds

    assert default_horizon(np.array([4.0, 2.0])) == 20.0
    assert default_horizon(np.array([4.0, 1e-310])) == MAX_DEFAULT_HORIZON  # 40/1e-310 overflowed to inf
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        d = float_thresholds(tc.Setting.from_z([4, 1e-310, 3, 1], rho=2.622, alpha=[0.5, 3, 1.5, 2.18], optimizer="sam-linf",
                                      depth=3)).as_dict()
    assert d["predicted_index"] == 2 and d["blowup_times"][1] is None  # τ₂* ≈ 2.6e310: beyond float64
    assert d["blowup_times"][0] is None and d["final_index"] == 2


@pytest.mark.parametrize("kw", [{"rtol": float("inf")}, {"rtol": float("nan")}, {"rtol": 0.0}, {"atol": float("inf")},
                                {"atol": -1.0}, {"max_steps": 0}])
def test_sweep_run_options_are_checked(kw):
    from theorycheck.errors import TheorycheckError
    from theorycheck.sweep.run import RunOptions

    with pytest.raises(TheorycheckError, match=next(iter(kw))):
        RunOptions(**kw)


def test_cli_refuses_an_infinite_rtol(capsys):
    from theorycheck.cli.main import main

    rc = main(["heatmap", "--z", "6.127,2.18", "--depth", "8", "--optimizer", "sam-linf", "--rho", "1.155",
               "--alphas", "0.0347:0.518:5", "--log", "--t-max", "2", "--nt", "20", "--log-time", "--rtol", "inf",
               "--backend", "serial", "--json"])
    err = capsys.readouterr().err
    assert rc != 0 and "rtol = inf" in err and "Traceback" not in err and "internal error" not in err


def test_batched_index_follows_the_tie_rule():
    from theorycheck.batched.ops import NumpyOps
    from theorycheck.batched.systems import _leader

    th = np.array([[1.0, 1.0 + 1e-12, 0.5], [1.0, 1.0 + 1e-8, 0.5], [-np.inf] * 3, [-np.inf, 3e200, 3e200 + 1e185]])
    assert _leader(NumpyOps(), th, 2).tolist() == [1, 2, 0, 3]


def test_batched_linf_far_below_rho_slides_from_the_start():
    # α = 1e-300 ≪ ρ: the clock dτ/ds ~ c/|θ'| underflowed and τ never advanced (200,000 steps)
    from theorycheck.batched import engine, systems
    from theorycheck.status import COLLAPSE, DONE

    sy = systems.BalancedLog(np.array([1.5, 1.5, 3.12955155]), np.array([1e-300, 1.0]), np.array([1.0, 1.0]), L=2,
                             optimizer="sam-linf")
    with hang_guard(60):
        r = engine.integrate(sy, np.geomspace(0.5, 10, 4), max_steps=3000)
    assert r.status.tolist() == [COLLAPSE, DONE] and int(r.steps[0]) < 100
    assert r.events["collapse"][0] == 0.0 and r.obs["jdag"][0].tolist() == [0, 0, 0, 0]
    assert r.obs["jdag"][1].tolist() == [1, 1, 1, 1]  # α = ρ: every coordinate stationary and tied

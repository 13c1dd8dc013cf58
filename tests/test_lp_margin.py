"""Pack lp-margin: the symbolic steps, the KKT residual, the solvers, the normalised flow and the
claims' verdicts (including the counterexample to the statement as given, for L = 2)."""

import itertools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from theorycheck.proofs.lp_margin import claims as LMC
from theorycheck.proofs.lp_margin import theorems as LMT

from theorycheck.claims.trend import tends_to_zero
from theorycheck.errors import TheorycheckError
from theorycheck.solvers.lp_flow import DEFAULT_BUDGET as LP_BUDGET
from theorycheck.solvers.lp_flow import flow_margin, log_loss, log_neg_dloss
from theorycheck.solvers.lp_limits import (
    aitken_limit,
    kkt_residual,
    lp_vertex_solution,
    orthant_l1_max_margin,
    power_limit,
)
from theorycheck.symbolic.model import loss_derivative, loss_expr, s

Z2 = np.array([[1.0, 0.2, 0.5], [0.3, 1.0, -0.4]])
NEG = np.array([[-1.0, 0.5]])


@pytest.mark.parametrize("th", LMT.theorems(), ids=lambda t: t.key)
def test_theorems_verified(th):
    assert th.run().status == "verified"


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_log_losses_match_the_symbolic_loss(loss):
    m = np.array([-30.0, -2.0, 0.0, 0.7, 5.0, 29.0, 31.0, 200.0])
    f, df = sp.lambdify(s, loss_expr(loss), "mpmath"), sp.lambdify(s, loss_derivative(loss), "mpmath")
    import mpmath

    with mpmath.workdps(150):  # log(1 + e^{−200}) needs ~90 digits
        ref = np.array([float(mpmath.log(f(mpmath.mpf(v)))) for v in m])
        dref = np.array([float(mpmath.log(-df(mpmath.mpf(v)))) for v in m])
    assert np.allclose(log_loss(m, loss), ref, rtol=1e-12, atol=1e-13)
    assert np.allclose(log_neg_dloss(m, loss), dref, rtol=1e-12, atol=1e-13)


def test_kkt_residual_vanishes_at_the_lp_solution_and_not_elsewhere():
    o = orthant_l1_max_margin(Z2)
    assert kkt_residual(np.array(o["beta"]), Z2, 2)["residual"] < 1e-12
    assert kkt_residual(np.array([1.0, 1.0, 1.0]), Z2, 2)["residual"] > 1e-2
    # the orthant optimum of z = (−1, ½) is KKT in the orthant only
    assert kkt_residual(np.array([0.0, 2.0]), NEG, 2, orthant=True)["residual"] < 1e-12
    assert kkt_residual(np.array([0.0, 2.0]), NEG, 2)["residual"] == pytest.approx(0.5)
    assert kkt_residual(np.array([-1.0, 0.0]), NEG, 2)["residual"] < 1e-12
    # L ≥ 3: nothing is asked at zero coordinates
    assert kkt_residual(np.array([0.0, 2.0]), NEG, 3)["residual"] < 1e-12


def test_kkt_residual_is_invariant_to_scale():
    b = np.array([0.3, 0.9, 0.01])
    r1, r2 = kkt_residual(b, Z2, 3)["residual"], kkt_residual(1e6 * b, Z2, 3)["residual"]
    assert r1 == pytest.approx(r2, rel=1e-9)


@pytest.mark.parametrize("L", [2, 3, 4])
def test_vertex_solver_is_the_global_minimum(L):
    """Against a dense search over the feasible set (random β ≥ 0 scaled to margin 1)."""
    rng = np.random.default_rng(L)
    Z = np.abs(rng.standard_normal((3, 4))) * np.array([1, -1, 1, 1]) + 0.1
    v = lp_vertex_solution(Z, L)
    B = rng.uniform(0, 1, size=(20000, 4)) ** 3
    m = B @ Z.T
    ok = m.min(axis=1) > 0
    B = B[ok] / m[ok].min(axis=1, keepdims=True)
    assert v["objective"] <= np.min(np.sum(B ** (2 / L), axis=1)) + 1e-12
    assert np.min(Z @ np.array(v["beta"])) == pytest.approx(1.0)


def test_unreachable_separation_is_refused():
    with pytest.raises(TheorycheckError, match="no β ≥ 0 separates"):
        orthant_l1_max_margin(np.array([[-1.0, -1.0]]))
    with pytest.raises(TheorycheckError, match="margin loss"):
        flow_margin(Z2, loss="squared")


def test_aitken_limit():
    v = [0.5 ** k for k in range(2, 9)]
    a, se = aitken_limit(v)
    assert abs(a) < 1e-12 and se < 1e-12
    a, se = aitken_limit([0.3 + 0.7 * 0.6 ** k for k in range(8)])
    assert a == pytest.approx(0.3, abs=1e-12)
    assert aitken_limit([0.2] * 5) == (0.2, 0.0)


def test_power_limit_recovers_the_rate_model():
    x = np.exp(np.arange(3.0, 17.0, 2.0))  # log t at checkpoints
    for a, c, p in ((0.0, 2.0, 0.5), (0.02, 1.0, 1.3)):
        r = power_limit(x, a + c * x ** -p)
        assert r["a"] == pytest.approx(a, abs=1e-4) and r["a_low"] <= a  # p on a grid of step 4%
    r = power_limit(x, [0.5] * 7)
    assert r["a"] == 0.5 and r["se"] == 0.0 and r["a_low"] == 0.5
    assert power_limit(x[:3], [0.3, 0.2, 0.1])["a_low"] == -np.inf  # too few points: no model


#: the relative ℓ1 gaps of the flow for the input that made LM.l1 "fail" (seed 640; 8 checkpoints
#: s = 2, 4, …, 16): still falling ×0.6 per checkpoint, Aitken 1.52e-3 ± 1.6e-4
SEED640 = {"seed": 640, "n": 2, "d": 5, "depth": 2, "loss": "exponential",
           "Z": [[0.84, 2.02, 2.5, -0.51, -0.68], [0.51, 1.53, 2.34, -0.51, 2.25]]}


def test_trend_fails_only_on_a_stalled_positive_limit():
    log_t = list(np.exp(np.arange(3.0, 17.0, 2.0)))
    assert tends_to_zero(log_t, [0.503, 0.50001, 0.5, 0.5, 0.5, 0.5, 0.5], {}).ok is False  # NEGATIVE's KKT residual
    falling = [0.128, 0.0593, 0.0301, 0.0160, 0.00900, 0.00541, 0.00354]
    out = tends_to_zero(log_t, falling, {})
    assert out.ok is None and out.detail["undecided_because"] == "the values are still decreasing"
    assert out.detail["intercept"] > 3 * out.detail["intercept_se"] + 1e-3  # Aitken alone would say "fails"
    bouncing = [0.0262, 0.00182, 0.0024, 0.00356, 0.00451, 0.00422]  # error bar ≈ the value: not a 0 limit
    assert tends_to_zero(log_t[:6], bouncing, {}).ok is None
    assert tends_to_zero(log_t, [0.5 ** k for k in range(7)], {}).ok is True


def test_slow_l1_convergence_is_not_a_failure():
    """seed 640: undecided at s = 16, followed to s = 40 the gap keeps falling and extrapolates to 0."""
    from theorycheck.solvers.lp_flow import DEFAULT_BUDGET as LP_BUDGET
    from theorycheck.solvers.lp_flow import flow_margin

    Z = np.array(SEED640["Z"])
    out = {c.key: c for c in LMC.claims()}["LM.l1"].check(SEED640)
    assert out.ok is True and out.detail["checkpoints"] == 20 and out.deviation < 1e-4
    assert out.detail["values"][-1] < out.detail["values"][-2] < out.detail["values"][7]
    f = flow_margin(Z, depth=2, budget=LP_BUDGET.but(max_seconds=math.inf))  # its evaluation budget decides, never the host's load
    assert len(f.directions) == 8 and f.status == "reached"


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_flow_direction_reaches_the_kkt_point(loss):
    f = flow_margin(Z2, depth=2, loss=loss, budget=LP_BUDGET.but(max_seconds=math.inf))
    assert f.status == "reached" and len(f.directions) == 8
    assert np.all(np.diff(f.log_t) > 0) and f.log_t[-1] > 1e6
    res = [kkt_residual(d, Z2, 2)["residual"] for d in f.directions]
    assert res[-1] < 1e-6 and res[-1] < res[-3] < res[-5]
    o = orthant_l1_max_margin(Z2)
    nb = kkt_residual(f.directions[-1], Z2, 2)["normalised_beta"]
    assert np.sum(nb) == pytest.approx(o["l1_norm"], rel=1e-6)


def test_flow_from_positive_start_cannot_reach_negative_coordinates():
    f = flow_margin(NEG, depth=2, budget=LP_BUDGET.but(max_seconds=math.inf))
    assert f.directions[-1] == pytest.approx([0.0, 1.0], abs=1e-12)
    assert kkt_residual(f.directions[-1], NEG, 2)["residual"] == pytest.approx(0.5, abs=1e-9)


def test_claim_verdicts():
    from theorycheck.claims.runner import run_claim

    c = {x.key: x for x in LMC.claims()}
    v = run_claim(c["LM.kkt"], examples=2)
    assert v.status == "fails" and v.counterexample["Z"] == [[-1.0, 0.5]]
    assert v.refined.key == "LM.kkt.orthant" and v.refined.status in ("holds", "inconclusive")
    assert v.refined.status == "holds" or v.refined.inconclusive < v.refined.tried
    v = run_claim(c["LM.l1"], examples=3)
    assert v.status == "holds" and v.worst_deviation < 1e-3


def test_predict_exhaustive_budget():
    Z = np.abs(np.random.default_rng(0).standard_normal((6, 6))) + 0.1
    with pytest.raises(TheorycheckError, match="candidate vertices"):
        lp_vertex_solution(Z, 3, max_vertices=10)
    assert len(list(itertools.combinations(range(12), 6))) > 10


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("L", [2, 3])
def test_normalised_field_and_jacobian_against_sympy(loss, L):
    """lp_flow's loss-normalised field du/dτ = −w^{L−2}·(∂Lo/∂β)/Lo (u = log w, β = e^{Lu},
    Lo = Σ_i ℓ(m_i)) and its hand-written Jacobian against sympy's, with ℓ from
    symbolic.model; the Jacobian is exact for the exponential loss only (documented)."""
    from theorycheck.solvers.lp_flow import normalised_field, normalised_jacobian
    from theorycheck.symbolic import model as sy

    Z = np.array([[1.0, 0.4], [0.3, 1.2], [0.8, 0.7]])
    us = sp.symbols("u0 u1", real=True)
    beta = [sp.exp(L * u) for u in us]
    ms = [sum(Z[i, j] * beta[j] for j in range(2)) for i in range(3)]
    Lo = sum(sy.loss_expr(loss).subs(sy.s, m) for m in ms)
    # ∂Lo/∂β_j through the margins: Σ_i ℓ'(m_i) Z_ij
    field = [-sp.exp((L - 2) * us[j]) * sum(sy.loss_derivative(loss).subs(sy.s, m) * Z[i, j]
                                            for i, m in enumerate(ms)) / Lo for j in range(2)]
    jac = sp.Matrix(field).jacobian(us)
    f_ref = sp.lambdify(us, field, "mpmath")
    j_ref = sp.lambdify(us, jac, "mpmath")
    for u in ([-0.3, 0.1], [0.2, 0.25], [0.5, -0.4]):
        u = np.array(u)
        with mpmath.workdps(40):
            want = [float(v) for v in f_ref(*map(mpmath.mpf, u))]
            wj = np.array(j_ref(*map(mpmath.mpf, u)).tolist(), dtype=float)
        assert np.allclose(normalised_field(u, Z, L, loss), want, rtol=1e-12, atol=1e-14)
        if loss == "exponential":
            assert np.allclose(normalised_jacobian(u, Z, L, loss), wj, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("k", [-500, 500])
def test_flow_at_extreme_data_is_the_unit_flow_mapped_back(loss, k):
    """The loss-normalised flow on 2^(kL)·Z from α is the flow on Z from α·2^k with β scaled by
    2^(−kL) and t by 2^(−2k) (the margins are the same): at Z·2^1000 ≈ 1e301 from α = 2^−500,
    with the checkpoints moved by −1000 ln 2, the directions of the flow on Z from α = 1, log β
    and log t shifted by −1000 ln 2 (was: the first BDF step overflowed u and the Jacobian, a
    ValueError traceback from |Z| ≈ 1e100). The start ln α + k ln 2 and the levels carry a
    rounding of ~1e-13, so the two runs agree to the integrator's tolerance, not bit for bit."""
    Z = np.array([[1.0, 0.3], [0.2, 1.0], [0.7, 0.6]])
    cps = [2.0, 4.0, 6.0, 8.0]
    shift = 2 * k * math.log(2.0)
    ref = flow_margin(Z, depth=2, loss=loss, checkpoints=cps, budget=LP_BUDGET.but(max_seconds=math.inf))
    got = flow_margin(np.ldexp(Z, 2 * k), depth=2, loss=loss, alpha=math.ldexp(1.0, -k),
                      checkpoints=[c - shift for c in cps], tau_max=math.ldexp(1e7, -2 * k), budget=LP_BUDGET.but(max_seconds=math.inf))
    assert got.status == ref.status == "reached" and len(got.directions) == len(cps)
    np.testing.assert_allclose(np.array(got.directions), np.array(ref.directions), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got.log_beta, np.array(ref.log_beta) - shift, rtol=1e-12)
    np.testing.assert_allclose(got.log_t, np.array(ref.log_t) - shift, rtol=1e-6)


@pytest.mark.parametrize("scale", [1e100, 1e300, 1e-300])
def test_flow_at_extreme_data_from_alpha_one_ends_with_a_named_status(scale):
    Z = np.array([[1.0, 0.3], [0.2, 1.0], [0.7, 0.6]]) * scale
    f = flow_margin(Z, depth=2, budget=LP_BUDGET.but(max_evaluations=3000, max_seconds=math.inf))
    assert f.status in ("reached", "max_evaluations", "horizon")
    assert all(np.all(np.isfinite(d)) for d in f.directions)


def test_weights_beyond_the_float64_margins():
    """w_i = −ℓ'(m_i)/Σℓ(m_j) at margins m = v·e^top that leave float64: the softmax of −m when
    every margin is above the range (and for the exponential loss), ℓ ≈ |m| below it."""
    from theorycheck.solvers.lp_flow import _margin_weights

    v = np.array([1.0, 1.0, 2.0])
    for loss in ("exponential", "logistic"):
        w, lnL = _margin_weights(v, 800.0, loss)  # m ≈ e^800: every ℓ(m) underflows
        np.testing.assert_allclose(w, [0.5, 0.5, 0.0], atol=0)
        assert lnL == -math.inf
    # two margins below −1.8e308: −ℓ' = 1 each, Lo ≈ 4e^800 (so w = e^−801.4 underflows to 0)
    w, lnL = _margin_weights(np.array([-1.0, -3.0, 2.0]), 800.0, "logistic")
    assert lnL == pytest.approx(math.log(4.0) + 800.0, rel=1e-15)
    np.testing.assert_array_equal(w, [0.0, 0.0, 0.0])
    w, lnL = _margin_weights(np.array([-1.0, -3.0, 2.0]), 700.0, "logistic")  # |m| ~ 1e304: finite margins
    np.testing.assert_allclose(w, [0.25 * math.exp(-700.0)] * 2 + [0.0], rtol=1e-12)
    w, _ = _margin_weights(np.array([-1.0, -3.0, 2.0]), 800.0, "exponential")
    np.testing.assert_array_equal(w, [0.0, 1.0, 0.0])
    # finite margins: the plain path, the compiled symbolic log losses
    w, lnL = _margin_weights(np.array([0.5, 1.0]), 0.0, "logistic")
    l = np.log1p(np.exp(-np.array([0.5, 1.0])))
    np.testing.assert_allclose(w, (1 / (1 + np.exp([0.5, 1.0]))) / l.sum(), rtol=1e-14)
    assert lnL == pytest.approx(math.log(l.sum()), rel=1e-14)


def test_a_segment_stepped_by_the_fate_loop_is_solve_ivps_segment():
    """The LP-margin flow steps BDF through the engine's fate loop and locates the checkpoint as solve_ivp locates
    a terminal event: the same steps, the same crossing, the same dense output, bit for bit."""
    from scipy.integrate import solve_ivp

    from theorycheck.solvers import lp_flow as LF
    from theorycheck.symbolic import regression_forms as RF

    Z, L, loss = np.array([[1.0, 0.3], [0.2, 1.0], [0.7, 0.6]]), 2, "exponential"
    f = RF.balanced_product_log_field(L)

    def rhs(t, u):
        return LF.normalised_field(u, Z, L, loss, f)

    u0, level = np.zeros(2), 3.0
    got = LF._to_checkpoint(rhs, Z, L, loss, u0, 0.0, 1e7, level)

    def ev(t, s):
        return L * s.max() - level

    ev.terminal, ev.direction = True, 1
    ref = solve_ivp(rhs, (0.0, 1e7), u0, method="BDF", jac=lambda t, u: LF.normalised_jacobian(u, Z, L, loss),
                    rtol=1e-9, atol=1e-12, events=ev, dense_output=True)
    assert got.status == ref.status == 1 and got.success
    assert np.array_equal(got.t, ref.t) and np.array_equal(got.y, ref.y)
    for x in np.linspace(0.0, ref.t[-1], 7):
        assert np.array_equal(got.sol(x), ref.sol(x))
    assert L * got.y[:, -1].max() == pytest.approx(level, rel=1e-12)

"""Pack kernel-rich: the symbolic derivations, the interpolators with their certificates, the
signed flow against argmin Q_α (depths 2, 3; α from 1e-2 to 10), and the claims' verdicts."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import quad
from theorycheck.proofs.kernel_rich import claims as KRC
from theorycheck.proofs.kernel_rich import theorems as KRT

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import GD
from theorycheck.solvers.interpolate import Q_value, argmin_Q, h_inverse, min_l1, min_l2, q_D
from theorycheck.solvers.pm_flow import DEFAULT_BUDGET as PM_BUDGET
from theorycheck.solvers.pm_flow import flow_pm
from theorycheck.status import Status
from theorycheck.symbolic import regression as R
from theorycheck.symbolic import regression_forms as RF


def problem(seed=1, n=3, d=6):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)), 2)
    b = np.zeros(d)
    b[[0, 3]] = [1.5, -1.0]
    return X, X @ b


@pytest.mark.parametrize("key", ["KR1", "KR2", "KR3", "KR4"])
def test_theorems_verified(key):
    (th,) = [t for t in KRT.theorems() if t.key == key]
    res = th.run()
    assert res.status == "verified", [(s.statement, r.detail) for s, r in res.steps if r.status != "verified"]


def test_symbolic_metric_and_log_field():
    assert sp.simplify(R.pm_metric(2) - 4 * (R.wp**2 + R.wm**2)) == 0
    assert sp.simplify(R.pm_metric(3) - 9 * (R.wp**4 + R.wm**4)) == 0
    fp, fm = R.pm_log_field(3)
    assert sp.simplify(fp + 3 * R.g * sp.exp(R.up)) == 0 and sp.simplify(fm - 3 * R.g * sp.exp(R.um)) == 0


@pytest.mark.parametrize("D", [3, 4, 5])
def test_q_D_equals_the_integral_of_the_inverse(D):
    """q_D(z) = ∫₀^z h_D⁻¹ computed independently by quadrature of the bisected inverse."""
    for z in (0.3, -1.7, 12.0):
        val, err = q_D(z, D)
        ref, qerr = quad(lambda s: h_inverse(s, D)[0][0], 0.0, z, epsabs=1e-13, epsrel=1e-12)
        assert abs(val[0] - ref) <= 1e-10 * max(1.0, abs(ref)) and err[0] < 1e-12


def test_q2_closed_form_and_inverse_error_bars():
    val, _ = q_D(np.array([0.0, 1.0, -3.0]), 2)
    assert val[0] == 0.0 and val[1] == pytest.approx(2 - np.sqrt(5) + np.arcsinh(0.5), rel=1e-15)
    th, dth = h_inverse(np.array([-1e6, -2.0, 0.0, 5.0, 1e9]), 3)
    h = RF.pm_forms(3)["h"]
    assert np.all(np.abs(th) < 1) and np.all(dth < 1e-15)
    assert h(th[3]) == pytest.approx(5.0, rel=1e-12)


def test_interpolators_certified():
    X, y = problem()
    l1, l2 = min_l1(X, y), min_l2(X, y)
    assert l1.kkt_residual < 1e-9 and l1.unique is True and l1.beta == pytest.approx([1.5, 0, 0, -1, 0, 0], abs=1e-9)
    assert l2.kkt_residual < 1e-12 and np.allclose(l2.beta, np.linalg.pinv(X) @ y)
    tie = min_l1(np.array([[1.0, 1.0]]), np.array([1.0]))
    assert tie.unique is False and tie.objective == pytest.approx(1.0)


def test_argmin_Q_is_optimal_on_the_affine_set():
    """Q_α at the solution is below Q_α at feasible perturbations (null-space directions)."""
    X, y = problem()
    N = np.linalg.svd(X)[2][X.shape[0]:].T
    rng = np.random.default_rng(0)
    for D, a in ((2, 0.1), (3, 0.3), (3, 3.0)):
        q = argmin_Q(X, y, depth=D, alpha=a)
        best, err = Q_value(q.beta, D, a)
        assert q.status == "converged" and q.constraint_residual < 1e-10
        for _ in range(20):
            other, oerr = Q_value(q.beta + N @ rng.normal(scale=1e-3, size=N.shape[1]), D, a)
            assert other >= best - err - oerr


@pytest.mark.parametrize("D", [2, 3])
@pytest.mark.parametrize("alpha", [1e-2, 1e-1, 1.0, 10.0])
def test_flow_agrees_with_predict_within_its_error_bar(D, alpha):
    X, y = problem()
    fl = flow_pm(X, y, optimizer=GD, depth=D, alpha=alpha, budget=PM_BUDGET.but(max_seconds=math.inf))  # its evaluation budget decides
    pr = argmin_Q(X, y, depth=D, alpha=alpha)
    assert fl.converged and fl.residual <= 1.0001e-10 * np.linalg.norm(y)  # the event's root, to its accuracy
    assert np.linalg.norm(fl.beta - pr.beta) <= fl.error_bar + 1e-12
    assert fl.error_bar < 1e-7


def test_error_bar_is_honest_before_convergence():
    """Stopped early, the flow's first-order error bar still covers most of the distance left."""
    X, y = problem()
    pr = argmin_Q(X, y, depth=2, alpha=1.0)
    fl = flow_pm(X, y, optimizer=GD, depth=2, alpha=1.0, residual_tol=1e-4, budget=PM_BUDGET.but(max_seconds=math.inf))
    assert 0 < np.linalg.norm(fl.beta - pr.beta) <= fl.error_bar


def test_flow_budgets_are_reported():
    X, y = problem()
    r = flow_pm(X, y, optimizer=GD, depth=3, alpha=1e-2, budget=PM_BUDGET.but(max_evaluations=50))
    assert r.status == Status.MAX_EVALUATIONS and r.message == "max_evaluations (50)" and not r.converged
    r = flow_pm(X, y, optimizer=GD, depth=2, alpha=1.0, t_max=0.01)
    assert r.status == Status.HORIZON and r.message.startswith("t_max (0.01)") and not r.converged


def test_bad_inputs_are_one_line_errors():
    X, y = problem()
    with pytest.raises(TheorycheckError, match="no β interpolates"):
        argmin_Q(np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([1.0, 3.0]))
    with pytest.raises(TheorycheckError, match="depth"):
        flow_pm(X, y, optimizer=GD, depth=1)
    with pytest.raises(TheorycheckError, match="alpha"):
        flow_pm(X, y, optimizer=GD, alpha=0.0)
    with pytest.raises(TheorycheckError, match="non-finite"):
        flow_pm(X, y * np.nan, optimizer=GD)


def test_small_alpha_limits_reach_l1_and_large_alpha_l2():
    X, y = problem()
    l1, l2 = min_l1(X, y), min_l2(X, y)
    assert np.linalg.norm(argmin_Q(X, y, depth=2, alpha=1e-10).beta - l1.beta) < 1e-9
    assert np.linalg.norm(argmin_Q(X, y, depth=3, alpha=1e-4).beta - l1.beta) < 1e-9
    assert np.linalg.norm(argmin_Q(X, y, depth=2, alpha=1e3).beta - l2.beta) < 1e-9
    gaps = [np.linalg.norm(argmin_Q(X, y, depth=3, alpha=a).beta - l1.beta) for a in (1e-1, 1e-2, 1e-3)]
    assert gaps[0] > gaps[1] > gaps[2]


def test_claim_verdicts():
    from theorycheck.claims.runner import run_claim

    claims = {c.key: c for c in KRC.claims()}
    v = run_claim(claims["KR.limit"], examples=3)
    assert v.status == "holds" and v.tried == 7
    v = run_claim(claims["KR.l1"], examples=2)
    assert v.status == "fails" and v.refined is not None and v.refined.status == "holds"
    assert v.counterexample_detail["l1_unique"] is False  # the counterexample is always a tie
    v = run_claim(claims["KR.l2"], examples=2)
    assert v.status == "holds"


def test_tie_limit_is_the_symmetric_point():
    X, y = np.array([[1.0, 1.0]]), np.array([1.0])
    for D in (2, 3):
        fl = flow_pm(X, y, optimizer=GD, depth=D, alpha=1e-2, budget=PM_BUDGET.but(max_seconds=math.inf))
        assert fl.beta == pytest.approx([0.5, 0.5], abs=1e-9)


def test_alpha_outside_float_range_is_refused():
    X, y = problem()
    with pytest.raises(TheorycheckError, match="float64"):
        argmin_Q(X, y, depth=2, alpha=1e-200)
    with pytest.raises(TheorycheckError, match="float64"):
        argmin_Q(X, y, depth=3, alpha=1e120)


def test_limit_outcome_fails_only_when_the_gap_stopped_decreasing():
    """A gap falling like 1/log(1/α) (halving per α step) is not a failure; a stalled one is."""
    from types import SimpleNamespace

    def gaps(es):
        return [(a, SimpleNamespace(constraint_residual=0.0), e) for a, e in zip((1e-4, 1e-8, 1e-16), es)]

    assert KRC._limit_outcome(gaps([0.4, 0.2, 0.1]), 1.0, {}).ok is None
    assert KRC._limit_outcome(gaps([0.4, 4e-3, 4e-5]), 1.0, {}).ok is None
    assert KRC._limit_outcome(gaps([0.3677, 0.3677, 0.3677]), 1.0, {}).ok is False
    assert KRC._limit_outcome(gaps([0.4, 0.1, 0.1 + 1e-9]), 1.0, {}).ok is False
    assert KRC._limit_outcome(gaps([1e-3, 1e-5, 1e-7]), 1.0, {}).ok is True

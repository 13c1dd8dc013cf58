"""The integrators' rewritten forms (closed_forms / symbolic / compile additions) equal the
forms they were derived from."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_forms as MF

RNG = np.random.default_rng(20260308)


@pytest.mark.parametrize("L", [1, 2, 3, 4, 5])
def test_log_norm_summand_is_log_of_summand(L):
    z = RNG.normal(size=20) * 3
    th = RNG.normal(size=20)
    ls = C.balanced_log_field(L, "sam-l2").log_summand(z, th)
    summand = C.balanced_field(L, "sam-l2", log=True).summand(z, th)
    np.testing.assert_allclose(ls, np.log(summand), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("L", [1, 2, 3, 4])
@pytest.mark.parametrize("opt", ["gd", "sam-l2", "sam-linf"])
def test_factored_log_field_equals_log_field(L, opt):
    old = C.balanced_field(L, opt, log=True)
    new = C.balanced_log_field(L, opt)
    z = RNG.normal(size=30) * 2
    th = RNG.normal(size=30)
    lnN = RNG.normal(size=30)
    rho = 0.7
    np.testing.assert_allclose(new.field(z, th, lnN, rho), old.field(z, th, np.exp(lnN), rho), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("L", [2, 3, 4])
def test_factored_log_field_symbolically(L):
    diff = (cf.balanced_log_field_factored(L, "sam-l2")
            - cf.balanced_log_field(L, "sam-l2").subs(cf.N, sp.exp(cf.lnN)))
    assert sp.simplify(sp.expand(sp.powsimp(diff, force=True))) == 0


def test_factored_log_field_does_not_overflow():
    f = C.balanced_log_field(3, "sam-l2")
    # u = e^700, N = e^1500: the expanded form overflows, the factored one does not
    v = f.field(np.array([1.0]), np.array([700.0]), 1500.0 - 700.0 + 700.0, 1.0)
    assert np.all(np.isfinite(v))


@pytest.mark.parametrize("L", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("opt", ["gd", "sam-linf"])
def test_branch_field_is_field_on_its_branch(L, opt):
    b = C.branch_field(L, opt)
    f = C.balanced_field(L, opt)
    for _ in range(30):
        z, u, rho = RNG.normal() * 2, RNG.normal() * 2, abs(RNG.normal())
        sig = np.sign(b.argument(z, np.sign(u)))
        assert b.field(z, u, sig, rho) == pytest.approx(f.field(z, u, 0.0, rho), rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("L", [2, 3, 4, 5])
@pytest.mark.parametrize("opt", ["gd", "sam-linf"])
def test_shifted_log_field_is_branch_field_over_uhat(L, opt):
    b = C.branch_field(L, opt)
    for _ in range(30):
        z, u, rho = RNG.normal() * 2, RNG.normal() * 2, abs(RNG.normal())
        sig = float(np.sign(b.argument(z, np.sign(u))))
        uhat = b.point(z, u, sig, rho)
        if uhat == 0:
            continue
        v, s = math.log(abs(uhat)), math.copysign(1.0, uhat)
        expected = b.field(z, u, sig, rho) / uhat  # d ln|û|/dτ = u̇/û
        assert b.shifted(z, v, s, sig, rho) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_linf_l2_shifted_field_is_z():
    """C2: for L = 2 the shifted coordinate is linear in τ (why the integrator is exact there)."""
    assert sp.simplify(cf.balanced_shifted_log_field(2, "sam-linf") - cf.z_j) == 0


def test_reduced_log_summand():
    f = MF.reduced_l2_log()
    g = MF.reduced_l2()[0]
    z = RNG.normal(size=10)
    np.testing.assert_allclose(f(z, 1.3, 0.4, 0.5, 0.9), np.log(g(z, 1.3, 0.4, 0.5, 0.9)), rtol=1e-13)


@pytest.mark.parametrize("loss", ["logistic", "exponential"])
def test_stable_loss_equals_loss(loss):
    sp_pos = sp.Symbol("s", positive=True)
    for expr_stable, expr in ((sy.loss_expr_stable(loss), sy.loss_expr(loss)),
                              (sy.loss_derivative_stable(loss), sy.loss_derivative(loss))):
        for val in (sp_pos, -sp_pos):
            d = (expr_stable - expr).subs(sy.s, val).rewrite(sp.log)
            assert sp.simplify(d) == 0
    # numerically: against the original form evaluated at 50 digits (the float64 original
    # loses digits for large s, which is why the stable form exists)
    ell_mp, dell_mp = C.loss_functions(loss, "mpmath")
    ells, dells = C.stable_loss_functions(loss)
    s = np.linspace(-30, 30, 61)
    with mpmath.workdps(50):
        ref = np.array([float(ell_mp(mpmath.mpf(x))) for x in s])
        dref = np.array([float(dell_mp(mpmath.mpf(x))) for x in s])
    np.testing.assert_allclose(ells(s), ref, rtol=1e-14)
    np.testing.assert_allclose(dells(s), dref, rtol=1e-14)


def test_stable_logistic_at_extremes():
    ell, dell = C.stable_loss_functions("logistic")
    with np.errstate(over="ignore"):
        v = ell(np.array([-1000.0, 1000.0, 40.0]))
        dv = dell(np.array([-1000.0, 1000.0]))
    assert v[0] == 1000.0 and v[1] == 0.0 and v[2] == pytest.approx(math.exp(-40), rel=1e-14)
    assert dv[0] == -1.0 and dv[1] == 0.0


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_stable_logistic_forms_give_their_limits_at_infinite_margins(backend):
    """ℓ, ln ℓ and ln|ℓ'| at m = ±∞ and ±1e300 are the limits, not NaN, without an invalid or
    divide warning (was: (|s| − s)/2 = ∞ − ∞ = NaN at s = +∞; ln ℓ(1e300) = ln 0 in the unused
    branch). ℓ' = −1/(1 + e^s) keeps its benign overflow of e^s (−1/∞ = −0)."""
    s = np.array([-np.inf, -1e300, 0.0, 1e300, np.inf])
    arg = s
    if backend == "torch":
        torch = pytest.importorskip("torch")
        arg = torch.tensor(s, dtype=torch.float64)
    ell, dell = C.stable_loss_functions("logistic", backend)
    ln_l, ln_d = C.log_loss_functions("logistic", backend)
    with np.errstate(invalid="raise", divide="raise", over="raise"):
        got = [np.asarray(f(arg), float) for f in (ell, ln_l, ln_d)]
    with np.errstate(over="ignore"):
        got.append(np.asarray(dell(arg), float))
    want = [[np.inf, 1e300, math.log(2), 0.0, 0.0], [np.inf, math.log(1e300), math.log(math.log(2)), -1e300, -np.inf],
            [0.0, 0.0, -math.log(2), -1e300, -np.inf], [-1.0, -1.0, -0.5, 0.0, 0.0]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-15)
    ell_mp, _ = C.stable_loss_functions("logistic", "mpmath")
    ln_l_mp, ln_d_mp = C.log_loss_functions("logistic", "mpmath")
    assert (ell_mp(mpmath.inf), ell_mp(-mpmath.inf)) == (0, mpmath.inf)
    assert (ln_l_mp(mpmath.inf), ln_l_mp(-mpmath.inf)) == (-mpmath.inf, mpmath.inf)
    assert (ln_d_mp(mpmath.inf), ln_d_mp(-mpmath.inf)) == (-mpmath.inf, 0)


def test_mpmath_backends_agree():
    with mpmath.workdps(40):
        f_mp = C.balanced_log_field(3, "sam-l2", "mpmath").field
        b_mp = C.branch_field(4, "sam-linf", "mpmath").shifted
        v = f_mp(mpmath.mpf(2), mpmath.mpf("0.3"), mpmath.mpf("1.1"), mpmath.mpf("0.5"))
        w = b_mp(mpmath.mpf(2), mpmath.mpf("0.3"), -1, 1, mpmath.mpf("0.5"))
    assert float(v) == pytest.approx(C.balanced_log_field(3, "sam-l2").field(2.0, 0.3, 1.1, 0.5), rel=1e-14)
    assert float(w) == pytest.approx(C.branch_field(4, "sam-linf").shifted(2.0, 0.3, -1.0, 1.0, 0.5), rel=1e-14)

"""The symbolic layer against independent numerics: finite differences, torch autograd,
and the numpy and mpmath backends against each other."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as tc
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_forms as MF

CASES = [(L, n) for L in (1, 2, 3, 4) for n in (1, 2, 3)]


def _problem(L, n, d=3, seed=0):
    rng = np.random.default_rng(seed + 10 * L + n)
    W0 = rng.normal(scale=0.8, size=(L, d))
    Z0 = rng.normal(size=(n, d))
    return W0, Z0


def _numeric(L, n, d=3, loss="logistic"):
    W, Z = sy.layer_symbols(L, d), sy.data_symbols(n, d)
    Lo = sy.empirical_loss(W, Z, loss)
    args = list(W) + list(Z)
    f = tc.lambdify(args, Lo, "numpy")
    g = tc.lambdify(args, list(sy.gradient(Lo, W)), "numpy")
    return f, g


@pytest.mark.parametrize("L, n", CASES)
@pytest.mark.parametrize("loss", sy.LOSSES)
def test_gradient_matches_finite_differences(L, n, loss):
    f, g = _numeric(L, n, loss=loss)
    W0, Z0 = _problem(L, n)
    grad = np.array(g(*W0.ravel(), *Z0.ravel()))
    h = 1e-6
    fd = np.empty(W0.size)
    for i in range(W0.size):
        e = np.zeros(W0.size)
        e[i] = h
        fd[i] = (f(*(W0.ravel() + e), *Z0.ravel()) - f(*(W0.ravel() - e), *Z0.ravel())) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("L, n", CASES)
def test_gradient_matches_torch_autograd(L, n):
    torch = pytest.importorskip("torch")
    _, g = _numeric(L, n)
    W0, Z0 = _problem(L, n, seed=7)
    Wt = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
    Zt = torch.tensor(Z0, dtype=torch.float64)
    beta = torch.prod(Wt, dim=0)
    loss = torch.nn.functional.softplus(-(Zt @ beta)).mean()  # log(1 + e^{-m})
    loss.backward()
    np.testing.assert_allclose(np.array(g(*W0.ravel(), *Z0.ravel())), Wt.grad.numpy().ravel(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("optimizer", sy.OPTIMIZERS)
def test_sam_flow_matches_torch(optimizer):
    """dW/dt = −∇Lo(W + ε(W)), ε from the joint gradient: against torch, n = 2, L = 3."""
    torch = pytest.importorskip("torch")
    L, n, d = 3, 2, 3
    W, Z = sy.layer_symbols(L, d), sy.data_symbols(n, d)
    F = tc.lambdify([*W, *Z, sy.rho], list(sy.flow(W, Z, optimizer)), "numpy")
    W0, Z0 = _problem(L, n, seed=3)
    rho = 0.3
    Zt = torch.tensor(Z0, dtype=torch.float64)

    def grad_at(w):
        w = w.clone().requires_grad_(True)
        torch.nn.functional.softplus(-(Zt @ torch.prod(w, 0))).mean().backward()
        return w.grad

    Wt = torch.tensor(W0, dtype=torch.float64)
    g = grad_at(Wt)
    eps = {"gd": 0 * g, "sam-l2": rho * g / g.norm(), "sam-linf": rho * torch.sign(g)}[optimizer]
    want = -grad_at(Wt + eps)
    got = np.array(F(*W0.ravel(), *Z0.ravel(), rho), dtype=float)
    np.testing.assert_allclose(got, want.numpy().ravel(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("L", [1, 2, 3, 4])
@pytest.mark.parametrize("optimizer", sy.OPTIMIZERS)
def test_numpy_and_mpmath_backends_agree(L, optimizer):
    """The same compiled balanced field at float64 and at 50 digits."""
    rng = np.random.default_rng(L)
    z = rng.uniform(0.5, 3, size=4)
    u = rng.uniform(0.2, 1.5, size=4)
    rho = 0.7
    fn = tc.balanced_field(L, optimizer, "numpy")
    fm = tc.balanced_field(L, optimizer, "mpmath")
    N = np.sqrt(fn.summand(z, u).sum())
    got = fn.field(z, u, N, rho)
    with mpmath.workdps(50):
        zm = [mpmath.mpf(float(x)) for x in z]
        um = [mpmath.mpf(float(x)) for x in u]
        Nm = mpmath.sqrt(mpmath.fsum(fm.summand(a, b) for a, b in zip(zm, um)))
        want = [fm.field(a, b, Nm, mpmath.mpf(rho)) for a, b in zip(zm, um)]
        assert abs(Nm - mpmath.mpf(N)) < 1e-14 * Nm
        np.testing.assert_allclose(got, [float(w) for w in want], rtol=1e-13)


def test_mpmath_backend_keeps_50_digits():
    fm = tc.balanced_field(2, "sam-l2", "mpmath")
    with mpmath.workdps(50):
        z, u, N, rho = mpmath.mpf(1) / 3, mpmath.mpf(2) / 7, mpmath.sqrt(2), mpmath.mpf(1) / 10
        got = fm.field(z, u, N, rho)
        exact = sp.Rational(1, 3) * (sp.Rational(2, 7) - sp.Rational(1, 10) * sp.Rational(1, 3) * sp.Rational(2, 7) / sp.sqrt(2))
        assert abs(got - mpmath.mpf(sp.N(exact, 60))) < mpmath.mpf(10) ** -48


def test_log_field_is_field_over_u():
    for L in (1, 2, 3):
        for opt in sy.OPTIMIZERS:
            f = tc.balanced_field(L, opt)
            fl = tc.balanced_field(L, opt, log=True)
            z, u, N = np.array([0.5, 2.0]), np.array([0.3, 1.7]), 1.3
            np.testing.assert_allclose(fl.field(z, np.log(u), N, 0.2), f.field(z, u, N, 0.2) / u, rtol=1e-12)
            np.testing.assert_allclose(fl.summand(z, np.log(u)), f.summand(z, u), rtol=1e-12)


def test_perturbations():
    g = np.array([3.0, -4.0])
    np.testing.assert_allclose(tc.perturbation("sam-l2")(g, 5.0, 0.5), [0.3, -0.4])
    np.testing.assert_allclose(tc.perturbation("sam-linf")(g, 5.0, 0.5), [0.5, -0.5])
    np.testing.assert_array_equal(tc.perturbation("gd")(g, 5.0, 0.5), [0.0, 0.0])
    assert tc.perturbation("sam-linf")(np.array([0.0]), 1.0, 1.0)[0] == 0.0  # sign(0) = 0


def test_layer_gradient_coordinate_form():
    G = np.array([0.5, -2.0])
    w = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])]
    g = tc.layer_gradient(3)(G, *w)
    np.testing.assert_allclose(g[0], G * w[1] * w[2])
    np.testing.assert_allclose(g[1], G * w[0] * w[2])
    np.testing.assert_allclose(g[2], G * w[0] * w[1])


def test_reduced_l2_matches_balanced_summand():
    summand, theta = MF.reduced_l2()
    z = np.array([1.0, 2.0, 3.0])
    tau, I, alpha, rho = 0.7, 0.2, 0.4, 1.0
    th = theta(z, tau, I, alpha, rho)
    np.testing.assert_allclose(th, np.log(alpha) + z * tau - rho * z**2 * I)
    np.testing.assert_allclose(summand(z, tau, I, alpha, rho), tc.balanced_field(2, "sam-l2").summand(z, np.exp(th)))


def test_compile_is_cached_and_explicit():
    assert tc.balanced_field(2, "sam-l2") is tc.balanced_field(2, "sam-l2")
    with pytest.raises(ValueError, match="unknown backend"):
        tc.lambdify([cf.z_j], cf.z_j, "jax-ish")
    with pytest.raises(ValueError, match="depth"):
        tc.balanced_field(0, "gd")


def test_torch_backend():
    torch = pytest.importorskip("torch")
    f = tc.balanced_field(2, "sam-l2", "torch")
    z, u = torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([0.5, 0.5], dtype=torch.float64)
    N = torch.sqrt(f.summand(z, u).sum())
    fn = tc.balanced_field(2, "sam-l2")
    np.testing.assert_allclose(f.field(z, u, N, 0.3).numpy(), fn.field(z.numpy(), u.numpy(), float(N), 0.3), rtol=1e-14)

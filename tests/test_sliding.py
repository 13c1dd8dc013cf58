"""ℓ∞-SAM on pixels through a surface G_p = 0: Filippov sliding (batched/pixels.py, the formulas
in symbolic/closed_forms.py) against an independent fixed-step Euler run of the discontinuous flow
written here from the definition ẇ = −∇Lo(w + ρ sign ∇Lo(w))."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from theorycheck.batched.pixels import run_pixels
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy

#: three examples, two pixels of mixed signs: G_2 reaches 0 and both sides point at the surface
Z = np.array([[0.44, 0.955], [0.5, 0.425], [-0.62, -0.995]])
RHO, ALPHA = 0.05, 1.0


def _euler(T: float, h: float, Z=Z, rho=RHO, alpha=ALPHA) -> np.ndarray:
    """β(T) of the doubled L = 2 network under ℓ∞-SAM by explicit Euler with step h: every step
    takes one side of the surface fully, so the chattering steps move on average with the
    convex combination of the two sides' fields (the Filippov velocity)."""
    Zt = np.hstack([Z, -Z])
    n, d = Z.shape

    def grad(W):  # W: (2 layers, 2d coordinates); Lo = mean log(1 + e^{−m}), m = Zt (w_1 ⊙ w_2)
        m = Zt @ (W[0] * W[1])
        G = (-1.0 / (1.0 + np.exp(m))) @ Zt / n
        return np.stack([G * W[1], G * W[0]])

    W = np.full((2, 2 * d), alpha)
    for _ in range(int(round(T / h))):
        W = W - h * grad(W + rho * np.sign(grad(W)))
    bt = W[0] * W[1]
    return bt[:d] - bt[d:]


def _engine(T: float, **kw):
    return run_pixels(Z, ["sam-linf"], [ALPHA], [RHO], depth=2, time_kind="t", grid=np.array([0.0, T]),
                      max_steps=20000, rtol=1e-10, atol=1e-12, **kw)


def test_sliding_weight_and_curvature_are_derived():
    lam = cf.sliding_weight()
    assert sp.simplify(lam - cf.a_minus / (cf.a_minus - cf.a_plus)) == 0
    tangent = cf.sliding_combination().subs({cf.lam: lam, cf.f_plus: cf.a_plus, cf.f_minus: cf.a_minus})
    assert sp.simplify(tangent) == 0  # dG/dt = 0 along the combination
    for L in (1, 2, 3):
        f = C.sliding_forms(L)
        th, td = np.array([-0.3, 0.7]), np.array([1.5, -2.0])
        want = td if L == 1 else L * np.exp(L * th) * td
        np.testing.assert_allclose(f.coordinate_rate(td, th) * np.ones(2), want, rtol=1e-14)
    d2 = sp.lambdify(sy.s, sp.log(sp.diff(sy.loss_expr("logistic"), sy.s, 2)), "mpmath")
    lc = C.sliding_forms(2).log_curvature
    for m in (-800.0, -30.0, -1.0, 0.0, 0.3, 40.0, 745.0, 2000.0):
        with mpmath.workdps(800):  # ℓ'' = a difference of two terms ≈ 1 at s = −800: 800 digits resolve it
            want = float(d2(mpmath.mpf(m)))
        assert float(lc(np.array([m]))[0]) == pytest.approx(want, rel=1e-13, abs=1e-13)
    assert float(C.sliding_forms(2, "exponential").log_curvature(np.array([3.0]))[0]) == -3.0


def test_linf_slides_on_a_gradient_surface_and_matches_euler():
    """Without sliding this run used to stop on its budget; now it slides on G_2 = 0 from
    t ≈ 0.76 and its β(5) agrees with Euler at h = 1e-4 (whose own error is ~1e-5: it falls to
    3e-7 at h = 3e-5)."""
    r = _engine(5.0)
    ev = r.meta["events"]
    assert str(r.status[0]) == "done" and r.steps[0] < 200
    assert ev["sliding_entries"][0] == 1 and 0.5 < ev["first_sliding"][0] < 1.0 and ev["sliding_time"][0] > 4.0
    ref = _euler(5.0, 1e-4)
    assert np.abs(r.beta[0, -1] - ref).max() < 3e-5
    assert np.abs(r.beta[0, -1] - _euler(5.0, 1e-2)).max() > 3e-5  # the comparison can tell h apart


def test_sliding_keeps_the_surface():
    """During the slide G_2 stays at its (tiny) value at entry instead of chattering across 0."""
    grid = np.linspace(0.0, 5.0, 26)
    r = run_pixels(Z, ["sam-linf"], [ALPHA], [RHO], depth=2, time_kind="t", grid=grid, max_steps=20000,
                   rtol=1e-10, atol=1e-12)
    risk = C.empirical_risk("logistic")
    G = np.array([risk.gradient(b, Z) for b in r.beta[0]])
    after = grid > 1.0
    assert np.all(np.abs(G[after, 1]) < 1e-6 * np.abs(G[after, 0]))
    assert np.all(np.abs(G[after, 0]) > 1e-3)


@pytest.mark.parametrize("depth,time_kind", [(1, "t"), (2, "tau"), (3, "t"), (3, "tau")])
def test_sliding_runs_to_the_end_every_depth_and_clock(depth, time_kind):
    r = run_pixels(Z, ["sam-linf", "sam-linf", "gd"], [0.5, 1.0, 1.0], [RHO, RHO, 0.0], depth=depth,
                   time_kind=time_kind, grid=np.linspace(0.0, 20.0, 21), max_steps=5000)
    assert [str(s) for s in r.status] == ["done"] * 3
    ev = r.meta["events"]
    assert ev["sliding_entries"][1] >= 1 and ev["sliding_entries"][2] == 0
    assert np.all(np.isfinite(r.loss)) and r.loss[1, -1] < r.loss[1, 0]


@pytest.mark.slow
def test_five_pixels_twelve_images_match_euler():
    """A run that used to stop with status chattering (tests/test_pixels.py's data) slides from
    t ≈ 3.18 and agrees with Euler at h = 5e-5 to its O(h) error."""
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (12, 5))
    X[:, -1] = 0.0
    y = np.where(X[:, 0] > X[:, 1], 1.0, -1.0)
    Zd = X * y[:, None]
    r = run_pixels(Zd, ["sam-linf"], [0.5], [0.05], depth=2, time_kind="t", grid=np.array([0.0, 5.0]),
                   max_steps=20000, rtol=1e-10, atol=1e-12)
    assert r.meta["events"]["sliding_entries"][0] == 1
    err = [np.abs(r.beta[0, -1] - _euler(5.0, h, Zd, 0.05, 0.5)).max() for h in (2e-4, 5e-5)]
    assert err[1] < 0.5 * err[0] and err[1] < 2e-5, err

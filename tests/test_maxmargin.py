"""maxmargin: ℓ1 (LP) and ℓ2 (QP) solutions checked against their dual problems."""

import math

import numpy as np
import pytest
from scipy.optimize import linprog, minimize

from theorycheck.errors import NotSeparableError, TheorycheckError
from theorycheck.solvers.maxmargin import angle_degrees, l1_max_margin, l2_max_margin, max_margin

RNG = np.random.default_rng(11)


def separable(n, d):
    Z = RNG.normal(size=(n, d))
    Z[:, 0] = np.abs(Z[:, 0]) + 0.3  # feature 1 separates
    return Z


def test_one_example():
    z = np.array([[0.7, -2.5, 1.9]])
    r1, r2 = l1_max_margin(z), l2_max_margin(z)
    np.testing.assert_allclose(r1.beta, [0.0, -1 / 2.5, 0.0], atol=1e-15)
    assert r1.margin == pytest.approx(2.5, rel=1e-14)
    np.testing.assert_allclose(r2.beta, z[0] / np.sum(z**2), rtol=1e-14)
    assert r2.margin == pytest.approx(np.linalg.norm(z), rel=1e-14)


@pytest.mark.parametrize("seed", range(6))
def test_l1_margin_equals_its_dual(seed):
    """max_{‖β‖₁ ≤ 1} min_i <β, z_i> = min_{μ ∈ simplex} ‖Zᵀμ‖_∞ (LP duality), solved apart."""
    Z = separable(3 + seed, 2 + seed % 3)
    r = l1_max_margin(Z)
    assert np.min(Z @ r.beta) == pytest.approx(1.0, abs=1e-12)
    n, d = Z.shape
    # variables (μ, s): min s s.t. −s ≤ (Zᵀμ)_j ≤ s, Σμ = 1, μ ≥ 0
    c = np.r_[np.zeros(n), 1.0]
    A = np.vstack([np.hstack([Z.T, -np.ones((d, 1))]), np.hstack([-Z.T, -np.ones((d, 1))])])
    res = linprog(c, A_ub=A, b_ub=np.zeros(2 * d), A_eq=np.r_[np.ones(n), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    assert r.margin == pytest.approx(res.fun, rel=1e-9)
    assert r.kkt_residual < 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_l2_direction_is_the_min_norm_point_of_the_hull(seed):
    """The ℓ2 max-margin direction is the min-norm point of conv{z_i}, margin its norm."""
    Z = separable(4 + seed, 2 + seed % 3)
    r = l2_max_margin(Z)
    assert r.method == "slsqp+active-set" and r.kkt_residual < 1e-10
    assert np.min(Z @ r.beta) == pytest.approx(1.0, abs=1e-12)
    n = Z.shape[0]
    res = minimize(lambda m: np.sum((Z.T @ m) ** 2), np.full(n, 1 / n), jac=lambda m: 2 * Z @ (Z.T @ m),
                   method="SLSQP", bounds=[(0, None)] * n,
                   constraints=[{"type": "eq", "fun": lambda m: np.sum(m) - 1, "jac": lambda m: np.ones(n)}],
                   options={"ftol": 1e-16, "maxiter": 500})
    p = Z.T @ res.x
    assert r.margin == pytest.approx(np.linalg.norm(p), rel=1e-6)
    assert angle_degrees(r.beta, p) < 1e-4


def test_dispatch_and_errors():
    Z = separable(3, 2)
    assert max_margin(Z, 1).norm == 1 and max_margin(Z, 2).norm == 2
    with pytest.raises(TheorycheckError):
        max_margin(Z, 3)
    with pytest.raises(NotSeparableError):
        l1_max_margin(np.array([[1.0, 0.0], [-1.0, 0.0]]))


def test_angle_degrees():
    assert angle_degrees([1.0, 0.0], [1.0, 1e-9]) == pytest.approx(math.degrees(1e-9), rel=1e-6)
    assert angle_degrees([1.0, 0.0], [-1.0, 0.0]) == pytest.approx(180.0)
    assert angle_degrees([1.0, 0.0], [0.0, 0.0]) is None


# ------------------------------------------------------------------ scale: solved on Z/2^k, scaled back exactly
Z_BIG = np.array([[-6.72e136, -5.56e136], [-4.97e136, -1.272e137]])


@pytest.mark.parametrize("norm", [1, 2])
def test_large_scale_data_that_setting_accepts(norm):
    r = max_margin(Z_BIG, norm)
    np.testing.assert_allclose(Z_BIG @ r.beta, r.margins, rtol=1e-12)
    assert np.min(r.margins) == pytest.approx(1.0, abs=1e-12)
    unit = max_margin(Z_BIG / 2.0**455, norm)  # a power of two: the same problem up to exact scaling
    np.testing.assert_array_equal(r.beta, np.ldexp(unit.beta, -455))
    assert r.margin == math.ldexp(unit.margin, 455)
    np.testing.assert_array_equal(r.direction, unit.direction)


@pytest.mark.parametrize("norm", [1, 2])
@pytest.mark.parametrize("exp", [-1060, -1000, -300, 0, 300, 1000])
def test_every_scale_gives_the_same_direction(norm, exp):
    Z = np.array([[0.672, 0.556], [0.497, 1.272], [1.0, -0.1]])
    ref = max_margin(Z, norm)
    Zk = np.ldexp(Z, exp)
    r = max_margin(Zk, norm)
    if exp > -1022 - 1:  # normal numbers: the exact power-of-two scaling
        np.testing.assert_array_equal(r.direction, ref.direction)
    else:  # subnormal data keep only a few digits
        np.testing.assert_allclose(r.direction, ref.direction, atol=1e-3)
    if r.log2_scale == 0:
        assert np.min(Zk @ r.beta) == pytest.approx(1.0, rel=1e-6)
    else:  # not representable: the true β is beta · 2**log2_scale, so <β, z_i> = <beta, z_i/2^exp> 2^(exp+log2)
        assert abs(exp) >= 1000
        np.testing.assert_allclose(np.min(Z @ r.beta) * 2.0**(exp + r.log2_scale), 1.0, rtol=1e-3)
    assert r.margin > 0 and math.isfinite(r.margin)


SIX = np.array([[0.672, 0.556, 0.1], [0.497, 1.272, -0.3], [1.0, -0.1, 0.2], [0.8, 0.4, 0.9], [1.3, 0.2, -0.5],
                [0.9, 1.1, 0.05]])


@pytest.mark.parametrize("norm", [1, 2])
@pytest.mark.parametrize("scale", [1e-179, 1e-300, 1e300, 1e-150, 1e150])
def test_margin_is_one_over_the_norm_of_beta_at_every_scale(norm, scale):
    """Six examples at 1e-179: the margin was 1/‖β‖ but β ~ 1e179 was returned as it is, and
    np.linalg.norm(β) squares its entries: inf, so 1/‖β‖ came out 0.0. β is now returned as it
    is only where float64 computes its norm (max|β| within 2^±500); otherwise the solution of the
    scaled problem with beta_log2_scale."""
    import theorycheck as tc

    unit = tc.max_margin(SIX, norm).as_dict()
    r = tc.max_margin(SIX * scale, norm).as_dict()
    beta = np.asarray(r["beta"])
    nrm = float(np.linalg.norm(beta, norm))  # plain numpy: finite and nonzero in either representation
    assert 0 < nrm < math.inf
    assert r["margin"] * nrm * 2.0 ** r["beta_log2_scale"] == pytest.approx(1.0, rel=1e-13)
    assert r["margin"] == pytest.approx(unit["margin"] * scale, rel=1e-12)
    assert min(r["margins"]) == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(r["direction"], unit["direction"], rtol=1e-12, atol=1e-15)
    assert (r["beta_log2_scale"] != 0) == (scale in (1e-179, 1e-300, 1e300))  # |β| ~ 1/scale beyond 2^±500
    with np.errstate(over="ignore", under="ignore"):
        true_beta = beta * 2.0 ** r["beta_log2_scale"] if r["beta_log2_scale"] == 0 else None
    if true_beta is not None:  # representable: it separates the data with margin 1 as given
        assert np.min((SIX * scale) @ true_beta) == pytest.approx(1.0, rel=1e-12)


def test_rows_of_very_different_sizes_fail_in_one_honest_line():
    """Rows 1 and 1e-150: separable, but HiGHS treats 1e-150 as 0 and calls the LP infeasible;
    the error says why instead of suggesting the data are not separable."""
    Z = np.array([[1.0, 0.0], [0.0, 1e-150]])
    with pytest.raises(TheorycheckError, match="span 150 orders of magnitude") as e:
        max_margin(Z, 1)
    assert "\n" not in str(e.value)

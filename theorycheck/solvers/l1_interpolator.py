"""The minimum-ℓ1 interpolator min ‖β‖₁ s.t. Xβ = y: a floating-point answer by linear programming (scipy's
HiGHS on β = p − q, p, q ≥ 0), and an exact check of a candidate by LP duality.

Duality: for any ν with ‖Xᵀν‖∞ ≤ 1 and any β with Xβ = y, ‖β‖₁ ≥ ⟨Xᵀν, β⟩ = ⟨ν, y⟩; equality (a zero gap,
i.e. (Xᵀν)_i = sign β_i wherever β_i ≠ 0) proves β minimal. :func:`l1_certificate` checks this in Fractions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from theorycheck.solvers.exact_lsq import Matrix, residual

__all__ = ["L1Interpolator", "L1Certificate", "l1_interpolator_lp", "l1_certificate"]


@dataclass(frozen=True)
class L1Interpolator:
    """The LP's answer in float64: ``beta``, ``l1_norm``, ``status`` ("solved", "infeasible" or the solver's
    message), ``max_residual`` = max |Xβ − y|."""

    beta: tuple[float, ...]
    l1_norm: float
    status: str
    max_residual: float


def l1_interpolator_lp(X, y, max_iterations: int = 10_000) -> L1Interpolator:
    """min ‖β‖₁ s.t. Xβ = y by scipy's linprog (HiGHS) in float64, within ``max_iterations`` simplex/IPM steps."""
    from scipy.optimize import linprog

    A = np.atleast_2d(np.asarray([[float(v) for v in r] for r in X], float))
    b = np.asarray([float(v) for v in y], float)
    d = A.shape[1]
    res = linprog(np.ones(2 * d), A_eq=np.hstack([A, -A]), b_eq=b, bounds=[(0, None)] * (2 * d),
                  method="highs", options={"maxiter": int(max_iterations)})
    if res.status == 2:
        return L1Interpolator((), float("inf"), "infeasible", float("inf"))
    if res.status != 0:
        return L1Interpolator((), float("nan"), f"not solved: {res.message}", float("nan"))
    beta = res.x[:d] - res.x[d:]
    return L1Interpolator(tuple(float(v) for v in beta), float(np.abs(beta).sum()), "solved",
                          float(np.max(np.abs(A @ beta - b))) if len(b) else 0.0)


@dataclass(frozen=True)
class L1Certificate:
    """An exact duality check: ``interpolates`` (Xβ = y), ``dual_feasible`` (‖Xᵀν‖∞ ≤ 1), ``gap`` =
    ‖β‖₁ − ⟨ν, y⟩ (exact; 0 with the two others proves β a minimum-ℓ1 interpolator), ``ok`` all three."""

    interpolates: bool
    dual_feasible: bool
    gap: Fraction
    l1_norm: Fraction

    @property
    def ok(self) -> bool:
        return self.interpolates and self.dual_feasible and self.gap == 0


def l1_certificate(X: Matrix, y: Sequence[Fraction], beta: Sequence[Fraction], nu: Sequence[Fraction]) -> L1Certificate:
    """Check β against the dual vector ν exactly (module docstring)."""
    n, d = len(X), len(X[0])
    s = [sum((X[i][j] * nu[i] for i in range(n)), Fraction(0)) for j in range(d)]
    l1 = sum((abs(b) for b in beta), Fraction(0))
    dual = sum((a * b for a, b in zip(nu, y)), Fraction(0))
    return L1Certificate(all(r == 0 for r in residual(X, y, beta)), all(abs(v) <= 1 for v in s), l1 - dual, l1)

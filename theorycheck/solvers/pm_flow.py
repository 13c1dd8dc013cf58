"""A flow of the squared loss on the signed parametrisation β = w₊^D − w₋^D (the kernel-to-rich pack's
flow is gradient descent's): :func:`flow_pm` is :func:`theorycheck.solvers.regression.solve_regression`
with ``param="pm"`` and the optimizer the caller names, from w₊(0) = w₋(0) = α (one number or one per
coordinate).

Loss L(β) = (1/n) Σ_i ½(⟨x_i, β⟩ − y_i)² (the 1/n rescales time only). The flow runs through the
integrator's one loop in log coordinates u± = log w± until ‖Xβ − y‖ ≤ ``residual_tol``·max(1, ‖y‖)
or the horizon ``t_max`` or a :class:`~theorycheck.status.Budget` ends it; ``error_bar`` estimates
‖β − β(∞)‖₂ from the mirror invariant (:mod:`theorycheck.solvers.regression`). :func:`mirror_theta` and
:func:`remaining_step` are the pieces of that estimate under gradient descent (the mirror invariant is
GD's), for the pack's claims.
"""

from __future__ import annotations

import numpy as np

from theorycheck.solvers.regression import RegressionResult, check_regression_data, solve_regression
from theorycheck.status import Budget

__all__ = ["PMResult", "check_regression_data", "flow_pm", "mirror_theta", "remaining_step"]

#: the budget of :func:`flow_pm` when none is given: no step limit to speak of, 2·10⁶ evaluations, 60 s
DEFAULT_BUDGET = Budget(max_steps=10**9, max_evaluations=2_000_000, max_seconds=60.0)

#: the result of :func:`flow_pm` (the regression flows' result)
PMResult = RegressionResult


def mirror_theta(beta: np.ndarray, D: int, alpha: float, wp: np.ndarray | None = None,
                 wm: np.ndarray | None = None) -> np.ndarray:
    """θ = ∇Q_α(β) from w± when given (exact for the flow), else by inverting h."""
    if wp is not None and wm is not None:
        if D == 2:  # θ = −4G, w₊ = α e^{−2G}, w₋ = α e^{2G}
            return np.log(wm / wp)
        # w^(2−D) = α^(2−D)(1 ∓ θ)  ⇒  θ = (w₋^(2−D) − w₊^(2−D)) / (2 α^(2−D))
        return (wm ** (2.0 - D) - wp ** (2.0 - D)) / (2.0 * alpha ** (2.0 - D))
    from theorycheck.solvers.interpolate import h_inverse

    return h_inverse(np.asarray(beta) / alpha**D, D)[0]


def remaining_step(X: np.ndarray, y: np.ndarray, beta: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """J r: the first-order move of the Q_α-minimiser from {Xβ = Xβ(t)} to {Xβ = y}."""
    r = y - X @ beta
    XM = X * metric
    lam = np.linalg.lstsq(XM @ X.T, r, rcond=None)[0]
    return XM.T @ lam


def flow_pm(X, y, *, optimizer, depth: int = 2, alpha=1.0, rho: float = 0.0, residual_tol: float = 1e-10,
            t_max: float = 1e12, budget: Budget | None = None, rtol: float = 1e-10, samples: int = 200) -> PMResult:
    """Integrate the flow of ``optimizer`` (a registered optimizer's object or name: ``GD`` for the
    kernel-to-rich flow; ``rho`` its radius) from w± = α until ‖Xβ − y‖ ≤ residual_tol·max(1, ‖y‖) or a
    budget ends it (``budget``: its steps, evaluations and seconds; default :data:`DEFAULT_BUDGET`)."""
    budget = budget or DEFAULT_BUDGET
    return solve_regression(X, y, param="pm", depth=depth, optimizer=optimizer, rho=rho, alpha=alpha, residual_tol=residual_tol,
                            t_max=t_max, rtol=rtol, budget=budget, samples=samples)

"""The compiled forms of the regression flows (squared loss): the signed parametrisation β = w₊^D − w₋^D
(:func:`pm_forms`, its potential's q at D = 2, :func:`pm_q2`), the balanced product field the LP-margin flow
integrates (:func:`balanced_product_log_field`), and the fields of pm / uv × any optimizer that
:mod:`theorycheck.solvers.regression` integrates (:func:`regression_forms`, :func:`regression_log_scale`).
Compiled once by :mod:`theorycheck.symbolic.compiler` from :mod:`theorycheck.symbolic.regression`, and cached;
the rest of the catalogue is :mod:`theorycheck.symbolic.forms`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import model as sy
from theorycheck.symbolic.compiler import lambdify
from theorycheck.symbolic.forms import checked_depth

__all__ = ["RegressionForms", "balanced_product_log_field", "pm_forms", "pm_q2", "regression_forms",
           "regression_log_scale"]


# ---------------------------------------------------------------- the signed (pm) parametrisation, squared loss
@lru_cache(maxsize=16)
def pm_forms(D: int) -> dict:
    """NumPy functions for depth D (:mod:`symbolic.regression`): ``log_field_p``/``log_field_m``
    (u_p, u_m, g), ``metric(w_p, w_m)``, ``h(theta)``, ``dh(theta)``, ``H(theta)``,
    ``q_theta(theta)``, ``loss_grad(p, y)`` and ``loss(p, y)``."""
    from theorycheck.symbolic import regression as R

    if D < 2:
        raise ValueError("the signed parametrisation needs depth D ≥ 2")
    fp, fm = R.pm_log_field(D)
    hh = R.h(D)
    return {
        "log_field_p": lambdify((R.up, R.um, R.g), fp),
        "log_field_m": lambdify((R.up, R.um, R.g), fm),
        "metric": lambdify((R.wp, R.wm), R.pm_metric(D)),
        "h": lambdify((R.theta,), hh),
        "dh": lambdify((R.theta,), sp.diff(hh, R.theta)),
        "H": lambdify((R.theta,), R.H(D)),
        "q_theta": lambdify((R.theta,), R.q_via_theta(D)),
        "loss_grad": lambdify((R.p_, R.y_), R.squared_loss_derivative()),
        "loss": lambdify((R.p_, R.y_), R.squared_loss()),
    }


@lru_cache(maxsize=1)
def pm_q2() -> Callable:
    """``q(z)`` of the depth-2 potential Q (:func:`symbolic.regression.q2`)."""
    from theorycheck.symbolic import regression as R

    return lambdify((R.z,), R.q2())


@lru_cache(maxsize=16)
def balanced_product_log_field(L: int) -> Callable:
    """``du(u, g)``: the balanced product flow in u = log w (:func:`symbolic.regression.balanced_product_log_field`)."""
    from theorycheck.symbolic import regression as R

    return lambdify((R.up, R.g), R.balanced_product_log_field(L))


# ---------------------------------------------------------------- regression flows: pm / uv × an optimizer
@dataclass(frozen=True)
class RegressionForms:
    """The compiled regression flow of one parametrisation, depth and ascent
    (:func:`symbolic.regression.regression_flow`), NumPy, broadcasting: ``beta(s1, s2)``,
    ``grad(s1, s2, g) -> (∂L/∂a, ∂L/∂b)``, ``beta_hat(s1, s2, g, S, rho)``,
    ``field(s1, s2, g, S, ghat, rho) -> (ds1/dt, ds2/dt)``, ``scale(s1, s2)`` (the effective scale),
    ``theta(s1, s2)`` (the mirror coordinate), ``metric(s1, s2)`` (∂β/∂θ at a fixed effective scale),
    ``q_scale(c)``, ``start(alpha) -> (s1, s2)``,
    ``h(theta)``, ``dh(theta)`` and the loss ``loss(p, y)``, ``loss_grad(p, y)`` (∂ℓ/∂p)."""

    param: str
    depth: int
    uses_norm: bool
    per_example: bool
    beta: Callable
    grad: Callable
    beta_hat: Callable
    field: Callable
    scale: Callable
    theta: Callable
    metric: Callable
    q_scale: Callable
    start: Callable
    h: Callable
    dh: Callable
    loss: Callable
    loss_grad: Callable


@lru_cache(maxsize=64)
def regression_forms(param: str, D: int, optimizer) -> RegressionForms:
    """Compile the regression flow of ``param`` ("pm", "uv") at depth ``D`` for ``optimizer`` (a
    name, an optimizer object or an Ascent)."""
    from theorycheck.symbolic import regression as R

    asc = sy.ascent_of(optimizer)
    ch = R.chart(param, checked_depth(D))
    f = R.regression_flow(ch, asc)
    s12 = (R.s1, R.s2)
    a0, b0 = R.chart_start(ch)
    hh = R.h(ch.depth)
    return RegressionForms(
        param=param, depth=ch.depth, uses_norm=asc.uses_norm, per_example=asc.per_example,
        beta=lambdify(s12, f["beta"]),
        grad=lambdify((*s12, R.g), [f["grad_a"], f["grad_b"]]),
        beta_hat=lambdify((*s12, R.g, sy.grad_norm, sy.rho), f["beta_hat"]),
        field=lambdify((*s12, R.g, sy.grad_norm, R.ghat, sy.rho), [f["ds1"], f["ds2"]]),
        scale=lambdify(s12, ch.scale),
        theta=lambdify(s12, ch.theta),
        metric=lambdify(s12, R.chart_metric(ch)),
        q_scale=lambdify((R.c_,), ch.q_scale),
        start=lambdify((R.alpha,), [a0, b0]),
        h=lambdify((R.theta,), hh),
        dh=lambdify((R.theta,), sp.diff(hh, R.theta)),
        loss=lambdify((R.p_, R.y_), R.squared_loss()),
        loss_grad=lambdify((R.p_, R.y_), R.squared_loss_derivative()),
    )


@lru_cache(maxsize=4)
def regression_log_scale(param: str, backend: str = "numpy") -> Callable:
    """``ln_c(s_1, s_2)``: the logarithm of the effective scale of one coordinate in its log chart
    (:func:`symbolic.regression.chart`), expanded: no underflow where c → 0."""
    from theorycheck.symbolic import regression as R

    return lambdify((R.s1, R.s2), sp.expand_log(sp.log(R.chart(param, 2).scale), force=True), backend)


def compile_form(args: tuple, expr: sp.Expr, backend: str = "numpy") -> Callable:
    """A pack's own expression (a theorem's right-hand side) compiled by the symbolic stage's compiler: the one
    door for packs, which do not compile themselves."""
    return lambdify(tuple(args), expr, backend)

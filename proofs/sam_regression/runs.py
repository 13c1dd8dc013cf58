"""The flows and limits the claims of ``sam-regression`` compare, through the engine's API only:
:func:`theorycheck.solvers.regression.solve_regression` (the regression flow of any optimizer, its
effective scale and error bar), :func:`theorycheck.solvers.field.solve_field` (the same flow with the
quadrature of SR1's integrand beside it) and :func:`theorycheck.solvers.interpolate.argmin_Q` (the
potential's minimiser over the interpolators).

Every run has a budget in field evaluations (never seconds: a verdict must not depend on the machine's
load). Runs are cached per input, so the claims that compare GD, n-SAM and 1-SAM on the same problem (and
the same grid) integrate each flow once per process.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from theorycheck.proofs.sam_regression.problems import alpha_of, data

#: field evaluations per flow (a flow of the paper's problems takes 3 000 – 6 000; one that creeps towards a
#: point where a scale collapses can take far more: it is then undecided, never a verdict)
MAX_EVALUATIONS = 40_000
#: the horizon: a flow that has not interpolated by then has stopped short or is still creeping
T_MAX = 1e12
#: the integrator's relative tolerance
RTOL = 1e-10


def _budget():
    from theorycheck.status import Budget

    return Budget(max_evaluations=MAX_EVALUATIONS, max_seconds=math.inf)


def _key(x: dict) -> str:
    return json.dumps(x, sort_keys=True, default=lambda v: np.asarray(v).tolist())


def flow(x: dict, optimizer):
    """The regression flow of ``optimizer`` on input ``x`` (its data, α, ρ and param), cached per input: the
    engine's :class:`~theorycheck.solvers.regression.RegressionResult`."""
    return _flow(_key(x), optimizer)


@lru_cache(maxsize=2048)
def _flow(key: str, optimizer):
    from theorycheck.solvers.regression import solve_regression

    x = json.loads(key)
    X, y, _ = data(x)
    return solve_regression(X, y, param=x["param"], optimizer=optimizer, rho=float(x["rho"]),
                            alpha=alpha_of(x, X.shape[1]), t_max=T_MAX, rtol=RTOL, budget=_budget())


def potential_scale(param: str, alpha: np.ndarray) -> np.ndarray:
    """The scale q of the potential Q_q whose minimiser GD reaches from scale α (the engine's chart: uv α/2,
    pm α)."""
    from theorycheck.optimizers import GD
    from theorycheck.symbolic.regression_forms import regression_forms

    return np.asarray(regression_forms(param, 2, GD).q_scale(np.asarray(alpha, float)), float) * np.ones(len(alpha))


@dataclass
class Limit:
    """argmin{Q_q(β) : Xβ = y} for the potential scale q, with an error bar on ‖β − exact‖₂ (twice the
    first-order step to the constraint in the potential's metric) — or why it was not computed."""

    beta: np.ndarray | None
    error_bar: float
    status: str
    message: str = ""


def limit(X: np.ndarray, y: np.ndarray, q: np.ndarray) -> Limit:
    """The predicted limit argmin Q_q over the interpolators (depth 2), q one scale per coordinate."""
    from theorycheck.errors import TheorycheckError
    from theorycheck.solvers.interpolate import argmin_Q
    from theorycheck.solvers.pm_flow import remaining_step
    from theorycheck.symbolic.regression_forms import pm_forms

    q = np.asarray(q, float)
    try:
        pr = argmin_Q(X, y, depth=2, alpha=q)
    except TheorycheckError as exc:
        return Limit(None, math.inf, "refused", str(exc))
    metric = q**2 * pm_forms(2)["dh"](np.asarray(pr.dual) @ X) * np.ones(X.shape[1])
    bar = 2.0 * float(np.linalg.norm(remaining_step(X, y, pr.beta, metric)))
    return Limit(np.asarray(pr.beta, float), bar, str(pr.status), pr.message)


def stopped_short(r, y: np.ndarray) -> bool | None:
    """Whether a flow that did not interpolate has stopped: True when it ran to the horizon with the loss
    flat over its last decade of time (relative change ≤ 1e-9) and the residual ≥ 1e-6·max(1, ‖y‖); None
    when a budget ended it first or the loss was still falling (a slow flow is no evidence of a stop)."""
    if r.converged:
        return False
    from theorycheck.status import Status

    if r.status != Status.HORIZON or np.size(r.times) < 3:
        return None
    late = r.times >= r.times[-1] / 10
    lo, hi = float(np.min(r.losses[late])), float(np.max(r.losses[late]))
    flat = hi - lo <= 1e-9 * max(hi, 1e-300)
    return True if flat and r.residual >= 1e-6 * max(1.0, float(np.linalg.norm(y))) else None


@dataclass
class IdentityRun:
    """SR1 along one flow: ``log_scale`` = ln(c_T/α) read off the final state, ``predicted`` = −κρ∫₀ᵀ g ĝ by
    quadrature beside the flow (one entry per coordinate), the run's ``status``, ``t``, ``steps``."""

    log_scale: np.ndarray
    predicted: np.ndarray
    status: str
    t: float
    steps: int
    ok: bool


def identity_run(x: dict, optimizer) -> IdentityRun:
    """The flow of ``optimizer`` on ``x`` with one more state per coordinate, E' = the integrand of SR1
    (:func:`theorycheck.proofs.sam_regression.theorems.scale_rate`, compiled; averaged over the examples
    for a per-example optimizer), integrated by the same loop: E(T) against ln(c_T/α)."""
    from theorycheck.solvers.field import Field, Stop, solve_field
    from theorycheck.solvers.regression import regression_field
    from theorycheck.symbolic.regression_forms import regression_forms

    X, y, _ = data(x)
    n, d = X.shape
    alpha, rho = alpha_of(x, d), float(x["rho"])
    base = regression_field(X, y, param=x["param"], optimizer=optimizer, rho=rho, alpha=alpha)
    F = regression_forms(x["param"], 2, optimizer)
    rate = _rate(x["param"], optimizer)

    def rhs(t, z):
        s = z[: 2 * d]
        beta = F.beta(s[:d], s[d:])
        if optimizer.per_example:
            G = X * F.loss_grad(X @ beta, y)[:, None]
            Gh = X * F.loss_grad(np.sum(X * F.beta_hat(s[:d], s[d:], G, 1.0, rho), axis=1), y)[:, None]
            e = np.mean(np.broadcast_to(rate(G, Gh, rho), G.shape), axis=0)
        else:
            g = X.T @ F.loss_grad(X @ beta, y) / n
            gh = X.T @ F.loss_grad(X @ F.beta_hat(s[:d], s[d:], g, 1.0, rho), y) / n
            e = np.broadcast_to(rate(g, gh, rho), (d,))
        return np.concatenate([base.rhs(t, s), e])

    stops = [Stop(lambda t, z, fn=st.fn: fn(t, z[: 2 * d]), st.name, st.status, st.direction) for st in base.stops]
    f = Field(rhs=rhs, y0=np.concatenate([base.y0, np.zeros(d)]), stops=stops, name=base.name + "+identity")
    run = solve_field(f, t_max=T_MAX, rtol=RTOL, budget=_budget())
    s = run.y[: 2 * d]
    from theorycheck.symbolic.regression_forms import regression_log_scale

    log_c = np.asarray(regression_log_scale(x["param"])(s[:d], s[d:]), float) * np.ones(d)
    return IdentityRun(log_c - np.log(alpha), run.y[2 * d:], str(run.status), run.t, run.steps, bool(run.ok))


@lru_cache(maxsize=16)
def _rate(param: str, optimizer):
    """SR1's d ln c/dt in (g, ĝ, ρ), compiled by the symbolic layer's compiler."""
    from theorycheck.proofs.sam_regression.theorems import scale_rate

    from theorycheck.symbolic import regression as R
    from theorycheck.symbolic.model import rho
    from theorycheck.symbolic.regression_forms import compile_form

    return compile_form((R.g, R.ghat, rho), scale_rate(param, optimizer))

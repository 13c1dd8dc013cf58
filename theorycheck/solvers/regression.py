"""The regression flows: parametrisation pm (β = w₊^D − w₋^D) or uv (β = u ⊙ v), the squared loss
L(β) = (1/n) Σ_i ½(⟨x_i, β⟩ − y_i)², and any optimizer whose regression flow is derived
(:meth:`theorycheck.optimizers.Optimizer.supports`): GD at any depth, n-SAM and 1-SAM at depth 2.

The field is compiled from the symbolic layer (:func:`theorycheck.symbolic.regression_forms.regression_forms`)
in the log chart s = (s₁, s₂) per coordinate, and integrated by the integrator's one loop
(:func:`theorycheck.solvers.field.solve_field`: budgets, the stopping rule, the non-finite guards, the
stiff-tail switch to Radau) until the residual ‖Xβ − y‖ falls below ``residual_tol``·max(1, ‖y‖) or a
budget or the horizon ends it.

Error bar on the limit β(∞) (D = 2 charts, and GD at any depth): the flow keeps the mirror coordinate
θ(t) − θ(0) in the row space of X (its rate is a multiple of ∂L/∂β at the perturbed point, which is
Xᵀ(…)), and β = q(c)^D h(θ) with c the effective scale. From the last state, the rest of the way to
{Xβ = y} moves β, to first order at fixed c, by J r (r = y − Xβ, J = M Xᵀ(X M Xᵀ)⁺, M = ∂β/∂θ);
the effective scale still moves by about |d ln c/dt| / (2λ), λ the slowest decay rate of the residual
(the least eigenvalue of k/n · X M Xᵀ, θ' = −k ĝ); and the integration error shows in θ's component
outside the row space. ``error_bar`` = 2‖J r‖ + ‖M θ_⊥‖ + D‖β‖·(2 Δln c + max|θ_⊥|): an estimate of
‖β(t) − β(∞)‖₂ (first order in the residual), not a bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from theorycheck.errors import ArgumentError
from theorycheck.record import Keys
from theorycheck.solvers.field import Field, Stop, solve_field
from theorycheck.status import Budget, Status
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength, float_check, not_decided

__all__ = ["RegressionResult", "check_regression_data", "regression_field", "solve_regression", "alpha_vector"]

#: θ' = −K ĝ in the D = 2 charts (pm: 4, uv: 2), from regression_flow; used for the decay rate λ
_THETA_RATE = {"pm": 4.0, "uv": 2.0}


def check_regression_data(X, y) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) as float arrays, n×d and n, finite (a one-line ArgumentError otherwise)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    y = np.atleast_1d(np.asarray(y, dtype=float)).ravel()
    if X.ndim != 2 or X.shape[0] != y.size:
        raise ArgumentError(f"X has {X.shape[0]} rows but y has {y.size} entries", "X", "y")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ArgumentError("the data have a non-finite value: replace NaN/inf by finite numbers", "X", "y")
    return X, y


def alpha_vector(alpha, d: int) -> np.ndarray:
    """α as d positive finite numbers: one for every coordinate, or one per coordinate."""
    a = np.asarray(alpha, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(d, float(a[0]))
    if a.size != d:
        raise ArgumentError(f"alpha has {a.size} entries but the data have d = {d} features: give one α, or one "
                            "per feature", "alpha")
    if not np.all(np.isfinite(a) & (a > 0)):
        raise ArgumentError(f"alpha = {a.tolist()}: every scale must be a finite number > 0", "alpha")
    return a


@dataclass
class _Problem:
    X: np.ndarray
    y: np.ndarray
    param: str
    depth: int
    optimizer: object
    rho: float
    alpha: np.ndarray
    forms: object

    @property
    def d(self) -> int:
        return self.X.shape[1]


def _problem(X, y, param, depth, optimizer, rho, alpha) -> _Problem:
    from theorycheck.optimizers import check_supported
    from theorycheck.symbolic.regression_forms import regression_forms

    X, y = check_regression_data(X, y)
    opt = check_supported(optimizer, param, "squared", depth)
    if not (isinstance(rho, (int, float)) and math.isfinite(rho) and rho >= 0):
        raise ArgumentError(f"rho = {rho!r}: the SAM radius must be a finite number ≥ 0", "rho")
    return _Problem(X, y, param, int(depth), opt, float(opt.radius(rho)), alpha_vector(alpha, X.shape[1]),
                    regression_forms(param, int(depth), opt))


def _rhs(p: _Problem):
    """ds/dt for the state s = (s₁ (d), s₂ (d)): the compiled field with g, S, ĝ computed from the data
    (full batch, or per example and averaged for a per-example ascent)."""
    F, X, Y, d, n, rho = p.forms, p.X, p.y, p.d, p.X.shape[0], p.rho

    def norm_of(s1, s2, g, axis=None):
        if not F.uses_norm:
            return 1.0
        ga, gb = F.grad(s1, s2, g)
        return np.sqrt(np.sum(ga**2, axis=axis) + np.sum(gb**2, axis=axis))

    if F.per_example:
        def rhs(t, s):
            s1, s2 = s[:d], s[d:]
            r = F.loss_grad(X @ F.beta(s1, s2), Y)  # ∂ℓ_i/∂p
            G = X * r[:, None]  # n×d: ∂ℓ_i/∂β_j
            S = norm_of(s1, s2, G, axis=1)
            S = S[:, None] if np.ndim(S) else S
            bh = F.beta_hat(s1, s2, G, S, rho)
            Gh = X * F.loss_grad(np.sum(X * bh, axis=1), Y)[:, None]
            f1, f2 = F.field(s1, s2, G, S, Gh, rho)
            return np.concatenate([np.mean(np.broadcast_to(f1, G.shape), axis=0),
                                   np.mean(np.broadcast_to(f2, G.shape), axis=0)])
        return rhs

    def rhs(t, s):
        s1, s2 = s[:d], s[d:]
        g = X.T @ F.loss_grad(X @ F.beta(s1, s2), Y) / n
        S = norm_of(s1, s2, g)
        gh = X.T @ F.loss_grad(X @ F.beta_hat(s1, s2, g, S, rho), Y) / n
        f1, f2 = F.field(s1, s2, g, S, gh, rho)
        return np.concatenate([np.broadcast_to(f1, (d,)), np.broadcast_to(f2, (d,))])

    return rhs


def regression_field(X, y, *, param: str = "pm", depth: int = 2, optimizer, rho: float = 0.0,
                     alpha=1.0, residual_tol: float = 1e-10) -> Field:
    """The regression flow as a :class:`~theorycheck.solvers.field.Field` (state s = (s₁, s₂), 2d),
    with its stopping rule ‖Xβ − y‖ ≤ residual_tol·max(1, ‖y‖) and its observation (ln|β|, sign β)."""
    p = _problem(X, y, param, depth, optimizer, rho, alpha)
    return _field(p, residual_tol)


def _field(p: _Problem, residual_tol: float) -> Field:
    F, d = p.forms, p.d
    tol = residual_tol * max(1.0, float(np.linalg.norm(p.y)))
    s10, s20 = F.start(p.alpha)

    def residual_log(t, s):
        res = float(np.linalg.norm(p.X @ F.beta(s[:d], s[d:]) - p.y))
        return (math.log(res) if res > 0 else -math.inf) - math.log(tol)

    def observe(t, s):
        b = F.beta(s[:d], s[d:])
        with np.errstate(divide="ignore"):
            return np.log(np.abs(b)), np.sign(b).astype(int)

    return Field(rhs=_rhs(p), y0=np.concatenate([np.broadcast_to(s10, (d,)), np.broadcast_to(s20, (d,))]),
                 stops=[Stop(residual_log, "residual")], observe=observe, atol=None, stiff="auto",
                 name=f"regression-{p.param}-{p.optimizer.name}")


@dataclass
class RegressionResult:
    """A regression flow's outcome. ``beta`` at the stopping time ``t``; ``effective_scale`` c per
    coordinate (pm, D = 2: √(w₊w₋); uv: √(u² − v²); pm, D ≥ 3: the power mean of order 2 − D of
    w₊, w₋; = α at the start, constant under GD); ``potential_scale`` the scale of Q whose minimiser
    on {Xβ = y} the flow reaches from this scale (pm: c; uv: c/2); ``residual`` ‖Xβ − y‖,
    ``final_loss`` L(β) = (1/2n)‖Xβ − y‖²; ``error_bar`` on ‖β − β(∞)‖₂ (module doc); ``status``
    (converged, or horizon / a budget / non_finite) with ``message``; ``strength``."""

    beta: np.ndarray
    effective_scale: np.ndarray
    potential_scale: np.ndarray
    residual: float
    final_loss: float
    error_bar: float
    invariant_residual: float
    status: Status
    message: str
    t: float
    steps: int
    evaluations: int
    stiff_from: float | None
    param: str
    depth: int
    optimizer: str
    rho: float
    alpha: np.ndarray
    n_examples: int
    seconds: float
    rtol: float
    times: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    losses: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def ok(self) -> bool:
        """Stopped for a reason of the flow (the residual tolerance or the horizon), not a budget or the number range."""
        return bool(self.status.ok)

    @property
    def converged(self) -> bool:
        return self.status == Status.CONVERGED

    @property
    def strength(self) -> Strength:
        """A floating-point check (float64) when the residual reached its tolerance, else not decided."""
        return float_check() if self.converged else not_decided(str(self.status))

    #: what :meth:`as_dict` emits (``trajectory --param pm|uv --json``; meanings: docs/commands/trajectory.md)
    KEYS = Keys("trajectory.regression", "beta", "effective_scale", "potential_scale", "status", "message",
                "error_bar", "residual", "final_loss", "invariant_residual", "t", "steps", "evaluations",
                "stiff_from", "param", "loss", "depth", "optimizer", "rho", "alpha", "n_examples", "d", "rtol",
                "seconds", "times", "losses", strength=STRENGTH_KEYS)

    def as_dict(self) -> dict:
        """What ``theorycheck trajectory --param pm|uv --json`` prints (docs/commands/trajectory.md)."""
        a = self.alpha
        return {"beta": self.beta.tolist(), "effective_scale": self.effective_scale.tolist(),
                "potential_scale": self.potential_scale.tolist(), "status": self.status, "message": self.message,
                "error_bar": self.error_bar, "strength": self.strength.as_dict(), "residual": self.residual,
                "final_loss": self.final_loss, "invariant_residual": self.invariant_residual, "t": self.t,
                "steps": self.steps, "evaluations": self.evaluations, "stiff_from": self.stiff_from,
                "param": self.param, "loss": "squared", "depth": self.depth, "optimizer": self.optimizer,
                "rho": self.rho, "alpha": float(a[0]) if np.all(a == a[0]) else a.tolist(),
                "n_examples": self.n_examples, "d": int(self.beta.size), "rtol": self.rtol,
                "seconds": round(self.seconds, 3), "times": self.times.tolist(), "losses": self.losses.tolist()}


def solve_regression(X, y, *, param: str = "pm", depth: int = 2, optimizer, rho: float = 0.0, alpha=1.0,
                     residual_tol: float = 1e-10, t_max: float = 1e12, rtol: float = 1e-10,
                     budget: Budget | None = None, samples: int = 200) -> RegressionResult:
    """Integrate the regression flow of (``param``, ``depth``, ``optimizer``, ``rho``) from scale
    ``alpha`` (one number, or one per coordinate) until the residual reaches ``residual_tol``·max(1, ‖y‖)
    or the horizon ``t_max`` or a ``budget`` (steps, evaluations, seconds) ends it. Never raises for
    numerical trouble: ``status`` says what happened."""
    t0 = time.perf_counter()
    p = _problem(X, y, param, depth, optimizer, rho, alpha)
    if not (isinstance(residual_tol, (int, float)) and 0 < residual_tol < 1):
        raise ArgumentError(f"residual_tol = {residual_tol!r}: give a tolerance in (0, 1)", "residual_tol")
    f = _field(p, residual_tol)
    budget = budget or Budget()
    run = solve_field(f, t_max=t_max, rtol=rtol, budget=budget)
    status = Status.HORIZON if run.status == Status.T_MAX else run.status
    limits = {Status.MAX_EVALUATIONS: f"max_evaluations ({budget.max_evaluations})",
              Status.MAX_STEPS: f"max_steps ({budget.max_steps})",
              Status.MAX_SECONDS: f"max_seconds ({budget.max_seconds:g} s)",
              Status.HORIZON: f"t_max ({t_max:g}) reached before the residual fell to {residual_tol:g}·max(1, ‖y‖)"}
    message = limits.get(status, run.message)
    return _result(p, run, status, message, rtol, samples, time.perf_counter() - t0)


def _result(p: _Problem, run, status, message, rtol, samples, seconds) -> RegressionResult:
    F, d, X, y = p.forms, p.d, p.X, p.y
    s = run.y
    s1, s2 = s[:d], s[d:]
    beta = np.asarray(F.beta(s1, s2), dtype=float) * np.ones(d)
    c = np.asarray(F.scale(s1, s2), dtype=float) * np.ones(d)
    res = float(np.linalg.norm(X @ beta - y))
    err, inv = _error_bar(p, run, beta, c, rtol) if np.all(np.isfinite(s)) else (math.inf, math.inf)
    t_end = run.t
    if t_end > 0 and run.steps > 0:
        ts = np.concatenate([[0.0], np.geomspace(max(t_end * 1e-9, 1e-300), t_end, max(samples, 2) - 1)])
        losses = np.array([F.loss(X @ F.beta(*np.split(run.at(t), 2)), y).mean() for t in ts])
    else:
        ts, losses = np.array([t_end]), np.array([0.5 * res**2 / X.shape[0]])
    return RegressionResult(
        beta=beta, effective_scale=c, potential_scale=np.asarray(F.q_scale(c), dtype=float) * np.ones(d),
        residual=res, final_loss=0.5 * res**2 / X.shape[0], error_bar=err, invariant_residual=inv, status=status,
        message=message, t=t_end, steps=run.steps, evaluations=run.evaluations, stiff_from=run.stiff_from,
        param=p.param, depth=p.depth, optimizer=p.optimizer.name, rho=p.rho, alpha=p.alpha, n_examples=X.shape[0],
        seconds=seconds, rtol=rtol, times=ts, losses=losses)


def _error_bar(p: _Problem, run, beta, c, rtol) -> tuple[float, float]:
    """(error_bar, invariant residual ‖θ_⊥‖): the estimate of the module doc."""
    F, d, X, y, D = p.forms, p.d, p.X, p.y, p.depth
    s = run.y
    s1, s2 = s[:d], s[d:]
    theta = np.asarray(F.theta(s1, s2), dtype=float) * np.ones(d)
    theta0 = np.asarray(F.theta(*F.start(p.alpha)), dtype=float) * np.ones(d)
    M = np.asarray(F.metric(s1, s2), dtype=float) * np.ones(d)  # ∂β/∂θ at fixed c (finite where c → 0)
    P = np.linalg.pinv(X) @ X
    off = (theta - theta0) - P @ (theta - theta0)
    r = y - X @ beta
    XM = X * M
    step = XM.T @ np.linalg.lstsq(XM @ X.T, r, rcond=None)[0]
    err = 2.0 * float(np.linalg.norm(step)) + float(np.linalg.norm(M * off))
    if p.optimizer.perturbs and D == 2:
        f = np.asarray(run_rhs(p)(run.t, s), dtype=float)
        rate = np.abs(0.5 * (f[:d] + f[d:]))  # d ln c/dt, ln c = (s₁ + s₂)/2 in both D = 2 charts
        eig = np.linalg.eigvalsh(_THETA_RATE[p.param] / X.shape[0] * (XM @ X.T))
        lam = float(eig[eig > eig.max() * 1e-12].min()) if eig.size and eig.max() > 0 else 0.0
        dlnc = rate / (2.0 * lam) if lam > 0 else np.full(d, math.inf)
        with np.errstate(invalid="ignore", over="ignore"):  # a zero β_j does not move with the scale: 0, not 0·∞
            drift = np.where(beta == 0.0, 0.0, beta * 2.0 * dlnc)
        err += D * float(np.linalg.norm(drift))
    err += D * float(np.linalg.norm(beta)) * max(float(np.max(np.abs(off), initial=0.0)), rtol)
    return err, float(np.linalg.norm(off))


def run_rhs(p: _Problem):
    """The field of the problem (for the rate of the effective scale at the last state)."""
    return _rhs(p)

"""Gradient flow of the squared loss on the signed parametrisation β = w₊^D − w₋^D.

The field comes from :mod:`theorycheck.symbolic.regression` (lambdified). The flow is
integrated in log coordinates u± = log w± (w± > 0 for all time, and small α is no
problem there) with scipy's LSODA (the flow is stiff at large α), until

- the residual ‖Xβ − y‖ falls below ``residual_tol`` (an event: the stopping rule), or
- a budget runs out: ``t_max``, ``max_seconds`` or ``max_evaluations`` (the result says which).

Error bar on the limit. The flow keeps ∇Q_α(β(t)) in the row space of X, so β(t) is the
minimiser of Q_α on {Xβ = Xβ(t)}; the rest of the way to {Xβ = y} moves β, to first order,
by J r with r = y − Xβ(t) and J = M Xᵀ (X M Xᵀ)⁺ (M the flow's metric, dβ/dt = −M∇Lo).
``error_bar`` = 2‖J r‖ + the drift of that invariant (its component outside the row
space, mapped through M), which measures the integration error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from theorycheck.errors import TheorycheckError
from theorycheck.status import BudgetExhausted, Status
from theorycheck.symbolic import forms as C

__all__ = ["PMResult", "check_regression_data", "flow_pm", "mirror_theta", "remaining_step"]


@dataclass
class PMResult:
    """The flow's outcome: ``beta`` at the stopping time, ``residual`` ‖Xβ − y‖,
    ``final_loss`` ½‖Xβ − y‖², ``error_bar`` on ‖β − β(∞)‖₂, ``status`` (a
    :class:`~theorycheck.status.Status`: converged, or horizon / max_evaluations / max_seconds /
    rounding_limited, with ``message``), ``t`` the stopping time, ``evaluations``, and a sampled path."""

    beta: np.ndarray
    residual: float
    final_loss: float
    error_bar: float
    invariant_residual: float
    status: Status
    t: float
    evaluations: int
    depth: int
    alpha: float
    seconds: float
    message: str = ""
    times: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    losses: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    n_examples: int = 0

    @property
    def converged(self) -> bool:
        return self.status == Status.CONVERGED

    def as_dict(self) -> dict:
        return {"beta": self.beta.tolist(), "final_loss": self.final_loss, "residual": self.residual,
                "error_bar": self.error_bar, "invariant_residual": self.invariant_residual,
                "status": self.status, "message": self.message, "t": self.t, "evaluations": self.evaluations, "depth": self.depth,
                "alpha": self.alpha, "param": "pm", "loss": "squared", "optimizer": "gd",
                "n_examples": self.n_examples, "d": int(self.beta.size), "seconds": round(self.seconds, 3),
                "times": self.times.tolist(), "losses": self.losses.tolist()}


def check_regression_data(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = np.atleast_2d(np.asarray(X, dtype=float))
    y = np.atleast_1d(np.asarray(y, dtype=float)).ravel()
    if X.shape[0] != y.size:
        raise TheorycheckError(f"X has {X.shape[0]} rows but y has {y.size} entries")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise TheorycheckError("the data have a non-finite value: replace NaN/inf by finite numbers")
    return X, y


def _check(D: int, alpha: float) -> None:
    if isinstance(D, bool) or int(D) != D or D < 2:
        raise TheorycheckError(f"the signed parametrisation needs an integer depth ≥ 2, got {D!r}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise TheorycheckError(f"alpha must be a positive finite number, got {alpha!r}")


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


def flow_pm(X, y, *, depth: int = 2, alpha: float = 1.0, residual_tol: float = 1e-10,
            t_max: float = 1e12, max_seconds: float = 60.0, max_evaluations: int = 2_000_000,
            rtol: float = 1e-11, atol: float = 1e-13, samples: int = 200) -> PMResult:
    """Integrate the flow from w± = α·1 until ‖Xβ − y‖ ≤ residual_tol·max(1, ‖y‖) or a budget ends."""
    X, y = check_regression_data(X, y)
    _check(depth, alpha)
    if not (t_max > 0 and max_seconds > 0 and max_evaluations > 0):
        raise TheorycheckError("t_max, max_seconds and max_evaluations must be positive")
    D = int(depth)
    f = C.pm_forms(D)
    fp, fm, loss_grad = f["log_field_p"], f["log_field_m"], f["loss_grad"]
    d = X.shape[1]
    tol = residual_tol * max(1.0, float(np.linalg.norm(y)))
    t0 = time.perf_counter()
    count = [0]
    last = {"t": 0.0, "u": None}

    def beta_of(u):
        return np.exp(D * u[:d]) - np.exp(D * u[d:])

    def rhs(t, u):
        count[0] += 1
        if count[0] > max_evaluations:
            raise BudgetExhausted(Status.MAX_EVALUATIONS, f"max_evaluations ({max_evaluations})")
        if count[0] % 200 == 0 and time.perf_counter() - t0 > max_seconds:
            raise BudgetExhausted(Status.MAX_SECONDS, f"max_seconds ({max_seconds:g} s)")
        last["t"], last["u"] = t, u
        gr = X.T @ loss_grad(X @ beta_of(u), y)
        return np.concatenate([fp(u[:d], u[d:], gr) * np.ones(d), fm(u[:d], u[d:], gr) * np.ones(d)])

    def event(t, u):
        return float(np.linalg.norm(X @ beta_of(u) - y)) - tol

    event.terminal = True
    event.direction = -1
    u0 = np.full(2 * d, math.log(alpha))
    # sample times log-spaced over the horizon actually needed: LSODA's dense output does it
    status, message = Status.CONVERGED, Status.CONVERGED.message
    try:
        sol = solve_ivp(rhs, (0.0, t_max), u0, method="LSODA", rtol=rtol, atol=atol, events=event,
                        dense_output=True)
        if not sol.success:
            raise TheorycheckError(f"the integrator failed: {sol.message}")
        u_end, t_end = sol.y[:, -1], float(sol.t[-1])
        if sol.status != 1:
            status, message = Status.HORIZON, f"t_max ({t_max:g}) reached before the residual fell to {tol:.1e}"
        dense = sol.sol
    except BudgetExhausted as exc:  # report the last state the integrator evaluated, and which budget ended
        u_end, t_end, status, message = np.array(last["u"]), float(last["t"]), exc.status, str(exc)
        dense = None
    except ValueError:  # the stopping event at rounding level: its root is not bracketed
        u_end, t_end = np.array(last["u"]), float(last["t"])
        r_end = float(np.linalg.norm(X @ beta_of(u_end) - y))
        if r_end > tol:
            status, message = Status.ROUNDING_LIMITED, f"the residual stalls at {r_end:.1e} above {tol:.1e}"
        dense = None

    if not np.all(np.isfinite(u_end)):
        raise TheorycheckError("the pm flow produced a non-finite state")
    beta = beta_of(u_end)
    wpv, wmv = np.exp(u_end[:d]), np.exp(u_end[d:])
    res = float(np.linalg.norm(X @ beta - y))
    metric = f["metric"](wpv, wmv) * np.ones(d)
    step = remaining_step(X, y, beta, metric)
    # invariant: θ(t) in the row space of X; its orthogonal part, mapped by dβ/dθ, bounds the drift
    theta = mirror_theta(beta, D, alpha, wpv, wmv)
    P = np.linalg.pinv(X) @ X
    off = theta - P @ theta
    dbeta_dtheta = alpha**D * f["dh"](theta) * np.ones(d)
    inv = float(np.linalg.norm(off))
    err = 2.0 * float(np.linalg.norm(step)) + float(np.linalg.norm(dbeta_dtheta * off))
    if dense is None or t_end <= 0:  # stopped inside the integrator: only the last state is known
        ts, losses = np.array([t_end]), np.array([0.5 * res**2])
    else:
        ts = np.concatenate([[0.0], np.geomspace(max(t_end * 1e-9, 1e-300), t_end, samples - 1)])
        losses = np.array([0.5 * float(np.sum((X @ beta_of(dense(t)) - y) ** 2)) for t in ts])
    return PMResult(n_examples=int(X.shape[0]), beta=beta, residual=res, final_loss=0.5 * res**2, error_bar=err, invariant_residual=inv,
                    status=status, message=message, t=t_end, evaluations=count[0], depth=D, alpha=float(alpha),
                    seconds=time.perf_counter() - t0, times=ts, losses=losses)

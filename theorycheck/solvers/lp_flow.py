"""Gradient flow of a margin loss on the depth-L product parametrisation from a positive
balanced start, followed far enough to see its limit direction, and the ℓ_{2/L} margin
problem's KKT conditions (pack ``lp-margin``).

Model: β = w_1 ⊙ … ⊙ w_L with every w_k(0) = α·1. The flow keeps the layers equal
(w_k = w) and w > 0, so β_j = w_j^L ≥ 0: the initialisation reaches only the orthant β ≥ 0.
The per-coordinate field dw/dt = −(∂β/∂w_k)·g comes from the symbolic layer
(:func:`theorycheck.symbolic.regression.balanced_product_log_field`).

Time: directional convergence is slow in real time (O(1/log t)), so the flow is integrated
along the same path in the time τ with dt = dτ/Lo (the loss-normalised flow), in log
coordinates u = log w (scipy's BDF with an analytic Jacobian, stepped by the engine's fate loop: the normalised flow is stiff at large
margins), until log max β_j reaches the last checkpoint.
The direction is recorded at checkpoints equally spaced in s = log‖β‖∞ (then log t grows by a
near-constant factor between checkpoints), so quantities that tend to their limit like a power of
1/log t are extrapolated by Aitken's Δ² (:func:`theorycheck.solvers.lp_limits.aitken_limit`; the power depends on
the data); the KKT residual of a direction and the LP solutions it tends to are :mod:`theorycheck.solvers.lp_limits`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import BDF, OdeSolution
from scipy.optimize import brentq

from theorycheck.errors import TheorycheckError
from theorycheck.solvers.persisting import step_to_condition
from theorycheck.status import Budget, BudgetExhausted, Status
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import regression_forms as RF

__all__ = ["DEFAULT_BUDGET", "log_loss", "log_neg_dloss", "normalised_field", "normalised_jacobian", "flow_margin",
           "MarginFlow"]


_EPS = np.finfo(float).eps

#: the budget of :func:`flow_margin` when none is given: its evaluations and seconds
DEFAULT_BUDGET = Budget(max_evaluations=1_000_000, max_seconds=60.0)


def log_loss(m: np.ndarray, loss: str) -> np.ndarray:
    """ln ℓ(m) without underflow: the compiled symbolic form (:func:`symbolic.model.loss_log_stable`)."""
    return np.asarray(C.log_loss_functions(loss)[0](np.asarray(m, dtype=float)), dtype=float)


def log_neg_dloss(m: np.ndarray, loss: str) -> np.ndarray:
    """ln(−ℓ'(m)) without overflow: the compiled symbolic form (:func:`symbolic.model.loss_log_derivative_stable`)."""
    return np.asarray(C.log_loss_functions(loss)[1](np.asarray(m, dtype=float)), dtype=float)


def _margins(v: np.ndarray, top: float) -> np.ndarray:
    """m = v·e^top, ±inf where it leaves float64 (0 where v = 0)."""
    e = math.exp(top) if top < 709.0 else math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(v == 0, 0.0, v * e)


def _margin_weights(v: np.ndarray, top: float, loss: str) -> tuple[np.ndarray, float]:
    """(w, ln Lo) at the margins m = v·e^top: w_i = −ℓ'(m_i)/Lo, Lo = Σ_i ℓ(m_i), with ln ℓ and
    ln(−ℓ') from the symbolic layer. Margins beyond float64 (data or β near 1e±300): one above
    the range has ℓ = e^(−m) = 0 in double; one below it (logistic) ℓ = |m|(1 + o(1)), so
    ln ℓ = ln|v| + top and −ℓ' = 1; and where no margin is finite, or for the exponential loss
    once any overflows, w = softmax(−m) from the differences (v_i − v_min)·e^top (exact: ℓ = e^(−m)
    for every m above 1.8e308)."""
    m = _margins(v, top)
    if np.all(np.isfinite(m)):
        ll = log_loss(m, loss)
        lnL = float(np.logaddexp.reduce(ll))
        return np.exp(log_neg_dloss(m, loss) - lnL), lnL
    if loss == "exponential" or np.all(m == math.inf):
        vmin = float(v.min())
        d = _margins(v - vmin, top)
        w = np.exp(-d)
        total = float(w.sum())
        with np.errstate(over="ignore", invalid="ignore"):
            lnL = float(-_margins(np.array([vmin]), top)[0] + math.log(total))
        return w / total, lnL
    low = m == -math.inf
    with np.errstate(divide="ignore"):
        ll = np.where(low, np.log(np.abs(v)) + top, log_loss(m, loss))
        ld = np.where(low, 0.0, log_neg_dloss(m, loss))
    lnL = float(np.logaddexp.reduce(ll))
    return np.exp(ld - lnL), lnL


@dataclass
class MarginFlow:
    L: int
    loss: str
    alpha: float
    log_beta: list = field(default_factory=list)  # checkpoints s = log max β_j
    log_t: list = field(default_factory=list)  # log(1 + t) there
    directions: list = field(default_factory=list)  # β/‖β‖₂ there
    status: Status = Status.REACHED
    evaluations: int = 0
    seconds: float = 0.0
    message: str = ""

    @property
    def ok(self) -> bool:
        """Every checkpoint reached (``status.ok``: not a budget, the horizon or a failed integration)."""
        return bool(Status(self.status).ok)

    def as_dict(self) -> dict:
        return {"depth": self.L, "loss": self.loss, "alpha": self.alpha, "log_beta": self.log_beta,
                "log_t": self.log_t, "directions": [d.tolist() for d in self.directions], "status": self.status,
                "message": self.message,
                "evaluations": self.evaluations, "seconds": round(self.seconds, 3)}


def normalised_field(u: np.ndarray, Z: np.ndarray, L: int, loss: str, field_=None) -> np.ndarray:
    """du/dτ of the loss-normalised flow (dt = dτ/Lo, Lo = Σ_i ℓ(m_i)) in u = log w: the compiled
    balanced product field (:func:`theorycheck.symbolic.regression_forms.balanced_product_log_field`) at g = (∂Lo/∂β)/Lo, the
    weights −ℓ'(m_i)/Lo taken in log space (:func:`_margin_weights`: margins beyond float64
    included). tests/test_lp_margin.py compares it with sympy."""
    field_ = field_ or RF.balanced_product_log_field(L)
    top = L * u.max()
    bn = np.exp(L * u - top)  # β / e^top
    wts, _ = _margin_weights(Z @ bn, top, loss)  # −ℓ'(m_i)/Lo
    g_over_L = -(Z.T @ wts)  # (∂Lo/∂β)/Lo
    return field_(u, g_over_L) * np.ones_like(u)


def normalised_jacobian(u: np.ndarray, Z: np.ndarray, L: int, loss: str) -> np.ndarray:
    """∂(du/dτ)/∂u, hand-written for the stiff solver's Newton iterations: exact for the exponential
    loss (weights softmax(−m)); for the logistic loss the same form with its weights (only the
    Newton iterations use it, not the accuracy). tests/test_lp_margin.py compares it with the
    sympy Jacobian of the field (exponential loss). Where its entries leave float64 (margins
    near 1e308) they are set to 0: Newton then iterates on the field alone."""
    with np.errstate(over="ignore", invalid="ignore"):
        beta = np.exp(L * u)
        m = Z @ beta
    if np.all(np.isfinite(m)):  # (its cancellations make it rounding-sensitive: these operations, in this order)
        lnL = float(np.logaddexp.reduce(log_loss(m, loss)))
        wts = np.exp(log_neg_dloss(m, loss) - lnL)
    else:
        top = L * u.max()
        wts, _ = _margin_weights(Z @ np.exp(L * u - top), top, loss)
    pre = np.exp((L - 2) * u)
    with np.errstate(over="ignore", invalid="ignore"):
        dm_du = Z * (L * beta)  # ∂m_k/∂u_j
        dw = -(wts[:, None] * dm_du) + np.outer(wts, wts @ dm_du)
        J = pre[:, None] * (Z.T @ dw) + np.diag((L - 2) * pre * (Z.T @ wts))
    return np.where(np.isfinite(J), J, 0.0)


def _unit_power(Z: np.ndarray, L: int) -> int:
    """k with Z/2^(kL) of largest entry in (2^−L, 2^L) (k = 0 when Z's already is): the flow on
    2^(kL)·Ẑ from α is the flow on Ẑ from α·2^k with β scaled by 2^(−kL) and t by 2^(−2k) (the
    loss-normalised flow is equivariant: margins are unchanged), and 2^(kL) divides exactly."""
    top = float(np.max(np.abs(Z)))
    if top == 0 or not math.isfinite(top):
        return 0
    return int((math.frexp(top)[1] - 1) / L)  # toward zero


def flow_margin(Z, *, depth: int = 2, loss: str = "exponential", alpha: float = 1.0,
                checkpoints=tuple(float(c) for c in range(2, 17, 2)), budget: Budget | None = None,
                tau_max: float = 1e7) -> MarginFlow:
    """Follow the loss-normalised flow from w = α·1 and record the direction when log max β_j
    crosses each checkpoint, with log t there. ``status``: "reached" or the budget that ran out
    first (the directions recorded until then are kept); ``budget`` reads ``max_evaluations`` and
    ``max_seconds`` (default :data:`DEFAULT_BUDGET`: 10⁶ field evaluations, 60 s). Data of any scale: the flow runs on
    Ẑ = Z/2^(kL) from α·2^k (:func:`_unit_power`, exact) and log β, log t are mapped back (at
    |Z| ~ 1e100 the first BDF step of 1e-6 moved u by 1e94 and the Jacobian became inf)."""
    Z = np.atleast_2d(np.asarray(Z, float))
    L = int(depth)
    if L < 2:
        raise TheorycheckError("lp-margin needs depth L ≥ 2")
    if loss not in ("exponential", "logistic"):
        raise TheorycheckError(f"lp-margin needs a margin loss (exponential or logistic), not {loss!r}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise TheorycheckError("alpha must be positive and finite")
    k = _unit_power(Z, L)
    Zh, ln2 = np.ldexp(Z, -k * L), math.log(2.0)
    shift = k * L * ln2  # log max β̂ − log max β
    budget = budget or DEFAULT_BUDGET
    max_evaluations, max_seconds = budget.max_evaluations, budget.max_seconds
    t0 = time.perf_counter()
    count = [0]
    out = MarginFlow(L=L, loss=loss, alpha=float(alpha))
    field_ = RF.balanced_product_log_field(L)

    def rhs(tau, state):
        count[0] += 1
        if count[0] > max_evaluations:
            raise BudgetExhausted(Status.MAX_EVALUATIONS, f"max_evaluations ({max_evaluations})")
        if count[0] % 500 == 0 and time.perf_counter() - t0 > max_seconds:
            raise BudgetExhausted(Status.MAX_SECONDS, f"max_seconds ({max_seconds:g} s)")
        return normalised_field(state, Zh, L, loss, field_)

    state = np.full(Z.shape[1], math.log(alpha) + k * ln2)
    tau, log_t = 0.0, -math.inf  # log t = log ∫ dτ/Lo (in Ẑ's time: t̂ = 2^(2k) t)
    tau_cap = math.ldexp(tau_max, 2 * k) if 2 * k + math.frexp(tau_max)[1] < 1020 else 1e307
    status, message = Status.REACHED, Status.REACHED.message
    for cp in checkpoints:
        if L * state.max() >= cp + shift:
            continue
        try:
            sol = _to_checkpoint(rhs, Zh, L, loss, state, tau, tau_cap, cp + shift, max_steps=budget.max_steps)
        except BudgetExhausted as exc:
            status, message = exc.status, str(exc)
            break
        if sol.status != 1:
            status, message = ((Status.HORIZON, f"tau_max ({tau_max:g})") if sol.success
                               else (Status.INTEGRATOR_FAILED, sol.message))
            break
        if not np.all(np.isfinite(sol.y[:, -1])):
            status, message = Status.INTEGRATOR_FAILED, "non-finite state"
            break
        log_t = _log_time(sol, Zh, L, loss, tau, log_t)
        state, tau = sol.y[:, -1], float(sol.t[-1])
        d = np.exp(L * (state - state.max()))
        out.log_beta.append(float(L * state.max()) - shift)
        out.log_t.append(log_t - 2 * k * ln2)
        out.directions.append(d / np.linalg.norm(d))
    out.status, out.message, out.evaluations, out.seconds = status, message, count[0], time.perf_counter() - t0
    return out


@dataclass
class _Segment:
    """One BDF segment to a checkpoint, as ``solve_ivp`` would return it: ``status`` 1 (the level was reached), 0
    (the horizon) or −1 (a failed step), ``t`` and ``y`` at the accepted steps (the last at the level's crossing),
    ``sol`` the dense output over them."""

    status: int
    message: str
    t: np.ndarray
    y: np.ndarray
    sol: OdeSolution

    @property
    def success(self) -> bool:
        return self.status >= 0


def _to_checkpoint(rhs, Z, L: int, loss: str, state, tau: float, tau_cap: float, level: float,
                   max_steps: int = 10**9) -> _Segment:
    """BDF (analytic Jacobian, rtol 1e-9, atol 1e-12) from (tau, state) until L·max u reaches ``level``, stepped by
    the engine's fate loop (:func:`theorycheck.solvers.persisting.step_to_condition`): after each step the level's
    crossing is located on the step's dense output by Brent's method (as ``solve_ivp`` locates an event: the same
    tolerances, so the same numbers), and the run ends there; the horizon ``tau_cap``, a failed step or
    ``max_steps`` end it otherwise."""

    def ev(t, s):
        return L * s.max() - level

    def jac(t, u):
        return normalised_jacobian(u, Z, L, loss)

    solver = BDF(rhs, float(tau), state, float(tau_cap), vectorized=False, rtol=1e-9, atol=1e-12, jac=jac)
    ts, ys, pieces, g = [float(tau)], [np.asarray(state, float)], [], [ev(float(tau), state)]

    def crossed(t, y):
        dense = solver.dense_output()
        pieces.append(dense)
        g_new = ev(t, y)
        if g[0] <= 0 <= g_new:  # upward through the level (solve_ivp's direction = 1)
            root = brentq(lambda x: ev(x, dense(x)), solver.t_old, t, xtol=4 * _EPS, rtol=4 * _EPS)
            ts.append(root)
            ys.append(dense(root))
            return True, "the level was reached"
        g[0] = g_new
        if len(ts) > 1 and ts[-1] == t:  # a step that did not move: its interpolant is not kept (as solve_ivp)
            pieces.pop()
        else:
            ts.append(t)
            ys.append(y)
        return None

    run = step_to_condition(solver, crossed, max_steps=max_steps, clock="τ", horizon_why="the horizon was reached")
    if run.outcome:
        status, message = 1, "A termination event occurred."
    elif solver.status == "finished":
        status, message = 0, "The solver successfully reached the end of the integration interval."
    elif solver.status == "failed":
        status, message = -1, run.why.removeprefix("integration failed: ")
    else:
        raise BudgetExhausted(Status.MAX_STEPS, f"max_steps ({max_steps}) in one segment, at τ = {solver.t:.6g}")
    return _Segment(status, message, np.asarray(ts), np.vstack(ys).T, OdeSolution(ts, pieces))


def _log_time(sol, Z, L: int, loss: str, tau: float, log_t: float) -> float:
    """log t after the solver's segment: t = ∫ dτ/Lo by the trapezoid rule on its dense output, in
    the log domain (ln Lo from :func:`_margin_weights`: finite where the margins leave float64)."""

    def neg_lnloss(u):
        top = L * u.max()
        return -_margin_weights(Z @ np.exp(L * u - top), top, loss)[1]

    taus = np.linspace(tau, float(sol.t[-1]), 401)
    neg = np.array([neg_lnloss(sol.sol(x)) for x in taus])
    seg = np.logaddexp(neg[1:], neg[:-1]) + math.log(0.5 * (taus[1] - taus[0]))
    return float(np.logaddexp.reduce(np.concatenate([[log_t], seg])))

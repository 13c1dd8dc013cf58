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
1/log t are extrapolated by Aitken's Δ² (:func:`aitken_limit`; the power depends on the data).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from scipy.integrate import BDF, OdeSolution
from scipy.optimize import brentq, linprog

from theorycheck.errors import TheorycheckError
from theorycheck.solvers.persisting import step_to_condition
from theorycheck.status import Budget, BudgetExhausted, Status
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import regression_forms as RF

__all__ = ["log_loss", "log_neg_dloss", "normalised_field", "normalised_jacobian", "kkt_residual", "flow_margin", "MarginFlow", "orthant_l1_max_margin", "aitken_limit",
           "power_limit", "lp_vertex_solution"]


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


def _normalised(beta: np.ndarray, Z: np.ndarray) -> np.ndarray:
    m = Z @ beta
    mn = float(m.min())
    if mn <= 0:
        raise ValueError("the direction does not separate the data")
    return beta / mn


def kkt_residual(beta: np.ndarray, Z: np.ndarray, L: int, *, orthant: bool = False) -> dict:
    """How far β̄ = β/min_i⟨z_i, β⟩ is from a KKT point of min Σ|β_j|^p s.t. Zβ ≥ 1, p = 2/L
    (``orthant``: with β ≥ 0 added). Continuous in β (no support threshold): stationarity is
    tested multiplied by β̄_j, β̄_j·(p|β̄_j|^(p−1)sign β̄_j − (Zᵀλ)_j) = 0;
    ``residual`` = min over λ ≥ 0 (an LP) of ‖that‖₁ / (pΣ|β̄_j|^p) + complementarity
    Σλ_i(m_i − 1) / (pΣ|β̄_j|^p) + for L = 2 the violations Σ_j (|Zᵀλ|_j − 1)₊ ((Zᵀλ)_j − 1)₊ in
    the orthant). For L ≥ 3 the objective's
    subgradient at β_j = 0 is unbounded: no condition there."""
    b = _normalised(np.asarray(beta, float), Z)
    n, d = Z.shape
    p = 2.0 / L
    m = Z @ b
    gb = p * np.abs(b) ** p  # β̄_j × ∂f/∂β_j
    M = (Z * b).T  # row j: β̄_j z_ij
    scale = float(gb.sum())
    # the best multipliers: an LP over λ ≥ 0, e± ≥ 0 (stationarity error), v ≥ 0 (L = 2: |Zᵀλ|_j ≤ 1 + v_j)
    nv = d if L == 2 else 0
    c = np.concatenate([m - 1.0, np.ones(2 * d), np.ones(nv)])
    A_eq = np.hstack([M, -np.eye(d), np.eye(d), np.zeros((d, nv))])
    A_ub = b_ub = None
    if L == 2:
        rows = [np.hstack([Z.T, np.zeros((d, 2 * d)), -np.eye(d)])]
        if not orthant:
            rows.append(np.hstack([-Z.T, np.zeros((d, 2 * d)), -np.eye(d)]))
        A_ub = np.vstack(rows)
        b_ub = np.ones(A_ub.shape[0])
    r = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=gb, bounds=[(0, None)] * c.size, method="highs")
    if r.status != 0:
        raise TheorycheckError(f"the KKT multiplier LP failed: {r.message}")
    lam = r.x[:n]
    stat = float(np.abs(M @ lam - gb).sum()) / scale
    comp = float(lam @ (m - 1.0)) / scale
    off = float(r.x[n + 2 * d:].sum()) if L == 2 else 0.0
    return {"residual": stat + comp + off, "stationarity": stat, "off_support": off, "complementarity": comp,
            "multipliers": lam.tolist(), "normalised_beta": b.tolist()}


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


def aitken_limit(values) -> tuple[float, float]:
    """Limit of a sequence sampled where its rate variable shrinks geometrically (checkpoints
    equally spaced in log‖β‖, so log t grows by a near-constant factor): Aitken's Δ² on the last
    three values, and as error bar its change from the three before. A sequence that stopped
    changing extrapolates to its last value."""
    v = np.asarray(values, float)

    def one(a, b, c):
        den = (c - b) - (b - a)
        if abs(den) <= 1e-14 * max(abs(a), abs(b), abs(c), 1e-300):
            return c
        est = c - (c - b) ** 2 / den
        return est if np.isfinite(est) else c

    if v.size < 3:
        return float(v[-1]), float(abs(v[-1]))
    a1 = one(*v[-3:])
    a2 = one(*v[-4:-1]) if v.size >= 4 else v[-1]
    return float(a1), float(abs(a1 - a2))


#: exponents p of the rate model a + c·(log t)^(−p) tried by :func:`power_limit`
POWERS = tuple(float(p) for p in np.geomspace(1e-3, 10.0, 241))


def power_limit(log_t, values, *, last: int = 5) -> dict:
    """Fit the rate model the theory gives, v ≈ a + c·(log t)^(−p) with p > 0, to the last
    ``last`` checkpoints (least squares in (a, c) for each p of :data:`POWERS`). ``a``/``se``/``p``:
    the best fit, with the standard error of a from the residuals (dof = points − 3);
    ``admissible``: the exponents whose residual sum of squares is within 9σ² of the best
    (a profile 3σ band, σ² = RSS_min/dof); ``a_low``: min over the admissible exponents of
    a(p) − 3·se(p), the lower end of the limit under every admissible model. A sequence that
    stopped changing gives a = its value, se = 0. Deterministic (a fixed grid, no optimiser)."""
    x = np.asarray(log_t, float)[-last:]
    v = np.asarray(values, float)[-last:]
    if v.size < 4 or not np.all(x > 1.0):
        return {"a": float(v[-1]), "se": float(abs(v[-1])), "p": None, "a_low": -math.inf, "admissible": []}
    if float(v.max() - v.min()) <= 1e-12 * max(float(np.abs(v).max()), 1e-300):
        return {"a": float(v[-1]), "se": 0.0, "p": None, "a_low": float(v[-1]), "admissible": list(POWERS)}
    dof = v.size - 3
    fits = []
    for p in POWERS:
        A = np.vstack([np.ones_like(x), np.exp(-p * np.log(x))]).T
        coef, *_ = np.linalg.lstsq(A, v, rcond=None)
        r = v - A @ coef
        fits.append((float(r @ r), p, coef, A))
    rss_min = min(f[0] for f in fits)
    sigma2 = rss_min / dof
    best, low, adm = None, math.inf, []
    for rss, p, coef, A in fits:
        if rss > rss_min + 9.0 * sigma2:
            continue
        try:
            cov = np.linalg.inv(A.T @ A) * sigma2
        except np.linalg.LinAlgError:
            return {"a": float(coef[0]), "se": math.inf, "p": p, "a_low": -math.inf, "admissible": adm}
        se = math.sqrt(max(float(cov[0, 0]), 0.0))
        adm.append(p)
        low = min(low, float(coef[0]) - 3.0 * se)
        if rss == rss_min and best is None:
            best = (float(coef[0]), se, p)
    return {"a": best[0], "se": best[1], "p": best[2], "a_low": low, "admissible": [min(adm), max(adm)]}


def extrapolate(xs, ys) -> tuple[float, float]:
    """Linear fit y = a + b·x; (a, standard error of a). Fewer than 3 points: (y[-1], |y[-1]|)."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    if xs.size < 3:
        return float(ys[-1]), float(abs(ys[-1]))
    A = np.vstack([np.ones_like(xs), xs]).T
    coef, *_ = np.linalg.lstsq(A, ys, rcond=None)
    r = ys - A @ coef
    dof = max(xs.size - 2, 1)
    cov = np.linalg.inv(A.T @ A) * float(r @ r) / dof
    return float(coef[0]), float(math.sqrt(max(cov[0, 0], 0.0)))


def orthant_l1_max_margin(Z) -> dict:
    """min Σβ_j s.t. Zβ ≥ 1, β ≥ 0 (the ℓ1 max margin over the directions a positive start
    reaches), by HiGHS; with the unrestricted ℓ1 optimum for comparison."""
    Z = np.atleast_2d(np.asarray(Z, float))
    n, d = Z.shape
    r = linprog(np.ones(d), A_ub=-Z, b_ub=-np.ones(n), bounds=[(0, None)] * d, method="highs")
    if r.status == 2:
        raise TheorycheckError("no β ≥ 0 separates the data: the flow from a positive start cannot drive the loss "
                               "to 0 (the pack's claims assume it does)")
    if r.status != 0:
        raise TheorycheckError(f"the orthant LP failed: {r.message}")
    free = linprog(np.ones(2 * d), A_ub=-np.hstack([Z, -Z]), b_ub=-np.ones(n), bounds=[(0, None)] * (2 * d),
                   method="highs")
    return {"beta": r.x.tolist(), "l1_norm": float(r.fun),
            "unrestricted_l1_norm": float(free.fun) if free.status == 0 else None,
            "unrestricted_beta": (free.x[:d] - free.x[d:]).tolist() if free.status == 0 else None}


def lp_vertex_solution(Z, L: int, max_vertices: int = 200_000) -> dict:
    """Global min of Σβ_j^(2/L) over {Zβ ≥ 1, β ≥ 0} for L ≥ 2: the objective is concave
    there, so the minimum is at a vertex; every vertex (d active constraints among the n
    margins and the d bounds) is enumerated (budget ``max_vertices``)."""
    Z = np.atleast_2d(np.asarray(Z, float))
    n, d = Z.shape
    A = np.vstack([Z, np.eye(d)])
    rhs = np.concatenate([np.ones(n), np.zeros(d)])
    best, best_b, seen = math.inf, None, 0
    for rows in combinations(range(n + d), d):
        seen += 1
        if seen > max_vertices:
            raise TheorycheckError(f"more than {max_vertices} candidate vertices: the data are too large for "
                                   "the exhaustive lp-margin predictor")
        M = A[list(rows)]
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        b = np.linalg.solve(M, rhs[list(rows)])
        if np.all(b >= -1e-12) and np.all(Z @ b >= 1 - 1e-9):
            b = np.maximum(b, 0.0)
            v = float(np.sum(b ** (2.0 / L)))
            if v < best - 1e-12:
                best, best_b = v, b
    if best_b is None:
        raise TheorycheckError("no β ≥ 0 separates the data")
    return {"beta": best_b.tolist(), "objective": best, "vertices_tried": seen}

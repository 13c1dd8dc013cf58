"""Gradient flow of the depth-2 signed network (β = w₊² − w₋², w±(0) = α, L = mean ½(⟨x_i, β⟩ − y_i)²) at
tiny scales α, in the accelerated log chart of :mod:`theorycheck.symbolic.accelerated`: state s = −2G/ln(1/α)
(G = ∫₀ᵗ ∇L), clock t̃ = t/ln(1/α), ds/dt̃ = −2∇L(β(s)), β = e^{2λ(s−1)} − e^{−2λ(s+1)}, λ = ln(1/α).

Only λ enters, so α is given exactly (a decimal string such as "1e-2048", a Fraction, an int or a float) and
λ is taken by mpmath at 60 digits: α = 1e-300 and far below run in float64, and ``digits`` runs the same
chart in mpmath. Both go through the integrator's one loop (:func:`theorycheck.solvers.field.solve_field`:
budgets, stopping rules, the non-finite guards; float64 switches to Radau where the plateaus turn stiff, the
stiffness being of order λ). The result never raises for numerical trouble: ``status`` says which budget ran
out, and :meth:`LogFlowRun.first_below` locates where the loss first falls to a level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from theorycheck.errors import ArgumentError
from theorycheck.solvers.field import Field, FieldRun, Stop, solve_field
from theorycheck.status import Budget, Status

__all__ = ["LogFlowRun", "log_scale", "log_flow"]


def _exact(v, what: str) -> Fraction:
    try:
        f = Fraction(v) if not isinstance(v, float) else Fraction(v)
    except (TypeError, ValueError, ZeroDivisionError):
        raise ArgumentError(f"{what} = {v!r} is not a number", what) from None
    return f


def log_scale(alpha) -> tuple[mpmath.mpf, float]:
    """λ = ln(1/α) at 60 digits (and as a float) for α in (0, 1) given exactly: "1e-2048", Fraction, int, float."""
    if isinstance(alpha, str):
        with mpmath.workdps(60):
            try:
                a = mpmath.mpf(alpha.strip())
            except (ValueError, TypeError):
                raise ArgumentError(f"alpha = {alpha!r} is not a number", "alpha") from None
    else:
        f = _exact(alpha, "alpha")
        a = None if f <= 0 else mpmath.mpf(f.numerator) / f.denominator
    with mpmath.workdps(60):
        if a is None or not mpmath.isfinite(a) or not 0 < a < 1:
            raise ArgumentError(f"alpha = {alpha!r}: give a scale in (0, 1)", "alpha")
        lam = -mpmath.log(a)
    return lam, float(lam)


def _data(X, y) -> tuple[list[list[Fraction]], list[Fraction]]:
    Xr = [list(r) for r in (X if np.ndim(X) == 2 else [X])]
    yr = list(np.ravel(np.asarray(y, dtype=object)))
    if not Xr or len(Xr) != len(yr) or len({len(r) for r in Xr}) != 1 or not Xr[0]:
        raise ArgumentError(f"X has {len(Xr)} rows of lengths {sorted({len(r) for r in Xr})} and y has {len(yr)} "
                            "entries: give n rows of d numbers and n targets", "X", "y")
    to = [[_exact(str(v) if isinstance(v, str) else v, "X") for v in r] for r in Xr]
    return to, [_exact(v, "y") for v in yr]


@dataclass
class LogFlowRun:
    """One run: ``run`` the :class:`FieldRun` (its clock is t̃, its state s), ``lam`` = ln(1/α) (mpf), ``status``,
    ``message``, ``t`` the last t̃, ``digits`` (None: float64)."""

    run: FieldRun
    lam: mpmath.mpf
    X: np.ndarray
    y: np.ndarray
    digits: int | None

    @property
    def status(self) -> Status:
        return self.run.status

    @property
    def message(self) -> str:
        return self.run.message

    @property
    def ok(self) -> bool:
        return self.run.ok

    @property
    def evaluations(self) -> int:
        return self.run.evaluations

    @property
    def t(self) -> float:
        return self.run.t

    def beta(self, s) -> np.ndarray:
        """β at state s (float64, from the compiled chart)."""
        from theorycheck.symbolic.accelerated import accelerated_forms

        return np.asarray(accelerated_forms("numpy").beta(np.asarray(s, dtype=float), float(self.lam)), dtype=float)

    def beta_at(self, t: float) -> np.ndarray:
        return self.beta(self.run.at(min(max(float(t), 0.0), self.t)))

    def loss_at(self, t: float) -> float:
        from theorycheck.symbolic.accelerated import accelerated_forms

        F = accelerated_forms("numpy")
        return float(np.mean(F.loss(self.X @ self.beta_at(t), self.y)))

    def first_below(self, level: float, t_from: float = 0.0, iterations: int = 80) -> float | None:
        """The first t̃ ≥ ``t_from`` where the loss falls to ``level`` (GD's loss never increases), by bisection
        on the steps' dense output; None when it does not within the run."""
        ts = [t for t in self.run.times if t >= t_from] or [self.t]
        prev = t_from
        for t in ts:
            if self.loss_at(t) <= level:
                a, b = prev, t
                for _ in range(iterations):
                    m = 0.5 * (a + b)
                    a, b = (a, m) if self.loss_at(m) <= level else (m, b)
                return 0.5 * (a + b)
            prev = t
        return None


def _rhs(X, y, lam, backend: str):
    from theorycheck.symbolic.accelerated import accelerated_forms

    F, n = accelerated_forms(backend), len(y)
    if backend == "numpy":
        def rhs(t, s):
            b = F.beta(s, lam)
            return F.rate(X.T @ F.loss_grad(X @ b, y) / n, lam)
        return rhs

    def rhs_mp(t, s):
        b = np.array([F.beta(v, lam) for v in s], dtype=object)
        g = X.T.dot(np.array([F.loss_grad(p, v) for p, v in zip(X.dot(b), y)], dtype=object)) / n
        return np.array([F.rate(v, lam) for v in g], dtype=object)
    return rhs_mp


def _loss_stop(X, y, lam, level, backend: str) -> Stop:
    """The run ends (converged) where the mean loss falls to ``level``: the observation of a jump."""
    from theorycheck.symbolic.accelerated import accelerated_forms

    F = accelerated_forms(backend)

    def fn(t, s):
        if backend == "numpy":
            return float(np.mean(F.loss(X @ F.beta(s, lam), y))) - level
        b = np.array([F.beta(v, lam) for v in s], dtype=object)
        return mpmath.fsum(F.loss(p, v) for p, v in zip(X.dot(b), y)) / len(y) - level

    return Stop(fn, "loss level", Status.CONVERGED, -1)


def log_flow(X, y, alpha, *, t_max: float, digits: int | None = None, rtol: float | None = None,
             budget: Budget | None = None, stop_loss=None) -> LogFlowRun:
    """Integrate ds/dt̃ = −2∇L(β(s)) from s = 0 over t̃ ∈ [0, ``t_max``] at scale ``alpha`` (exact: see
    :func:`log_scale`), float64 or mpmath at ``digits``; ``stop_loss``: end where the loss falls to it (exact
    number; the observed jump of :meth:`LogFlowRun.first_below`, located at the run's precision)."""
    lam_mp, lam_f = log_scale(alpha)
    Xq, yq = _data(X, y)
    Xf = np.array([[float(v) for v in r] for r in Xq])
    yf = np.array([float(v) for v in yq])
    budget = budget or Budget(max_seconds=math.inf)
    d = Xf.shape[1]
    if digits is None:
        stops = [] if stop_loss is None else [_loss_stop(Xf, yf, lam_f, float(_exact(stop_loss, "stop_loss")),
                                                         "numpy")]
        f = Field(rhs=_rhs(Xf, yf, lam_f, "numpy"), y0=np.zeros(d), stops=stops, stiff="auto", name="log-flow")
        run = solve_field(f, t_max=t_max, rtol=rtol or 1e-10, budget=budget)
        return LogFlowRun(run, lam_mp, Xf, yf, None)
    with mpmath.workdps(int(digits) + 12):
        Xm = np.array([[mpmath.mpf(v.numerator) / v.denominator for v in r] for r in Xq], dtype=object)
        ym = np.array([mpmath.mpf(v.numerator) / v.denominator for v in yq], dtype=object)
        lam = +lam_mp
        stops = []
        if stop_loss is not None:
            q = _exact(stop_loss, "stop_loss")
            stops = [_loss_stop(Xm, ym, lam, mpmath.mpf(q.numerator) / q.denominator, "mpmath")]
        f = Field(rhs=_rhs(Xm, ym, lam, "mpmath"), y0=np.zeros(d), stops=stops, stiff="explicit", name="log-flow")
        run = solve_field(f, t_max=t_max, rtol=rtol or 10.0 ** (2 - int(digits)), budget=budget, digits=int(digits))
    return LogFlowRun(run, lam_mp, Xf, yf, int(digits))

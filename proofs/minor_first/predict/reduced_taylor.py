"""C4's reduced scalar ODE dI/dτ = 1/N(τ, I) of ℓ2-SAM (L = 2, one example, uniform init α),
integrated by a Taylor series method of any order, in float64 or mpmath: :class:`ReducedFlow` and
the :class:`Fate` of one run. The α_c search that drives it is :mod:`theorycheck.proofs.minor_first.predict.collapse`.

N² = Σ_j exp(c_j + p_j τ + q_j I) (the log-summands of :func:`theory_exprs.l2_reduced_log_summand`,
linear in τ and I; their coefficients are read off the symbolic form, never re-typed); the
exp/power series recurrences make one step cost O(d K²) operations.

The method is a stepper (:class:`_FloatTaylor`, :class:`_FixedTaylor`: ``step()``, ``t``, ``y``, ``status``,
as a scipy ``OdeSolver``); the loop is the engine's (:func:`theorycheck.solvers.persisting.step_to_condition`):
after every step the fate test (:meth:`ReducedFlow._check`) is asked, and its certificate levels of N persist
(C5: below ρ z_+ the run collapses, at or above ρ z_max it grows), so the first that holds is the run's fate.
A run whose N leaves the number range (a z_min many orders below z_max: the steps shrink with N until the series
overflows) ends there, not decided (``range_limit``), instead of stepping NaN to its step budget.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import mpmath as mp
import numpy as np

from theorycheck.solvers.persisting import step_to_condition
from theorycheck.status import BudgetExhausted, Fate, Status
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import theory_forms as MF

__all__ = ["ReducedFlow", "TaylorRun", "coefficients"]


# ------------------------------------------------------------------ the ODE, from the symbolic layer
def coefficients():
    """(c, p, q) as functions of (z_j, α, ρ): ln(term j of N²) = c + p τ + q I (C4), compiled."""
    return MF.reduced_l2_taylor_coefficients()


@dataclass
class TaylorRun:
    """One trajectory's outcome: ``fate`` collapse (N < ρ z_+ reached: proved to collapse),
    growth (N ≥ ρ z_max reached: proved not to collapse) or undecided, with ``status`` t_max
    (reached τ = T first; then ``q`` = x(T) e^{−z_min T}) or the budget that ran out (``why``)."""

    fate: Fate
    tau: object
    N: object
    q: object = None
    steps: int = 0
    why: str = ""
    status: Status | None = None  # undecided: t_max (the horizon T) or the budget that ran out

    @property
    def at_horizon(self) -> bool:
        return self.fate == Fate.UNDECIDED and self.status == Status.T_MAX


class _FloatTaylor:
    """The float64 Taylor method as a stepper: the state (τ, I), and at it the log-summands' largest
    ``a_max`` and ``a[m]`` (m the coordinate of z_min) and N, which the fate test reads."""

    status = "running"

    def __init__(self, flow: ReducedFlow, c, p, q, T):
        self.flow, self.c, self.p, self.q, self.T = flow, c, p, q, T
        self.m = flow.active.index(flow.zpos_min)
        self.half_log = C.log_norm("numpy")  # ln N from ln Σ_j (term j of N²)
        self.t, self.I, self.steps, self.h0 = 0.0, 0.0, 0, 0.5 / flow.zmax
        self._at_point()

    @property
    def y(self):
        return self.I

    def _at_point(self) -> None:
        c, p, q, tau, I = self.c, self.p, self.q, self.t, self.I
        a = [c[k] + p[k] * tau + q[k] * I for k in range(len(c))]
        self.M = max(a)
        self.w = [math.exp(ak - self.M) for ak in a]
        self.S0 = sum(self.w)
        self.N = math.exp(self.half_log(self.M + math.log(self.S0)))
        self.am = a[self.m]

    def step(self) -> None:
        p, q, K, d = self.p, self.q, self.flow.order, len(self.c)
        sqrt, S0 = math.sqrt, self.S0
        scale = math.exp(-self.half_log(self.M))
        Ic = [self.I, scale / sqrt(S0)]
        E = [[wk] for wk in self.w]
        S = [S0]
        P = [1.0 / sqrt(S0)]
        for nn in range(1, K):
            Sn = 0.0
            for k in range(d):
                Ek, qk = E[k], q[k]
                acc = (p[k] + qk * Ic[1]) * Ek[nn - 1]
                for j in range(2, nn + 1):
                    acc += j * qk * Ic[j] * Ek[nn - j]
                Ek.append(acc / nn)
                Sn += acc / nn
            S.append(Sn)
            acc = 0.0
            for j in range(1, nn + 1):
                acc += (j / 2 - nn) * S[j] * P[nn - j]
            P.append(acc / (nn * S0))
            Ic.append(scale * P[nn] / (nn + 1))
        h = self.flow._step(Ic, K, self.h0, 1.0, 1.0)
        T = self.T
        if T is not None and self.t < T < self.t + h:
            h = T - self.t
        acc = Ic[K]
        for j in range(K - 1, 0, -1):
            acc = acc * h + Ic[j]
        self.I += acc * h
        self.t += h
        self.h0 = h
        self.steps += 1
        self._at_point()


class _FixedTaylor:
    """The same Taylor method at ``dps`` digits, in fixed point (Python integers scaled by 2^B) for the
    series recurrences, mpmath for the d exponentials of each step; the series is taken in σ = s/h0 (h0
    the previous step) so that its coefficients stay O(1)."""

    status = "running"

    def __init__(self, flow: ReducedFlow, c, p, q, T):
        self.flow, self.c, self.p, self.q = flow, c, p, q
        self.T = None if T is None else mp.mpf(T)
        self.B = int((flow.dps + 12) * 3.33) + 8
        self.ONE = 1 << self.B
        self.m = flow.active.index(flow.zpos_min)
        self.pf = [int(mp.floor(x * self.ONE)) for x in p]
        self.qf = [int(mp.floor(x * self.ONE)) for x in q]
        self.t, self.I = mp.mpf(0), mp.mpf(0)
        self.h0 = mp.mpf(0.5) / mp.mpf(flow.zmax)
        self.steps = 0
        self.half_log = C.log_norm("mpmath")  # ln N from ln Σ_j (term j of N²)
        self._at_point()

    @property
    def y(self):
        return self.I

    def _fix(self, x) -> int:
        return int(mp.floor(mp.ldexp(x, self.B)))

    def _at_point(self) -> None:
        c, p, q, tau, I = self.c, self.p, self.q, self.t, self.I
        a = [c[k] + p[k] * tau + q[k] * I for k in range(len(c))]
        self.M = max(a)
        self.wm = [mp.exp(ak - self.M) for ak in a]
        self.S0m = mp.fsum(self.wm)
        self.N = mp.exp(self.half_log(self.M + mp.log(self.S0m)))
        self.am = a[self.m]

    def step(self) -> None:
        B, fix, K, d = self.B, self._fix, self.flow.order, len(self.c)
        pf, qf, S0m = self.pf, self.qf, self.S0m
        hf = fix(self.h0)
        scale = mp.exp(-self.half_log(self.M))
        # scaled coefficients: I_j h0^j (fixed), E_k,n h0^n, S_n h0^n, P_n h0^n
        w = [fix(x) for x in self.wm]
        S0 = sum(w)
        P0 = fix(1 / mp.sqrt(S0m))
        invS0 = fix(1 / S0m)
        sc = fix(scale)
        I1 = (sc * P0 >> B) * hf >> B  # I_1 h0
        Ic = [0, I1]
        E = [[wk] for wk in w]
        S = [S0]
        P = [P0]
        g1 = [((pf[k] * hf >> B) + (qf[k] * I1 >> B)) for k in range(d)]
        jg = [[0, g1[k]] for k in range(d)]
        for nn in range(1, K):
            Sn = 0
            for k in range(d):
                Ek, jgk = E[k], jg[k]
                acc = 0
                for j in range(1, nn + 1):
                    acc += jgk[j] * Ek[nn - j]
                v = (acc >> B) // nn
                Ek.append(v)
                Sn += v
            S.append(Sn)
            acc = 0
            for j in range(1, nn + 1):
                acc += (j - 2 * nn) * S[j] * P[nn - j]
            Pn = ((acc >> B) * invS0 >> B) // (2 * nn)
            P.append(Pn)
            In1 = ((sc * Pn >> B) * hf >> B) // (nn + 1)  # I_{nn+1} h0^{nn+1}
            Ic.append(In1)
            for k in range(d):
                jg[k].append((nn + 1) * (qf[k] * In1 >> B))
        coef = [mp.ldexp(x, -B) for x in Ic]
        sig = self.flow._step(coef, K, 1.0, mp.mpf(1), 1.0)
        h = self.h0 * mp.mpf(sig)
        Tm = self.T
        if Tm is not None and self.t < Tm < self.t + h:
            h = Tm - self.t
        s = fix(h / self.h0)
        acc = Ic[K]
        for j in range(K - 1, 0, -1):
            acc = (acc * s >> B) + Ic[j]
        self.I = self.I + mp.ldexp(acc * s >> B, -B)
        self.t = self.t + h
        self.h0 = h
        self.steps += 1
        self._at_point()


@dataclass
class ReducedFlow:
    """C4's scalar ODE for one (z, α) with ρ = 1 (z of order 1), in float64
    (``dps`` None) or mpmath at ``dps`` digits. Integrated by a Taylor series method."""

    z: np.ndarray
    dps: int | None = None
    order: int = field(default=0)

    def __post_init__(self):
        z = np.asarray(self.z, float)
        self.zpos_min = float(z[z > 0].min())
        self.zmax = float(z.max())
        cert = MF.l2_certificates("numpy")  # C5's certificate levels of N, at ρ = 1
        self.collapse_level = float(cert.collapse(self.zpos_min, 1.0))  # N below it: collapse
        self.growth_level = float(cert.no_collapse(self.zmax, 1.0))  # N at or above it: growth
        self.k_min = int(np.sum(z == self.zpos_min))
        self.active = [float(v) for v in z if v != 0]  # z_j = 0 carries nothing in N
        if self.dps is None:
            self.num = float
            self.exp, self.sqrt, self.log = math.exp, math.sqrt, math.log
            self.tol = 2.0 ** -52
            self.order = self.order or 22
        else:
            self.num = mp.mpf
            self.exp, self.sqrt, self.log = mp.exp, mp.sqrt, mp.log
            self.tol = mp.mpf(10) ** (-(self.dps + 3))
            self.order = self.order or max(24, int(0.9 * self.dps) + 12)

    # the coefficients of one α
    def _setup(self, alpha):
        c_f, p_f, q_f = coefficients()
        with mp.workdps((self.dps or 15) + 10):
            a = mp.mpf(alpha)
            c = [c_f(mp.mpf(v), a, 1) for v in self.active]
            p = [p_f(mp.mpf(v), a, 1) for v in self.active]
            q = [q_f(mp.mpf(v), a, 1) for v in self.active]
        n = self.num
        return [n(x) for x in c], [n(x) for x in p], [n(x) for x in q]

    def run(self, alpha, T=None, *, deadline: float | None = None, max_steps: int = 200000,
            tau_cap: float | None = None, lower: float = 1.0) -> TaylorRun:
        """Integrate from τ = 0 (I = 0) until a certificate — N < ``lower``·ρ z_min (collapse;
        any lower ≤ 1 is a certificate) or N ≥ ρ z_max (growth) — or τ = T (then the saddle's
        unstable coordinate q), or a budget (``max_steps``, ``tau_cap``, ``deadline``)."""
        c, p, q = self._setup(alpha)
        if self.dps is None:
            outside = self._outside_float64(c, alpha, T, tau_cap)
            if outside:
                return TaylorRun(Fate.UNDECIDED, 0.0, math.nan, steps=0, why=outside, status=Status.RANGE_LIMIT)
            stepper = _FloatTaylor(self, c, p, q, T)
            tau_cap = tau_cap if tau_cap is not None else 1e4 / self.zpos_min
            lo_level = lower * self.collapse_level
        else:
            stepper = _FixedTaylor(self, c, p, q, T)
            tau_cap = mp.mpf(tau_cap if tau_cap is not None else 1e4 / self.zpos_min)
            lo_level = mp.mpf(lower) * mp.mpf(self.collapse_level)
        lnk = mp.log(self.k_min) if self.dps is not None else math.log(self.k_min)

        def fate(_t, _y):
            stop = self._check(stepper.t, stepper.N, stepper.T, stepper.am, lnk, stepper.steps, max_steps, tau_cap,
                               deadline, lo_level)
            return None if stop is None else (stop, stop.why)

        held = fate(0.0, None)  # the fate test at τ = 0, before any step
        if held is not None:
            return held[0]
        # the test itself ends the run at max_steps (a MAX_STEPS run), so the loop's own budget is one step more
        stepped = step_to_condition(stepper, fate, max_steps=max_steps + 1, clock="τ", horizon_why="")
        return stepped.outcome

    def _outside_float64(self, c, alpha, T, tau_cap) -> str:
        """Why float64 cannot carry this run ('' when it can): N = e^{lse/2} and the rate 1/N must stay finite
        and nonzero at τ = 0 (|c_j|/2 below ln of the largest float, 709.78), and the horizons 1/z_min
        finite. A subnormal z_min (or an α of its size) breaks both; then the run is not decided, and says so,
        instead of overflowing inside the series."""
        top = math.log(np.finfo(float).max)
        worst = max(abs(x) for x in c) / 2 if c else 0.0
        if not math.isfinite(worst) or worst >= top - 2 * math.log(len(c) + 1):
            return (f"float64 cannot hold N or 1/N at α = {alpha:.6g}: ln N² reaches {-worst * 2:.6g} "
                    f"(z_min = {self.zpos_min:.6g} of the scaled z)")
        for name, v in (("T", T), ("the τ cap", tau_cap), ("1/z_min", 1.0 / self.zpos_min if self.zpos_min > 0 else 0)):
            if v is not None and not math.isfinite(v):
                return f"float64 cannot hold the horizon {name} (z_min = {self.zpos_min:.6g} of the scaled z)"
        return ""

    def _step(self, coef, K, h0, one, safety):
        """A step from the last two Taylor coefficients (relative tolerance ``tol`` on the first)."""
        h = None
        ref = abs(coef[1])
        for j in (K - 1, K):
            cj = abs(coef[j])
            if cj > 0:
                hj = float((self.tol * ref / cj) ** (one / (j - 1)))
                h = hj if h is None else min(h, hj)
        return 0.7 * (h if h is not None else 4 * h0)

    def _check(self, tau, N, T, am, lnk, steps, max_steps, tau_cap, deadline, lo_level):
        if N < lo_level:
            return TaylorRun(Fate.COLLAPSE, tau, N, steps=steps)
        if N >= self.growth_level:
            return TaylorRun(Fate.GROWTH, tau, N, steps=steps)
        if not 0 <= N < math.inf:  # NaN or ∞: the series left the number range (N of size z_min ≪ 1 in float64)
            return TaylorRun(Fate.UNDECIDED, tau, N, steps=steps, status=Status.RANGE_LIMIT,
                             why=f"N left the number range at τ = {float(tau):.6g} after {steps} Taylor steps")
        if T is not None and tau >= T:
            e = mp if self.dps is not None else math
            x = e.exp(C.log_norm("mpmath" if self.dps is not None else "numpy")(am + lnk)) / self.zpos_min - 1
            return TaylorRun(Fate.UNDECIDED, tau, N, q=x * e.exp(-self.zpos_min * tau), steps=steps, status=Status.T_MAX)
        if steps >= max_steps:
            return TaylorRun(Fate.UNDECIDED, tau, N, steps=steps, why=f"{max_steps} Taylor steps",
                             status=Status.MAX_STEPS)
        if tau >= tau_cap:
            return TaylorRun(Fate.UNDECIDED, tau, N, steps=steps, why=f"τ reached {float(tau_cap):g} without a certificate",
                             status=Status.HORIZON)
        if deadline is not None and (steps & 7) == 0 and time.perf_counter() > deadline:
            raise BudgetExhausted(Status.MAX_SECONDS, "time budget")
        return None

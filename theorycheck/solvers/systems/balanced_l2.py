"""ℓ2-SAM, one example, balanced layers, θ = ln u (N carried as ln N)."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from theorycheck.solvers.backends import MpBackend
from theorycheck.solvers.systems.base import (
    Backend,
    EventAction,
    EventFn,
    FlowSystem,
    Thresholds,
    _softmax_dot,
    ldexp,
    z_scale_exponent,
)
from theorycheck.status import Status
from theorycheck.symbolic import forms as C


class BalancedL2System(FlowSystem):
    """ℓ2-SAM, one example, balanced layers u > 0, any L ≥ 2 (C4, C5), in θ = ln u, which
    keeps e^{zτ} growth representable and nearly linear. Near a collapse θ has a log
    singularity (ever smaller steps; hopeless at 30 digits), so once lse(θ) has fallen by
    ``SHRINK`` the clock becomes the arc length s with dτ/ds = (N/N_ref)^{1/(L−1)}: then
    dθ_j/ds = (N/N_ref)^{1/(L−1)} θ_j' (∝ z_j (N − ρ z_j) for L = 2) is smooth and bounded, N → 0
    exponentially in s, and τ (a state component) converges to the collapse time. Back to τ if
    u grows again. The unit N_ref is N where the arc clock began, so that a scaled problem
    (u, ρ) → (c u, c ρ) takes the same steps in s at any c."""

    name = "balanced-l2-log"
    #: ln of the arc clock's unit: dτ/ds = (N/N_ref)^{1/(L−1)}, N_ref = N where the arc clock began (set at
    #: the switch; 0 = the plain arc length) so that s does not depend on the scale of the problem
    lnN_ref = 0.0
    #: switch to the arc clock when lse(θ) falls this far (ln) below its start; back at GROW
    SHRINK = math.log(1e-3)
    GROW = math.log(1e-1)

    def __init__(self, bk: Backend, z, u0, L: int, rho: float, thr: Thresholds, optimizer):
        self.bk, self.L, self.d, self.thr = bk, L, len(z), thr
        self.cf = C.balanced_log_field(L, optimizer, bk.name)  # a normalised step (ℓ2-SAM's field)
        self.half_log = C.log_norm(bk.name)  # ln N from ln Σ_j (term j of N²)
        self.z = bk.array(z)
        # the forms are evaluated on z/2^k (exact) so that z_j² never leaves the number range:
        # ln-summand(z) = ln-summand(z/2^k) + 2k ln 2, field(z, θ, ln N) = 2^k field(z/2^k, θ, ln N − k ln 2)
        self.k = z_scale_exponent(z)
        self.zs = bk.array([ldexp(bk, bk.num(v), -self.k) for v in z]) if self.k else self.z
        self.ln_scale = self.k * (mpmath.ln2 if isinstance(bk, MpBackend) else math.log(2.0))
        self.rho = bk.num(rho)
        self.y0 = bk.log(bk.array(u0))
        self.ref = bk.lse(self.y0)
        self.start_records = []

    def _theta(self, y):
        return y if self.clock == "time" else y[:-1]

    def lnN(self, th):
        lnN = self.half_log(self.bk.lse(self.bk.call(self.cf.log_summand, self.zs, th)))
        return lnN + self.ln_scale if self.k else lnN

    def _field(self, th, lnN):
        """dθ/dτ (the compiled field on z/2^k, scaled back: it is z_j times a function of ρ z_j/N)."""
        if not self.k:
            return self.bk.call(self.cf.field, self.z, th, lnN, self.rho)
        f = self.bk.call(self.cf.field, self.zs, th, lnN - self.ln_scale, self.rho)
        return np.array([ldexp(self.bk, v, self.k) for v in f], dtype=f.dtype)

    def rhs(self, t, y):
        th = self._theta(y)
        lnN = self.lnN(th)
        f = self._field(th, lnN)
        if self.clock == "time":
            return f
        # arc clock dτ/ds = (N/N_ref)^{1/(L−1)} (degree 1 in u): near u = 0 the field θ' is of degree −1
        # (for L ≥ 3 u reaches 0 at a finite speed), so dθ/ds stays bounded and N → 0 exponentially in s;
        # the unit N_ref makes s independent of the scale of u
        N = self.bk.exp(self.bk.array([(lnN - self.lnN_ref) / (self.L - 1)]))
        return np.concatenate([f * N[0], N])

    def events(self, t0, y0) -> list[EventFn]:
        bk = self.bk
        if self.clock == "arc":
            back = self.ref + self.GROW
            c_level = self.lnN(self._theta(y0)) + self.thr.arc_log
            return [EventFn("collapse", -1, lambda t, y: self.lnN(y[:-1]) - c_level, -1),
                    EventFn("to_time", -1, lambda t, y: bk.lse(y[:-1]) - back, +1),
                    EventFn("t_max", -1, lambda t, y: y[-1] - self.t_max, +1)]
        c_level = bk.lse(y0) + self.thr.collapse_log
        lin = self.ref + self.SHRINK
        evs = [EventFn("collapse", -1, lambda t, y: bk.lse(y) - c_level, -1),
               EventFn("to_arc", -1, lambda t, y: bk.lse(y) - lin, -1)]
        if self.L >= 3:
            b_level = max(y0) + self.thr.blowup_log / (self.L - 2)
            evs.append(EventFn("blowup", -1, lambda t, y: max(y) - b_level, +1))
        return evs

    def on_event(self, ev: EventFn, t, y) -> EventAction:
        if ev.name in ("to_arc", "to_time"):
            act = self.switch_clock(ev, t, y, lambda y_, tau: np.concatenate([y_, self.bk.array([tau])]),
                                    lambda y_: np.array(y_[:-1], copy=True))
            act.system.lnN_ref = self.lnN(self._theta(y))  # the arc clock's unit (see rhs)
            return act
        return EventAction(stop=Status(ev.name), records=[] if ev.name == "t_max" else [(ev.name, -1, "")])

    def event_rate(self, ev: EventFn, t, y):
        """d/dτ of the event's function in θ: softmax(θ)·θ' (collapse), θ'_argmax (blow-up)."""
        f = self.rhs(t, y)
        if ev.name == "collapse":
            return _softmax_dot(self.bk, y, f)
        return f[int(np.argmax(self.bk.to_float(y)))]

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        return self.L * self.bk.to_float(self._theta(y)), np.ones(self.d, dtype=int)

    def arc_tail(self, t, y):
        """τ* − τ at a collapse event on the arc clock: the clock rate c = dτ/ds = (N/N_ref)^{1/(L−1)}
        decays like e^{−κ s} with κ = −c Σ_k p_k θ_k' (p = the weights of N², θ' = dθ/dτ), so the
        rest of the time is ∫ c ds = c/κ = −1/Σ_k p_k θ_k' (first order; 0 if not shrinking)."""
        bk = self.bk
        th = y[:-1]
        lnN = self.lnN(th)
        f = self._field(th, lnN)
        rate = _softmax_dot(bk, bk.call(self.cf.log_summand, self.zs, th), f)
        return -1 / rate if rate < 0 else 0 * rate

    def observe_exact(self, t, y) -> list:
        """log|β_j| = L θ_j unrounded (mpmath numbers in an mpmath run)."""
        return [self.L * v for v in self._theta(y)]

    def atol(self, rtol):
        tol = np.array([rtol] * self.d, dtype=object if isinstance(self.bk, MpBackend) else float)
        if self.clock == "arc":  # τ: relative to the time the arc clock started
            tol = np.concatenate([tol, np.array([rtol * max(abs(self.tau_ref), 1e-300)], dtype=tol.dtype)])
        return tol

"""C4's reduction: the scalar ODE dI/dτ = 1/N(τ, I)."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from theorycheck.solvers.backends import MpBackend
from theorycheck.solvers.systems.balanced_l2 import BalancedL2System
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
from theorycheck.symbolic import theory_forms as MF


class ReducedL2System(FlowSystem):
    """C4: ℓ2-SAM, L = 2, one example, uniform α: dI/dτ = 1/N(τ, I), N from the compiled
    log-summand (log-space sum); θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ). Near a collapse the
    clock becomes s with dτ/ds = N (then dI/ds = 1: smooth), as in BalancedL2System; both
    clocks from :func:`theorycheck.symbolic.theory_forms.reduced_l2_clocked`."""

    name = "reduced-l2"
    #: ln of the arc clock's unit: dτ/ds = N/N_ref, N_ref = N where the arc clock began (set at
    #: the switch; 0 = the plain arc length) so that s does not depend on the scale of the problem
    lnN_ref = 0.0
    SHRINK = BalancedL2System.SHRINK
    GROW = BalancedL2System.GROW

    def __init__(self, bk: Backend, z, alpha: float, rho: float, thr: Thresholds):
        self.bk, self.L, self.d, self.thr = bk, 2, len(z), thr
        self.log_summand = MF.reduced_l2_log(bk.name)
        self.half_log = C.log_norm(bk.name)  # ln N from ln Σ_j (term j of N²)
        self.theta = MF.reduced_l2(bk.name)[1]
        self.z = bk.array(z)
        # scale: the state is J = I·4^k and the forms are evaluated on (z/2^k, τ·2^k, J), which
        # leaves θ_j and ln N − k ln 2 unchanged (C4's reduction is homogeneous): neither z_j² nor
        # I ~ 1/z² leaves the number range (k = 0 for ordinary z: the state is I itself)
        self.k = z_scale_exponent(z)
        self.zs = bk.array([ldexp(bk, bk.num(v), -self.k) for v in z]) if self.k else self.z
        self.ln_scale = self.k * (mpmath.ln2 if isinstance(bk, MpBackend) else math.log(2.0))
        self.alpha, self.rho = bk.num(alpha), bk.num(rho)
        self.y0 = bk.array([0])
        self.ref = bk.lse(self._theta(bk.num(0), self.y0[0]))
        self.start_records = []

    def lnN(self, t, J):
        """ln N at time t and state J = I·4^k (see __init__)."""
        terms = self.bk.call(self.log_summand, self.zs, ldexp(self.bk, t, self.k), J, self.alpha, self.rho)
        lnN = self.half_log(self.bk.lse(terms))
        return lnN + self.ln_scale if self.k else lnN

    def rhs(self, t, y):
        tau = self.time_of(t, y)
        lnN = self.lnN(tau, y[0])
        # C4's ODE in this clock for J = I·4^k: dJ/dτ = 1/(N/4^k), the form at ln N − 2k ln 2
        lnN_J = lnN - 2 * self.ln_scale if self.k else lnN
        dtau, dI = MF.reduced_l2_clocked(self.clock, self.bk.name)(lnN_J, 0)
        if self.clock == "time":
            return self.bk.array([dI])
        # arc clock in units of N at its start (s' = N_ref·s, scale-free): C4's arc form at
        # lnN − lnN_ref gives dτ/ds' = N/N_ref, and dI/ds' = (dI/ds)/N_ref (times 4^k for J)
        dtau, dI = MF.reduced_l2_clocked("arc", self.bk.name)(lnN - self.lnN_ref, 0)
        ln_unit = self.lnN_ref - 2 * self.ln_scale if self.k else self.lnN_ref
        return self.bk.array([dI * self.bk.exp(self.bk.array([-ln_unit]))[0], dtau])  # state (J, τ)

    def _theta(self, t, J):
        return self.bk.call(self.theta, self.zs, ldexp(self.bk, self.bk.num(t), self.k), J, self.alpha, self.rho)

    def _lse_theta(self, t, y):
        return self.bk.lse(self._theta(self.time_of(t, y), y[0]))

    def events(self, t0, y0) -> list[EventFn]:
        if self.clock == "arc":
            c_level = self.lnN(y0[-1], y0[0]) + self.thr.arc_log
            back = self.ref + self.GROW
            return [EventFn("collapse", -1, lambda t, y: self.lnN(y[-1], y[0]) - c_level, -1),
                    EventFn("to_time", -1, lambda t, y: self._lse_theta(t, y) - back, +1),
                    EventFn("t_max", -1, lambda t, y: y[-1] - self.t_max, +1)]
        level = self._lse_theta(t0, y0) + self.thr.collapse_log
        lin = self.ref + self.SHRINK
        return [EventFn("collapse", -1, lambda t, y: self._lse_theta(t, y) - level, -1),
                EventFn("to_arc", -1, lambda t, y: self._lse_theta(t, y) - lin, -1)]

    def event_rate(self, ev: EventFn, t, y):
        """d/dτ lse(θ(τ, I(τ))) by a central difference along (1, I'): θ is affine in (τ, I)."""
        dI = self.rhs(t, y)[0]
        h = (abs(self.bk.num(t)) + 1) * (self.bk.num(10) ** (-6))
        dth = (self._theta(t + h, y[0] + h * dI) - self._theta(t - h, y[0] - h * dI)) * (1 / (2 * h))
        return _softmax_dot(self.bk, self._theta(t, y[0]), dth)

    def on_event(self, ev: EventFn, t, y) -> EventAction:
        if ev.name in ("to_arc", "to_time"):
            act = self.switch_clock(ev, t, y, lambda y_, tau: self.bk.array([y_[0], tau]),
                                    lambda y_: self.bk.array([y_[0]]))
            act.system.lnN_ref = self.lnN(self.time_of(t, y), y[0])  # the arc clock's unit (see rhs)
            return act
        if ev.name == "t_max":
            return EventAction(stop=Status.T_MAX)
        return EventAction(stop=Status.COLLAPSE, records=[("collapse", -1, "N → 0")])

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        return self.L * self.bk.to_float(self._theta(t, y[0])), np.ones(self.d, dtype=int)

    def observe_exact(self, t, y) -> list:
        """log|β_j| = L θ_j unrounded (mpmath numbers in an mpmath run)."""
        return [self.L * v for v in self._theta(t, y[0])]

    def atol(self, rtol):
        """ρ z_j² I is what enters θ_j: I's absolute tolerance is in units of 1/(ρ max_j z_j²),
        so that a scaled problem (α, ρ) → (cα, cρ), where I scales as 1/c, keeps its relative
        accuracy (ρ = 0: θ does not depend on I; unit 1)."""
        dtype = object if isinstance(self.bk, MpBackend) else float
        zmax = max(abs(float(v)) for v in self.zs)  # the state is J = I·4^k: its unit is 1/(ρ max(z/2^k)²)
        rho = float(self.rho)
        if rho > 0 and zmax > 0:
            ln_unit = -(math.log(rho) + 2 * math.log(zmax))
            unit = self.bk.exp(self.bk.array([ln_unit]))[0] if isinstance(self.bk, MpBackend) else \
                math.exp(min(max(ln_unit, -700.0), 700.0))
        else:
            unit = 1
        if self.clock == "arc":
            return np.array([rtol * unit, rtol * max(abs(self.tau_ref), 1e-300)], dtype=dtype)
        return np.array([rtol * unit], dtype=dtype)

"""What to solve: the GD / SAM flows as hybrid systems, each in the coordinates that suit
it, with the events that end a smooth segment.

- :class:`BalancedL2System` — ℓ2-SAM, one example, balanced, u > 0: θ = ln u, N carried
  as ln N (THEORY.md, Rescaled flows; C4/C5). Events: collapse (N → 0), blow-up (L ≥ 3).
- :class:`BranchSystem` — GD and ℓ∞-SAM, one example, balanced, L ≥ 2: per coordinate
  the sign in ε is locked to a branch σ, on which û_j = u_j − ρσ moves like GD, and the
  state is v_j = ln|û_j| (C2: v is linear in τ for L = 2). Events: u_j = 0 (Filippov:
  cross or slide, then the coordinate is frozen at 0), blow-up (C3).
- :class:`LayersSystem` — everything else: unbalanced layers, L = 1, several examples in
  real time; linear coordinates W (L×d; d when the layers are tied). ℓ∞ switching
  surfaces (a weight or ∂Lo/∂β_j crossing 0) are handled with Filippov's convention.
- :class:`ReducedL2System` — C4's scalar ODE dI/dτ = 1/N(τ, I).

All numbers go through a backend (float64 or mpmath) and every formula through
:mod:`theorycheck.symbolic.compile`. ``observe(t, y)`` maps a state to (ln|β|, sign β) as floats.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from theorycheck.solve.steppers import FloatBackend, MpBackend, log_abs_and_sign
from theorycheck.symbolic import compile as C

Backend = FloatBackend | MpBackend


@dataclass(frozen=True)
class Thresholds:
    """Event levels: collapse when the state has shrunk by e^{collapse_log} (relative),
    blow-up when (L−2)·ln|·| has grown by ``blowup_log`` (the time left is then
    e^{−blowup_log} of the blow-up time: negligible)."""

    collapse_log: float
    blowup_log: float
    arc_log: float

    @classmethod
    def for_backend(cls, bk: Backend) -> Thresholds:
        """mpmath: 10^{D/2+3} (D requested digits), then the singular time is extrapolated
        (:func:`extrapolate_singularity`), error ~ 10^{−D}; closer is not resolvable in
        time at D digits. float64: 1e-10 (both), then the same extrapolation."""
        if isinstance(bk, MpBackend):
            lv = (bk.digits / 2 + 3) * math.log(10)
            return cls(collapse_log=-lv, blowup_log=lv, arc_log=-(bk.dps + 2) * math.log(10))
        return cls(collapse_log=math.log(1e-10), blowup_log=math.log(1e10), arc_log=math.log(1e-18))


@dataclass
class EventFn:
    """g(t, y): the event fires when g changes sign (``direction`` +1 upward, −1 downward,
    0 either); ``index`` a 0-based coordinate (−1: global)."""

    name: str
    index: int
    fn: Callable[[Any, Any], Any]
    direction: int = 0
    data: Any = None


@dataclass
class Outcome:
    """What an event does: stop (a STOP_REASONS key) or continue with ``system`` from ``y``;
    ``records`` are (kind, 0-based index or −1, detail) for the trajectory's event list."""

    stop: str | None = None
    system: Any = None
    y: Any = None
    records: list[tuple[str, int, str]] = field(default_factory=list)


def _sgn(x) -> int:
    return 1 if x > 0 else (-1 if x < 0 else 0)


def _softmax_dot(bk, y, f):
    """Σ_j softmax(y)_j f_j: the derivative of logsumexp(y) along ẏ = f."""
    m = bk.lse(y)
    w = bk.exp(np.array([yi - m for yi in y], dtype=y.dtype))
    return sum(wi * fi for wi, fi in zip(w, f))


def extrapolate_singularity(t_a, r_a, t_e, r_e):
    """The time τ* of a power-law singularity from the rates r = dg/dτ of g = p ln|τ* − τ|
    + c at two times (p unknown: collapse p > 0, blow-up p < 0): r (τ* − τ) = −p at both,
    so τ* = (r_e t_e − r_a t_a)/(r_e − r_a). Returns None when the rates do not fit."""
    if r_a == 0 or r_e == 0 or (r_a > 0) != (r_e > 0) or abs(r_e) <= abs(r_a):
        return None
    ts = (r_e * t_e - r_a * t_a) / (r_e - r_a)
    return ts if ts >= t_e else None


class FlowSystem:
    """Base: ``y0``, ``rhs(t, y)``, ``events()``, ``on_event(ev, t, y)``, ``observe(t, y)``,
    ``atol(rtol)``, ``start_stop()`` (a stop reason already at the start, or None)."""

    name = "flow"
    time_kind = "rescaled"
    bk: Backend
    L: int
    d: int
    y0: Any
    start_records: list[tuple[str, int, str]]

    #: the independent variable of the current segment: "time" (τ or t), or "arc" (s,
    #: with dτ/ds = N and τ the last state component: a collapse regularised)
    clock = "time"
    t_max: float = math.inf

    def time_of(self, s, y):
        """Time at clock value s and state y."""
        return s if self.clock == "time" else y[-1]

    def start_stop(self) -> str | None:
        return None

    def event_rate(self, ev: EventFn, t, y):
        return None

    def atol(self, rtol):
        return np.array([rtol] * int(np.size(self.y0)), dtype=object if isinstance(self.bk, MpBackend) else float)

    def copy(self):
        new = copy.copy(self)
        for k, v in vars(self).items():
            if isinstance(v, (np.ndarray, list, dict, set)):
                setattr(new, k, copy.copy(v))
        return new


# ============================================================================ ℓ2, balanced, θ = ln u
class BalancedL2System(FlowSystem):
    """ℓ2-SAM, one example, balanced layers u > 0, any L ≥ 2 (C4, C5), in θ = ln u, which
    keeps e^{zτ} growth representable and nearly linear. Near a collapse θ has a log
    singularity (ever smaller steps; hopeless at 30 digits), so once lse(θ) has fallen by
    ``SHRINK`` the clock becomes the arc length s with dτ/ds = N: then dθ_j/ds = N θ_j'
    (= z_j (N − ρ z_j) for L = 2) is smooth and bounded, N → 0 exponentially in s, and τ
    (a state component) converges to the collapse time. Back to τ if u grows again."""

    name = "balanced-l2-log"
    #: switch to the arc clock when lse(θ) falls this far (ln) below its start; back at GROW
    SHRINK = math.log(1e-3)
    GROW = math.log(1e-1)

    def __init__(self, bk: Backend, z, u0, L: int, rho: float, thr: Thresholds):
        self.bk, self.L, self.d, self.thr = bk, L, len(z), thr
        self.cf = C.balanced_log_field(L, "sam-l2", bk.name)
        self.z = bk.array(z)
        self.rho = bk.num(rho)
        self.y0 = bk.log(bk.array(u0))
        self.ref = bk.lse(self.y0)
        self.start_records = []

    def _theta(self, y):
        return y if self.clock == "time" else y[:-1]

    def lnN(self, th):
        return self.bk.lse(self.bk.call(self.cf.log_summand, self.z, th)) / 2

    def rhs(self, t, y):
        th = self._theta(y)
        lnN = self.lnN(th)
        f = self.bk.call(self.cf.field, self.z, th, lnN, self.rho)
        if self.clock == "time":
            return f
        N = self.bk.exp(self.bk.array([lnN]))
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

    def on_event(self, ev: EventFn, t, y) -> Outcome:
        if ev.name in ("to_arc", "to_time"):
            new = self.copy()
            new.clock = "arc" if ev.name == "to_arc" else "time"
            tau = self.time_of(t, y)
            new.tau_ref = tau
            y_new = (np.concatenate([y, self.bk.array([tau])]) if new.clock == "arc" else np.array(y[:-1], copy=True))
            return Outcome(system=new, y=y_new)
        return Outcome(stop=ev.name, records=[] if ev.name == "t_max" else [(ev.name, -1, "")])

    def event_rate(self, ev: EventFn, t, y):
        """d/dτ of the event's function in θ: softmax(θ)·θ' (collapse), θ'_argmax (blow-up)."""
        f = self.rhs(t, y)
        if ev.name == "collapse":
            return _softmax_dot(self.bk, y, f)
        return f[int(np.argmax(self.bk.to_float(y)))]

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        return self.L * self.bk.to_float(self._theta(y)), np.ones(self.d, dtype=int)

    def atol(self, rtol):
        tol = np.array([rtol] * self.d, dtype=object if isinstance(self.bk, MpBackend) else float)
        if self.clock == "arc":  # τ: relative to the time the arc clock started
            tol = np.concatenate([tol, np.array([rtol * max(abs(self.tau_ref), 1e-300)], dtype=tol.dtype)])
        return tol


# ============================================================================ GD / ℓ∞, balanced, v = ln|û|
class BranchSystem(FlowSystem):
    """GD or ℓ∞-SAM, one example, balanced, L ≥ 2. Coordinates are independent: each is
    either active (state v_j = ln|û_j|, sign s_j, branch σ_j, û_j = u_j + c_j) or frozen
    at a value (slid to 0, or an equilibrium such as α_j = ρ)."""

    name = "balanced-branch-log"

    def __init__(self, bk: Backend, z, u0, L: int, rho: float, optimizer: str, thr: Thresholds):
        self.bk, self.L, self.d, self.thr = bk, L, len(z), thr
        self.cf = C.branch_field(L, optimizer, bk.name)
        self.z = [bk.num(v) for v in z]
        self.rho = bk.num(rho)
        d = self.d
        self.s = [0] * d
        self.sig = [0] * d
        self.c = [bk.num(0)] * d
        self.side = [0] * d
        self.frozen = [False] * d
        self.ufrozen = [bk.num(0)] * d
        self.y0 = bk.array([0] * d)
        self.start_records = []
        for j, u in enumerate(u0):
            self._init_coord(j, bk.num(u), self.y0)

    # -- per-coordinate bookkeeping
    def _set_branch(self, j: int, side: int, u, y) -> str:
        """Put coordinate j on the branch of side ``side`` of 0, at value u."""
        zj = self.z[j]
        sig = _sgn(self.cf.argument(zj, side))
        uhat = self.cf.point(zj, u, sig, self.rho)
        self.sig[j], self.side[j] = sig, side
        self.c[j] = self.cf.point(zj, 0 * u, sig, self.rho)
        if u != 0 and uhat == self.c[j]:  # |u| below the resolution of û = u + c: u is at 0
            return "at_zero"
        if uhat == 0:
            self.frozen[j], self.ufrozen[j] = True, u
            return "stationary"
        self.s[j] = _sgn(uhat)
        y[j] = self.bk.log(self.bk.array([abs(uhat)]))[0]
        self.frozen[j] = False
        return "active"

    def _freeze(self, j: int, u, y) -> None:
        self.frozen[j], self.ufrozen[j] = True, u
        y[j] = 0 * y[j]

    def _at_zero(self, j: int, y) -> str:
        """Filippov's rule at u_j = 0: both one-sided fields point the same way → cross;
        toward 0 from both sides → slide (freeze at 0); any zero → frozen equilibrium."""
        zj, rho = self.z[j], self.rho
        zero = 0 * rho
        fp = self.cf.field(zj, zero, _sgn(self.cf.argument(zj, 1)), rho)
        fm = self.cf.field(zj, zero, _sgn(self.cf.argument(zj, -1)), rho)
        if fp < 0 < fm:
            self._freeze(j, zero, y)
            return "slide"
        if fp > 0 and fm > 0:
            return "cross" if self._set_branch(j, 1, zero, y) == "active" else "stationary"
        if fp < 0 and fm < 0:
            return "cross" if self._set_branch(j, -1, zero, y) == "active" else "stationary"
        self._freeze(j, zero, y)
        return "stationary"

    def _init_coord(self, j: int, u, y) -> None:
        if self.z[j] == 0:
            self._freeze(j, u, y)
            self.start_records.append(("stationary", j, "z_j = 0"))
        elif u == 0:
            kind = self._at_zero(j, y)
            self.start_records.append((kind, j, "u_j = 0 at the start"))
        else:
            state = self._set_branch(j, _sgn(u), u, y)
            if state == "stationary":
                self.start_records.append(("stationary", j, "û_j = 0: an equilibrium (e.g. α_j = ρ)"))
            elif state == "at_zero":
                kind = self._at_zero(j, y)
                self.start_records.append((kind, j, "|u_j| ≪ ρ at the start: treated as u_j = 0"))

    # -- the flow
    def rhs(self, t, v):
        bk = self.bk
        out = bk.call(self.cf.shifted, bk.array(self.z), v, list(self.s), list(self.sig), self.rho)
        out = np.asarray(out, dtype=object if isinstance(bk, MpBackend) else float).copy()
        for j in range(self.d):
            if self.frozen[j]:
                out[j] = 0 * out[j]
        return out

    def start_stop(self) -> str | None:
        if all(self.frozen):
            return "collapse" if all(u == 0 for u in self.ufrozen) else "stationary"
        return None

    def events(self, t0, v0) -> list[EventFn]:
        f0 = self.rhs(t0, v0)
        evs: list[EventFn] = []
        grow = []
        for j in range(self.d):
            if self.frozen[j]:
                continue
            if f0[j] > 0:
                grow.append(j)
            if self.c[j] != 0 and self.s[j] == _sgn(self.c[j]):
                target = self.bk.log(self.bk.array([abs(self.c[j])]))[0]
                if (target - v0[j]) * f0[j] > 0:
                    evs.append(EventFn("zero", j, lambda t, y, j=j, a=target: y[j] - a, _sgn(target - v0[j])))
        if self.L >= 3 and grow:
            level = max(v0[j] for j in grow) + self.thr.blowup_log / (self.L - 2)
            evs.append(EventFn("blowup", -1, lambda t, y: max(y[j] for j in grow) - level, +1))
        return evs

    def event_rate(self, ev: EventFn, t, y):
        if ev.name != "blowup":
            return None
        f = self.rhs(t, y)
        act = [j for j in range(self.d) if not self.frozen[j]]
        j = max(act, key=lambda i: y[i])
        return f[j]

    def on_event(self, ev: EventFn, t, y) -> Outcome:
        if ev.name == "blowup":
            return Outcome(stop="blowup", records=[("blowup", -1, "")])
        new = self.copy()
        y = np.array(y, copy=True)
        j = ev.index
        kind = new._at_zero(j, y)
        out = Outcome(system=new, y=y, records=[(kind, j, "u_j = 0")])
        out.stop = new.start_stop()
        if out.stop == "collapse":
            out.records.append(("collapse", -1, "every coordinate is at 0"))
        return out

    def u_log(self, y) -> tuple[np.ndarray, np.ndarray]:
        """(ln|u_j|, sign u_j) as floats, without forming e^{v} in float64."""
        la = np.empty(self.d)
        sg = np.zeros(self.d, dtype=int)
        mp = isinstance(self.bk, MpBackend)
        for j in range(self.d):
            if self.frozen[j]:
                la[j], sg[j] = log_abs_and_sign(self.ufrozen[j])
                continue
            s, c, v = self.s[j], self.c[j], y[j]
            if mp:
                la[j], sg[j] = log_abs_and_sign(s * mpmath.exp(v) - c)
                continue
            v, c = float(v), float(c)
            if c == 0:
                la[j], sg[j] = v, s
            elif _sgn(c) == -s:  # u = s (e^v + |c|)
                la[j], sg[j] = np.logaddexp(v, math.log(abs(c))), s
            else:  # u = s (e^v − |c|)
                lc = math.log(abs(c))
                if v > lc:
                    la[j], sg[j] = v + math.log(-math.expm1(lc - v)), s
                elif v < lc:
                    la[j], sg[j] = lc + math.log(-math.expm1(v - lc)), -s
                else:
                    la[j], sg[j] = -math.inf, 0
        return la, sg

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        la, sg = self.u_log(y)
        return self.L * la, sg**self.L


# ============================================================================ C4's reduction
class ReducedL2System(FlowSystem):
    """C4: ℓ2-SAM, L = 2, one example, uniform α: dI/dτ = 1/N(τ, I), N from the compiled
    log-summand (log-space sum); θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ). Near a collapse the
    clock becomes s with dτ/ds = N (then dI/ds = 1: smooth), as in BalancedL2System."""

    name = "reduced-l2"
    SHRINK = BalancedL2System.SHRINK
    GROW = BalancedL2System.GROW

    def __init__(self, bk: Backend, z, alpha: float, rho: float, thr: Thresholds):
        self.bk, self.L, self.d, self.thr = bk, 2, len(z), thr
        self.log_summand = C.reduced_l2_log(bk.name)
        self.theta = C.reduced_l2(bk.name)[1]
        self.z = bk.array(z)
        self.alpha, self.rho = bk.num(alpha), bk.num(rho)
        self.y0 = bk.array([0])
        self.ref = bk.lse(self._theta(bk.num(0), self.y0[0]))
        self.start_records = []

    def lnN(self, t, I):
        return self.bk.lse(self.bk.call(self.log_summand, self.z, t, I, self.alpha, self.rho)) / 2

    def rhs(self, t, y):
        tau = self.time_of(t, y)
        lnN = self.lnN(tau, y[0])
        if self.clock == "time":
            return self.bk.exp(self.bk.array([-lnN]))
        return np.concatenate([self.bk.array([1]), self.bk.exp(self.bk.array([lnN]))])

    def _theta(self, t, I):
        return self.bk.call(self.theta, self.z, self.bk.num(t), I, self.alpha, self.rho)

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

    def on_event(self, ev: EventFn, t, y) -> Outcome:
        if ev.name in ("to_arc", "to_time"):
            new = self.copy()
            new.clock = "arc" if ev.name == "to_arc" else "time"
            tau = self.time_of(t, y)
            new.tau_ref = tau
            y_new = self.bk.array([y[0], tau]) if new.clock == "arc" else self.bk.array([y[0]])
            return Outcome(system=new, y=y_new)
        if ev.name == "t_max":
            return Outcome(stop="t_max")
        return Outcome(stop="collapse", records=[("collapse", -1, "N → 0")])

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        return self.L * self.bk.to_float(self._theta(t, y[0])), np.ones(self.d, dtype=int)

    def atol(self, rtol):
        dtype = object if isinstance(self.bk, MpBackend) else float
        if self.clock == "arc":
            return np.array([rtol, rtol * max(abs(self.tau_ref), 1e-300)], dtype=dtype)
        return np.array([rtol], dtype=dtype)


# ============================================================================ general layers
class LayersSystem(FlowSystem):
    """Linear coordinates: W (L×d), or u (d) when the layers are tied (balanced). One
    example in rescaled time (``G = −z``) or n examples in real time
    (``G = (1/n) Σ ℓ'(m_i) z_i``); field ``−∇_W Lo(W + ε)`` built from the compiled
    layer gradient, perturbation and ℓ'.

    ℓ∞ switching: ε_kj = ρ sign(G_j Π_{m≠k} w_mj) is discontinuous where a weight or G_j
    crosses 0. Signs are locked per segment; at a crossing, Filippov's rule decides:
    both one-sided normal velocities of the same sign → cross; pointing into the surface
    from both sides → slide (a weight is held at 0; the other components follow the convex
    combination that keeps it there) until one side lets go."""

    name = "layers"
    #: ℓ2: stop at a critical point of Lo once ‖∇Lo(w)‖/‖∇Lo(w + ε)‖ has fallen by this
    #: factor (ln) from its initial value while w stays away from 0 (ε is undefined there,
    #: and the flow chatters: no integrator follows it further at a sane cost)
    SINGULAR_LOG = math.log(1e-4)

    def __init__(self, bk: Backend, Z, W0, L: int, rho: float, optimizer: str, loss: str,
                 *, rescaled: bool, tied: bool, thr: Thresholds):
        self.bk, self.L, self.thr = bk, L, thr
        self.optimizer, self.loss = optimizer, loss
        self.rescaled, self.tied = rescaled, tied
        self.time_kind = "rescaled" if rescaled else "real"
        self.name = f"layers-{'tied' if tied else 'full'}-{'rescaled' if rescaled else 'real'}"
        self.grad_f = C.layer_gradient(L, bk.name)
        self.eps_f = C.perturbation(optimizer, bk.name)
        self.loss_f, self.dloss_f = C.stable_loss_functions(loss, bk.name)
        Z = np.asarray(Z, dtype=float)
        self.n, self.d = Z.shape
        self.Zf = Z
        self.Z = bk.array(Z)
        self.rho = bk.num(rho)
        W0 = np.asarray(W0, dtype=float)
        y0 = W0[0] if tied else W0.reshape(-1)
        self.y0 = bk.array(y0)
        self.lnW0 = self._lnnorm(self.y0)
        self.singular_off = False
        self.scale = float(np.max(np.abs(W0))) or 1.0
        # ℓ∞ bookkeeping: locked signs, sliding surfaces, dead coordinates
        self.linf = optimizer == "sam-linf"
        self.sgnW = np.sign(W0[:1] if tied else W0).astype(int)
        self.sgnG = np.zeros(self.d, dtype=int)
        self.sliding: list[tuple] = []
        self.dead: set[int] = set()
        self.start_records = []
        self.mixed = [bool(np.any(Z[:, j] > 0) and np.any(Z[:, j] < 0)) for j in range(self.d)]
        self._fail: str | None = None
        ln_lim = (680.0 - 2 * math.log(1 + self.d * float(np.max(np.abs(Z))))) / (2 * L)
        self.ln_limit = ln_lim
        if self.linf:
            W = self.W(self.y0)
            G = self.G(W)
            self.sgnG = np.array([_sgn(g) for g in G], dtype=int)
            y = np.array(self.y0, copy=True)
            for a in self._surfaces():
                if self._value(a, W, G) == 0 and not (a[0] == "G" and not self.mixed[a[1]]):
                    kind = self._handle_surface(a, y)
                    self.start_records.append((kind, a[-1], f"{a[0]}-surface at 0 at the start"))
                    W = self.W(y)
            self.y0 = y

    # -- shapes and pieces
    def W(self, y):
        if self.tied:
            return np.array([y] * self.L, dtype=y.dtype)
        return y.reshape(self.L, self.d)

    def flat(self, F):
        return F[0].copy() if self.tied else F.reshape(-1).copy()

    def G(self, W):
        """∂Lo/∂β (rescaled one example: −z)."""
        if self.rescaled:
            return -self.Z[0]
        beta = np.prod(W, axis=0)
        m = self.Z.dot(beta)
        return self.bk.call(self.dloss_f, m).dot(self.Z) / self.n

    def grad(self, G, W):
        out = self.bk.call_multi(self.grad_f, self.L, G, *W)
        if W.dtype == object:
            return np.array(out, dtype=object).reshape(self.L, self.d)
        return np.stack(out)

    def _signs(self, overrides: dict):
        sW = np.array(self.sgnW if not self.tied else np.repeat(self.sgnW, self.L, axis=0), copy=True)
        sG = self.sgnG.copy()
        for a, v in overrides.items():
            if a[0] == "w":
                sW[a[1], a[2]] = v
            elif a[0] == "u":
                sW[:, a[1]] = v
            else:
                sG[a[1]] = v
        return sW, sG

    def _field_locked(self, W, overrides: dict | None = None):
        """−∇Lo(W + ε) with ℓ∞'s signs locked (and ``overrides`` applied)."""
        bk = self.bk
        if self.optimizer == "gd":
            What = W
        elif self.optimizer == "sam-l2":
            g = self.grad(self.G(W), W)
            S = bk.sqrt(np.array([bk.sumsq(g)], dtype=g.dtype))[0]
            What = W + bk.call(self.eps_f, g, S, self.rho)
        else:
            sW, sG = self._signs(overrides or {})
            proxy = self.grad(bk.array(sG), bk.array(sW))
            What = W + bk.call(self.eps_f, proxy, bk.num(1), self.rho)
        return -self.grad(self.G(What), What)

    def _normal(self, a, W, F):
        """Rate of change of the surface function of ``a`` along the field F."""
        if a[0] == "w":
            return F[a[1], a[2]]
        if a[0] == "u":
            return F[0, a[1]]
        h = self.bk.complex_step(self.scale)
        Gc = self.G(W + F * ((1j if isinstance(self.bk, FloatBackend) else mpmath.mpc(0, 1)) * h))
        return Gc[a[1]].imag / h

    def _value(self, a, W, G):
        if a[0] == "w":
            return W[a[1], a[2]]
        if a[0] == "u":
            return W[0, a[1]]
        return G[a[1]]

    def _surfaces(self) -> list[tuple]:
        """Switching surfaces of ℓ∞ not currently sliding: weights (L ≥ 2) and, in real
        time, G_j for features whose examples have both signs."""
        if not self.linf:
            return []
        out: list[tuple] = []
        if self.L >= 2:
            if self.tied:
                out += [("u", j) for j in range(self.d) if j not in self.dead]
            else:
                out += [("w", k, j) for k in range(self.L) for j in range(self.d) if j not in self.dead]
        if not self.rescaled:
            out += [("G", j) for j in range(self.d) if self.mixed[j]]
        return [a for a in out if a not in self.sliding]

    def _coupled(self, a) -> bool:
        """Does the side of surface a change the field of other coordinates? Not for one
        example (coordinates are independent), not for tied even-L weights (β̂_j = ρ^L on
        both sides); yes otherwise."""
        if self.rescaled:
            return False
        return not (a[0] == "u" and self.L % 2 == 0)

    def _field(self, W, extra: dict | None = None):
        """The field with the current sliding surfaces' Filippov combinations."""
        extra = dict(extra or {})
        sliding = [a for a in self.sliding if a not in extra]
        if not sliding:
            F = self._field_locked(W, extra)
        elif self.rescaled:
            Fp = self._field_locked(W, {**extra, **{a: 1 for a in sliding}})
            Fm = self._field_locked(W, {**extra, **{a: -1 for a in sliding}})
            F = Fp.copy()
            for a in sliding:
                j = a[-1]
                npl, nmi = self._normal(a, W, Fp), self._normal(a, W, Fm)
                lam = nmi / (nmi - npl) if nmi != npl else 0.5 + 0 * npl
                F[:, j] = Fp[:, j] * lam + Fm[:, j] * (1 - lam)
        else:
            coupled = [a for a in sliding if self._coupled(a)]
            fixed = {a: 1 for a in sliding if not self._coupled(a)}
            if not coupled:
                F = self._field_locked(W, {**extra, **fixed})
            else:
                (a,) = coupled
                Fp = self._field_locked(W, {**extra, **fixed, a: 1})
                Fm = self._field_locked(W, {**extra, **fixed, a: -1})
                npl, nmi = self._normal(a, W, Fp), self._normal(a, W, Fm)
                lam = nmi / (nmi - npl) if nmi != npl else 0.5 + 0 * npl
                F = Fp * lam + Fm * (1 - lam)
        for a in sliding:
            if a[0] == "w":
                F[a[1], a[2]] = 0 * F[a[1], a[2]]
            elif a[0] == "u":
                F[:, a[1]] = 0 * F[:, a[1]]
        for j in self.dead:
            F[:, j] = 0 * F[:, j]
        return F

    def rhs(self, t, y):
        return self.flat(self._field(self.W(y)))

    # -- events
    def _lnS(self, W):
        g = self.grad(self.G(W), W)
        S2 = self.bk.sumsq(g)
        if S2 == 0:
            return -math.inf
        return self.bk.log(self.bk.array([S2]))[0] / 2

    def _lnS_rel(self, W):
        """ln(‖∇Lo(W)‖ / ‖field‖): → −∞ where ℓ2-SAM's ε = ρ∇Lo/‖∇Lo‖ is undefined (W → 0,
        or a critical point of Lo), bounded while the loss merely decays."""
        lnS = self._lnS(W)
        if lnS == -math.inf:
            return lnS
        return lnS - self._lnnorm(np.ravel(self._field(W)))

    def _lnnorm(self, y):
        S2 = self.bk.sumsq(y)
        if S2 == 0:
            return -math.inf
        return self.bk.log(self.bk.array([S2]))[0] / 2

    def start_stop(self) -> str | None:
        if self._fail:
            return self._fail
        if self.linf and self.L >= 2:  # every coordinate held at 0 (dead, or tied and sliding)
            held = set(self.dead) | {a[1] for a in self.sliding if a[0] == "u"}
            if len(held) == self.d:
                return "collapse"
        if self.optimizer == "sam-l2" and self.L >= 2 and self._lnS(self.W(self.y0)) == -math.inf:
            beta = np.prod(self.W(self.y0), axis=0)
            return "collapse" if all(b == 0 for b in beta) else "stationary"
        return None

    def events(self, t0, y0) -> list[EventFn]:
        evs: list[EventFn] = []
        W0 = self.W(y0)
        if self.optimizer == "sam-l2" and self.L >= 2:
            c_level = self.lnW0 + self.thr.collapse_log
            evs.append(EventFn("collapse", -1, lambda t, y: self._lnnorm(y) - c_level, -1))
            if not self.singular_off:
                s_level = self._lnS_rel(W0) + self.SINGULAR_LOG
                evs.append(EventFn("singular", -1, lambda t, y: self._lnS_rel(self.W(y)) - s_level, -1))
        ln0 = self._lnnorm(y0)
        blow = self.rescaled and self.L >= 3
        if isinstance(self.bk, FloatBackend):
            n_level = self.ln_limit if not blow else min(self.ln_limit, ln0 + self.thr.blowup_log / (self.L - 2))
            evs.append(EventFn("blowup" if blow else "norm_limit", -1, lambda t, y: self._lnnorm(y) - n_level, +1))
        elif blow:
            b_level = ln0 + self.thr.blowup_log / (self.L - 2)
            evs.append(EventFn("blowup", -1, lambda t, y: self._lnnorm(y) - b_level, +1))
        if self.linf:
            for a in self._surfaces():
                if a[0] == "G":
                    evs.append(EventFn("surface", a[-1], lambda t, y, a=a: self.G(self.W(y))[a[1]], 0, a))
                else:
                    idx = (a[1] if self.tied else a[1] * self.d + a[2])
                    evs.append(EventFn("surface", a[-1], lambda t, y, i=idx: y[i], 0, a))
            for a in self.sliding:
                def n_side(t, y, a=a, side=1):
                    W = self.W(y)
                    return self._normal(a, W, self._field(W, {a: side}))
                evs.append(EventFn("exit", a[-1], lambda t, y, a=a, f=n_side: f(t, y, a, 1), +1, (a, 1)))
                evs.append(EventFn("exit", a[-1], lambda t, y, a=a, f=n_side: f(t, y, a, -1), -1, (a, -1)))
        return evs

    def event_rate(self, ev: EventFn, t, y):
        """d ln‖W‖/dt = W·Ẇ/‖W‖² for blow-up and collapse (‖W‖ vanishes linearly); None
        otherwise (no extrapolation)."""
        if ev.name not in ("blowup", "collapse"):
            return None
        f = self.rhs(t, y)
        return sum(a * b for a, b in zip(y, f)) / sum(a * a for a in y)

    def _classify(self, a, W):
        Fp = self._field(W, {a: 1})
        Fm = self._field(W, {a: -1})
        return self._normal(a, W, Fp), self._normal(a, W, Fm)

    def _set_sign(self, a, v: int) -> None:
        if a[0] == "w":
            self.sgnW[a[1], a[2]] = v
        elif a[0] == "u":
            self.sgnW[0, a[1]] = v
        else:
            self.sgnG[a[1]] = v

    def _zero_weights(self, j: int, y) -> int:
        W = self.W(y)
        return sum(1 for k in range(self.L) if W[k, j] == 0)

    def _handle_surface(self, a, y) -> str:
        """Filippov at surface a (state y is modified in place when a weight is held at 0)."""
        W = self.W(y)
        if a[0] in ("w", "u"):
            idx = a[1] if a[0] == "u" else a[1] * self.d + a[2]
            y[idx] = 0 * y[idx]
            W = self.W(y)
        npl, nmi = self._classify(a, W)
        if npl > 0 and nmi > 0:
            self._set_sign(a, 1)
            return "cross"
        if npl < 0 and nmi < 0:
            self._set_sign(a, -1)
            return "cross"
        # slide (also the degenerate cases: a zero one-sided velocity)
        j = a[-1]
        if a[0] == "w" and self._zero_weights(j, y) >= 2:
            if self.L == 2 and self.rescaled:
                self.sliding = [b for b in self.sliding if b[-1] != j or b[0] == "G"]
                self.dead.add(j)
                for k in range(self.L):
                    y[k * self.d + j] = 0 * y[k * self.d + j]
                return "slide"
            self._fail = "sliding_unsupported"
            return "slide"
        if self._coupled(a) and any(self._coupled(b) for b in self.sliding):
            self._fail = "sliding_unsupported"
            return "slide"
        self.sliding.append(a)
        return "slide"

    def on_event(self, ev: EventFn, t, y) -> Outcome:
        if ev.name in ("collapse", "blowup", "norm_limit"):
            return Outcome(stop=ev.name, records=[(ev.name, -1, "")])
        if ev.name == "singular":
            if self._lnnorm(y) - self.lnW0 < math.log(1e-2):  # on the way to a collapse: carry on
                new = self.copy()
                new.singular_off = True
                return Outcome(system=new, y=np.array(y, copy=True))
            return Outcome(stop="critical_point", records=[("critical_point", -1, "‖∇Lo(w)‖ ≪ ‖∇Lo(w + ε)‖ with w ≠ 0")])
        new = self.copy()
        new.sgnW = self.sgnW.copy()
        new.sgnG = self.sgnG.copy()
        new.dead = set(self.dead)
        y = np.array(y, copy=True)
        if ev.name == "exit":
            a, side = ev.data
            new.sliding = [b for b in new.sliding if b != a]
            new._set_sign(a, side)
            records = [("unfreeze", a[-1], f"{a[0]}-surface, to side {side:+d}")]
        else:
            a = ev.data
            kind = new._handle_surface(a, y)
            records = [(kind, a[-1], f"{a[0]}-surface")]
        out = Outcome(system=new, y=y, records=records)
        out.stop = new.start_stop()
        return out

    def observe(self, t, y) -> tuple[np.ndarray, np.ndarray]:
        W = self.W(y)
        la = np.zeros(self.d)
        sg = np.ones(self.d, dtype=int)
        for k in range(self.L):
            for j in range(self.d):
                a, s = log_abs_and_sign(W[k, j])
                la[j] += a
                sg[j] *= s
        return la, sg

    def atol(self, rtol):
        tol = rtol * self.scale * 1e-3
        return np.array([tol] * int(np.size(self.y0)), dtype=object if isinstance(self.bk, MpBackend) else float)

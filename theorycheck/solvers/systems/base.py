"""The base of the flow systems: :class:`FlowSystem`, its events (:class:`EventFn`, :class:`EventAction`)
and event levels (:class:`Thresholds`), and the helpers the systems share."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from theorycheck.solvers.backends import FloatBackend, MpBackend
from theorycheck.status import Status
from theorycheck.vocabulary import TimeKind

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
class EventAction:
    """What an event does: stop (a :class:`~theorycheck.status.Status`) or continue with ``system`` from ``y``;
    ``records`` are (kind, 0-based index or −1, detail) for the trajectory's event list."""

    stop: Status | None = None
    system: Any = None
    y: Any = None
    records: list[tuple[str, int, str]] = field(default_factory=list)


def z_scale_exponent(z) -> int:
    """k with 2^k ≤ max|z_j| < 2^(k+1) when max|z_j| is beyond 2^±400, else 0. The ℓ2 forms
    square z (z_j², ρ z_j²·I) before taking logarithms, which leaves float64 for |z| ≳ 1e154
    or ≲ 1e-162; the ℓ2 systems evaluate them on z/2^k (exact) and undo the scale through
    the forms' homogeneity (tests/test_scale_edges.py checks it symbolically). k = 0 keeps
    every ordinary number bit for bit."""
    m = max((abs(float(v)) for v in z), default=0.0)
    if m == 0 or 2.0**-400 <= m <= 2.0**400:
        return 0
    return math.frexp(m)[1] - 1


def ldexp(bk, x, k: int):
    """x·2^k, exact, for a float or an mpf."""
    if k == 0:
        return x
    if isinstance(x, mpmath.mpf):
        return mpmath.ldexp(x, k)
    try:
        return math.ldexp(float(x), k)
    except OverflowError:  # beyond float64: ±inf, which the integrator's non-finite rule stops on
        return math.copysign(math.inf, float(x))


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
    time_kind = TimeKind.RESCALED
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

    def start_stop(self) -> Status | None:
        return None

    def event_rate(self, ev: EventFn, t, y):
        return None

    def atol(self, rtol):
        return np.array([rtol] * int(np.size(self.y0)), dtype=object if isinstance(self.bk, MpBackend) else float)

    def switch_clock(self, ev: EventFn, t, y, to_arc: Callable, to_time: Callable) -> EventAction:
        """The action of a ``to_arc`` / ``to_time`` event: a copy of the system in the other
        clock, from the state ``to_arc(y, τ)`` (τ appended) or ``to_time(y)`` (τ dropped)."""
        new = self.copy()
        new.clock = "arc" if ev.name == "to_arc" else "time"
        tau = self.time_of(t, y)
        new.tau_ref = tau
        return EventAction(system=new, y=to_arc(y, tau) if new.clock == "arc" else to_time(y))

    def copy(self):
        new = copy.copy(self)
        for k, v in vars(self).items():
            if isinstance(v, (np.ndarray, list, dict, set)):
                setattr(new, k, copy.copy(v))
        return new

"""GD and ℓ∞-SAM, one example, balanced layers: per-coordinate branches, v = ln|û|."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from theorycheck.solvers.backends import MpBackend, log_abs_and_sign
from theorycheck.solvers.systems.base import Backend, EventAction, EventFn, FlowSystem, Thresholds, _sgn
from theorycheck.status import Status
from theorycheck.symbolic import forms as C


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
        # only the signs matter; at u = 0 the branch field z_j(−ρσ)^{L−1} has the sign it has at
        # ρ = 1 (ρ > 0): evaluating there cannot overflow (ρ = 1e300, L = 7 would)
        unit = rho / abs(rho) if rho != 0 else rho
        fp = self.cf.field(zj, zero, _sgn(self.cf.argument(zj, 1)), unit)
        fm = self.cf.field(zj, zero, _sgn(self.cf.argument(zj, -1)), unit)
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

    def start_stop(self) -> Status | None:
        if all(self.frozen):
            return Status.COLLAPSE if all(u == 0 for u in self.ufrozen) else Status.STATIONARY
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

    def on_event(self, ev: EventFn, t, y) -> EventAction:
        if ev.name == "blowup":
            return EventAction(stop=Status.BLOWUP, records=[("blowup", -1, "")])
        new = self.copy()
        y = np.array(y, copy=True)
        j = ev.index
        kind = new._at_zero(j, y)
        out = EventAction(system=new, y=y, records=[(kind, j, "u_j = 0")])
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

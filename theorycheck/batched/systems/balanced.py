"""One example, balanced layers, θ = ln u, batched: GD and ℓ∞-SAM (any L ≥ 2), ℓ2-SAM (L = 2), per-coordinate α;
ℓ∞ sliding at u_j = 0 and α_j = ρ exactly handled explicitly."""

from __future__ import annotations

import math

import numpy as np

from theorycheck.batched.ops import NumpyOps
from theorycheck.batched.systems.base import (
    EVENT_LOG,
    _balanced_alpha_rho,
    _ClockedTheta,
    _col,
    _decoupled,
    _leader,
    _top_gap,
    _unit_data,
    check_domain,
    log_square_summand,
)
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.solvers.guards import scaled_norm
from theorycheck.status import BLOWUP, COLLAPSE
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import theory_forms as MF
from theorycheck.vocabulary import TimeKind

__all__ = ["BalancedLog"]


class BalancedLog(_ClockedTheta):
    """One example, balanced layers, θ = ln u (THEORY.md, Rescaled flows):
    dθ_j/dτ from :func:`theorycheck.symbolic.forms.balanced_log_field` (N carried as ln N).

    GD and ℓ∞-SAM for any L ≥ 2, ℓ2-SAM for L = 2. Members: ``alpha`` (B, d) (or (B,) for a
    uniform init) and ``rho`` (B,). Clock dτ/ds = 1/(1 + ‖θ'‖₂/c), c = ‖z‖₂.

    Events: an ℓ∞ coordinate whose rate falls below −e^{30}c is at most e^{−30}/c from u_j = 0,
    where it slides (Filippov; the field at u_j = 0 is exactly 0): frozen at 0. A coordinate
    whose field is exactly 0 at the start (α_j = ρ in ℓ∞-SAM; z_j = 0) is an equilibrium of
    the decoupled field: frozen. A rate above e^{30}c (L ≥ 3) is a blow-up: the member stops,
    and j† keeps the blown-up index (the real-time flow keeps it as t → ∞). ℓ2-SAM: the
    collapse certificate and stop rule of :class:`ReducedL2`. All coordinates at 0: collapse."""

    time_kind = TimeKind.RESCALED
    observables = {"jdag": (np.int16, -1), "log_beta_max": (np.float64, np.nan), "gap": (np.float64, np.nan)}
    time_events = ("collapse", "blowup", "first_zero", "event_time_error")

    def __init__(self, z, alpha, rho, *, L: int = 2, optimizer: str, ops=None, collapse_tol: float = 1e-10):
        self.ops = o = ops or NumpyOps()
        z = np.asarray(z, dtype=float).reshape(-1)
        d = z.size
        check_domain(optimizer, L, "balanced")
        if not np.any(z != 0):
            raise TheorycheckError("z = 0: every field vanishes (there is nothing to fit): give a nonzero example")
        alpha, rho = _balanced_alpha_rho(alpha, rho, d)
        self.B, self.m, self.d, self.L, self.optimizer = alpha.shape[0], d, d, int(L), optimizer
        self.l2 = get_optimizer(optimizer).normalised  # ℓ2-SAM: the joint norm N enters the field
        self.z_np, self.alpha_np, self.rho_np = z, alpha, rho
        # the units of the module docstring: ẑ = z/2^k, τ̂ = 2^k τ (the field is homogeneous of degree 1
        # in (z, N), θ unchanged); at |z| ~ 1e300 ℓ∞'s sliding event rate e^30·‖z‖ overflowed
        z, self.time_log2 = _unit_data(z)
        self.z = o.asarray(z)[None, :]
        self.alpha = o.asarray(alpha)
        self.rho = o.asarray(rho)
        self.cf = C.balanced_log_field(self.L, optimizer, o.name)
        self.half_log = C.log_norm(o.name)  # ln N from ln Σ_j (term j of N²)
        self.c = float(scaled_norm(z))  # ‖z‖₂ (np.linalg.norm underflows to 0 for |z| ≲ 1e-154)
        self.log_c = math.log(self.c)
        # coordinates at an equilibrium of a decoupled field: du_j/dτ exactly 0 at the start
        frozen = np.zeros((self.B, d), dtype=bool)
        if _decoupled(optimizer):
            u_field = C.balanced_field(self.L, optimizer, "numpy").field
            frozen = np.asarray(u_field(z[None, :], alpha, 1.0, rho[:, None]) == 0, dtype=bool)
            frozen = np.broadcast_to(frozen, (self.B, d)).copy()
        self.frozen = o.asarray(frozen, dtype=bool)
        dead = np.zeros((self.B, d), dtype=bool)
        if _decoupled(optimizer):
            # the event rule of after_step at τ = 0: a rate already below −e^30·c is within
            # e^−30/c of u_j = 0 (e.g. α = 1e-300 ≪ ρ): dead from the start. Stepping towards it
            # drove the clock dτ/ds = κ ~ c/|θ'| below the float range (τ never advanced)
            with np.errstate(all="ignore"):
                r0 = np.asarray(C.balanced_log_field(self.L, optimizer, "numpy").field(
                    z[None, :], np.log(alpha), 0.0, rho[:, None]), dtype=float)
            dead = np.broadcast_to((r0 * (1.0 / self.c) < -math.exp(EVENT_LOG)) & ~frozen, (self.B, d)).copy()
        self.dead = o.asarray(dead, dtype=bool)
        self.collapse_tol = collapse_tol
        if get_optimizer(optimizer).normalised:
            lv = MF.l2_certificate_levels(z, rho, collapse_tol)  # C5, from the symbolic layer
            with np.errstate(divide="ignore"):
                self.log_cert = o.asarray(np.log(lv["collapse"]))
                self.log_stop = o.asarray(np.log(lv["stop"]))
        self.events = {"collapse": np.full(self.B, np.inf), "blowup": np.full(self.B, np.inf),
                       "first_zero": np.full(self.B, np.inf), "event_time_error": np.zeros(self.B),
                       "frozen_at_start": frozen.sum(axis=1).astype(float)}
        self.blowup_index = np.zeros(self.B, dtype=np.int16)
        self.events["first_zero"][dead.any(axis=1)] = 0.0
        self.events["collapse"][dead.all(axis=1)] = 0.0

    def initial(self):
        o = self.ops
        return o.zeros(self.B), o.log(self.alpha)

    def _masked(self, idx, th):
        return self.ops.where(self.dead[idx], -math.inf, th)

    def log_norm(self, idx, th):
        """ln N with N² = Σ_j L z_j² u_j^{2L−2} (ℓ2-SAM), dead coordinates excluded."""
        o = self.ops
        s = log_square_summand(o, self.cf.log_summand, self.z, th)
        s = o.where(self.dead[idx], -math.inf, s)
        return self.half_log(o.logsumexp(s, 1))

    def theta_rate(self, idx, tau, th):
        o = self.ops
        lnN = self.log_norm(idx, th)[:, None] if self.l2 else 0.0
        with o.errstate():
            r = self.cf.field(self.z, th, lnN, _col(self.rho[idx]))
        return o.where(self.frozen[idx] | self.dead[idx], 0.0, r * 1.0)

    def after_step(self, idx, tau, y, dtau, dy):
        o = self.ops
        r = dy / dtau[:, None]  # dθ/dτ from the clocked field (finite: κ > 0 after an accepted step)
        live = ~(self.frozen[idx] | self.dead[idx])
        big = math.exp(EVENT_LOG)  # rates compared in units of c (e^30·c overflows for c ≳ 1e295)
        rc = r * (1.0 / self.c)
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        codes = np.zeros(len(idx_np), dtype=int)
        changed = None
        if _decoupled(self.optimizer):
            changed = self._mark_dead(idx, idx_np, tau_np, live & (rc < -big), r)
            all_dead = o.to_numpy(o.all(self.dead[idx], 1))
            codes[all_dead] = COLLAPSE
        else:  # ℓ2-SAM, L = 2
            lnN = self.log_norm(idx, y)
            codes[o.to_numpy(lnN <= self.log_stop[idx])] = COLLAPSE
        if self.L >= 3:
            blow = o.to_numpy((live & (rc > big)).any(1))
            if blow.any():
                codes[blow & (codes == 0)] = BLOWUP
                th = o.to_numpy(self._masked(idx, y))
                self.blowup_index[idx_np[blow]] = _leader(NumpyOps(), th[blow], self.L)
                self.events["blowup"][idx_np[blow]] = tau_np[blow]
                rb = o.to_numpy(r)[blow]
                self.events["event_time_error"][idx_np[blow]] = 1.0 / ((self.L - 2) * rb.max(axis=1))
        col = idx_np[codes == COLLAPSE]
        self.events["collapse"][col] = np.minimum(self.events["collapse"][col], tau_np[codes == COLLAPSE])
        return codes, changed

    def observe(self, idx, tau, y):
        o = self.ops
        th = self._masked(idx, y)
        mx = o.amax(th, 1)
        j = _leader(o, th, self.L)
        return {"jdag": j, "log_beta_max": self.L * mx, "gap": _top_gap(o, th)}

    def fill(self, idx, codes):
        out_j = np.where(codes == BLOWUP, self.blowup_index[idx], 0)
        return {"jdag": out_j, "log_beta_max": np.where(codes == BLOWUP, np.inf, -np.inf), "gap": np.inf}

    def metadata(self) -> dict:
        return {"system": "balanced-log", "L": self.L, "optimizer": self.optimizer, "collapse_tol": self.collapse_tol,
                "event_log": EVENT_LOG, "data_log2_scale": self.time_log2, "clock": "dtau/ds = 1/(1 + |dtheta/dtau|_2/|z|_2)"}

"""Several examples, real time t, balanced layers, θ = ln u, batched."""

from __future__ import annotations

import math

import numpy as np

from theorycheck.batched.ops import NumpyOps
from theorycheck.batched.systems.base import (
    EVENT_LOG,
    _balanced_alpha_rho,
    _ClockedTheta,
    _col,
    _leader,
    _top_gap,
    check_domain,
    log_square_summand,
)
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.solvers import critical
from theorycheck.solvers.guards import scaled_norm
from theorycheck.status import COLLAPSE, CRITICAL_POINT
from theorycheck.symbolic import forms as C
from theorycheck.vocabulary import TimeKind

__all__ = ["MultiExample"]


class MultiExample(_ClockedTheta):
    """Several examples, real time t, balanced layers u > 0, θ = ln u:
    dθ_j/dt = −Ĝ_j r_j^{L−1} e^{(L−2)θ_j}, r_j = û_j/u_j (:func:`theorycheck.symbolic.forms.balanced_multi_log`),
    with G = ∂Lo/∂β = (1/n) Σ_i ℓ'(m_i) z_i and the loss from :func:`theorycheck.symbolic.forms.empirical_risk`
    (elementwise sums), Ĝ the same at the perturbed point û = r u, β from
    :func:`theorycheck.symbolic.forms.predictor`, and
    ln S = ½ logsumexp_j(ln(term j of S²)). GD and ℓ∞-SAM for L ≥ 2, ℓ2-SAM for L = 2.

    Clock dt/ds = 1/(1 + ‖θ'‖₂/c), c = max_i ‖z_i‖₂. Events: ℓ∞-SAM — a coordinate whose
    log-rate falls below −e^{30}c is within e^{−30}/c of u_j = 0, where it slides (Filippov):
    frozen at 0. ℓ2-SAM — collapse (S → 0) when every live coordinate's log-rate is below
    −e^{30}c (numerical: no certificate for several examples); a critical point of Lo away
    from 0 (status critical_point: ε is undefined there, cells after it stay unknown, −1).
    Every coordinate at 0: collapse."""

    time_kind = TimeKind.REAL
    #: ℓ2: a critical point (the rule of :mod:`theorycheck.solvers.critical`, shared with LayersSystem)
    SINGULAR_LOG = critical.SINGULAR_LOG
    observables = {"jdag": (np.int16, -1), "loss": (np.float64, np.nan), "log_beta_max": (np.float64, np.nan),
                   "gap": (np.float64, np.nan)}

    def __init__(self, Z, alpha, rho, *, L: int = 2, optimizer: str, loss: str = "logistic", ops=None):
        self.ops = o = ops or NumpyOps()
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        n, d = Z.shape
        check_domain(optimizer, L, "real-time")
        if not np.any(Z != 0):
            raise TheorycheckError("every example is 0: every field vanishes (there is nothing to fit)")
        alpha, rho = _balanced_alpha_rho(alpha, rho, d)
        self.B, self.m, self.d, self.n, self.L = alpha.shape[0], d, d, n, int(L)
        self.optimizer, self.loss = optimizer, loss
        self.l2 = get_optimizer(optimizer).normalised  # ℓ2-SAM: the joint norm S enters the field
        self.Z_np, self.alpha_np, self.rho_np = Z, alpha, rho
        self.Z = o.asarray(Z)
        self.alpha = o.asarray(alpha)
        self.rho = o.asarray(rho)
        # Lo and ∂Lo/∂β (overflow-free ℓ, ℓ'), summed elementwise: no BLAS, batch-independent
        self.risk = C.empirical_risk(loss, o.name, "elementwise")
        self.beta = C.predictor(self.L, o.name)
        self.cf = C.balanced_multi_log(self.L, optimizer, o.name)
        self.half_log = C.log_norm(o.name)  # ln S from ln Σ_j (term j of S²)
        self.c = float(scaled_norm(Z, axis=1).max())
        self.dead = o.zeros((self.B, d), dtype=bool)
        self.loss0 = float(C.stable_loss_functions(loss, "numpy")[0](0.0))
        self.events = {"collapse": np.full(self.B, np.inf), "first_zero": np.full(self.B, np.inf),
                       "event_time_error": np.zeros(self.B)}
        self.ln_u0 = o.asarray(np.log(scaled_norm(alpha, axis=1)))  # ln‖u(0)‖₂
        self.rel0 = self.relg0 = None  # set by initial()

    def initial(self):
        o = self.ops
        tau0, th0 = o.zeros(self.B), o.log(self.alpha)
        if self.l2:  # the start value of the critical-point test, per member
            idx = o.arange(self.B)
            self.rel0, _, self.relg0 = self._ln_grad_ratio(idx, th0, self.theta_rate(idx, tau0, th0))
        return tau0, th0

    def _G(self, beta):
        """∂Lo/∂β = (1/n) Σ_i ℓ'(<β, z_i>) z_i for each member (P, d)."""
        return self.risk.gradient(beta, self.Z)

    def theta_rate(self, idx, tau, th):
        o = self.ops
        dead = self.dead[idx]
        with o.errstate():
            u = o.where(dead, 0.0, o.exp(th))
            G = self._G(self.beta(*([u] * self.L)))
            if self.l2:
                ls = o.where(dead, -math.inf, log_square_summand(o, self.cf.log_summand, G, th))
                lnS = self.half_log(o.logsumexp(ls, 1))[:, None]
            else:
                lnS = 0.0
            r = self.cf.ratio(G, th, lnS, _col(self.rho[idx])) * 1.0
            r = o.where(dead, 0.0, r)
            Ghat = self._G(self.beta(*([r * u] * self.L)))
            rate = self.cf.rate(Ghat, r, th)
        return o.where(dead, 0.0, rate)

    def after_step(self, idx, tau, y, dtau, dy):
        o = self.ops
        r = dy / dtau[:, None]
        big = -math.exp(EVENT_LOG)  # rates in units of c (e^30·c overflows for c ≳ 1e295)
        rc = r * (1.0 / self.c)
        live = ~self.dead[idx]
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        codes = np.zeros(len(idx_np), dtype=int)
        changed = None
        if self.l2:  # collapse: S → 0 drives every log-rate to −∞ together
            top = o.amax(o.where(live, rc, -math.inf), 1)
            codes[o.to_numpy(top < big)] = COLLAPSE
            codes[(codes == 0) & o.to_numpy(self._at_critical_point(idx, y, r))] = CRITICAL_POINT
        else:
            changed = self._mark_dead(idx, idx_np, tau_np, live & (rc < big), r)
            codes[o.to_numpy(o.all(self.dead[idx], 1))] = COLLAPSE
        self.events["collapse"][idx_np[codes == COLLAPSE]] = tau_np[codes == COLLAPSE]
        return codes, changed

    def _ln_grad_ratio(self, idx, th, r):
        """(ln(‖∇Lo(w)‖/‖dw/dt‖), ln‖u‖₂, ln(‖∇Lo(w)‖/Lo(w))) per member. The first → −∞ at
        a critical point of Lo away from 0, but also on separable data as Lo → 0 (the
        perturbed point's margins are smaller by an amount growing with ‖u‖); the third, the
        relative gradient, → −∞ at a critical point with Lo > 0 and stays bounded below on
        separable data with growing margins (⟨−∇Lo, w⟩ = L (1/n) Σ_i |ℓ'(m_i)| m_i, |ℓ'| ≍ ℓ);
        +∞ (or nan: never below a level) once Lo has underflowed to 0."""
        o = self.ops
        dead = self.dead[idx]
        with o.errstate():
            u = o.where(dead, 0.0, o.exp(th))
            beta = self.beta(*([u] * self.L))
            G = self._G(beta)
            ls = log_square_summand(o, self.cf.log_summand, G, th)
            lnS = self.half_log(o.logsumexp(o.where(dead, -math.inf, ls), 1))
            ln_field = 0.5 * o.logsumexp(o.where(dead, -math.inf, 2 * th + 2 * o.log(o.abs(r))), 1)
            ln_u = 0.5 * o.logsumexp(o.where(dead, -math.inf, 2 * th), 1)
            ln_lo = o.log(self.risk.value(beta, self.Z))
            return lnS - ln_field, ln_u, lnS - ln_lo

    def _at_critical_point(self, idx, th, r):
        """ℓ2-SAM: ‖∇Lo(w)‖/‖dw/dt‖ and ‖∇Lo(w)‖/Lo(w) have both fallen by ``SINGULAR_LOG``
        from their start while ‖u‖ stayed above 1e-2 of its start: a critical point of Lo away
        from 0 with Lo > 0 (the data are not separable in the cone u ≥ 0 the balanced network
        reaches), where ε = ρ∇Lo/‖∇Lo‖ is undefined and the flow chatters (the
        single-trajectory solver's critical_point test). The second ratio keeps separable data,
        whose ‖∇Lo(w)‖ → 0 only because Lo → 0, from stopping there."""
        if self.rel0 is None:
            return self.ops.zeros(len(idx), dtype=bool)
        rel, ln_u, relg = self._ln_grad_ratio(idx, th, r)
        with self.ops.errstate():  # ∞ − ∞ (Lo underflowed at start and now): nan, never below a level
            return (critical.below(rel, relg, *critical.levels(self.rel0[idx], self.relg0[idx]))
                    & critical.away_from_zero(ln_u, self.ln_u0[idx]))

    def observe(self, idx, tau, y):
        o = self.ops
        th = o.where(self.dead[idx], -math.inf, y)
        mx = o.amax(th, 1)
        j = _leader(o, th, self.L)
        with o.errstate():
            u = o.exp(th)
        loss = self.risk.value(self.beta(*([u] * self.L)), self.Z)
        return {"jdag": j, "loss": loss, "log_beta_max": self.L * mx, "gap": _top_gap(o, th)}

    def fill(self, idx, codes):
        crit = np.asarray(codes) == CRITICAL_POINT  # the flow is undefined past a critical point: unknown cells
        return {"jdag": np.where(crit, -1, 0), "loss": np.where(crit, np.nan, self.loss0),
                "log_beta_max": np.where(crit, np.nan, -np.inf), "gap": np.where(crit, np.nan, np.inf)}

    def metadata(self) -> dict:
        return {"system": "multi-example-real-time", "L": self.L, "optimizer": self.optimizer, "loss": self.loss,
                "event_log": EVENT_LOG, "clock": "dt/ds = 1/(1 + |dtheta/dt|_2/max_i |z_i|_2)"}

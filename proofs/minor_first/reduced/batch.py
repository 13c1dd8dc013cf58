"""C4's scalar ODE dI/dτ = 1/N(τ, I) batched (ℓ2-SAM, L = 2, one example, uniform α): a whole (α, ρ) grid is a
vector of scalar ODEs, with the collapse certificate N < ρ z_min and the no-collapse certificate N ≥ ρ z_max."""

from __future__ import annotations

import math

import numpy as np

from theorycheck.batched.ops import NumpyOps
from theorycheck.batched.systems.base import (
    BatchSystem,
    _col,
    _leader,
    _unit_data,
)
from theorycheck.errors import TheorycheckError
from theorycheck.status import COLLAPSE, NO_COLLAPSE
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import theory_forms as MF
from theorycheck.vocabulary import TimeKind

__all__ = ["ReducedL2"]


#: below this |ẑ_j| (relative to the largest, which is in [1, 2)) ẑ_j² loses digits in float64
_TINY_UNIT = 2.0**-500


def _reduced_coefficients(zh: np.ndarray, alpha: np.ndarray, rho: np.ndarray) -> list[np.ndarray]:
    """(K, A, G) of ln(term j of N²) = K_bj + τ A_bj + I G_bj (C4's log summand, affine in (τ, I);
    compiled from the symbolic layer), (B, d) or (1, d) when every member has the same row.
    K holds ln z_j²: for a |ẑ_j| far below the largest it is evaluated at ẑ_j 2^(e_j) (in [1, 2))
    and −2 e_j ln 2 added (K is ln z_j² plus terms free of z: tests/test_batched_scale.py checks
    it on the symbolic form), so that ẑ_j² does not underflow to a term that is dropped."""
    lin = MF.reduced_l2_log_linear("numpy")
    e = np.where(np.abs(zh) < _TINY_UNIT, np.frexp(zh)[1] - 1, 0)  # zero entries: e = 0 (K = −inf, exact)
    zz, aa, rr = zh[None, :], alpha[:, None], rho[:, None]
    with np.errstate(divide="ignore", under="ignore"):
        full = np.broadcast_shapes(zz.shape, aa.shape)
        K = lin.c0(np.ldexp(zz, -e[None, :]), aa, rr) + (2 * np.log(2.0)) * e[None, :]
        coef = [np.broadcast_to(c, full) for c in (K, lin.c_tau(zz, aa, rr), lin.c_I(zz, aa, rr))]
    # a coefficient that is the same for every member (e.g. one ρ) is stored once, (1, d)
    return [c[:1].copy() if np.all(c == c[:1]) else c.copy() for c in coef]


def _switch_levels(zh: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """j† from N̄ = τ/I: the switch levels N̄ = ρ(z_j + z_k) between consecutive distinct z (C4),
    (B, D−1) or (1, D−1) for one ρ, and the 1-based index of the first coordinate with each z."""
    zs, first = np.unique(zh, return_index=True)
    levels = MF.l2_switch_level("numpy")(zs[:-1][None, :], zs[1:][None, :], rho[:, None])
    return (levels[:1].copy() if np.all(levels == levels[:1]) else levels), first + 1


class ReducedL2(BatchSystem):
    """C4's reduction of the ℓ2-SAM flow (L = 2, one example, uniform α):
    dI/dτ = 1/N(τ, I), N² = Σ_j 2 z_j² e^{2θ_j}, θ_j = ln α + z_j τ − ρ z_j² I.

    Members: ``alpha`` (B,) and ``rho`` (B,) (broadcast). Clock: dτ/ds = N/(N + c),
    dI/ds = 1/(N + c), c = ρ z_+ (z_+ the smallest positive z_j): smooth as N → 0 and
    N → ∞. Collapse persists once N < ρ z_+ (every rate negative from then on) and the
    member stops when N ≤ ``collapse_tol``·N*, N* = ρ m²/(2 z_max) (m = min nonzero |z_j|):
    from there dN/dτ ≤ −ρ m²/2, so the collapse time is within 2N/(ρ m²) ≤ collapse_tol/z_max
    after the stop. With ``stop_on_safe`` a member also stops once N ≥ ρ z_max (no collapse,
    ever): for classification runs."""

    time_kind = TimeKind.RESCALED

    time_events = ("collapse_persisting", "collapse", "no_collapse_persisting")

    def __init__(self, z, alpha, rho, *, ops=None, collapse_tol: float = 1e-10, stop_on_safe: bool = False,
                 observe: str = "levels", observe_norm: bool = False):
        self.ops = o = ops or NumpyOps()
        if observe not in ("levels", "theta"):
            raise TheorycheckError(f"observe must be 'levels' or 'theta', not {observe!r}")
        # ln N at every cell costs O(d) per cell: only on request (I alone determines it)
        self.observables = {"jdag": (np.int16, -1), "I": (np.float64, np.nan)}
        if observe_norm:
            self.observables["log_norm"] = (np.float64, np.nan)
        self.observe_norm = observe_norm
        z = np.asarray(z, dtype=float).reshape(-1)
        if not np.any(z > 0):
            raise TheorycheckError("z has no positive entry: the balanced network (β = u², u > 0) cannot fit it")
        alpha, rho = np.broadcast_arrays(np.asarray(alpha, float).reshape(-1), np.asarray(rho, float).reshape(-1))
        if np.any(alpha <= 0) or np.any(rho < 0) or not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(rho))):
            raise TheorycheckError("the reduced ℓ2 sweep needs α > 0 and ρ ≥ 0, finite")
        self.B, self.m, self.d = alpha.size, 1, z.size
        self.z_np, self.alpha_np, self.rho_np = z, alpha.copy(), rho.copy()
        zh, self.time_log2 = _unit_data(z)  # the units of the module docstring: ẑ = z/2^k, τ̂ = 2^k τ, Î = 2^(2k) I
        self.z = o.asarray(zh)[None, :]
        self.alpha = o.asarray(alpha)
        self.rho = o.asarray(rho)
        _, self.theta = MF.reduced_l2(o.name)
        self.coef = [o.asarray(c) for c in _reduced_coefficients(zh, alpha, rho)]
        self._gathered: tuple = (None, None)
        self._buf: tuple | None = None  # work buffers of log_norm (numpy)
        self.half_log = C.log_norm(o.name)  # ln N from ln Σ_j (term j of N²)
        shared = all(c.shape[0] == 1 for c in self.coef) and o.name == "numpy"
        self._W = np.concatenate([np.asarray(c) for c in self.coef], 0) if shared else None  # (3, d): K, A, G
        self.observe_mode = observe
        self.levels, self.level_index = _switch_levels(zh, rho)
        self.zmax = float(zh.max())
        lv = MF.l2_certificate_levels(zh, rho, collapse_tol)  # C5, from the symbolic layer
        with np.errstate(divide="ignore"):
            self.log_c = o.asarray(np.log(lv["clock_scale"]))  # −inf when ρ = 0 (GD: κ = 1)
            self.log_cert = o.asarray(np.log(lv["collapse"]))  # N < ρ z_+: collapse certain
            self.log_safe = o.asarray(np.log(lv["no_collapse"]))  # N ≥ ρ z_max: no collapse
            self.log_stop = o.asarray(np.log(lv["stop"]))
        self.clocked = MF.reduced_l2_clocked("smooth", o.name)  # (dτ/ds, dI/ds) from (ln N, ln c)
        self.collapse_tol = collapse_tol
        self.stop_on_safe = stop_on_safe
        self.events = {"collapse_persisting": np.full(self.B, np.inf), "collapse": np.full(self.B, np.inf),
                       "no_collapse_persisting": np.full(self.B, np.inf)}

    def observables_to_physical(self, obs: dict) -> dict:
        """Î = 2^(2k) I and N̂ = N/2^k (θ is unchanged) back to I and ln N. I ∝ 1/z² leaves the
        float64 range for |z| beyond ~1e±154 (then 0 or inf); ln N never does."""
        k = self.time_log2
        out = dict(obs)
        out["I"] = np.ldexp(obs["I"], -2 * k)
        if "log_norm" in obs:
            out["log_norm"] = obs["log_norm"] + k * math.log(2.0)
        return out

    def initial(self):
        o = self.ops
        return o.zeros(self.B), o.zeros((self.B, 1))

    def _coef(self, idx):
        """(K, A, G) rows for members idx; the engine calls the field six times a step with
        the same idx object, so the gathered rows are kept for it."""
        if self._gathered[0] is not idx:
            self._gathered = (idx, [c if c.shape[0] == 1 else c[idx] for c in self.coef])
        return self._gathered[1]

    def log_norm(self, idx, tau, I):
        """ln N(τ, I) = ½ logsumexp_j(K_j + τ A_j + I G_j) for members idx."""
        K, A, G = self._coef(idx)
        if self.ops.name != "numpy":
            return self.half_log(self.ops.logsumexp(K + _col(tau) * A + _col(I) * G, 1))
        # numpy: the same operations in the same order (bitwise equal), in two reused buffers
        shape = np.broadcast_shapes(K.shape, A.shape, G.shape, (tau.shape[0], 1))
        buf = self._buf
        if buf is None or buf[0].shape != shape:
            buf = self._buf = (np.empty(shape), np.empty(shape))
        X, T = buf
        if self._W is not None:  # coefficients shared by all members: K·1 + A·τ + G·I per cell, in that order
            V = np.empty((tau.shape[0], 3))
            V[:, 0], V[:, 1], V[:, 2] = 1.0, tau, I
            np.einsum("bk,kd->bd", V, self._W, out=X)  # c_einsum's own loop (no BLAS): elementwise
        else:
            np.multiply(_col(tau), A, out=X)
            np.add(K, X, out=X)
            np.multiply(_col(I), G, out=T)
            X += T
        m = np.max(X, axis=1)
        if not np.all(np.isfinite(m)):
            m = np.where(np.isfinite(m), m, 0.0)
        X -= m[:, None]
        np.exp(X, out=X)
        with np.errstate(divide="ignore"):
            return self.half_log(np.log(np.sum(X, axis=1)) + m)

    def rates(self, idx, tau, y):
        lnN = self.log_norm(idx, tau, y[:, 0])
        kappa, dI = self.clocked(lnN, self.log_c[idx])  # N/(N + c), 1/(N + c); the engine calls in errstate
        return kappa, dI[:, None]

    def after_step(self, idx, tau, y, dtau, dy):
        o = self.ops
        with o.errstate():  # ln N from the step's last stage: dI/ds = κ/N, κ = dτ/ds (no extra sum over j)
            lnN = o.log(dtau) - o.log(dy[:, 0])
        cert = lnN < self.log_cert[idx]
        safe = lnN >= self.log_safe[idx]
        stop = lnN <= self.log_stop[idx]
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        for key, mask in (("collapse_persisting", cert), ("no_collapse_persisting", safe)):
            m = o.to_numpy(mask)
            ev = self.events[key]
            first = m & ~np.isfinite(ev[idx_np])
            ev[idx_np[first]] = tau_np[first]
        codes = o.where(stop, COLLAPSE, 0)
        if self.stop_on_safe:
            codes = o.where(safe & ~stop, NO_COLLAPSE, codes)
        codes = o.to_numpy(codes).astype(int)
        self.events["collapse"][idx_np[codes == COLLAPSE]] = tau_np[codes == COLLAPSE]
        return codes, None

    def thetas(self, idx, tau, I):
        """θ_j = ln u_j at (τ, I) for members idx: (P, d)."""
        return self.theta(self.z, _col(tau), _col(I), _col(self.alpha[idx]), _col(self.rho[idx]))

    def observe(self, idx, tau, y):
        o = self.ops
        I = y[:, 0]
        if self.observe_mode == "theta":  # argmax_j θ_j(τ, I) by the tie rule: O(d) per cell
            j = _leader(o, self.thetas(idx, tau, I), 2)
        else:  # C4: j† = argmax z_j (1 − ρ z_j/N̄), N̄ = τ/I, by the switch levels: O(log d) per cell
            with o.errstate():
                nbar = o.to_numpy(tau / I)
            start = ~(o.to_numpy(I) > 0)  # τ = I = 0: N̄ → N(0, 0) as τ → 0+ (I ≈ τ/N0), j† just after the start
            if start.any():
                sel = np.flatnonzero(start)
                isel = o.asarray(sel, dtype=int)
                nbar[sel] = o.to_numpy(o.exp(self.log_norm(idx[isel], tau[isel], I[isel])))
            if self.levels.shape[0] == 1:
                pos = np.searchsorted(self.levels[0], nbar, side="left")
            else:
                pos = _rowwise_searchsorted(self.levels[o.to_numpy(idx)], nbar)
            j = self.level_index[pos]
        out = {"jdag": j, "I": I}
        if self.observe_norm:
            out["log_norm"] = self.log_norm(idx, tau, I)
        return out

    def fill(self, idx, codes):
        return {"jdag": 0, "log_norm": -np.inf, "I": np.inf} if self.observe_norm else {"jdag": 0, "I": np.inf}

    def metadata(self) -> dict:
        return {"system": "reduced-l2", "collapse_tol": self.collapse_tol, "stop_on_safe": self.stop_on_safe,
                "observe": self.observe_mode, "data_log2_scale": self.time_log2,
                "clock": "dtau/ds = N/(N + rho z_+), dI/ds = 1/(N + rho z_+)"}


def _rowwise_searchsorted(levels: np.ndarray, x: np.ndarray) -> np.ndarray:
    """For each row r: the number of entries of the sorted row levels[r] that are < x[r]."""
    lo = np.zeros(x.size, dtype=np.int64)
    hi = np.full(x.size, levels.shape[1], dtype=np.int64)
    rows = np.arange(x.size)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        less = levels[rows, np.minimum(mid, levels.shape[1] - 1)] < x
        act = lo < hi
        lo = np.where(act & less, mid + 1, lo)
        hi = np.where(act & ~less, mid, hi)
    return lo


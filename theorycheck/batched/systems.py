"""What the batched engine integrates: many members of one flow (an α-grid, an (α, ρ)-grid,
seeds) as one vectorised system (all fields compiled from the symbolic layer).

- :class:`ReducedL2` — C4's scalar ODE dI/dτ = 1/N(τ, I) (ℓ2-SAM, L = 2, one example,
  uniform α): a whole (α, ρ) grid is a vector of scalar ODEs. Collapse certificate
  N < ρ z_min, no-collapse certificate N ≥ ρ z_max (THEORY.md C5; both persist).
- :class:`BalancedLog` — one example, balanced, θ = ln u: GD and ℓ∞-SAM (any L ≥ 2),
  ℓ2-SAM (L = 2), per-coordinate α. ℓ∞ sliding at u_j = 0 (the coordinate is frozen at 0:
  Filippov) and α_j = ρ exactly (an equilibrium, frozen) are handled explicitly.
- :class:`MultiExample` — several examples, real time t, balanced, θ = ln u.

Units: a one-example system integrates the data ẑ = z/2^k, 2^k ≤ max|z_j| < 2^(k+1), in the time
τ̂ = 2^k τ (C4's reduction also in Î = 2^(2k) I; θ = ln u is unchanged): the one-example flows are
exactly invariant under z → cz, τ → τ/c (I → I/c²), and powers of two are exact in floating point.
So nothing in a field over- or underflows at |z| ~ 1e±300 (ln z_j², 2ρ z_j² I did), the absolute
tolerance means the same at every scale, and the engine maps every time, I and ln N back
(:meth:`BatchSystem.to_physical`). ``data_log2_scale`` (k) is in the metadata.

Clocks: a member integrates in its own clock s, with the physical time τ (or t) as the
first state component, ``dτ/ds = κ``. κ = 1 far from singularities and → 0 near one
(ℓ2 collapse N → 0, an ℓ∞ coordinate reaching u_j = 0, an L ≥ 3 blow-up), so that the
log-coordinate fields, whose rates diverge there, become bounded in s and every member
reaches its event in a bounded number of steps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from theorycheck.batched.ops import NumpyOps
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import supporting
from theorycheck.solvers import critical
from theorycheck.solvers.guards import scaled_norm
from theorycheck.status import BLOWUP, COLLAPSE, CRITICAL_POINT, NO_COLLAPSE
from theorycheck.symbolic import forms as C
from theorycheck.vocabulary import TIE_LOG, TimeKind

#: κ clocks and event levels: a rate |dθ/dτ| > e^{EVENT_LOG}·c means the singular time is
#: less than e^{−EVENT_LOG}/c away (c: the system's rate scale)
EVENT_LOG = 30.0


class BatchSystem:
    """What :func:`integrate` solves. State of member b: (τ_b, y_b), y of width ``m``.

    Subclasses define ``initial()``, ``rates(idx, tau, y) -> (dτ/ds, dy/ds)``,
    ``after_step(idx, tau, y, dtau, dy) -> (codes, changed)``, ``observe(idx, tau, y)``
    and ``fill(idx, codes)`` (values of the cells after a member stopped at an event)."""

    ops: Any
    B: int
    m: int
    #: observable name -> numpy dtype, and the value of a cell that was never computed
    observables: dict[str, tuple[Any, Any]] = {}
    #: per-member event records (numpy arrays, np.inf = did not happen)
    events: dict[str, np.ndarray]
    #: which time the physical time is (vocabulary.TimeKind): rescaled (one example) or real
    time_kind = TimeKind.RESCALED
    #: k: the system integrates in the time τ̂ = 2^k τ (see the module's Units)
    time_log2: int = 0
    #: the events that are times (mapped back by 2^−k); the others are counts
    time_events: tuple[str, ...] = ()

    def initial(self):
        raise NotImplementedError

    def rates(self, idx, tau, y):
        raise NotImplementedError

    def after_step(self, idx, tau, y, dtau, dy):
        return self.ops.zeros(len(idx), dtype=int), None

    def observe(self, idx, tau, y) -> dict:
        raise NotImplementedError

    def fill(self, idx: np.ndarray, codes: np.ndarray) -> dict:
        return {}

    def metadata(self) -> dict:
        return {}

    def observables_to_physical(self, obs: dict) -> dict:
        """The observables of the system's own units in the caller's (identity unless overridden)."""
        return obs

    def to_physical(self, t_stop: np.ndarray, events: dict, obs: dict) -> tuple[np.ndarray, dict, dict]:
        """(t_stop, events, observables) of a run mapped from τ̂ = 2^k τ back to τ (exact but
        where a result leaves the float64 range)."""
        k = self.time_log2
        if k == 0:
            return t_stop, events, obs
        with np.errstate(over="ignore", under="ignore"):
            ev = {name: (np.ldexp(v, -k) if name in self.time_events else v) for name, v in events.items()}
            return np.ldexp(t_stop, -k), ev, self.observables_to_physical(obs)


def log2_unit(x) -> int:
    """k with 2^k ≤ max_j |x_j| < 2^(k+1) (0 when x is 0 or not finite): x/2^k has its largest
    entry in [1, 2), and dividing by 2^k is exact (subnormal data included)."""
    a = np.abs(np.asarray(x, dtype=float))
    m = float(np.max(a)) if a.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return 0
    return math.frexp(m)[1] - 1


def _unit_data(z: np.ndarray) -> tuple[np.ndarray, int]:
    """(ẑ = z/2^k, k) with k = :func:`log2_unit` (z): the data one-example systems integrate."""
    k = log2_unit(z)
    return np.ldexp(z, -k), k


#: |x| outside [2^−SQUARE_SAFE_LOG2, 2^SQUARE_SAFE_LOG2]: x² leaves float64 (or loses digits as a subnormal)
SQUARE_SAFE_LOG2 = 500


def _ldexp(ops, x, e):
    """x·2^e, exact (e per element; torch: two halves, so that 2^e itself cannot overflow)."""
    if ops.name == "numpy":
        return np.ldexp(x, np.asarray(e).astype(np.int32))
    h = ops.floor(e / 2)
    return x * ops.pow(2.0, h) * ops.pow(2.0, e - h)


def log_square_summand(ops, f, x, th):
    """``f(x, θ)`` = ln(term j of a sum of squares), homogeneous of degree 2 in x (ln L x_j² u_j^(2L−2):
    N² of one example, S² of several), without the square of an |x_j| ≲ 1e-154 underflowing (the
    term was dropped: ℓ2's N or S of data at 1e-213 came out −inf) or of one ≳ 1e154 overflowing:
    there f is evaluated at x_j·2^−e_j (exact, e_j the binary exponent of x_j) and 2 e_j ln 2 added;
    elsewhere it is f(x, θ) bitwise. tests/test_batched_scale.py checks the homogeneity on the
    symbolic forms."""
    with ops.errstate():
        _, e = ops.frexp(x)
        a = ops.abs(x)
        far = (a > 2.0**SQUARE_SAFE_LOG2) | ((a < 2.0**-SQUARE_SAFE_LOG2) & (a > 0))
        if not ops.any(far):
            return f(x, th)
        e = ops.where(far, e, 0) * 1.0
        return f(_ldexp(ops, x, -e), th) + (2 * math.log(2.0)) * e


def _balanced_alpha_rho(alpha, rho, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(B×d α, B ρ) for a batch of balanced inits: a scalar α per member is repeated over
    the features; α_j > 0 and ρ ≥ 0 are required."""
    alpha = np.asarray(alpha, dtype=float)
    if alpha.ndim <= 1:
        alpha = np.repeat(alpha.reshape(-1, 1), d, axis=1)
    rho = np.broadcast_to(np.asarray(rho, float).reshape(-1), (alpha.shape[0],)).copy()
    if alpha.shape[1] != d or np.any(alpha <= 0) or np.any(rho < 0):
        raise TheorycheckError("balanced sweeps need α_j > 0 (one per feature) and ρ ≥ 0")
    return alpha, rho


def _col(x):
    return x[:, None]


#: below this |ẑ_j| (relative to the largest, which is in [1, 2)) ẑ_j² loses digits in float64
_TINY_UNIT = 2.0**-500


def _reduced_coefficients(zh: np.ndarray, alpha: np.ndarray, rho: np.ndarray) -> list[np.ndarray]:
    """(K, A, G) of ln(term j of N²) = K_bj + τ A_bj + I G_bj (C4's log summand, affine in (τ, I);
    compiled from the symbolic layer), (B, d) or (1, d) when every member has the same row.
    K holds ln z_j²: for a |ẑ_j| far below the largest it is evaluated at ẑ_j 2^(e_j) (in [1, 2))
    and −2 e_j ln 2 added (K is ln z_j² plus terms free of z: tests/test_batched_scale.py checks
    it on the symbolic form), so that ẑ_j² does not underflow to a term that is dropped."""
    lin = C.reduced_l2_log_linear("numpy")
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
    levels = C.l2_switch_level("numpy")(zs[:-1][None, :], zs[1:][None, :], rho[:, None])
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
        _, self.theta = C.reduced_l2(o.name)
        self.coef = [o.asarray(c) for c in _reduced_coefficients(zh, alpha, rho)]
        self._gathered: tuple = (None, None)
        self._buf: tuple | None = None  # work buffers of log_norm (numpy)
        self.half_log = C.log_norm(o.name)  # ln N from ln Σ_j (term j of N²)
        shared = all(c.shape[0] == 1 for c in self.coef) and o.name == "numpy"
        self._W = np.concatenate([np.asarray(c) for c in self.coef], 0) if shared else None  # (3, d): K, A, G
        self.observe_mode = observe
        self.levels, self.level_index = _switch_levels(zh, rho)
        self.zmax = float(zh.max())
        lv = C.l2_certificate_levels(zh, rho, collapse_tol)  # C5, from the symbolic layer
        with np.errstate(divide="ignore"):
            self.log_c = o.asarray(np.log(lv["clock_scale"]))  # −inf when ρ = 0 (GD: κ = 1)
            self.log_cert = o.asarray(np.log(lv["collapse"]))  # N < ρ z_+: collapse certain
            self.log_safe = o.asarray(np.log(lv["no_collapse"]))  # N ≥ ρ z_max: no collapse
            self.log_stop = o.asarray(np.log(lv["stop"]))
        self.clocked = C.reduced_l2_clocked("smooth", o.name)  # (dτ/ds, dI/ds) from (ln N, ln c)
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


def _leader(ops, th, L: int):
    """j† per row by the tool's tie rule (vocabulary.TIE_RTOL): the smallest index j with
    |β_j| ≥ (1 − TIE_RTOL)·max_k |β_k|, i.e. L θ_j ≥ L max θ − TIE_LOG; 0 where every θ_j = −inf
    (β = 0). A plain argmax would let a 1e-12 rounding gap pick the larger index of a tie."""
    mx = ops.amax(th, 1)
    with ops.errstate():
        near = ops.where(th * L >= (mx * L - TIE_LOG)[:, None], 1.0, 0.0)
    return ops.where(mx == -math.inf, 0, ops.argmax(near, 1) + 1)


def _top_gap(ops, th):
    """θ_(1) − θ_(2): how far the cell is from a tie of j† (inf with one live coordinate).
    A gap below the integration error (≈ rtol·|θ| + atol) means j† there is not resolved."""
    if th.shape[1] < 2:
        return ops.full((th.shape[0],), math.inf)
    top = ops.amax(th, 1)
    am = ops.argmax(th, 1)
    mask = ops.arange(th.shape[1])[None, :] == am[:, None]
    second = ops.amax(ops.where(mask, -math.inf, th), 1)
    with ops.errstate():
        return ops.where(top == -math.inf, math.inf, top - second)


def product_optimizers() -> tuple[str, ...]:
    """The optimizers of the product classification flows whose step is a function of the gradient alone
    (the batched systems' domain: their balanced forms take ε(g); a weighted step, ASAM, runs in
    :mod:`theorycheck.solvers`)."""
    return tuple(o.name for o in supporting("product", "logistic", 2) if not o.weighted)


def _decoupled(optimizer: str) -> bool:
    """GD and ℓ∞-SAM, one example: the balanced field acts coordinatewise."""
    return not get_optimizer(optimizer).normalised


class _ClockedTheta(BatchSystem):
    """Systems in θ = ln u whose clock slows where the field is large: dτ/ds = κ =
    1/(1 + ‖dθ/dτ‖/c), so singular times (sliding, blow-up) take a bounded number of steps."""

    def theta_rate(self, idx, tau, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _mark_dead(self, idx, idx_np, tau_np, newly, r):
        """Freeze the coordinates in ``newly`` (reached 0 at this step), record the first
        such time per member and an estimate of the event-time error (1/|rate|); returns
        the members that changed, or None."""
        o = self.ops
        nd = o.to_numpy(newly)
        if not nd.any():
            return None
        self.dead[idx] = self.dead[idx] | newly
        err = np.where(nd, 1.0 / np.maximum(np.abs(o.to_numpy(r)), 1e-300), 0.0).max(axis=1)
        ev = self.events
        ev["event_time_error"][idx_np] = np.maximum(ev["event_time_error"][idx_np], err)
        first = nd.any(axis=1) & ~np.isfinite(ev["first_zero"][idx_np])
        ev["first_zero"][idx_np[first]] = tau_np[first]
        return nd.any(axis=1)

    def rates(self, idx, tau, y):
        o = self.ops
        r = self.theta_rate(idx, tau, y)
        rc = r * (1.0 / self.c)  # ‖θ'‖/c as ‖θ'/c‖: θ' scales with c, so its squares cannot overflow (|z| ~ 1e200)
        kappa = 1.0 / (1.0 + o.sqrt(o.sum(rc * rc, 1)))
        return kappa, r * kappa[:, None]


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
        if optimizer not in product_optimizers():
            raise TheorycheckError(f"batched sweeps cover {', '.join(product_optimizers())}, not {optimizer!r}")
        if L < 2 or (get_optimizer(optimizer).normalised and L != 2):
            raise TheorycheckError(f"batched balanced sweeps cover GD and ℓ∞-SAM for L ≥ 2 and ℓ2-SAM for L = 2 "
                                   f"(got {optimizer}, L = {L}): use `theorycheck trajectory` for this setting")
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
            lv = C.l2_certificate_levels(z, rho, collapse_tol)  # C5, from the symbolic layer
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
        if L < 2 or (get_optimizer(optimizer).normalised and L != 2):
            raise TheorycheckError(f"batched real-time sweeps cover GD and ℓ∞-SAM for L ≥ 2 and ℓ2-SAM for L = 2 "
                                   f"(got {optimizer}, L = {L}): use `theorycheck trajectory` for this setting")
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

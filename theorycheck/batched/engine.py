"""Batched integration: many members of one flow (an α-grid, an (α, ρ)-grid, seeds) as one
vectorised system, each member with its own step size, clock and status.

Engine (:func:`integrate`): Dormand–Prince 5(4) with scipy's tableau, error norm and step
control (``scipy.integrate.RK45``, the default of ``solve_ivp``), so "same tolerances" means
the same thing as for a ``solve_ivp`` loop. Members never share a step size: a member's
result does not depend on the other members of its batch (chunks of a sweep can run on
other machines and the results stay bitwise equal).

Clocks: a member integrates in its own clock s, with the physical time τ (or t) as the
first state component, ``dτ/ds = κ``. κ = 1 far from singularities and → 0 near one
(ℓ2 collapse N → 0, an ℓ∞ coordinate reaching u_j = 0, an L ≥ 3 blow-up), so that the
log-coordinate fields, whose rates diverge there, become bounded in s and every member
reaches its event in a bounded number of steps. Output on a common grid of τ comes from
the dense output of each step, inverted for τ (safeguarded Newton).

Systems (what to integrate, all fields compiled from the symbolic layer):

- :class:`ReducedL2` — C4's scalar ODE dI/dτ = 1/N(τ, I) (ℓ2-SAM, L = 2, one example,
  uniform α): a whole (α, ρ) grid is a vector of scalar ODEs. Collapse certificate
  N < ρ z_min, no-collapse certificate N ≥ ρ z_max (THEORY.md C5; both persist).
- :class:`BalancedLog` — one example, balanced, θ = ln u: GD and ℓ∞-SAM (any L ≥ 2),
  ℓ2-SAM (L = 2), per-coordinate α. ℓ∞ sliding at u_j = 0 (the coordinate is frozen at 0:
  Filippov) and α_j = ρ exactly (an equilibrium, frozen) are handled explicitly.
- :class:`MultiExample` — several examples, real time t, balanced, θ = ln u.

Status codes of a member: see :data:`STATUS`. j† is 1-based; 0 means β = 0 (collapse),
−1 a cell that was not computed (a budget ran out: the member's status says which).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.integrate import RK45

from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import compile as C

# ---------------------------------------------------------------------------- statuses
RUNNING, DONE, COLLAPSE, BLOWUP, SAFE, MAX_STEPS, STEP_UNDERFLOW, NONFINITE, SIGN_CHANGE = range(9)
#: member status code -> name (the ``status`` arrays of results hold the codes)
STATUS: dict[int, str] = {
    RUNNING: "running",
    DONE: "done",  # reached the end of the grid
    COLLAPSE: "collapse",  # β → 0 (ℓ2: N → 0; ℓ∞: every coordinate slid to 0)
    BLOWUP: "blowup",  # L ≥ 3: a coordinate blew up in finite rescaled time
    SAFE: "no-collapse",  # classification runs: the no-collapse certificate holds
    MAX_STEPS: "max_steps",  # the step budget ran out
    STEP_UNDERFLOW: "step_underflow",  # the step size fell below the float resolution
    NONFINITE: "nonfinite",  # the field returned inf/NaN where the step could not be shrunk
    SIGN_CHANGE: "sign_change",  # discrete runs: a step would take some u_j through 0 (overshoot)
}
#: statuses that end a member without a budget running out
FINISHED_OK = (DONE, COLLAPSE, BLOWUP, SAFE)

#: κ clocks and event levels: a rate |dθ/dτ| > e^{EVENT_LOG}·c means the singular time is
#: less than e^{−EVENT_LOG}/c away (c: the system's rate scale)
EVENT_LOG = 30.0


# ---------------------------------------------------------------------------- array backends
class NumpyOps:
    """The few array operations the engine needs, on numpy (float64)."""

    name = "numpy"
    float = np.float64

    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=dtype if dtype is not None else np.float64)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=dtype if dtype is not None else np.float64)

    def full(self, shape, value, dtype=None):
        return np.full(shape, value, dtype=dtype if dtype is not None else np.float64)

    def arange(self, n):
        return np.arange(n)

    def cat(self, xs, axis=0):
        return np.concatenate(xs, axis=axis)

    def stack(self, xs, axis=0):
        return np.stack(xs, axis=axis)

    def sum(self, x, axis):
        return np.sum(x, axis=axis)

    def amax(self, x, axis):
        return np.max(x, axis=axis)

    def argmax(self, x, axis):
        return np.argmax(x, axis=axis)

    def logsumexp(self, x, axis):
        m = np.max(x, axis=axis, keepdims=True)
        if not np.all(np.isfinite(m)):
            m = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(x - m), axis=axis)) + np.squeeze(m, axis)

    def nonzero(self, mask):
        return np.flatnonzero(mask)

    def any(self, x) -> bool:
        return bool(np.any(x))

    def all(self, x, axis=None):
        return np.all(x, axis=axis)

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x)

    def errstate(self):
        return np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore")

    def __getattr__(self, name):  # exp, log, sqrt, abs, where, maximum, minimum, isfinite, sign, ...
        return getattr(np, name)


class TorchOps:
    """The same operations on torch (float64), on ``device`` (default: CUDA when present)."""

    name = "torch"

    def __init__(self, device: str | None = None):
        import torch

        self.torch = torch
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.float = torch.float64

    def _dtype(self, dtype):
        t = self.torch
        if dtype is None or dtype in (float, np.float64):
            return t.float64
        if dtype in (int, np.int64):
            return t.int64
        if dtype in (bool, np.bool_):
            return t.bool
        return dtype

    def asarray(self, x, dtype=None):
        if isinstance(x, self.torch.Tensor):
            return x.to(device=self.device, dtype=self._dtype(dtype))
        return self.torch.as_tensor(np.asarray(x), dtype=self._dtype(dtype), device=self.device)

    def zeros(self, shape, dtype=None):
        return self.torch.zeros(shape, dtype=self._dtype(dtype), device=self.device)

    def full(self, shape, value, dtype=None):
        return self.torch.full(shape if isinstance(shape, tuple) else (shape,), value, dtype=self._dtype(dtype),
                               device=self.device)

    def arange(self, n):
        return self.torch.arange(n, device=self.device)

    def cat(self, xs, axis=0):
        return self.torch.cat(xs, dim=axis)

    def stack(self, xs, axis=0):
        return self.torch.stack(xs, dim=axis)

    def sum(self, x, axis):
        return self.torch.sum(x, dim=axis)

    def amax(self, x, axis):
        return self.torch.amax(x, dim=axis)

    def argmax(self, x, axis):
        return self.torch.argmax(x, dim=axis)

    def logsumexp(self, x, axis):
        return self.torch.logsumexp(x, dim=axis)

    def nonzero(self, mask):
        return self.torch.nonzero(mask).reshape(-1)

    def any(self, x) -> bool:
        return bool(self.torch.any(x))

    def all(self, x, axis=None):
        return self.torch.all(x) if axis is None else self.torch.all(x, dim=axis)

    def to_numpy(self, x) -> np.ndarray:
        return x.detach().cpu().numpy() if isinstance(x, self.torch.Tensor) else np.asarray(x)

    def errstate(self):
        import contextlib

        return contextlib.nullcontext()

    def where(self, c, a, b):
        t = self.torch
        if not isinstance(a, t.Tensor):
            a = t.as_tensor(a, dtype=t.float64, device=self.device)
        if not isinstance(b, t.Tensor):
            b = t.as_tensor(b, dtype=t.float64, device=self.device)
        return t.where(c, a, b)

    def maximum(self, a, b):
        t = self.torch
        if not isinstance(b, t.Tensor):
            return t.clamp(a, min=float(b))
        if not isinstance(a, t.Tensor):
            return t.clamp(b, min=float(a))
        return t.maximum(a, b)

    def minimum(self, a, b):
        t = self.torch
        if not isinstance(b, t.Tensor):
            return t.clamp(a, max=float(b))
        if not isinstance(a, t.Tensor):
            return t.clamp(b, max=float(a))
        return t.minimum(a, b)

    def __getattr__(self, name):
        return getattr(self.torch, name)


def get_ops(array_backend: str = "numpy", device: str | None = None):
    """``"numpy"`` or ``"torch"`` (CUDA when present unless ``device`` says otherwise)."""
    if array_backend == "numpy":
        return NumpyOps()
    if array_backend == "torch":
        try:
            return TorchOps(device)
        except ImportError:
            raise TheorycheckError("array backend 'torch' needs torch: pip install 'torch==2.13.0'") from None
    raise TheorycheckError(f"unknown array backend {array_backend!r}: choose numpy or torch")


# ---------------------------------------------------------------------------- systems
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
    #: the physical time's name: "tau" (rescaled, one example) or "t" (real)
    time_kind = "tau"

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


def _stable_clock(ops, log_rate, log_c):
    """κ = 1/(1 + r/c) with r = e^{log_rate}, c = e^{log_c}, and 1/(r + c), without overflow."""
    diff = log_rate - log_c
    big = diff > 0
    e = ops.exp(ops.where(big, -diff, diff))  # ≤ 1
    kappa = ops.where(big, e / (1.0 + e), 1.0 / (1.0 + e))
    return kappa


class ReducedL2(BatchSystem):
    """C4's reduction of the ℓ2-SAM flow (L = 2, one example, uniform α):
    dI/dτ = 1/N(τ, I), N² = Σ_j 2 z_j² e^{2θ_j}, θ_j = ln α + z_j τ − ρ z_j² I.

    Members: ``alpha`` (B,) and ``rho`` (B,) (broadcast). Clock: dτ/ds = N/(N + c),
    dI/ds = 1/(N + c), c = ρ z_+ (z_+ the smallest positive z_j): smooth as N → 0 and
    N → ∞. Collapse is certified when N < ρ z_+ (every rate negative from then on) and the
    member stops when N ≤ ``collapse_tol``·N*, N* = ρ m²/(2 z_max) (m = min nonzero |z_j|):
    from there dN/dτ ≤ −ρ m²/2, so the collapse time is within 2N/(ρ m²) ≤ collapse_tol/z_max
    after the stop. With ``stop_on_safe`` a member also stops once N ≥ ρ z_max (no collapse,
    ever): for classification runs."""

    time_kind = "tau"

    def __init__(self, z, alpha, rho, *, ops=None, collapse_tol: float = 1e-10, stop_on_safe: bool = False,
                 observe: str = "levels", observe_norm: bool = False):
        self.ops = ops or NumpyOps()
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
        o = self.ops
        self.z = o.asarray(z)[None, :]
        self.alpha = o.asarray(alpha)
        self.rho = o.asarray(rho)
        _, self.theta = C.reduced_l2(o.name)
        # ln(term j of N²) = K_bj + τ·A_bj + I·G_bj: coefficients once per member (affine in τ, I)
        lin = C.reduced_l2_log_linear("numpy")
        zz, aa, rr = z[None, :], alpha[:, None], rho[:, None]
        with np.errstate(divide="ignore"):
            full = np.broadcast_shapes(zz.shape, aa.shape)
            coef = [np.broadcast_to(f(zz, aa, rr), full) for f in (lin.c0, lin.c_tau, lin.c_I)]
        # a coefficient that is the same for every member (e.g. one ρ) is stored once, (1, d)
        self.coef = [o.asarray(c[:1].copy() if np.all(c == c[:1]) else c.copy()) for c in coef]
        self._gathered: tuple = (None, None)
        self._buf: tuple | None = None  # work buffers of log_norm (numpy)
        shared = all(c.shape[0] == 1 for c in self.coef) and o.name == "numpy"
        self._W = np.concatenate([np.asarray(c) for c in self.coef], 0) if shared else None  # (3, d): K, A, G
        # j† from N̄ = τ/I: the switch levels N̄ = ρ(z_j + z_k) between consecutive distinct z (C4)
        zs, first = np.unique(z, return_index=True)
        self.observe_mode = observe
        levels = C.l2_switch_level("numpy")(zs[:-1][None, :], zs[1:][None, :], rho[:, None])  # (B, D−1)
        self.levels = levels[:1].copy() if np.all(levels == levels[:1]) else levels  # one ρ: one row
        self.level_index = first + 1  # 1-based index of the first coordinate with each distinct z
        zpos = float(z[z > 0].min())
        nz = np.abs(z[z != 0])
        self.zmax = float(z.max())
        with np.errstate(divide="ignore"):
            self.log_c = o.asarray(np.log(rho * zpos))  # −inf when ρ = 0 (GD: κ = 1)
            self.log_cert = o.asarray(np.log(rho * zpos))  # N < ρ z_+: collapse certain
            self.log_safe = o.asarray(np.log(rho * self.zmax))  # N ≥ ρ z_max: no collapse
            self.log_stop = o.asarray(np.log(collapse_tol * rho * nz.min() ** 2 / (2 * self.zmax)))
        self.collapse_tol = collapse_tol
        self.stop_on_safe = stop_on_safe
        self.events = {"collapse_certified": np.full(self.B, np.inf), "collapse": np.full(self.B, np.inf),
                       "no_collapse_certified": np.full(self.B, np.inf)}

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
            return 0.5 * self.ops.logsumexp(K + _col(tau) * A + _col(I) * G, 1)
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
            return 0.5 * (np.log(np.sum(X, axis=1)) + m)

    def rates(self, idx, tau, y):
        o = self.ops
        lnN = self.log_norm(idx, tau, y[:, 0])
        lc = self.log_c[idx]
        kappa = _stable_clock(o, lc, lnN)  # N/(N + c) = 1/(1 + c/N)
        dI = kappa * o.exp(-lnN)  # 1/(N + c)
        return kappa, dI[:, None]

    def after_step(self, idx, tau, y, dtau, dy):
        o = self.ops
        with o.errstate():  # ln N from the step's last stage: dI/ds = κ/N, κ = dτ/ds (no extra sum over j)
            lnN = o.log(dtau) - o.log(dy[:, 0])
        cert = lnN < self.log_cert[idx]
        safe = lnN >= self.log_safe[idx]
        stop = lnN <= self.log_stop[idx]
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        for key, mask in (("collapse_certified", cert), ("no_collapse_certified", safe)):
            m = o.to_numpy(mask)
            ev = self.events[key]
            first = m & ~np.isfinite(ev[idx_np])
            ev[idx_np[first]] = tau_np[first]
        codes = o.where(stop, COLLAPSE, 0)
        if self.stop_on_safe:
            codes = o.where(safe & ~stop, SAFE, codes)
        codes = o.to_numpy(codes).astype(int)
        self.events["collapse"][idx_np[codes == COLLAPSE]] = tau_np[codes == COLLAPSE]
        return codes, None

    def thetas(self, idx, tau, I):
        """θ_j = ln u_j at (τ, I) for members idx: (P, d)."""
        return self.theta(self.z, _col(tau), _col(I), _col(self.alpha[idx]), _col(self.rho[idx]))

    def observe(self, idx, tau, y):
        o = self.ops
        I = y[:, 0]
        if self.observe_mode == "theta":  # argmax_j θ_j(τ, I): O(d) per cell
            j = o.argmax(self.thetas(idx, tau, I), 1) + 1
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
                "observe": self.observe_mode,
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


def _decoupled(optimizer: str) -> bool:
    """GD and ℓ∞-SAM, one example: the balanced field acts coordinatewise."""
    return optimizer in ("gd", "sam-linf")


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
        nr = o.sqrt(o.sum(r * r, 1))
        kappa = 1.0 / (1.0 + nr / self.c)
        return kappa, r * kappa[:, None]


class BalancedLog(_ClockedTheta):
    """One example, balanced layers, θ = ln u (THEORY.md, Rescaled flows):
    dθ_j/dτ from :func:`compile.balanced_log_field` (N carried as ln N).

    GD and ℓ∞-SAM for any L ≥ 2, ℓ2-SAM for L = 2. Members: ``alpha`` (B, d) (or (B,) for a
    uniform init) and ``rho`` (B,). Clock dτ/ds = 1/(1 + ‖θ'‖₂/c), c = ‖z‖₂.

    Events: an ℓ∞ coordinate whose rate falls below −e^{30}c is at most e^{−30}/c from u_j = 0,
    where it slides (Filippov; the field at u_j = 0 is exactly 0): frozen at 0. A coordinate
    whose field is exactly 0 at the start (α_j = ρ in ℓ∞-SAM; z_j = 0) is an equilibrium of
    the decoupled field: frozen. A rate above e^{30}c (L ≥ 3) is a blow-up: the member stops,
    and j† keeps the blown-up index (the real-time flow keeps it as t → ∞). ℓ2-SAM: the
    collapse certificate and stop rule of :class:`ReducedL2`. All coordinates at 0: collapse."""

    time_kind = "tau"
    observables = {"jdag": (np.int16, -1), "log_beta_max": (np.float64, np.nan), "gap": (np.float64, np.nan)}

    def __init__(self, z, alpha, rho, *, L: int = 2, optimizer: str, ops=None, collapse_tol: float = 1e-10):
        self.ops = o = ops or NumpyOps()
        z = np.asarray(z, dtype=float).reshape(-1)
        d = z.size
        if optimizer not in ("gd", "sam-l2", "sam-linf"):
            raise TheorycheckError(f"unknown optimizer {optimizer!r}")
        if L < 2 or (optimizer == "sam-l2" and L != 2):
            raise TheorycheckError(f"batched balanced sweeps cover GD and ℓ∞-SAM for L ≥ 2 and ℓ2-SAM for L = 2 "
                                   f"(got {optimizer}, L = {L}): use `theorycheck trajectory` for this setting")
        alpha, rho = _balanced_alpha_rho(alpha, rho, d)
        self.B, self.m, self.d, self.L, self.optimizer = alpha.shape[0], d, d, int(L), optimizer
        self.z_np, self.alpha_np, self.rho_np = z, alpha, rho
        self.z = o.asarray(z)[None, :]
        self.alpha = o.asarray(alpha)
        self.rho = o.asarray(rho)
        self.cf = C.balanced_log_field(self.L, optimizer, o.name)
        self.log_c = math.log(float(np.linalg.norm(z)))
        self.c = float(np.linalg.norm(z))
        # coordinates at an equilibrium of a decoupled field: du_j/dτ exactly 0 at the start
        frozen = np.zeros((self.B, d), dtype=bool)
        if _decoupled(optimizer):
            u_field = C.balanced_field(self.L, optimizer, "numpy").field
            frozen = np.asarray(u_field(z[None, :], alpha, 1.0, rho[:, None]) == 0, dtype=bool)
            frozen = np.broadcast_to(frozen, (self.B, d)).copy()
        self.frozen = o.asarray(frozen, dtype=bool)
        self.dead = o.zeros((self.B, d), dtype=bool)
        self.collapse_tol = collapse_tol
        if optimizer == "sam-l2":
            zpos = float(z[z > 0].min()) if np.any(z > 0) else np.inf
            nz = np.abs(z[z != 0])
            with np.errstate(divide="ignore"):
                self.log_cert = o.asarray(np.log(rho * zpos))
                self.log_stop = o.asarray(np.log(collapse_tol * rho * nz.min() ** 2 / (2 * z.max())))
        self.events = {"collapse": np.full(self.B, np.inf), "blowup": np.full(self.B, np.inf),
                       "first_zero": np.full(self.B, np.inf), "event_time_error": np.zeros(self.B),
                       "frozen_at_start": frozen.sum(axis=1).astype(float)}
        self.blowup_index = np.zeros(self.B, dtype=np.int16)

    def initial(self):
        o = self.ops
        return o.zeros(self.B), o.log(self.alpha)

    def _masked(self, idx, th):
        return self.ops.where(self.dead[idx], -math.inf, th)

    def log_norm(self, idx, th):
        """ln N with N² = Σ_j L z_j² u_j^{2L−2} (ℓ2-SAM), dead coordinates excluded."""
        o = self.ops
        s = self.cf.log_summand(self.z, th)
        s = o.where(self.dead[idx], -math.inf, s)
        return 0.5 * o.logsumexp(s, 1)

    def theta_rate(self, idx, tau, th):
        o = self.ops
        lnN = self.log_norm(idx, th)[:, None] if self.optimizer == "sam-l2" else 0.0
        with o.errstate():
            r = self.cf.field(self.z, th, lnN, _col(self.rho[idx]))
        return o.where(self.frozen[idx] | self.dead[idx], 0.0, r * 1.0)

    def after_step(self, idx, tau, y, dtau, dy):
        o = self.ops
        r = dy / dtau[:, None]  # dθ/dτ from the clocked field (finite: κ > 0 after an accepted step)
        live = ~(self.frozen[idx] | self.dead[idx])
        big = math.exp(EVENT_LOG) * self.c
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        codes = np.zeros(len(idx_np), dtype=int)
        changed = None
        if _decoupled(self.optimizer):
            changed = self._mark_dead(idx, idx_np, tau_np, live & (r < -big), r)
            all_dead = o.to_numpy(o.all(self.dead[idx], 1))
            codes[all_dead] = COLLAPSE
        else:  # ℓ2-SAM, L = 2
            lnN = self.log_norm(idx, y)
            codes[o.to_numpy(lnN <= self.log_stop[idx])] = COLLAPSE
        if self.L >= 3:
            blow = o.to_numpy((live & (r > big)).any(1))
            if blow.any():
                codes[blow & (codes == 0)] = BLOWUP
                th = o.to_numpy(self._masked(idx, y))
                self.blowup_index[idx_np[blow]] = th[blow].argmax(axis=1) + 1
                self.events["blowup"][idx_np[blow]] = tau_np[blow]
                rb = o.to_numpy(r)[blow]
                self.events["event_time_error"][idx_np[blow]] = 1.0 / ((self.L - 2) * rb.max(axis=1))
        self.events["collapse"][idx_np[codes == COLLAPSE]] = tau_np[codes == COLLAPSE]
        return codes, changed

    def observe(self, idx, tau, y):
        o = self.ops
        th = self._masked(idx, y)
        mx = o.amax(th, 1)
        j = o.argmax(th, 1) + 1
        j = o.where(mx == -math.inf, 0, j)
        return {"jdag": j, "log_beta_max": self.L * mx, "gap": _top_gap(o, th)}

    def fill(self, idx, codes):
        out_j = np.where(codes == BLOWUP, self.blowup_index[idx], 0)
        return {"jdag": out_j, "log_beta_max": np.where(codes == BLOWUP, np.inf, -np.inf), "gap": np.inf}

    def metadata(self) -> dict:
        return {"system": "balanced-log", "L": self.L, "optimizer": self.optimizer, "collapse_tol": self.collapse_tol,
                "event_log": EVENT_LOG, "clock": "dtau/ds = 1/(1 + |dtheta/dtau|_2/|z|_2)"}


class MultiExample(_ClockedTheta):
    """Several examples, real time t, balanced layers u > 0, θ = ln u:
    dθ_j/dt = −Ĝ_j r_j^{L−1} e^{(L−2)θ_j}, r_j = û_j/u_j (:func:`compile.balanced_multi_log`),
    with G = ∂Lo/∂β = (1/n) Σ_i ℓ'(m_i) z_i (:func:`symbolic.loss_gradient_factor`, as sums
    over examples), Ĝ the same at the perturbed point û = r u, β from
    :func:`compile.predictor`, ℓ and ℓ' from :func:`compile.stable_loss_functions`, and
    ln S = ½ logsumexp_j(ln(term j of S²)). GD and ℓ∞-SAM for L ≥ 2, ℓ2-SAM for L = 2.

    Clock dt/ds = 1/(1 + ‖θ'‖₂/c), c = max_i ‖z_i‖₂. Events: ℓ∞-SAM — a coordinate whose
    log-rate falls below −e^{30}c is within e^{−30}/c of u_j = 0, where it slides (Filippov):
    frozen at 0. ℓ2-SAM — collapse (S → 0) when every live coordinate's log-rate is below
    −e^{30}c (numerical: no certificate for several examples). Every coordinate at 0: collapse."""

    time_kind = "t"
    observables = {"jdag": (np.int16, -1), "loss": (np.float64, np.nan), "log_beta_max": (np.float64, np.nan),
                   "gap": (np.float64, np.nan)}

    def __init__(self, Z, alpha, rho, *, L: int = 2, optimizer: str, loss: str = "logistic", ops=None):
        self.ops = o = ops or NumpyOps()
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        n, d = Z.shape
        if L < 2 or (optimizer == "sam-l2" and L != 2):
            raise TheorycheckError(f"batched real-time sweeps cover GD and ℓ∞-SAM for L ≥ 2 and ℓ2-SAM for L = 2 "
                                   f"(got {optimizer}, L = {L}): use `theorycheck trajectory` for this setting")
        alpha, rho = _balanced_alpha_rho(alpha, rho, d)
        self.B, self.m, self.d, self.n, self.L = alpha.shape[0], d, d, n, int(L)
        self.optimizer, self.loss = optimizer, loss
        self.Z_np, self.alpha_np, self.rho_np = Z, alpha, rho
        self.Z = o.asarray(Z)
        self.alpha = o.asarray(alpha)
        self.rho = o.asarray(rho)
        self.ell, self.dell = C.stable_loss_functions(loss, o.name)  # overflow-free: no inf/inf at margins < −709
        self.beta = C.predictor(self.L, o.name)
        self.cf = C.balanced_multi_log(self.L, optimizer, o.name)
        self.c = float(np.linalg.norm(Z, axis=1).max())
        self.dead = o.zeros((self.B, d), dtype=bool)
        self.loss0 = float(C.stable_loss_functions(loss, "numpy")[0](0.0))
        self.events = {"collapse": np.full(self.B, np.inf), "first_zero": np.full(self.B, np.inf),
                       "event_time_error": np.zeros(self.B)}

    def initial(self):
        o = self.ops
        return o.zeros(self.B), o.log(self.alpha)

    def _margins(self, beta):
        """m_i = <β, z_i> for each member (P, n); elementwise products and sums, not BLAS,
        so that a member's numbers do not depend on the size of its batch."""
        return self.ops.sum(beta[:, None, :] * self.Z[None, :, :], 2)

    def _G(self, beta):
        """∂Lo/∂β = (1/n) Σ_i ℓ'(<β, z_i>) z_i for each member (P, d)."""
        w = self.dell(self._margins(beta))
        return self.ops.sum(w[:, :, None] * self.Z[None, :, :], 1) / self.n

    def theta_rate(self, idx, tau, th):
        o = self.ops
        dead = self.dead[idx]
        with o.errstate():
            u = o.where(dead, 0.0, o.exp(th))
            G = self._G(self.beta(*([u] * self.L)))
            if self.optimizer == "sam-l2":
                ls = o.where(dead, -math.inf, self.cf.log_summand(G, th))
                lnS = 0.5 * o.logsumexp(ls, 1)[:, None]
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
        big = -math.exp(EVENT_LOG) * self.c
        live = ~self.dead[idx]
        idx_np, tau_np = o.to_numpy(idx), o.to_numpy(tau)
        codes = np.zeros(len(idx_np), dtype=int)
        changed = None
        if self.optimizer == "sam-l2":  # collapse: S → 0 drives every log-rate to −∞ together
            top = o.amax(o.where(live, r, -math.inf), 1)
            codes[o.to_numpy(top < big)] = COLLAPSE
        else:
            changed = self._mark_dead(idx, idx_np, tau_np, live & (r < big), r)
            codes[o.to_numpy(o.all(self.dead[idx], 1))] = COLLAPSE
        self.events["collapse"][idx_np[codes == COLLAPSE]] = tau_np[codes == COLLAPSE]
        return codes, changed

    def observe(self, idx, tau, y):
        o = self.ops
        th = o.where(self.dead[idx], -math.inf, y)
        mx = o.amax(th, 1)
        j = o.where(mx == -math.inf, 0, o.argmax(th, 1) + 1)
        with o.errstate():
            u = o.exp(th)
        margins = self._margins(self.beta(*([u] * self.L)))
        loss = o.sum(self.ell(margins), 1) / self.n
        return {"jdag": j, "loss": loss, "log_beta_max": self.L * mx, "gap": _top_gap(o, th)}

    def fill(self, idx, codes):
        return {"jdag": 0, "loss": self.loss0, "log_beta_max": -np.inf, "gap": np.inf}

    def metadata(self) -> dict:
        return {"system": "multi-example-real-time", "L": self.L, "optimizer": self.optimizer, "loss": self.loss,
                "event_log": EVENT_LOG, "clock": "dt/ds = 1/(1 + |dtheta/dt|_2/max_i |z_i|_2)"}


# ---------------------------------------------------------------------------- the engine
_A, _B, _E, _P = RK45.A, RK45.B, RK45.E, RK45.P
#: nonzero tableau entries as (index, float) lists: stage i uses Σ_j A_ij K_j
_A_ROWS = [[(j, float(_A[i, j])) for j in range(i) if _A[i, j] != 0] for i in range(6)]
_B_ROW = [(j, float(_B[j])) for j in range(6) if _B[j] != 0]
_E_ROW = [(j, float(_E[j])) for j in range(7) if _E[j] != 0]
_P_ROWS = [(j, _P[j]) for j in range(7) if np.any(_P[j] != 0)]
_ORDER_EXP = -1.0 / (RK45.error_estimator_order + 1)
SAFETY, MIN_FACTOR, MAX_FACTOR = 0.9, 0.2, 10.0


@dataclass
class BatchResult:
    """Output of :func:`integrate`: ``grid`` (T,), ``obs`` name -> (B, T) arrays,
    ``status`` (B,) codes (:data:`STATUS`), ``t_stop`` (B,) physical time where each member
    stopped, ``steps``/``rejected`` (B,) step counts, ``events`` name -> (B,) arrays of
    event times (np.inf: did not happen), ``seconds`` (wall time, for benchmarks only)."""

    grid: np.ndarray
    obs: dict[str, np.ndarray]
    status: np.ndarray
    t_stop: np.ndarray
    steps: np.ndarray
    rejected: np.ndarray
    events: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    seconds: float = 0.0

    def status_counts(self) -> dict[str, int]:
        return {STATUS[int(k)]: int(v) for k, v in zip(*np.unique(self.status, return_counts=True))}

    @property
    def ok(self) -> bool:
        """No member stopped because a budget ran out."""
        return bool(np.all(np.isin(self.status, FINISHED_OK)))


def _rms(ops, x):
    return ops.sqrt(ops.sum(x * x, 1) / x.shape[1])


def _initial_step(ops, F, idx, Y0, f0, rtol, atol):
    """scipy's ``select_initial_step`` (Hairer, Nørsett, Wanner II.4), vectorised."""
    scale = atol + ops.abs(Y0) * rtol
    d0, d1 = _rms(ops, Y0 / scale), _rms(ops, f0 / scale)
    h0 = ops.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / ops.maximum(d1, 1e-300))
    f1 = F(idx, Y0 + h0[:, None] * f0)
    d2 = _rms(ops, (f1 - f0) / scale) / h0
    dm = ops.maximum(d1, d2)
    with ops.errstate():
        h1 = ops.where(dm <= 1e-15, ops.maximum(h0 * 1e-3, 1e-6), (0.01 / ops.maximum(dm, 1e-300)) ** (-_ORDER_EXP))
    h = ops.minimum(100 * h0, h1)
    return ops.where(ops.isfinite(h) & (h > 0), h, 1e-6)


def _invert_tau(ops, tau_old, H, Qt, target, maxit=50):
    """σ ∈ [0, 1] with τ(σ) = target, τ(σ) = τ_old + H Σ_k Qt_k σ^k (the dense output's
    τ component, monotone): Newton from the linear guess, safeguarded by bisection on the
    bracket [lo, hi]. Each pair iterates until its own test passes and is then left alone
    (its result never depends on the other pairs)."""
    span = H * ops.sum(Qt, 1)
    sig = ops.where(span > 0, (target - tau_old) / ops.where(span > 0, span, 1.0), 1.0)
    sig = ops.minimum(ops.maximum(sig, 0.0), 1.0)
    lo = ops.zeros(tau_old.shape[0])
    hi = lo + 1.0
    eps8 = 8 * np.finfo(float).eps
    # per-pair constants, gathered again only when the live set shrinks (same arithmetic)
    cols = [Qt[:, 0] * 1.0, Qt[:, 1] * 1.0, Qt[:, 2] * 1.0, Qt[:, 3] * 1.0]
    full = [tau_old, H, target, cols[0], cols[1], cols[2], cols[3], 2 * cols[1], 3 * cols[2], 4 * cols[3]]
    live = None  # None: every pair
    cur = full
    for _ in range(maxit):
        t0, h_, tgt, q1, q2, q3, q4, q2b, q3b, q4b = cur
        if live is None:
            s_, hi_old, lo_old = sig, hi, lo
        else:
            s_, hi_old, lo_old = sig[live], hi[live], lo[live]
        g = t0 + h_ * (s_ * (q1 + s_ * (q2 + s_ * (q3 + s_ * q4)))) - tgt
        small_g = ops.abs(g) <= eps8 * ops.abs(tgt)
        dg = h_ * (q1 + s_ * (q2b + s_ * (q3b + s_ * q4b)))
        pos = g > 0
        hi_, lo_ = ops.where(pos, s_, hi_old), ops.where(g <= 0, s_, lo_old)
        with ops.errstate():
            newton = s_ - g / dg
        ok = (dg > 0) & (newton >= lo_) & (newton <= hi_) & ops.isfinite(newton)
        new = ops.where(ok, newton, 0.5 * (lo_ + hi_))
        conv = small_g | (ops.abs(new - s_) <= 1e-13)  # in σ: the step's own error is far larger
        keep = ~conv
        if live is None:
            sig = ops.where(small_g, s_, new)
            hi, lo = hi_, lo_
            live = ops.nonzero(keep)
            if live.shape[0] == 0:
                break
            cur = [x[live] for x in full]
        else:
            sig[live] = ops.where(small_g, s_, new)
            hi[live], lo[live] = hi_, lo_
            sel = ops.nonzero(keep)
            live = live[sel]
            if live.shape[0] == 0:
                break
            cur = [x[sel] for x in cur]
    return sig


def time_grid_array(grid) -> np.ndarray:
    """The output grid as a float array, refused unless finite, ≥ 0 and strictly increasing."""
    grid_np = np.asarray(grid, dtype=float).reshape(-1)
    if grid_np.size == 0 or np.any(np.diff(grid_np) <= 0) or grid_np[0] < 0 or not np.all(np.isfinite(grid_np)):
        raise TheorycheckError("the time grid must be finite, ≥ 0 and strictly increasing")
    return grid_np


def engine_meta(system: BatchSystem, array_backend: str, rtol: float, atol: float, max_steps: int, **extra) -> dict:
    """The ``meta`` of a Dormand–Prince run (numpy/torch engine or the compiled kernel)."""
    return {"method": "DOPRI5 (scipy RK45 tableau), per-member steps and clocks", "rtol": rtol, "atol": atol,
            "max_steps": max_steps, "array_backend": array_backend, **extra, **system.metadata()}


def integrate(system: BatchSystem, grid, *, rtol: float = 1e-8, atol: float = 1e-10, max_steps: int = 200_000,
              progress: Callable[[float], None] | None = None) -> BatchResult:
    """Integrate every member of ``system`` over the physical-time ``grid`` (increasing, ≥ 0)
    and record the system's observables at each grid point. Terminates: a member stops at
    the end of the grid, at an event, or when its budget (``max_steps`` attempted steps)
    runs out; cells after a budget stop stay at the observable's "unknown" value (j† −1)."""
    ops = system.ops
    grid_np = time_grid_array(grid)
    t_start = time.perf_counter()
    B, T = system.B, grid_np.size
    out = {k: np.full((B, T), fill, dtype=dt) for k, (dt, fill) in system.observables.items()}

    def F(idx, Y):
        dtau, dy = system.rates(idx, Y[:, 0], Y[:, 1:])
        return ops.cat([dtau[:, None], dy], 1)

    all_idx = ops.arange(B)
    tau0, y0 = system.initial()
    Ycur = ops.cat([tau0[:, None], y0], 1)
    with ops.errstate():
        fcur = F(all_idx, Ycur)
    kpos = np.searchsorted(grid_np, ops.to_numpy(tau0), side="right")  # grid points ≤ τ0 are output now
    status = np.zeros(B, dtype=np.int8)
    steps = np.zeros(B, dtype=np.int64)
    rejected = np.zeros(B, dtype=np.int64)
    t_stop = np.full(B, np.nan)
    s_cur = np.zeros(B)
    last_rejected = np.zeros(B, dtype=bool)
    tau0_np = ops.to_numpy(tau0)
    for k in range(T):
        at0 = np.flatnonzero(grid_np[k] <= tau0_np)
        if at0.size:
            ii = ops.asarray(at0, dtype=int)
            vals = system.observe(ii, Ycur[ii, 0], Ycur[ii, 1:])
            for name, v in vals.items():
                out[name][at0, k] = ops.to_numpy(v)
    with ops.errstate():
        h = _initial_step(ops, F, all_idx, Ycur, fcur, rtol, atol)
    h = ops.to_numpy(h).astype(float)
    status[kpos >= T] = DONE
    t_stop[kpos >= T] = tau0_np[kpos >= T]
    Kbuf = None
    last_report = 0.0
    while True:
        run = np.flatnonzero(status == RUNNING)
        if run.size == 0:
            break
        idx = ops.asarray(run, dtype=int)
        Y = Ycur[idx]
        H = ops.asarray(h[run])[:, None]
        Kbuf = [fcur[idx]] + [None] * 6
        with ops.errstate():
            for i in range(1, 6):
                dY = sum(a * Kbuf[j] for j, a in _A_ROWS[i])
                Kbuf[i] = F(idx, Y + H * dY)
            Ynew = Y + H * sum(b * Kbuf[j] for j, b in _B_ROW)
            Kbuf[6] = F(idx, Ynew)
            err = H * sum(e * Kbuf[j] for j, e in _E_ROW)
            scale = atol + rtol * ops.maximum(ops.abs(Y), ops.abs(Ynew))
            en = _rms(ops, err / scale)
            finite = ops.all(ops.isfinite(Ynew), 1) & ops.all(ops.isfinite(Kbuf[6]), 1) & ops.isfinite(en)
        en_np = ops.to_numpy(en).astype(float)
        fin_np = ops.to_numpy(finite).astype(bool)
        acc = fin_np & (en_np <= 1.0)
        steps[run] += 1
        rejected[run[~acc]] += 1
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            fac = np.where(en_np == 0, MAX_FACTOR, SAFETY * en_np**_ORDER_EXP)
        fac = np.where(acc, np.minimum(MAX_FACTOR, fac), np.maximum(MIN_FACTOR, np.where(fin_np, fac, MIN_FACTOR)))
        fac = np.where(acc & last_rejected[run], np.minimum(1.0, fac), fac)
        fac = np.where(np.isfinite(fac), fac, MIN_FACTOR)
        h_old = h[run].copy()
        h[run] = h_old * fac
        last_rejected[run] = ~acc
        s_cur[run] = np.where(acc, s_cur[run] + h_old, s_cur[run])
        # members that cannot shrink any further
        tiny = (~acc) & (h[run] < 10 * np.spacing(np.maximum(np.abs(s_cur[run]), 1.0)))
        if tiny.any():
            status[run[tiny]] = np.where(fin_np[tiny], STEP_UNDERFLOW, NONFINITE)
            t_stop[run[tiny]] = ops.to_numpy(Y[:, 0])[tiny]
        if acc.any():
            a = np.flatnonzero(acc)
            ia = ops.asarray(a, dtype=int)
            mem = run[a]
            imem = ops.asarray(mem, dtype=int)
            Ya, Yn, Ha = Y[ia], Ynew[ia], H[ia]
            tau_new_np = ops.to_numpy(Yn[:, 0])
            # dense output: y(σ) = y_old + H Σ_k Q_k σ^k, Q = Kᵀ P
            Q = sum(Kbuf[j][ia][:, :, None] * ops.asarray(pj)[None, None, :] for j, pj in _P_ROWS)
            # Q: (A, 1+m, 4), elementwise (no BLAS blocking: a member's numbers never depend on its batch)

            kend = np.searchsorted(grid_np, tau_new_np, side="right")
            cnt = np.maximum(kend - kpos[mem], 0)
            if cnt.any():
                p = np.repeat(np.arange(mem.size), cnt)  # one row per (member, grid point) in this step
                ks = kpos[mem][p] + (np.arange(p.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
                ip = ops.asarray(p, dtype=int)
                targ = ops.asarray(grid_np[ks])
                Yp, Hp, Qp = Ya[ip], Ha[ip], Q[ip]  # gathered once per (member, grid point)
                sig = _invert_tau(ops, Yp[:, 0], Hp[:, 0], Qp[:, 0, :], targ)
                pw = ops.stack([sig, sig**2, sig**3, sig**4], 1)[:, None, :]
                yi = Yp[:, 1:] + Hp * ops.sum(Qp[:, 1:] * pw, 2)  # τ there is the target itself
                mp = mem[p]
                vals = system.observe(ops.asarray(mp, dtype=int), targ, yi)
                flat = mp * T + ks  # cells (member, k) of the C-ordered (B, T) outputs
                for name, v in vals.items():
                    out[name].reshape(-1)[flat] = ops.to_numpy(v)
                kpos[mem] += cnt
            Ycur[imem] = Yn
            fcur[imem] = Kbuf[6][ia]
            codes, changed = system.after_step(imem, Yn[:, 0], Yn[:, 1:], Kbuf[6][ia, 0], Kbuf[6][ia, 1:])
            codes = np.asarray(codes, dtype=int)
            if changed is not None and np.any(changed):
                ch = np.flatnonzero(changed)
                ich = ops.asarray(mem[ch], dtype=int)
                with ops.errstate():
                    fcur[ich] = F(ich, Ycur[ich])
            done = kpos[mem] >= T
            status[mem[done]] = DONE
            t_stop[mem[done]] = tau_new_np[done]
            ev = (codes != 0) & ~done
            if ev.any():
                e = np.flatnonzero(ev)
                status[mem[e]] = codes[e]
                t_stop[mem[e]] = tau_new_np[e]
                fills = system.fill(mem[e], codes[e])
                for b, c in zip(mem[e], range(e.size)):
                    for name, v in fills.items():
                        vv = v[c] if np.ndim(v) else v
                        out[name][b, kpos[b]:] = vv
        over = (status[run] == RUNNING) & (steps[run] >= max_steps)
        if over.any():
            status[run[over]] = MAX_STEPS
            t_stop[run[over]] = ops.to_numpy(Ycur[ops.asarray(run[over], dtype=int), 0])
        if progress is not None:
            now = time.perf_counter()
            if now - last_report > 0.2:
                last_report = now
                progress(float(np.mean(np.minimum(kpos, T)) / T))
    if progress is not None:
        progress(1.0)
    meta = engine_meta(system, ops.name, rtol, atol, max_steps)
    return BatchResult(grid=grid_np, obs=out, status=status.astype(np.int8), t_stop=t_stop, steps=steps,
                       rejected=rejected, events={k: v.copy() for k, v in system.events.items()}, meta=meta,
                       seconds=time.perf_counter() - t_start)


# ---------------------------------------------------------------------------- discrete algorithms
def discrete_run(system: MultiExample, eta: float, grid, *, max_steps: int = 10_000_000,
                 progress: Callable[[float], None] | None = None) -> BatchResult:
    """GD / SAM as the algorithm, w ← w − η ∇Lo(w + ε(w)), from the balanced start of every
    member of ``system`` (real time t = kη; all layers move alike, so u ← u − η ∂Lo/∂w_1(û)
    = u (1 + η θ'(θ)), θ' the flow's log-rate from the same compiled forms). In θ = ln u:
    θ ← θ + ln(1 + η θ'). A step with 1 + η θ'_j ≤ 0 would take u_j through 0 (an overshoot
    the flow never makes): the member stops there with status ``sign_change``. Observables
    are recorded at the iterate k = ⌈t/η⌉ for each grid time t (``grid`` is returned as the
    times kη actually recorded, per member identical since η is shared)."""
    ops = system.ops
    grid_np = np.asarray(grid, dtype=float).reshape(-1)
    if not (eta > 0 and math.isfinite(eta)):
        raise TheorycheckError(f"η = {eta}: the step size must be finite and > 0")
    ks = np.ceil(grid_np / eta - 1e-9).astype(np.int64)
    if np.any(np.diff(ks) < 0) or ks[-1] > max_steps:
        raise TheorycheckError(f"discrete run: t_max/η = {ks[-1]} steps exceeds max_steps = {max_steps}")
    t_start = time.perf_counter()
    B, T = system.B, grid_np.size
    out = {k: np.full((B, T), fill, dtype=dt) for k, (dt, fill) in system.observables.items()}
    status = np.zeros(B, dtype=np.int8)
    t_stop = np.full(B, np.nan)
    _, th = system.initial()
    all_idx = ops.arange(B)
    k_rec = 0
    n = 0
    while k_rec < T and ks[k_rec] == 0:
        vals = system.observe(all_idx, None, th)
        for name, v in vals.items():
            out[name][:, k_rec] = ops.to_numpy(v)
        k_rec += 1
    alive = np.ones(B, dtype=bool)
    while k_rec < T and alive.any():
        idx_np = np.flatnonzero(alive)
        idx = ops.asarray(idx_np, dtype=int)
        r = system.theta_rate(idx, None, th[idx])
        step = 1.0 + eta * r
        bad = ops.to_numpy((step <= 0).any(1))
        if bad.any():
            status[idx_np[bad]] = SIGN_CHANGE
            t_stop[idx_np[bad]] = n * eta
            alive[idx_np[bad]] = False
        with ops.errstate():
            th[idx] = th[idx] + ops.log(ops.maximum(step, 1e-300))
        n += 1
        fin = ops.to_numpy(ops.all(ops.isfinite(th[idx]), 1))
        if not fin.all():
            status[idx_np[~fin & alive[idx_np]]] = NONFINITE
            t_stop[idx_np[~fin]] = n * eta
            alive[idx_np[~fin]] = False
        while k_rec < T and ks[k_rec] == n:
            rec = np.flatnonzero(alive)
            if rec.size:
                vals = system.observe(ops.asarray(rec, dtype=int), None, th[ops.asarray(rec, dtype=int)])
                for name, v in vals.items():
                    out[name][rec, k_rec] = ops.to_numpy(v)
            k_rec += 1
        if progress is not None and n % 1000 == 0:
            progress(k_rec / T)
    status[alive] = DONE
    t_stop[alive] = n * eta
    meta = {"method": f"discrete {system.optimizer}, eta = {eta}", "eta": eta, "steps": n,
            "array_backend": ops.name, **system.metadata()}
    return BatchResult(grid=ks * eta, obs=out, status=status, t_stop=t_stop, steps=np.full(B, n),
                       rejected=np.zeros(B, dtype=np.int64), events={}, meta=meta,
                       seconds=time.perf_counter() - t_start)

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

Systems: :mod:`theorycheck.batched.systems`; array operations: :mod:`theorycheck.batched.ops`.
Status codes of a member: see :data:`theorycheck.status.STATUS`. j† is 1-based; 0 means
β = 0 (collapse), −1 a cell that was not computed (a budget ran out: the member's status says which).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import RK45

from theorycheck.batched.systems import BatchSystem
from theorycheck.errors import TheorycheckError
from theorycheck.status import (
    DONE,
    FINISHED_OK,
    MAX_STEPS,
    NON_FINITE,
    RUNNING,
    STATUS,
    STEP_SIZE_UNDERFLOW,
)

_A, _B, _E, _P = RK45.A, RK45.B, RK45.E, RK45.P
#: nonzero tableau entries as (index, float) lists: stage i uses Σ_j A_ij K_j
_A_ROWS = [[(j, float(_A[i, j])) for j in range(i) if _A[i, j] != 0] for i in range(6)]
_B_ROW = [(j, float(_B[j])) for j in range(6) if _B[j] != 0]
_E_ROW = [(j, float(_E[j])) for j in range(7) if _E[j] != 0]
_P_ROWS = [(j, _P[j]) for j in range(7) if np.any(_P[j] != 0)]
_ORDER_EXP = -1.0 / (RK45.error_estimator_order + 1)
#: the method's tableau (A, B, E, P: scipy's RK45, Dormand–Prince 5(4)) and its step-size exponent, for a compiled
#: kernel of the same method (the first paper's reduced ODE, ``proofs/minor_first/reduced/kernel``)
RK45_TABLEAU = (_A, _B, _E, _P)
ORDER_EXP = _ORDER_EXP
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
    r = ops.sqrt(ops.sum(x * x, 1) / x.shape[1])
    # the squares overflow for |x| ≳ 1e154 (rates of |z| ~ 1e200): those rows only, rescaled
    # by their largest entry (the other rows keep their bits)
    with ops.errstate():
        bad = ~ops.isfinite(r) & ops.all(ops.isfinite(x), 1)
        if ops.any(bad):
            m = ops.amax(ops.abs(x), 1)
            xs = x / ops.where(m > 0, m, 1.0)[:, None]
            r = ops.where(bad, m * ops.sqrt(ops.sum(xs * xs, 1) / x.shape[1]), r)
    return r


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


def system_grid(system: BatchSystem, grid_np: np.ndarray) -> np.ndarray:
    """The output grid in the system's own time τ̂ = 2^k τ (exact; ``system.time_log2`` = k),
    refused with a one-line error when it leaves the float64 range there."""
    k = system.time_log2
    if k == 0:
        return grid_np
    with np.errstate(over="ignore", under="ignore"):
        g = np.ldexp(grid_np, k)
    if not np.all(np.isfinite(g)) or np.any(np.diff(g) <= 0) or np.any((g == 0) & (grid_np > 0)):
        raise TheorycheckError(f"the time grid [{grid_np[0]:.3g}, {grid_np[-1]:.3g}] leaves the float64 range in the "
                               f"data's units (τ·2^{k}, 2^{k} ≤ max|z| < 2^{k + 1}): give times nearer 1/max|z|")
    return g


def physical_result(system: BatchSystem, grid_np: np.ndarray, obs: dict, status, t_stop, steps, rejected,
                    meta: dict, seconds: float) -> BatchResult:
    """The :class:`BatchResult` of a run, its times and observables mapped from the system's
    units back to the caller's (:meth:`BatchSystem.to_physical`)."""
    t_stop, events, obs = system.to_physical(t_stop, {k: v.copy() for k, v in system.events.items()}, obs)
    return BatchResult(grid=grid_np, obs=obs, status=status.astype(np.int8), t_stop=t_stop, steps=steps,
                       rejected=rejected, events=events, meta=meta, seconds=seconds)


def engine_meta(system: BatchSystem, array_backend: str, rtol: float, atol: float, max_steps: int, **extra) -> dict:
    """The ``meta`` of a Dormand–Prince run (numpy/torch engine or the compiled kernel)."""
    return {"method": "DOPRI5 (scipy RK45 tableau), per-member steps and clocks", "rtol": rtol, "atol": atol,
            "max_steps": max_steps, "array_backend": array_backend, **extra, **system.metadata()}


@dataclass
class _Run:
    """The state of :func:`integrate`: per member its point (Ycur = (τ, y)) and its field there
    (fcur), next grid index (kpos), status, counts, stop time, clock value, step size, and the
    output cells (``out``: name -> (B, T))."""

    system: BatchSystem
    grid: np.ndarray
    out: dict
    Ycur: object
    fcur: object
    kpos: np.ndarray
    status: np.ndarray
    steps: np.ndarray
    rejected: np.ndarray
    t_stop: np.ndarray
    s_cur: np.ndarray
    last_rejected: np.ndarray
    h: np.ndarray = None

    def F(self, idx, Y):
        """(dτ/ds, dy/ds) of members idx at Y, as one array."""
        dtau, dy = self.system.rates(idx, Y[:, 0], Y[:, 1:])
        return self.system.ops.cat([dtau[:, None], dy], 1)


def _start(system: BatchSystem, grid_np: np.ndarray, rtol: float, atol: float) -> _Run:
    """Every member at its start: the grid points ≤ τ0 observed, the first step sizes chosen."""
    ops = system.ops
    B, T = system.B, grid_np.size
    out = {k: np.full((B, T), fill, dtype=dt) for k, (dt, fill) in system.observables.items()}
    tau0, y0 = system.initial()
    r = _Run(system, grid_np, out, ops.cat([tau0[:, None], y0], 1), None,
             np.searchsorted(grid_np, ops.to_numpy(tau0), side="right"),  # grid points ≤ τ0 are output now
             np.zeros(B, dtype=np.int8), np.zeros(B, dtype=np.int64), np.zeros(B, dtype=np.int64), np.full(B, np.nan),
             np.zeros(B), np.zeros(B, dtype=bool))
    all_idx = ops.arange(B)
    with ops.errstate():
        r.fcur = r.F(all_idx, r.Ycur)
    tau0_np = ops.to_numpy(tau0)
    for k in range(T):
        at0 = np.flatnonzero(grid_np[k] <= tau0_np)
        if at0.size:
            ii = ops.asarray(at0, dtype=int)
            vals = system.observe(ii, r.Ycur[ii, 0], r.Ycur[ii, 1:])
            for name, v in vals.items():
                out[name][at0, k] = ops.to_numpy(v)
    with ops.errstate():
        h = _initial_step(ops, r.F, all_idx, r.Ycur, r.fcur, rtol, atol)
    r.h = ops.to_numpy(h).astype(float)
    r.status[r.kpos >= T] = DONE
    r.t_stop[r.kpos >= T] = tau0_np[r.kpos >= T]
    return r


def _trial(r: _Run, run: np.ndarray, rtol: float, atol: float):
    """One Dormand–Prince 5(4) trial step of every running member: (Y, H, Ynew, stages, error norm,
    finite), the last two as numpy arrays."""
    ops = r.system.ops
    idx = ops.asarray(run, dtype=int)
    Y = r.Ycur[idx]
    H = ops.asarray(r.h[run])[:, None]
    Kbuf = [r.fcur[idx]] + [None] * 6
    with ops.errstate():
        for i in range(1, 6):
            dY = sum(a * Kbuf[j] for j, a in _A_ROWS[i])
            Kbuf[i] = r.F(idx, Y + H * dY)
        Ynew = Y + H * sum(b * Kbuf[j] for j, b in _B_ROW)
        Kbuf[6] = r.F(idx, Ynew)
        err = H * sum(e * Kbuf[j] for j, e in _E_ROW)
        scale = atol + rtol * ops.maximum(ops.abs(Y), ops.abs(Ynew))
        en = _rms(ops, err / scale)
        finite = ops.all(ops.isfinite(Ynew), 1) & ops.all(ops.isfinite(Kbuf[6]), 1) & ops.isfinite(en)
    return Y, H, Ynew, Kbuf, ops.to_numpy(en).astype(float), ops.to_numpy(finite).astype(bool)


def _control(r: _Run, run: np.ndarray, Y, en_np: np.ndarray, fin_np: np.ndarray) -> np.ndarray:
    """scipy's step-size control after the trial step; members that cannot shrink any further
    stop (step_size_underflow, or non_finite). Returns the accepted mask."""
    acc = fin_np & (en_np <= 1.0)
    r.steps[run] += 1
    r.rejected[run[~acc]] += 1
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        fac = np.where(en_np == 0, MAX_FACTOR, SAFETY * en_np**_ORDER_EXP)
    fac = np.where(acc, np.minimum(MAX_FACTOR, fac), np.maximum(MIN_FACTOR, np.where(fin_np, fac, MIN_FACTOR)))
    fac = np.where(acc & r.last_rejected[run], np.minimum(1.0, fac), fac)
    fac = np.where(np.isfinite(fac), fac, MIN_FACTOR)
    h_old = r.h[run].copy()
    r.h[run] = h_old * fac
    r.last_rejected[run] = ~acc
    r.s_cur[run] = np.where(acc, r.s_cur[run] + h_old, r.s_cur[run])
    # (the resolution of the member's own clock value: a clock whose natural step is 1e-200,
    # as for |z| ~ 1e200, is not stuck at 1e-15)
    tiny = (~acc) & (r.h[run] < 10 * np.spacing(np.abs(r.s_cur[run])))
    if tiny.any():
        r.status[run[tiny]] = np.where(fin_np[tiny], STEP_SIZE_UNDERFLOW, NON_FINITE)
        r.t_stop[run[tiny]] = r.system.ops.to_numpy(Y[:, 0])[tiny]
    return acc


def _observe_accepted(r: _Run, mem: np.ndarray, Ya, Yn, Ha, Q, tau_new_np: np.ndarray) -> None:
    """The grid points each accepted step passed, from its dense output y(σ) = y_old + H Σ_k Q_k σ^k
    (σ from τ by :func:`_invert_tau`), written into the output cells."""
    ops, T = r.system.ops, r.grid.size
    kend = np.searchsorted(r.grid, tau_new_np, side="right")
    cnt = np.maximum(kend - r.kpos[mem], 0)
    if not cnt.any():
        return
    p = np.repeat(np.arange(mem.size), cnt)  # one row per (member, grid point) in this step
    ks = r.kpos[mem][p] + (np.arange(p.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    ip = ops.asarray(p, dtype=int)
    targ = ops.asarray(r.grid[ks])
    Yp, Hp, Qp = Ya[ip], Ha[ip], Q[ip]  # gathered once per (member, grid point)
    sig = _invert_tau(ops, Yp[:, 0], Hp[:, 0], Qp[:, 0, :], targ)
    pw = ops.stack([sig, sig**2, sig**3, sig**4], 1)[:, None, :]
    yi = Yp[:, 1:] + Hp * ops.sum(Qp[:, 1:] * pw, 2)  # τ there is the target itself
    mp = mem[p]
    vals = r.system.observe(ops.asarray(mp, dtype=int), targ, yi)
    flat = mp * T + ks  # cells (member, k) of the C-ordered (B, T) outputs
    for name, v in vals.items():
        r.out[name].reshape(-1)[flat] = ops.to_numpy(v)
    r.kpos[mem] += cnt


def _accept(r: _Run, run: np.ndarray, acc: np.ndarray, Y, Ynew, H, Kbuf) -> None:
    """Move the accepted members: outputs on the grid, the new point and field, the system's events
    (a member stops at the end of the grid or at an event; the cells after an event are filled)."""
    ops, system, T = r.system.ops, r.system, r.grid.size
    a = np.flatnonzero(acc)
    ia = ops.asarray(a, dtype=int)
    mem = run[a]
    imem = ops.asarray(mem, dtype=int)
    Ya, Yn, Ha = Y[ia], Ynew[ia], H[ia]
    tau_new_np = ops.to_numpy(Yn[:, 0])
    # Q: (A, 1+m, 4), elementwise (no BLAS blocking: a member's numbers never depend on its batch)
    Q = sum(Kbuf[j][ia][:, :, None] * ops.asarray(pj)[None, None, :] for j, pj in _P_ROWS)
    _observe_accepted(r, mem, Ya, Yn, Ha, Q, tau_new_np)
    r.Ycur[imem] = Yn
    r.fcur[imem] = Kbuf[6][ia]
    codes, changed = system.after_step(imem, Yn[:, 0], Yn[:, 1:], Kbuf[6][ia, 0], Kbuf[6][ia, 1:])
    codes = np.asarray(codes, dtype=int)
    if changed is not None and np.any(changed):
        ich = ops.asarray(mem[np.flatnonzero(changed)], dtype=int)
        with ops.errstate():
            r.fcur[ich] = r.F(ich, r.Ycur[ich])
    done = r.kpos[mem] >= T
    r.status[mem[done]] = DONE
    r.t_stop[mem[done]] = tau_new_np[done]
    ev = (codes != 0) & ~done
    if ev.any():
        e = np.flatnonzero(ev)
        r.status[mem[e]] = codes[e]
        r.t_stop[mem[e]] = tau_new_np[e]
        fills = system.fill(mem[e], codes[e])
        for b, c in zip(mem[e], range(e.size)):
            for name, v in fills.items():
                vv = v[c] if np.ndim(v) else v
                r.out[name][b, r.kpos[b]:] = vv


def integrate(system: BatchSystem, grid, *, rtol: float = 1e-8, atol: float = 1e-10, max_steps: int = 200_000,
              progress: Callable[[float], None] | None = None) -> BatchResult:
    """Integrate every member of ``system`` over the physical-time ``grid`` (increasing, ≥ 0)
    and record the system's observables at each grid point. Terminates: a member stops at
    the end of the grid, at an event, or when its budget (``max_steps`` attempted steps)
    runs out; cells after a budget stop stay at the observable's "unknown" value (j† −1)."""
    ops = system.ops
    grid_user = time_grid_array(grid)
    grid_np = system_grid(system, grid_user)
    t_start = time.perf_counter()
    r = _start(system, grid_np, rtol, atol)
    last_report = 0.0
    while True:
        run = np.flatnonzero(r.status == RUNNING)
        if run.size == 0:
            break
        Y, H, Ynew, Kbuf, en_np, fin_np = _trial(r, run, rtol, atol)
        acc = _control(r, run, Y, en_np, fin_np)
        if acc.any():
            _accept(r, run, acc, Y, Ynew, H, Kbuf)
        over = (r.status[run] == RUNNING) & (r.steps[run] >= max_steps)
        if over.any():
            r.status[run[over]] = MAX_STEPS
            r.t_stop[run[over]] = ops.to_numpy(r.Ycur[ops.asarray(run[over], dtype=int), 0])
        if progress is not None:
            now = time.perf_counter()
            if now - last_report > 0.2:
                last_report = now
                progress(float(np.mean(np.minimum(r.kpos, grid_np.size)) / grid_np.size))
    if progress is not None:
        progress(1.0)
    meta = engine_meta(system, ops.name, rtol, atol, max_steps)
    return physical_result(system, grid_user, r.out, r.status, r.t_stop, r.steps, r.rejected, meta,
                           time.perf_counter() - t_start)

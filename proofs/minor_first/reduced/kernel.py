"""Compiled per-member kernel for C4's reduced ℓ2 ODE (``array_backend="numba"``).

The numpy engine (:func:`theorycheck.batched.engine.integrate`) pays numpy's per-call overhead at every
stage of every step, and its log-sum ln N(τ, I) = ½ logsumexp_j(K_j + τA_j + IG_j) makes
five passes over a (members × d) array. This module runs the same method member by member in
compiled code (numba, ``prange`` over members): Dormand–Prince 5(4) with scipy's RK45
tableau, error norm and step-size control, the clock dτ/ds = N/(N + c), the dense output
inverted for τ by safeguarded Newton, and the events and stops of
:class:`theorycheck.proofs.minor_first.reduced.batch.ReducedL2` — line for line the engine's arithmetic on one member.

What it does not re-type: the coefficients K, A, G of the exponent, the switch levels
ρ(z_j + z_k), C5's certificate and stop levels (ln of :func:`theorycheck.symbolic.theory_forms.l2_certificate_levels`)
and the tableau come from the objects the numpy path uses (the compiled symbolic forms and
scipy). What it does re-type, for speed: ln N = ½ logsumexp_j(·) and the smooth clock
(:func:`theorycheck.symbolic.theory_forms.reduced_l2_clocked`); tests/test_one_definition.py compares them with the
compiled symbolic forms on random members at extreme scales. The results equal the numpy engine's up to the last bits of exp/log (numpy's
SIMD exp and libm's differ by an ulp): same steps, j† equal in every cell except at exact ties
(tested in tests/test_kernels.py). Optional: ``pip install 'theorycheck[fast]'`` (numba).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

import numpy as np

from theorycheck.batched.engine import MAX_FACTOR, MIN_FACTOR, ORDER_EXP, RK45_TABLEAU, SAFETY
from theorycheck.errors import TheorycheckError
from theorycheck.status import (
    COLLAPSE,
    DONE,
    MAX_STEPS,
    NO_COLLAPSE,
    NON_FINITE,
    RUNNING,
    STEP_SIZE_UNDERFLOW,
)
from theorycheck.symbolic import theory_exprs as TE

try:  # optional dependency
    import numba as _nb
except Exception:  # pragma: no cover - not installed, or broken (e.g. built for another numpy): numpy then
    _nb = None

#: members per kernel call (between calls: progress, and a member's result never depends on its chunk)
CHUNK = 256


def available() -> bool:
    """Whether numba is installed (the compiled kernel can run)."""
    return _nb is not None


def require() -> None:
    if _nb is None:
        raise TheorycheckError("array backend 'numba' needs numba: pip install 'theorycheck[fast]' (or numba)")


def threads() -> int:
    """Threads the kernel runs on (numba's setting; NUMBA_NUM_THREADS caps it)."""
    return int(_nb.get_num_threads()) if _nb is not None else 1



# numba freezes these module globals into the machine code as constants
_EPS8 = 8 * float(np.finfo(float).eps)
_ORDER = float(ORDER_EXP)
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = float(SAFETY), float(MIN_FACTOR), float(MAX_FACTOR)
_S_RUNNING, _S_DONE, _S_COLLAPSE, _S_SAFE = int(RUNNING), int(DONE), int(COLLAPSE), int(NO_COLLAPSE)
_S_MAX_STEPS, _S_UNDERFLOW, _S_NONFINITE = int(MAX_STEPS), int(STEP_SIZE_UNDERFLOW), int(NON_FINITE)
_TINY_LOG_N = float(TE.TINY_LOG_N)


def _identity(**_):
    return lambda f: f


if _nb is not None:
    _jit = _nb.njit
    _prange = _nb.prange
else:  # pragma: no cover - the functions below are then plain Python and never called
    _jit = _identity
    _prange = range
_OPTS = dict(cache=True, error_model="numpy", fastmath=False, nogil=True)

@_jit(**_OPTS)
def _log_norm(K, A, G, b, tau, I, buf):
    """½ logsumexp_j(K_j + τ A_j + I G_j) for member b (a coefficient with one row is
    shared by every member): the max, then one pass of exp."""
    d = K.shape[1]
    rk = 0 if K.shape[0] == 1 else b
    ra = 0 if A.shape[0] == 1 else b
    rg = 0 if G.shape[0] == 1 else b
    m = -np.inf
    for j in range(d):
        x = K[rk, j] + tau * A[ra, j]
        x = x + I * G[rg, j]
        buf[j] = x
        if x > m:
            m = x
    if not np.isfinite(m):
        m = 0.0
    s = 0.0
    for j in range(d):
        s += np.exp(buf[j] - m)
    return 0.5 * (np.log(s) + m)

@_jit(**_OPTS)
def _field(K, A, G, b, log_c, tau, I, buf, out):
    """(dτ/ds, dI/ds) = (κ, κ/N), κ = N/(N + c) = 1/(1 + c/N); returns ln N. Hand-written
    :func:`theorycheck.symbolic.theory_forms.reduced_l2_clocked` ("smooth", branch for branch; tests/test_one_definition.py
    compares the two on random members at extreme scales)."""
    lnN = _log_norm(K, A, G, b, tau, I, buf)
    diff = log_c - lnN
    if diff > 0:
        e = np.exp(-diff)
        kappa = e / (1.0 + e)
    else:
        e = np.exp(diff)
        kappa = 1.0 / (1.0 + e)
    out[0] = kappa
    if lnN > -_TINY_LOG_N:
        out[1] = kappa * np.exp(-lnN)
    else:  # κ·e^{−ln N} would be 0·∞: 1/(N + c)
        out[1] = 1.0 / (np.exp(lnN) + np.exp(log_c))
    return lnN

@_jit(**_OPTS)
def _rms2(a0, a1):
    return np.sqrt((a0 * a0 + a1 * a1) / 2.0)

@_jit(**_OPTS)
def _invert_tau(tau_old, H, q1, q2, q3, q4, target, maxit):
    """σ ∈ [0, 1] with τ(σ) = target (batch._invert_tau on one pair)."""
    span = H * (q1 + q2 + q3 + q4)
    if span > 0:
        sig = (target - tau_old) / span
    else:
        sig = 1.0
    sig = min(max(sig, 0.0), 1.0)
    lo, hi = 0.0, 1.0
    q2b, q3b, q4b = 2 * q2, 3 * q3, 4 * q4
    for _ in range(maxit):
        s_ = sig
        g = tau_old + H * (s_ * (q1 + s_ * (q2 + s_ * (q3 + s_ * q4)))) - target
        small_g = abs(g) <= _EPS8 * abs(target)
        dg = H * (q1 + s_ * (q2b + s_ * (q3b + s_ * q4b)))
        if g > 0:
            hi = s_
        if g <= 0:
            lo = s_
        newton = s_ - g / dg
        if dg > 0 and newton >= lo and newton <= hi and np.isfinite(newton):
            new = newton
        else:
            new = 0.5 * (lo + hi)
        conv = small_g or abs(new - s_) <= 1e-13
        sig = s_ if small_g else new
        if conv:
            break
    return sig

@_jit(**_OPTS)
def _level_index_of(levels, lrow, level_index, nbar):
    """j† from N̄: level_index[#levels < N̄] (numpy's searchsorted, side='left'; NaN last)."""
    D = levels.shape[1]
    if nbar != nbar:
        return level_index[D]
    lo, hi = 0, D
    while lo < hi:
        mid = (lo + hi) // 2
        if levels[lrow, mid] < nbar:
            lo = mid + 1
        else:
            hi = mid
    return level_index[lo]

@_jit(**_OPTS)
def _first_step(K, A, G, b, lc, rtol, atol, buf, tmp):
    """(h, f0, f1) at τ = I = 0: the field there and scipy's ``select_initial_step``."""
    y0, y1 = 0.0, 0.0
    _field(K, A, G, b, lc, y0, y1, buf, tmp)
    f0, f1 = tmp[0], tmp[1]
    sc0, sc1 = atol + abs(y0) * rtol, atol + abs(y1) * rtol
    dd0, dd1 = _rms2(y0 / sc0, y1 / sc1), _rms2(f0 / sc0, f1 / sc1)
    if dd0 < 1e-5 or dd1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * dd0 / max(dd1, 1e-300)
    _field(K, A, G, b, lc, y0 + h0 * f0, y1 + h0 * f1, buf, tmp)
    dd2 = _rms2((tmp[0] - f0) / sc0, (tmp[1] - f1) / sc1) / h0
    dm = max(dd1, dd2)
    if dm <= 1e-15:
        h1 = max(h0 * 1e-3, 1e-6)
    else:
        h1 = (0.01 / max(dm, 1e-300)) ** (-_ORDER)
    h = min(100 * h0, h1)
    if not (np.isfinite(h) and h > 0):
        h = 1e-6
    return h, f0, f1


@_jit(**_OPTS)
def _dopri_step(K, A, G, b, lc, y0, y1, f0, f1, H, Amat, Bvec, Evec, rtol, atol, buf, tmp, Ks, Yn):
    """One Dormand–Prince 5(4) trial step of size H from (y0, y1): the stages in Ks, the new point
    in Yn; returns (error norm, finite)."""
    Ks[0, 0], Ks[0, 1] = f0, f1
    for i in range(1, 6):
        a0, a1 = 0.0, 0.0
        for j in range(i):
            aij = Amat[i, j]
            if aij != 0.0:
                a0 += aij * Ks[j, 0]
                a1 += aij * Ks[j, 1]
        _field(K, A, G, b, lc, y0 + H * a0, y1 + H * a1, buf, tmp)
        Ks[i, 0], Ks[i, 1] = tmp[0], tmp[1]
    a0, a1 = 0.0, 0.0
    for j in range(6):
        if Bvec[j] != 0.0:
            a0 += Bvec[j] * Ks[j, 0]
            a1 += Bvec[j] * Ks[j, 1]
    Yn[0], Yn[1] = y0 + H * a0, y1 + H * a1
    _field(K, A, G, b, lc, Yn[0], Yn[1], buf, tmp)
    Ks[6, 0], Ks[6, 1] = tmp[0], tmp[1]
    e0, e1 = 0.0, 0.0
    for j in range(7):
        if Evec[j] != 0.0:
            e0 += Evec[j] * Ks[j, 0]
            e1 += Evec[j] * Ks[j, 1]
    e0, e1 = H * e0, H * e1
    sc0 = atol + rtol * max(abs(y0), abs(Yn[0]))
    sc1 = atol + rtol * max(abs(y1), abs(Yn[1]))
    en = _rms2(e0 / sc0, e1 / sc1)
    fin = (np.isfinite(Yn[0]) and np.isfinite(Yn[1]) and np.isfinite(Ks[6, 0])
           and np.isfinite(Ks[6, 1]) and np.isfinite(en))
    return en, fin


@_jit(**_OPTS)
def _step_factor(en, fin, acc, last_rej):
    """scipy's step-size factor after a trial step (engine.integrate's rule)."""
    if en == 0:
        fac = _MAX_FACTOR
    else:
        fac = _SAFETY * en ** _ORDER
    if acc:
        fac = min(_MAX_FACTOR, fac)
    elif fin:
        fac = max(_MIN_FACTOR, fac) if fac == fac else fac
    else:
        fac = _MIN_FACTOR
    if acc and last_rej:
        fac = min(1.0, fac)
    if not np.isfinite(fac):
        fac = _MIN_FACTOR
    return fac


@_jit(**_OPTS)
def _observe_step(K, A, G, b, y0, y1, H, Ks, Pmat, tau_new, grid, kp, levels, lrow, level_index,
                  observe_norm, jdag, Iout, lnNout, buf):
    """The grid points τ_k ≤ tau_new of an accepted step from the dense output Q = Kᵀ P (τ inverted
    by safeguarded Newton): j† by the switch levels, I, ln N. Returns the next grid index."""
    T = grid.shape[0]
    q00 = q01 = q02 = q03 = 0.0
    q10 = q11 = q12 = q13 = 0.0
    for j in range(7):
        k0, k1 = Ks[j, 0], Ks[j, 1]
        q00 += k0 * Pmat[j, 0]
        q01 += k0 * Pmat[j, 1]
        q02 += k0 * Pmat[j, 2]
        q03 += k0 * Pmat[j, 3]
        q10 += k1 * Pmat[j, 0]
        q11 += k1 * Pmat[j, 1]
        q12 += k1 * Pmat[j, 2]
        q13 += k1 * Pmat[j, 3]
    while kp < T and grid[kp] <= tau_new:
        targ = grid[kp]
        sg = _invert_tau(y0, H, q00, q01, q02, q03, targ, 50)
        Ii = y1 + H * (q10 * sg + q11 * sg * sg + q12 * sg * sg * sg + q13 * sg * sg * sg * sg)
        jdag[b, kp] = _level_index_of(levels, lrow, level_index, targ / Ii)
        Iout[b, kp] = Ii
        if observe_norm:
            lnNout[b, kp] = _log_norm(K, A, G, b, targ, Ii, buf)
        kp += 1
    return kp


@_jit(**_OPTS)
def _step_events(b, f0, f1, tau_new, log_cert, log_safe, log_stop, stop_on_safe, ev_cert, ev_safe, ev_collapse):
    """The events of ReducedL2.after_step from the step's last stage (ln N = ln(dτ/ds) − ln(dI/ds)):
    the certificates' first times; returns the stop code (0: none)."""
    lnN = np.log(f0) - np.log(f1)
    if lnN < log_cert[b] and not np.isfinite(ev_cert[b]):
        ev_cert[b] = tau_new
    safe = lnN >= log_safe[b]
    if safe and not np.isfinite(ev_safe[b]):
        ev_safe[b] = tau_new
    code = 0
    if lnN <= log_stop[b]:
        code = _S_COLLAPSE
        ev_collapse[b] = tau_new
    elif stop_on_safe and safe:
        code = _S_SAFE
    return code


@_jit(**_OPTS)
def _fill_after(b, kp, jdag, Iout, lnNout, observe_norm):
    """Cells after an event stop: batch.ReducedL2.fill."""
    for k in range(kp, jdag.shape[1]):
        jdag[b, k] = 0
        Iout[b, k] = np.inf
        if observe_norm:
            lnNout[b, k] = -np.inf


def _run_py(K, A, G, log_c, log_cert, log_safe, log_stop, levels, level_index, grid, kpos0, Amat, Bvec, Evec, Pmat,
            rtol, atol, max_steps, stop_on_safe, observe_norm, members,
            jdag, Iout, lnNout, status, t_stop, steps, rejected, ev_cert, ev_safe, ev_collapse):
    """Every member of ``members``, one after another (prange): engine.integrate's loop on one member."""
    T = grid.shape[0]
    d = K.shape[1]
    nm = members.shape[0]
    for q in _prange(nm):
        b = members[q]
        lrow = 0 if levels.shape[0] == 1 else b
        lc = log_c[b]
        buf, Ks, tmp, Yn = np.empty(d), np.empty((7, 2)), np.empty(2), np.empty(2)
        h, f0, f1 = _first_step(K, A, G, b, lc, rtol, atol, buf, tmp)
        y0, y1 = 0.0, 0.0  # start: τ = 0, I = 0
        kp = kpos0
        st = _S_RUNNING
        if kp >= T:
            st = _S_DONE
            t_stop[b] = y0
        s_cur = 0.0
        last_rej = False
        nsteps, nrej = 0, 0
        while st == _S_RUNNING:
            H = h
            en, fin = _dopri_step(K, A, G, b, lc, y0, y1, f0, f1, H, Amat, Bvec, Evec, rtol, atol, buf, tmp, Ks, Yn)
            acc = fin and en <= 1.0
            nsteps += 1
            if not acc:
                nrej += 1
            h = H * _step_factor(en, fin, acc, last_rej)
            last_rej = not acc
            if acc:
                s_cur = s_cur + H
            if (not acc) and h < 10 * np.spacing(max(abs(s_cur), 1.0)):
                st = _S_UNDERFLOW if fin else _S_NONFINITE
                t_stop[b] = y0
            if acc:
                tau_new = Yn[0]
                kp = _observe_step(K, A, G, b, y0, y1, H, Ks, Pmat, tau_new, grid, kp, levels, lrow, level_index,
                                   observe_norm, jdag, Iout, lnNout, buf)
                y0, y1 = Yn[0], Yn[1]
                f0, f1 = Ks[6, 0], Ks[6, 1]
                code = _step_events(b, f0, f1, tau_new, log_cert, log_safe, log_stop, stop_on_safe, ev_cert, ev_safe,
                                    ev_collapse)
                if kp >= T:
                    st = _S_DONE
                    t_stop[b] = tau_new
                elif code != 0:
                    st = code
                    t_stop[b] = tau_new
                    _fill_after(b, kp, jdag, Iout, lnNout, observe_norm)
            if st == _S_RUNNING and nsteps >= max_steps:
                st = _S_MAX_STEPS
                t_stop[b] = y0
        status[b] = st
        steps[b] = nsteps
        rejected[b] = nrej



# one source, two compilations: the threaded one (prange over members) and a plain one for a
# single thread (no threading layer at all: safe inside Dask threads and process workers)
_run_parallel = _jit(parallel=True, **_OPTS)(_run_py)
_run_serial = _jit(**_OPTS)(_run_py)
#: numba's workqueue threading layer must not be entered from two threads at once
_PARALLEL_LOCK = threading.Lock()


#: seconds a first call may take before ``notice`` says that numba is compiling
COMPILE_NOTICE_AFTER = 0.5


def _call(fn, args, notice: Callable[[str], None] | None) -> None:
    """``fn(*args)``; when this is the first call of ``fn`` in the process (numba then compiles
    it, or loads it from its disk cache in a fraction of a second) and it takes longer than
    :data:`COMPILE_NOTICE_AFTER`, ``notice`` says that it is compiling, then how long it took."""
    if notice is None or getattr(fn, "signatures", True):
        fn(*args)
        return
    t0 = time.perf_counter()
    said = threading.Event()

    def say() -> None:
        said.set()
        notice("compiling the numba kernel (once: later runs load it from the disk cache) …")

    timer = threading.Timer(COMPILE_NOTICE_AFTER, say)
    timer.daemon = True
    timer.start()
    try:
        fn(*args)
    finally:
        timer.cancel()
        timer.join()
    if said.is_set():
        notice(f"compiled (and ran the first chunk) in {time.perf_counter() - t0:.1f} s")


def integrate_reduced(system, grid, *, rtol: float = 1e-8, atol: float = 1e-10, max_steps: int = 200_000,
                      progress: Callable[[float], None] | None = None, notice: Callable[[str], None] | None = None):
    """:func:`theorycheck.batched.engine.integrate` for a :class:`~theorycheck.batched.systems.ReducedL2` system
    (built on numpy arrays), compiled. Returns a :class:`~theorycheck.batched.engine.BatchResult`.
    ``notice(text)``: told when the first call compiles the kernel (tens of seconds, once)."""
    from theorycheck.proofs.minor_first.reduced.batch import ReducedL2

    from theorycheck.batched import engine as bt

    require()
    if not isinstance(system, ReducedL2) or system.ops.name != "numpy":
        raise TheorycheckError("the compiled kernel integrates the reduced ℓ2 system on numpy arrays only")
    if system.observe_mode != "levels":
        raise TheorycheckError("the compiled kernel observes j† by C4's switch levels only (observe='levels')")
    grid_user = bt.time_grid_array(grid)
    grid_np = bt.system_grid(system, grid_user)  # the system's own time τ̂ = 2^k τ
    if not (max_steps >= 1):
        raise TheorycheckError(f"max_steps = {max_steps}: give at least 1")
    t_start = time.perf_counter()
    B, T = system.B, grid_np.size
    out = {k: np.full((B, T), fill, dtype=dt) for k, (dt, fill) in system.observables.items()}
    lnN = out.get("log_norm", np.empty((1, 1)))
    # grid points ≤ τ0 = 0: observed at the start, as the numpy engine does
    kpos0 = int(np.searchsorted(grid_np, 0.0, side="right"))
    if kpos0:
        vals = system.observe(np.arange(B), np.zeros(B), np.zeros((B, 1)))
        for name, v in vals.items():
            out[name][:, :kpos0] = np.asarray(v)[:, None]
    K, A, G = (np.ascontiguousarray(c, dtype=np.float64) for c in system.coef)
    levels = np.ascontiguousarray(system.levels, dtype=np.float64)
    if levels.shape[1] == 0:  # one distinct z: j† is that coordinate (a sentinel column never < N̄)
        levels = np.full((levels.shape[0], 1), np.inf)
        level_index = np.asarray([system.level_index[0]] * 2, dtype=np.int64)
    else:
        level_index = np.asarray(system.level_index, dtype=np.int64)
    status = np.zeros(B, dtype=np.int64)
    t_stop = np.full(B, np.nan)
    steps = np.zeros(B, dtype=np.int64)
    rejected = np.zeros(B, dtype=np.int64)
    ev = system.events  # (B,) arrays of inf, filled in place by the kernel
    tab = [np.ascontiguousarray(x, dtype=np.float64) for x in RK45_TABLEAU]
    f64 = np.float64
    args = (K, A, G, np.asarray(system.log_c, f64), np.asarray(system.log_cert, f64), np.asarray(system.log_safe, f64),
            np.asarray(system.log_stop, f64), levels, level_index, grid_np, kpos0, *tab, float(rtol), float(atol),
            int(max_steps), bool(system.stop_on_safe), bool(system.observe_norm))
    outs = (out["jdag"], out["I"], lnN, status, t_stop, steps, rejected, ev["collapse_persisting"],
            ev["no_collapse_persisting"], ev["collapse"])
    nthreads = threads()
    chunk = max(CHUNK, nthreads)
    done = 0
    for start in range(0, B, chunk):
        members = np.arange(start, min(B, start + chunk), dtype=np.int64)
        if nthreads == 1:
            _call(_run_serial, (*args, members, *outs), notice)
        else:
            with _PARALLEL_LOCK:
                _call(_run_parallel, (*args, members, *outs), notice)
        done += members.size
        if progress is not None:
            progress(done / B)
    meta = bt.engine_meta(system, "numba", rtol, atol, max_steps, threads=nthreads)
    return bt.physical_result(system, grid_user, out, status, t_stop, steps, rejected, meta,
                              time.perf_counter() - t_start)


@contextlib.contextmanager
def thread_limit(n: int | None):
    """Run the kernel on at most n threads inside the block (None: every thread numba has,
    NUMBA_NUM_THREADS or the number of cores)."""
    if _nb is None:
        yield
        return
    old = _nb.get_num_threads()
    cap = int(_nb.config.NUMBA_NUM_THREADS)
    _nb.set_num_threads(cap if n is None else max(1, min(int(n), cap)))
    try:
        yield
    finally:
        _nb.set_num_threads(old)

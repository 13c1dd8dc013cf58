"""Discrete GD / SAM (the algorithm, not the flow) for a batch of members of a
:class:`~theorycheck.batched.systems.MultiExample`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from theorycheck.batched.engine import BatchResult
from theorycheck.batched.systems import MultiExample
from theorycheck.errors import TheorycheckError
from theorycheck.status import DONE, NON_FINITE, SIGN_CHANGE


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
            status[idx_np[~fin & alive[idx_np]]] = NON_FINITE
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

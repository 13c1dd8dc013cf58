"""Many members of an L-layer diagonal network on pixel data at full size, run: :func:`run_pixels` integrates
the pixel flow (:class:`~theorycheck.batched.systems.pixel_flow.PixelFlow`, the model, its coordinates and its
time) on a grid of (optimizer, α, ρ) members through the batched engine, or steps the discrete algorithm, and
returns one :class:`PixelRun`.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from theorycheck.batched.engine import integrate
from theorycheck.batched.products import (  # noqa: F401  (re-exported: the pixel runs' public names)
    PRODUCT_KINDS,
    SPARSE_MAX_DENSITY,
    SPARSE_MAX_ROWS,
    SPARSE_MAX_ROWS_SCIPY,
    SPARSE_MIN_NONZEROS,
    Products,
    device_ops,
)
from theorycheck.batched.systems.pixel_flow import OPTIMIZER_CODES, SAM_CODES, PixelFlow
from theorycheck.errors import TheorycheckError
from theorycheck.status import DONE, LOSS_REACHED, NON_FINITE, Status
from theorycheck.symbolic import forms as C

__all__ = ["OPTIMIZER_CODES", "PixelFlow", "PixelRun", "Products", "run_pixels", "device_ops", "TIME_KINDS",
           "PRODUCT_KINDS", "SPARSE_MAX_ROWS", "SPARSE_MAX_ROWS_SCIPY", "SPARSE_MAX_DENSITY", "SPARSE_MIN_NONZEROS"]

TIME_KINDS = ("t", "tau", "discrete")


@dataclass
class PixelRun:
    """What :func:`run_pixels` returns: ``times`` (T,) the output grid (real t, rescaled τ, or
    t = kη for the discrete algorithm), ``beta`` (B, T, d) β on every pixel at every output
    time (NaN after a member stopped), ``loss`` / ``log_loss`` (B, T), ``status`` (B,)
    :class:`~theorycheck.status.Status` words, ``t_stop`` (B,), ``steps`` (B,), and ``meta``."""

    times: np.ndarray
    beta: np.ndarray
    loss: np.ndarray
    log_loss: np.ndarray
    status: list
    t_stop: np.ndarray
    steps: np.ndarray
    time_kind: str
    meta: dict = field(default_factory=dict)
    seconds: float = 0.0

    def status_counts(self) -> dict[str, int]:
        """Members per status word."""
        out: dict[str, int] = {}
        for s in self.status:
            out[str(s)] = out.get(str(s), 0) + 1
        return out

    @property
    def ok(self) -> bool:
        """No member stopped because a budget ran out or the number range was left."""
        return all(Status(s).ok for s in self.status)

    def last(self, b: int) -> int:
        """Index of member b's last recorded output time (−1: none)."""
        ok = np.flatnonzero(np.isfinite(self.loss[b]))
        return int(ok[-1]) if ok.size else -1


def _stderr_progress(label: str) -> Callable[[float], None]:
    state = {"last": -1.0}

    def report(frac: float) -> None:
        if frac >= 1.0 or frac - state["last"] >= 0.05:
            state["last"] = frac
            print(f"\r{label}: {100 * frac:5.1f} %", end="\n" if frac >= 1.0 else "", file=sys.stderr, flush=True)

    return report


def _discrete(system: PixelFlow, eta: float, grid: np.ndarray, max_steps: int,
              progress: Callable[[float], None] | None):
    """The algorithm u ← u − η ∂Lo/∂w_1(û) (all layers alike: balanced stays balanced), in
    linear coordinates u (the algorithm may overshoot 0; u^L then keeps the sign the
    algorithm gives it). A step budget ``max_steps``; non-finite → ``non_finite``."""
    o = system.ops
    if not (eta > 0 and math.isfinite(eta)):
        raise TheorycheckError(f"eta = {eta}: the step size must be finite and > 0")
    ks = np.ceil(grid / eta - 1e-9).astype(np.int64)
    if ks[-1] > max_steps:
        raise TheorycheckError(f"discrete run: t_max/eta = {ks[-1]} steps exceeds max_steps = {max_steps}")
    B, L = system.B, system.L
    lg = C.layer_gradient(L, o.name)
    out = {k: np.full((B, grid.size), np.nan) for k in system.observables}
    status = np.full(B, DONE, dtype=np.int64)
    t_stop = np.full(B, np.nan)
    u = o.asarray(np.repeat(system.alpha_np[:, None], 2 * system.d, axis=1))
    alive = np.ones(B, dtype=bool)

    def record(k_out, n_step):
        rec = np.flatnonzero(alive)
        if rec.size:
            ri = o.asarray(rec, dtype=int)
            vals = system.observe_beta(ri, o.asarray(np.full(rec.size, grid[k_out])), system.signed_beta(u[ri]))
            for name, v in vals.items():
                out[name][rec, k_out] = o.to_numpy(v)
        for b in rec[system.reached[rec]]:
            status[b], t_stop[b], alive[b] = LOSS_REACHED, n_step * eta, False

    k_out, n = 0, 0
    while k_out < grid.size and ks[k_out] == 0:
        record(k_out, 0)
        k_out += 1
    while k_out < grid.size and alive.any():
        idx_np = np.flatnonzero(alive)
        idx = o.asarray(idx_np, dtype=int)
        uu = u[idx]
        oc = system.opt_np[idx_np]
        A, w, _ = system._weights(system.signed_beta(uu))
        with o.errstate():
            Gt = system._grad(w) * o.exp(A)[:, None]
        g = lg(Gt, *([uu] * L))[0]
        uh = uu * 1.0
        for op, code in SAM_CODES:
            sel = np.flatnonzero(oc == code)
            if sel.size == 0:
                continue
            si = o.asarray(sel, dtype=int)
            S = o.sqrt(L * o.sum(g[si] * g[si], 1))[:, None]  # the L equal layers' joint norm
            uh[si] = uu[si] + C.perturbation(op, o.name)(g[si], o.where(S > 0, S, 1.0),
                                                          system.rho[idx][si][:, None])
        Ah, wh, _ = system._weights(system.signed_beta(uh))
        with o.errstate():
            Gh = system._grad(wh) * o.exp(Ah)[:, None]
        u[idx] = uu - eta * lg(Gh, *([uh] * L))[0]
        n += 1
        fin = o.to_numpy(o.all(o.isfinite(u[idx]), 1))
        if not fin.all():
            bad = idx_np[~fin]
            status[bad], t_stop[bad], alive[bad] = NON_FINITE, n * eta, False
        while k_out < grid.size and ks[k_out] == n:
            record(k_out, n)
            k_out += 1
        if progress is not None and n % 50 == 0:
            progress(k_out / grid.size)
    t_stop[status == DONE] = n * eta
    return ks * eta, out, status, t_stop, np.full(B, n)


def run_pixels(Z, optimizers: Sequence[str], alphas, rhos, *, depth: int, time_kind: str, grid,
               loss_target: float | None = None, eta: float | None = None, loss: str = "logistic",
               rtol: float = 1e-6, atol: float = 1e-9, max_steps: int = 20_000, array_backend: str = "numpy",
               device: str | None = None, progress: bool | str = False, products: str = "auto") -> PixelRun:
    """Run every member (``optimizers[b]``, ``alphas[b]``, ``rhos[b]``) of the doubled diagonal
    network on ``Z`` (n×d, z_i = y_i x_i) in one batch, recording β on ``grid``.
    ``time_kind``: "t" (real-time flow), "tau" (rescaled flow) — both the batched
    Dormand–Prince engine (``rtol``, ``atol``, ``max_steps`` attempted steps per member) — or
    "discrete" (the algorithm with step ``eta``, real time t = kη, ``max_steps`` iterations).
    A member stops at the first output time whose training loss is ≤ ``loss_target``
    (status ``loss_reached``), at a collapse, or when its budget runs out (its status says
    which). ``progress``: True or a label prints progress to stderr. ``products``: how the
    products with Z are computed (:class:`Products`: "auto", "dense", "sparse"); ``meta``
    says how many of each kind ran."""
    ops = device_ops(array_backend, device)
    grid = np.asarray(grid, dtype=float).reshape(-1)
    if grid.size == 0 or grid[0] < 0 or np.any(np.diff(grid) <= 0) or not np.all(np.isfinite(grid)):
        raise TheorycheckError("the output grid must be finite, ≥ 0 and strictly increasing")
    if loss_target is not None and not (loss_target > 0 and math.isfinite(loss_target)):
        raise TheorycheckError(f"loss_target = {loss_target}: must be > 0 and finite")
    if time_kind not in TIME_KINDS:
        raise TheorycheckError(f"time_kind {time_kind!r}: choose one of {', '.join(TIME_KINDS)}")
    sys_kind = "t" if time_kind == "discrete" else time_kind
    system = PixelFlow(Z, optimizers, alphas, rhos, L=depth, time_kind=sys_kind, loss=loss, ops=ops, grid=grid,
                       loss_target=loss_target, products=products)
    rep = _stderr_progress(progress if isinstance(progress, str) else f"pixels {time_kind}") if progress else None
    t0 = time.perf_counter()
    if time_kind == "discrete":
        if eta is None:
            raise TheorycheckError("the discrete algorithm needs a step eta > 0")
        times, obs, status, t_stop, steps = _discrete(system, float(eta), grid, max_steps, rep)
        meta = {"method": f"discrete GD/SAM, eta = {eta}", "eta": float(eta), **system.metadata()}
    else:
        res = integrate(system, grid, rtol=rtol, atol=atol, max_steps=max_steps, progress=rep)
        times, obs, status, t_stop, steps = res.grid, res.obs, res.status.astype(np.int64), res.t_stop, res.steps
        meta = dict(res.meta)
        on = system.sliding >= 0  # members still sliding when they stopped
        end = np.minimum(t_stop[on], float(grid[-1]))  # the last step may run past the grid's end
        system.events["sliding_time"][on] += np.maximum(end - system._slide_since[on], 0.0)
    if rep is not None:
        rep(1.0)
    B, T = system.B, times.size
    beta = np.zeros((B, T, system.d_full))
    beta[:, :, system.active] = system.snapshots[:, :T]
    beta[~np.isfinite(obs["loss"])] = np.nan
    words = [Status.from_code(int(c)) for c in status]
    return PixelRun(times=np.asarray(times, float), beta=beta, loss=obs["loss"], log_loss=obs["log_loss"],
                    status=words, t_stop=np.asarray(t_stop, float), steps=np.asarray(steps), time_kind=time_kind,
                    meta={**meta, "products": {"kind": products, "density": system.products.density,
                                               "calls": dict(system.products.calls)},
                          "events": {k: v.tolist() for k, v in system.events.items()}},
                    seconds=time.perf_counter() - t0)


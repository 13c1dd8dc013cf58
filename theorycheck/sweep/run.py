"""Sweeps: grids over (α, time), (α, ρ), depth and seeds, integrated as batches
(:mod:`theorycheck.batched.engine`), run here or on other processes / a Dask cluster, and saved
with their metadata so that a figure can be redrawn without recomputing.

Which system integrates a sweep (``method="auto"``):

- one example, ℓ2-SAM, L = 2, uniform α: C4's reduced scalar ODE (:class:`batch.ReducedL2`);
- one example otherwise (GD, ℓ∞-SAM any L ≥ 2; per-coordinate α): the balanced field in
  θ = ln u (:class:`batch.BalancedLog`); ``method="balanced"`` forces it for ℓ2-SAM too;
- several examples: real time t (:class:`batch.MultiExample`).

One example runs in rescaled time τ (THEORY.md, Rescaled flows), several in real time t;
results say which (``time_kind``). j† is 1-based, 0 = collapse (β = 0), −1 = not computed.

Execution (``backend``): ``"serial"`` (this process), ``"processes"`` (local processes,
concurrent.futures; the default), ``"dask"`` (``scheduler`` = a distributed scheduler
address, or a ``distributed.Client``). Members are independent (per-member steps), so the
result does not depend on the backend or the chunking: it is bitwise the same.
"""

from __future__ import annotations

import concurrent.futures as cf_futures
import json
import math
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from theorycheck import status as bst
from theorycheck.batched import engine as bt
from theorycheck.batched import ops as bops
from theorycheck.batched import systems as bsys
from theorycheck.errors import TheorycheckError
from theorycheck.report.plain import to_plain
from theorycheck.report.progress import Progress

BACKENDS = ("serial", "processes", "dask")
METHODS = ("auto", "reduced", "balanced", "multi")
#: chunks smaller than this are not worth a process
MIN_CHUNK = 32


# ---------------------------------------------------------------------------- specs and chunks
@dataclass
class SystemSpec:
    """A picklable description of a batch: ``kind`` ("reduced" | "balanced" | "multi"),
    ``data`` (z or Z), per-member ``alpha`` ((B,) or (B, d)) and ``rho`` ((B,)), and options."""

    kind: str
    data: np.ndarray
    alpha: np.ndarray
    rho: np.ndarray
    depth: int = 2
    optimizer: str = "sam-l2"
    loss: str = "logistic"
    options: dict = field(default_factory=dict)

    @property
    def B(self) -> int:
        return int(self.alpha.shape[0])

    def take(self, sl: slice) -> SystemSpec:
        return SystemSpec(self.kind, self.data, self.alpha[sl], self.rho[sl], self.depth, self.optimizer, self.loss,
                          dict(self.options))

    def build(self, ops) -> bsys.BatchSystem:
        if self.kind == "reduced":
            return bsys.ReducedL2(self.data, self.alpha, self.rho, ops=ops, **self.options)
        if self.kind == "balanced":
            return bsys.BalancedLog(self.data, self.alpha, self.rho, L=self.depth, optimizer=self.optimizer, ops=ops,
                                  **self.options)
        if self.kind == "multi":
            return bsys.MultiExample(self.data, self.alpha, self.rho, L=self.depth, optimizer=self.optimizer,
                                   loss=self.loss, ops=ops, **self.options)
        raise TheorycheckError(f"unknown system kind {self.kind!r}")


#: array backends: "auto" = the compiled kernel (numba) for C4's reduced ODE when numba is
#: installed, numpy otherwise; "numpy"; "numba" (reduced ODE only); "torch" (GPU when present)
ARRAY_BACKENDS = ("auto", "numpy", "numba", "torch")


@dataclass
class RunOptions:
    """How to integrate: tolerances, step budget, array backend (see :data:`ARRAY_BACKENDS`)."""

    rtol: float = 1e-8
    atol: float = 1e-10
    max_steps: int = 200_000
    array_backend: str = "auto"
    device: str | None = None


def _numba_installed() -> bool:
    """numba imports (a broken install, e.g. built for another numpy, counts as absent)."""
    from theorycheck.batched import kernel as kernels

    return kernels.available()


def resolve_array_backend(requested: str, spec: SystemSpec) -> str:
    """The array backend a spec runs on: "auto" → "numba" for the reduced ODE when numba is
    installed (and j† is observed by C4's switch levels), "numpy" otherwise."""
    if requested not in ARRAY_BACKENDS:
        raise TheorycheckError(f"unknown array backend {requested!r}: choose one of {', '.join(ARRAY_BACKENDS)}")
    compiled_ok = spec.kind == "reduced" and spec.options.get("observe", "levels") == "levels"
    if requested == "auto":
        return "numba" if compiled_ok and _numba_installed() else "numpy"
    if requested == "numba":
        if not compiled_ok:
            raise TheorycheckError("array backend 'numba' covers C4's reduced ℓ2 ODE only (one example, ℓ2-SAM, "
                                   "L = 2, uniform α); use --array-backend numpy or torch for this sweep")
        if not _numba_installed():
            raise TheorycheckError("array backend 'numba' needs numba: pip install 'theorycheck[fast]'")
    return requested


def _integrate(spec: SystemSpec, grid: np.ndarray, opts: RunOptions, backend: str, *, threads: int | None = 1,
               progress=None) -> bt.BatchResult:
    """Integrate one batch in this process on the resolved array ``backend`` (numba: on
    ``threads`` threads, None = all)."""
    if backend == "numba":
        from theorycheck.batched import kernel as kernels

        with kernels.thread_limit(threads):
            return kernels.integrate_reduced(spec.build(bops.NumpyOps()), grid, rtol=opts.rtol, atol=opts.atol,
                                             max_steps=opts.max_steps, progress=progress)
    ops = bops.get_ops(backend, opts.device)
    return bt.integrate(spec.build(ops), grid, rtol=opts.rtol, atol=opts.atol, max_steps=opts.max_steps,
                        progress=progress)


def _run_chunk(spec: SystemSpec, grid: np.ndarray, opts: RunOptions) -> bt.BatchResult:
    """One chunk of a sweep (runs in a worker: one thread, the worker is the parallelism)."""
    return _integrate(spec, grid, opts, resolve_array_backend(opts.array_backend, spec), threads=1)


def _merge(parts: list[bt.BatchResult]) -> bt.BatchResult:
    if len(parts) == 1:
        return parts[0]
    cat = np.concatenate
    return bt.BatchResult(
        grid=parts[0].grid,
        obs={k: cat([p.obs[k] for p in parts]) for k in parts[0].obs},
        status=cat([p.status for p in parts]), t_stop=cat([p.t_stop for p in parts]),
        steps=cat([p.steps for p in parts]), rejected=cat([p.rejected for p in parts]),
        events={k: cat([p.events[k] for p in parts]) for k in parts[0].events},
        meta=parts[0].meta, seconds=sum(p.seconds for p in parts))


def _chunks(B: int, n: int) -> list[slice]:
    n = max(1, min(n, B))
    edges = np.linspace(0, B, n + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def run_spec(spec: SystemSpec, grid, *, opts: RunOptions | None = None, backend: str = "processes",
             workers: int | None = None, scheduler: Any = None, progress: bool | None = None,
             label: str = "sweep") -> tuple[bt.BatchResult, dict]:
    """Integrate a batch, split into chunks over ``backend``. Returns the merged result and
    a dict saying how it ran (backend, workers, chunks)."""
    opts = opts or RunOptions()
    grid = np.asarray(grid, dtype=float)
    if backend not in BACKENDS:
        raise TheorycheckError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if backend == "dask" and scheduler is None:
        raise TheorycheckError("the dask backend needs a scheduler address (--scheduler tcp://HOST:PORT)")
    bar = Progress(label, progress)
    how = {"backend": backend, "workers": 1, "chunks": 1}
    try:
        array_backend = resolve_array_backend(opts.array_backend, spec)
        how["array_backend"] = array_backend
        if backend == "processes" and array_backend == "numba":
            # the compiled kernel is parallel over members itself: threads, not processes
            nt = _checked_workers(workers) or (os.cpu_count() or 1)
            how.update(backend="processes (compiled kernel: threads in this process)", workers=nt)
            return _integrate(spec, grid, opts, array_backend, threads=nt, progress=bar.update), how
        if backend == "serial" or (backend == "processes" and _auto_workers(spec.B, workers) == 1):
            how["backend"] = "serial" if backend == "serial" else "processes (one chunk: ran in this process)"
            return _integrate(spec, grid, opts, array_backend, threads=1, progress=bar.update), how
        if backend == "processes":
            nw = _auto_workers(spec.B, workers)
            slices = _chunks(spec.B, 4 * nw)
            how.update(workers=nw, chunks=len(slices))
            with cf_futures.ProcessPoolExecutor(max_workers=nw) as ex:
                futs = {ex.submit(_run_chunk, spec.take(sl), grid, opts): i for i, sl in enumerate(slices)}
                parts: list[Any] = [None] * len(slices)
                for n_done, fut in enumerate(cf_futures.as_completed(futs), start=1):
                    parts[futs[fut]] = fut.result()
                    bar.update(n_done / len(slices))
            return _merge(parts), how
        # dask
        client, own = _dask_client(scheduler)
        try:
            nw = workers or max(1, sum(client.nthreads().values()))
            slices = _chunks(spec.B, max(1, 2 * nw))
            how.update(workers=nw, chunks=len(slices), scheduler=str(client.scheduler.address))
            futs = [client.submit(_run_chunk, spec.take(sl), grid, opts, pure=False) for sl in slices]
            from distributed import as_completed

            done = 0
            for _ in as_completed(futs):
                done += 1
                bar.update(done / len(futs))
            parts = client.gather(futs)
        finally:
            if own:
                client.close()
        return _merge(parts), how
    finally:
        bar.close()


def _checked_workers(workers: int | None) -> int | None:
    if workers is not None and workers < 1:
        raise TheorycheckError(f"--workers {workers}: give a number ≥ 1")
    return workers


def _auto_workers(B: int, workers: int | None) -> int:
    return _checked_workers(workers) or max(1, min(os.cpu_count() or 1, B // MIN_CHUNK))


def _dask_client(scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise TheorycheckError("the dask backend needs dask.distributed: pip install 'dask[distributed]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout="10s"), True
    except OSError as exc:
        raise TheorycheckError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None


# ---------------------------------------------------------------------------- results
def versions(array_backend: str = "numpy") -> dict:
    """Versions of what produced a result."""
    import scipy
    import sympy

    from theorycheck import __version__

    v = {"theorycheck": __version__, "python": platform.python_version(), "numpy": np.__version__,
         "scipy": scipy.__version__, "sympy": sympy.__version__, "platform": platform.platform()}
    if array_backend == "numba":
        v["numba"] = sys.modules["numba"].__version__
    if array_backend == "torch" or "torch" in sys.modules:
        try:
            import torch

            v["torch"] = torch.__version__
        except ImportError:  # pragma: no cover
            pass
    return v


def _paths(prefix: str | Path) -> tuple[Path, Path]:
    """PREFIX.npz and PREFIX.json (a trailing .npz/.json is dropped; dots in PREFIX are kept)."""
    text = str(prefix)
    for suf in (".npz", ".json"):
        if text.endswith(suf):
            text = text[: -len(suf)]
    return Path(text + ".npz"), Path(text + ".json")


@dataclass
class SweepResult:
    """A sweep's arrays and metadata.

    ``arrays``: name -> numpy array (e.g. ``jdag`` (A, T), ``alpha`` (A,), ``time`` (T,),
    ``status`` (A,)); ``meta``: JSON-able dict (kind, setting, grid description, tolerances,
    versions, how it ran, status counts). :meth:`save` writes PREFIX.npz + PREFIX.json."""

    arrays: dict[str, np.ndarray]
    meta: dict

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def save(self, prefix: str | Path) -> tuple[Path, Path]:
        npz, js = _paths(prefix)
        npz.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(npz, **self.arrays)
        js.write_text(json.dumps(to_plain(self.meta, nonfinite="string"), indent=2, allow_nan=False, ensure_ascii=False) + "\n")
        return npz, js

    @classmethod
    def load(cls, prefix: str | Path) -> SweepResult:
        npz, js = _paths(prefix)
        if not npz.is_file() or not js.is_file():
            raise TheorycheckError(f"no saved sweep at {prefix} (need {npz.name} and {js.name})")
        with np.load(npz) as f:
            arrays = {k: f[k] for k in f.files}
        return cls(arrays, json.loads(js.read_text()))


def _status_counts(status: np.ndarray) -> dict[str, int]:
    return {bst.STATUS[int(k)]: int(v) for k, v in zip(*np.unique(status, return_counts=True))}


def _event_arrays(res: bt.BatchResult) -> dict[str, np.ndarray]:
    return {f"event_{k}": v for k, v in res.events.items()}


# ---------------------------------------------------------------------------- grids
def parse_range(text: str, what: str, *, log: bool = False) -> np.ndarray:
    """``"LO:HI:N"`` -> N points from LO to HI (geometric with ``log``)."""
    parts = str(text).split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        lo, hi, n = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise TheorycheckError(f"{what} {text!r}: write LO:HI:N, e.g. 0.01:1:50") from None
    if n < 1 or not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo or (n > 1 and hi == lo):
        raise TheorycheckError(f"{what} {text!r}: need finite LO < HI and N ≥ 1")
    if log:
        if lo <= 0:
            raise TheorycheckError(f"{what} {text!r}: a log grid needs LO > 0")
        return np.geomspace(lo, hi, n)
    return np.linspace(lo, hi, n)


def time_grid(t_max: float, nt: int, *, log: bool = False, t_min: float | None = None) -> np.ndarray:
    """``nt`` output times in (0, t_max]: linear ``t_max·k/nt`` (k = 1..nt), or geometric
    from ``t_min`` (default t_max·1e-4) with ``log``. τ = 0 is left out: j† is a tie there."""
    if not (math.isfinite(t_max) and t_max > 0) or nt < 1:
        raise TheorycheckError(f"time grid: need t_max > 0 (got {t_max}) and nt ≥ 1 (got {nt})")
    if log:
        lo = t_min if t_min is not None else t_max * 1e-4
        if not 0 < lo < t_max:
            raise TheorycheckError(f"time grid: need 0 < t_min < t_max (got {lo}, {t_max})")
        return np.geomspace(lo, t_max, nt)
    lo = t_min if t_min is not None else t_max / nt
    return np.linspace(lo, t_max, nt)


def _choose_kind(n: int, optimizer: str, depth: int, uniform: bool, method: str) -> str:
    if method not in METHODS:
        raise TheorycheckError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if n > 1:
        if method in ("reduced", "balanced"):
            raise TheorycheckError(f"method {method!r} needs one example; several examples run in real time (multi)")
        return "multi"
    if method == "multi":
        return "multi"
    if method == "reduced" or (method == "auto" and optimizer == "sam-l2" and depth == 2 and uniform):
        if not (optimizer == "sam-l2" and depth == 2 and uniform):
            raise TheorycheckError("the reduced ODE of C4 needs ℓ2-SAM, L = 2, one example and a uniform α")
        return "reduced"
    return "balanced"


# ---------------------------------------------------------------------------- sweeps
def heatmap(Z, *, optimizer: str, rho: float, alphas, times, depth: int = 2, loss: str = "logistic",
            method: str = "auto", opts: RunOptions | None = None, backend: str = "processes",
            workers: int | None = None, scheduler: Any = None, progress: bool | None = None) -> SweepResult:
    """j† over (α, time) for a uniform init α·1 (E1). ``Z``: one example z (d,) or n×d rows
    z_i = y_i x_i. Arrays: ``jdag`` (A, T) int16, ``alpha`` (A,), ``time`` (T,), ``status``
    (A,), ``t_stop`` (A,), ``steps`` (A,), the system's other observables (A, T) and
    ``event_*`` (A,) event times (inf: did not happen)."""
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    alphas = np.asarray(alphas, dtype=float).reshape(-1)
    if alphas.size == 0 or np.any(alphas <= 0) or not np.all(np.isfinite(alphas)):
        raise TheorycheckError("alphas must be finite and > 0")
    if not (math.isfinite(rho) and rho >= 0):
        raise TheorycheckError(f"rho = {rho}: ρ must be finite and ≥ 0")
    kind = _choose_kind(Z.shape[0], optimizer, depth, True, method)
    data = Z[0] if kind != "multi" else Z
    spec = SystemSpec(kind, data, alphas, np.full(alphas.size, float(rho)), depth, optimizer, loss)
    opts = opts or RunOptions()
    res, how = run_spec(spec, times, opts=opts, backend=backend, workers=workers, scheduler=scheduler,
                        progress=progress, label=f"heatmap {optimizer}")
    arrays = {"alpha": alphas, "time": res.grid, "status": res.status, "t_stop": res.t_stop, "steps": res.steps,
              **res.obs, **_event_arrays(res)}
    meta = {"kind": "heatmap", "system": kind, "time_kind": "tau" if kind != "multi" else "t",
            "optimizer": optimizer, "rho": rho, "depth": depth, "loss": loss, "data": Z, "n": Z.shape[0],
            "d": Z.shape[1], "run": how, "integrator": res.meta, "status_counts": _status_counts(res.status),
            "versions": versions(res.meta["array_backend"]), "seconds": res.seconds}
    return SweepResult(arrays, meta)


def classify_regimes(jdag: np.ndarray, status: np.ndarray, z) -> np.ndarray:
    """Per member (row): 1 collapse, 2 j† ≠ argmax z somewhere on the grid (sequential
    amplification), 3 j† = argmax z on the whole grid (GD-like); 0 when a budget ran out."""
    major = int(np.argmax(z)) + 1
    out = np.where(np.all((jdag == major) | (jdag == -1), axis=1), 3, 2).astype(np.int8)
    out[status == bst.COLLAPSE] = 1
    out[~np.isin(status, bst.FINISHED_OK)] = 0
    return out


def regime_map(z, *, alphas, rhos, times, opts: RunOptions | None = None, backend: str = "processes",
               workers: int | None = None, scheduler: Any = None, progress: bool | None = None,
               bisect: int = 40) -> SweepResult:
    """ℓ2-SAM, L = 2, one example: the regime of every (ρ, α) cell (C5) from C4's reduced ODE
    over ``times``, the closed-form boundaries (thresholds.alpha_all_shrink, alpha_gd_like)
    and the computed collapse threshold α_c(ρ) (batched bisection, :func:`collapse_threshold`).
    Arrays: ``regime`` (R, A), ``alpha`` (A,), ``rho`` (R,), ``alpha_all_shrink`` (R,),
    ``alpha_gd_like`` (R,), ``alpha_c`` (R,), ``alpha_c_bracket`` (R, 2), ``collapse_time`` (R, A)."""
    from theorycheck.claims import thresholds as th

    z = np.asarray(z, dtype=float).reshape(-1)
    alphas = np.asarray(alphas, float).reshape(-1)
    rhos = np.asarray(rhos, float).reshape(-1)
    if np.any(rhos <= 0):
        raise TheorycheckError("regime maps need ρ > 0 (ρ = 0 is GD: one regime)")
    aa, rr = np.meshgrid(alphas, rhos)  # (R, A)
    spec = SystemSpec("reduced", z, aa.ravel(), rr.ravel())
    opts = opts or RunOptions()
    res, how = run_spec(spec, times, opts=opts, backend=backend, workers=workers, scheduler=scheduler,
                        progress=progress, label="regime map")
    R, A = rr.shape
    regime = classify_regimes(res.obs["jdag"], res.status, z).reshape(R, A)
    shrink = np.array([th.alpha_all_shrink(z, r).value for r in rhos], dtype=float)
    gdlike = np.array([th.alpha_gd_like(z, r).value for r in rhos], dtype=float)
    ac = collapse_threshold(z, rhos, opts=opts, iterations=bisect, backend=backend, workers=workers,
                            scheduler=scheduler, progress=progress)
    arrays = {"regime": regime, "alpha": alphas, "rho": rhos, "time": res.grid, "alpha_all_shrink": shrink,
              "alpha_gd_like": gdlike, "alpha_c": ac["alpha_c"], "alpha_c_bracket": ac["bracket"],
              "alpha_c_status": ac["status"], "collapse_time": res.events["collapse"].reshape(R, A),
              "status": res.status.reshape(R, A), "jdag": res.obs["jdag"].reshape(R, A, -1)}
    meta = {"kind": "regime_map", "system": "reduced", "time_kind": "tau", "optimizer": "sam-l2", "depth": 2,
            "z": z, "run": how, "integrator": res.meta, "status_counts": _status_counts(res.status),
            "regime_codes": {"0": "budget ran out", "1": "collapse", "2": "sequential amplification",
                             "3": "GD-like (j† = argmax z throughout)"},
            "bisection": ac["meta"], "versions": versions(res.meta["array_backend"]), "seconds": res.seconds}
    return SweepResult(arrays, meta)


def collapse_threshold(z, rhos, *, opts: RunOptions | None = None, iterations: int = 40, tau_budget: float = 1e4,
                       backend: str = "processes", workers: int | None = None, scheduler: Any = None,
                       progress: bool | None = None) -> dict:
    """α_c(ρ) for every ρ at once: bisection in ln α between alpha_all_shrink (collapse
    certain) and alpha_gd_like (no collapse), each trial classified by a certificate of
    C5 — N < ρ z_+ (collapse) or N ≥ ρ z_max (none) — on C4's reduced ODE run until one
    holds (``stop_on_safe``) or τ reaches ``tau_budget`` (then the bracket stops shrinking:
    status "budget"). Returns {"alpha_c", "bracket" (R, 2), "status" (R,) 1 = converged,
    0 = budget, "meta"}."""
    from theorycheck.claims import thresholds as th

    z = np.asarray(z, float).reshape(-1)
    rhos = np.asarray(rhos, float).reshape(-1)
    lo = np.array([th.alpha_all_shrink(z, r).value or 0.0 for r in rhos], dtype=float)
    hi = np.array([th.alpha_gd_like(z, r).value for r in rhos], dtype=float)
    if np.any(lo <= 0) or np.any(hi <= lo):
        raise TheorycheckError("collapse threshold: the closed-form bracket [alpha_all_shrink, alpha_gd_like] is "
                               "empty for this z (z needs positive entries that are not all equal)")
    opts = opts or RunOptions()
    ok = np.ones(rhos.size, dtype=bool)
    bar = Progress("collapse threshold", progress)
    try:
        for it in range(iterations):
            mid = np.sqrt(lo * hi)
            act = np.flatnonzero(ok & (hi / lo > 1 + 1e-13))
            if act.size == 0:
                break
            spec = SystemSpec("reduced", z, mid[act], rhos[act], options={"stop_on_safe": True})
            res, _ = run_spec(spec, np.array([tau_budget]), opts=opts, backend=backend, workers=workers,
                              scheduler=scheduler, progress=False)
            col = res.status == bst.COLLAPSE
            safe = res.status == bst.NO_COLLAPSE
            lo[act[col]] = mid[act[col]]
            hi[act[safe]] = mid[act[safe]]
            ok[act[~(col | safe)]] = False
            bar.update((it + 1) / iterations)
    finally:
        bar.close()
    return {"alpha_c": np.sqrt(lo * hi), "bracket": np.stack([lo, hi], axis=1), "status": ok.astype(np.int8),
            "meta": {"iterations": iterations, "tau_budget": tau_budget, "rtol": opts.rtol, "atol": opts.atol,
                     "certificates": "collapse: N < rho z_+; none: N >= rho z_max (THEORY.md C5)"}}


def depth_sweep(z, *, depths: Sequence[int], optimizer: str, rho: float, alphas, times,
                opts: RunOptions | None = None, backend: str = "processes", workers: int | None = None,
                scheduler: Any = None, progress: bool | None = None) -> SweepResult:
    """j† over (α, τ) for several depths L (one example, balanced, uniform α). Arrays:
    ``jdag`` (len(depths), A, T), ``depth``, ``alpha``, ``time``, ``status`` (len(depths), A),
    ``event_blowup`` (len(depths), A)."""
    out_j, out_s, out_b = [], [], []
    meta_runs = []
    for L in depths:
        r = heatmap(z, optimizer=optimizer, rho=rho, alphas=alphas, times=times, depth=int(L),
                    method="balanced" if optimizer != "sam-l2" or L != 2 else "auto", opts=opts, backend=backend,
                    workers=workers, scheduler=scheduler, progress=progress)
        out_j.append(r["jdag"])
        out_s.append(r["status"])
        out_b.append(r.arrays.get("event_blowup", np.full(len(r["alpha"]), np.inf)))
        meta_runs.append(r.meta)
    arrays = {"jdag": np.stack(out_j), "status": np.stack(out_s), "event_blowup": np.stack(out_b),
              "depth": np.asarray(depths), "alpha": np.asarray(alphas, float), "time": np.asarray(times, float)}
    return SweepResult(arrays, {"kind": "depth_sweep", "optimizer": optimizer, "rho": rho, "runs": meta_runs})


def seed_sweep(z, *, seeds: Sequence[int], alpha: float, spread: float, optimizer: str, rho: float, times,
               depth: int = 2, opts: RunOptions | None = None, backend: str = "processes",
               workers: int | None = None, scheduler: Any = None, progress: bool | None = None) -> SweepResult:
    """Per-coordinate inits α_j = α·exp(spread·g_j), g ~ N(0, 1) drawn with
    ``numpy.random.default_rng(seed)``, one member per seed. Arrays: ``jdag`` (S, T),
    ``alpha0`` (S, d) the inits, ``seed`` (S,), ``time``, ``status``."""
    z = np.asarray(z, float).reshape(-1)
    A0 = np.stack([alpha * np.exp(spread * np.random.default_rng(int(s)).standard_normal(z.size)) for s in seeds])
    spec = SystemSpec("balanced", z, A0, np.full(len(seeds), float(rho)), depth, optimizer)
    opts = opts or RunOptions()
    res, how = run_spec(spec, times, opts=opts, backend=backend, workers=workers, scheduler=scheduler,
                        progress=progress, label="seeds")
    arrays = {"jdag": res.obs["jdag"], "alpha0": A0, "seed": np.asarray(seeds), "time": res.grid,
              "status": res.status, **_event_arrays(res)}
    meta = {"kind": "seed_sweep", "optimizer": optimizer, "rho": rho, "depth": depth, "alpha": alpha,
            "spread": spread, "z": z, "rng": "numpy.random.default_rng(seed).standard_normal(d)", "run": how,
            "integrator": res.meta, "versions": versions(res.meta["array_backend"])}
    return SweepResult(arrays, meta)


def visits(row: np.ndarray) -> list[int]:
    """The sequence of distinct consecutive j† values along a row (−1 cells skipped)."""
    seq: list[int] = []
    for v in np.asarray(row).tolist():
        if v == -1:
            continue
        if not seq or seq[-1] != v:
            seq.append(int(v))
    return seq


"""Sweeps: grids over (α, time), (α, ρ), depth and seeds, integrated as batches
(:mod:`theorycheck.batched.engine`), run here or on other processes / a Dask cluster, and saved
with their metadata so that a figure can be redrawn without recomputing.

Which system integrates a sweep (``method="auto"``):

- one example that a theory's reduction given in ``reductions`` applies to (:mod:`theorycheck.solvers.reduction`;
  the first paper's: C4's reduced scalar ODE at ℓ2-SAM, L = 2, uniform α): that reduction's batch system;
- one example otherwise (GD, ℓ∞-SAM any L ≥ 2; per-coordinate α): the balanced field in
  θ = ln u (:class:`batch.BalancedLog`); ``method="balanced"`` forces it where a reduction applies too;
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
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from theorycheck import status as bst
from theorycheck.batched import engine as bt
from theorycheck.batched import ops as bops
from theorycheck.batched import systems as bsys
from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.progress import Progress
from theorycheck.solvers import reduction
from theorycheck.vocabulary import ARRAY_BACKENDS, DASK_LOCAL_SCHEDULERS, SWEEP_BACKENDS, SWEEP_METHODS

BACKENDS = SWEEP_BACKENDS
METHODS = SWEEP_METHODS
#: chunks smaller than this are not worth a process
MIN_CHUNK = 32


# ---------------------------------------------------------------------------- specs and chunks
@dataclass
class SystemSpec:
    """A picklable description of a batch: ``kind`` ("reduced" | "balanced" | "multi"),
    ``data`` (z or Z), per-member ``alpha`` ((B,) or (B, d)) and ``rho`` ((B,)), and options; a "reduced" batch
    names its ``reduction`` (:class:`theorycheck.solvers.reduction.Reduction`, a theory's)."""

    kind: str
    data: np.ndarray
    alpha: np.ndarray
    rho: np.ndarray
    depth: int = 2
    optimizer: str | None = None  # the balanced and several-example kinds need one
    loss: str = "logistic"
    options: dict = field(default_factory=dict)
    reduction: Any = None  # the "reduced" kind's: a theory's reduction

    @property
    def B(self) -> int:
        return int(self.alpha.shape[0])

    def take(self, sl: slice) -> SystemSpec:
        return SystemSpec(self.kind, self.data, self.alpha[sl], self.rho[sl], self.depth, self.optimizer, self.loss,
                          dict(self.options), self.reduction)

    def build(self, ops) -> bsys.BatchSystem:
        if self.kind == "reduced":
            if self.reduction is None:
                raise TheorycheckError("a 'reduced' batch needs the theory's reduction (SystemSpec(..., reduction=))")
            return self.reduction.batch_system(self.data, self.alpha, self.rho, ops=ops, **self.options)
        if self.kind in ("balanced", "multi") and self.optimizer is None:
            raise TheorycheckError(f"a {self.kind!r} batch needs an optimizer")
        if self.kind == "balanced":
            return bsys.BalancedLog(self.data, self.alpha, self.rho, L=self.depth, optimizer=self.optimizer, ops=ops,
                                  **self.options)
        if self.kind == "multi":
            return bsys.MultiExample(self.data, self.alpha, self.rho, L=self.depth, optimizer=self.optimizer,
                                   loss=self.loss, ops=ops, **self.options)
        raise TheorycheckError(f"unknown system kind {self.kind!r}")


#: array backends: "auto" = a reduction's compiled kernel (numba) when it has one and numba is
#: installed, numpy otherwise; "numpy"; "numba" (a compiled reduction only); "torch" (GPU when present)


@dataclass
class RunOptions:
    """How to integrate: tolerances, step budget, array backend (see :data:`ARRAY_BACKENDS`)."""

    rtol: float = 1e-8
    atol: float = 1e-10
    max_steps: int = 200_000
    array_backend: str = "auto"
    device: str | None = None

    def __post_init__(self) -> None:
        # checked here, where every sweep starts: an inf tolerance accepted every step and
        # reached the JSON output as inf
        if not (isinstance(self.rtol, (int, float)) and 0 < self.rtol < 1):
            raise TheorycheckError(f"rtol = {self.rtol!r}: give a relative tolerance in (0, 1)")
        if not (isinstance(self.atol, (int, float)) and 0 < self.atol < math.inf):
            raise TheorycheckError(f"atol = {self.atol!r}: give a finite absolute tolerance > 0")
        if not (isinstance(self.max_steps, int) and self.max_steps > 0):
            raise TheorycheckError(f"max_steps = {self.max_steps!r}: give a whole number > 0")


def _kernel(spec: SystemSpec):
    """The compiled kernel of a spec's reduction, when it has one that covers the spec's options; else None."""
    kernel = getattr(spec.reduction, "kernel", None) if spec.kind == "reduced" else None
    return kernel if kernel is not None and kernel.covers(spec.options) else None


def _numba_installed(spec: SystemSpec) -> bool:
    """numba imports for the spec's kernel (a broken install, e.g. built for another numpy, counts as absent)."""
    kernel = _kernel(spec)
    return kernel is not None and kernel.available()


def resolve_array_backend(requested: str, spec: SystemSpec) -> str:
    """The array backend a spec runs on: "auto" → "numba" for a reduction with a compiled kernel that covers the
    spec (the first paper's: C4's reduced ODE, j† observed by its switch levels) when numba is installed, "numpy"
    otherwise."""
    if requested not in ARRAY_BACKENDS:
        raise TheorycheckError(f"unknown array backend {requested!r}: choose one of {', '.join(ARRAY_BACKENDS)}")
    compiled_ok = _kernel(spec) is not None
    if requested == "auto":
        return "numba" if compiled_ok and _numba_installed(spec) else "numpy"
    if requested == "numba":
        if not compiled_ok:
            raise ArgumentError("array backend 'numba' covers a theory's compiled reduction only (the first paper's: "
                                "C4's reduced ℓ2 ODE, one example, ℓ2-SAM, L = 2, uniform α); use "
                                "array_backend='numpy' (or torch) for this sweep", "array_backend")
        if not _numba_installed(spec):
            raise TheorycheckError("array backend 'numba' needs numba: pip install 'theorycheck[fast]'")
    return requested


def _integrate(spec: SystemSpec, grid: np.ndarray, opts: RunOptions, backend: str, *, threads: int | None = 1,
               progress=None, notice=None) -> bt.BatchResult:
    """Integrate one batch in this process on the resolved array ``backend`` (numba: on
    ``threads`` threads, None = all)."""
    if backend == "numba":
        kernel = _kernel(spec)
        with kernel.thread_limit(threads):
            return kernel.integrate(spec.build(bops.NumpyOps()), grid, rtol=opts.rtol, atol=opts.atol,
                                    max_steps=opts.max_steps, progress=progress, notice=notice)
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
        raise ArgumentError("backend='dask' needs scheduler='tcp://HOST:PORT' (the address of a running Dask "
                            "cluster)", "backend",
                            "scheduler")
    bar = Progress(label, progress)
    how = {"backend": backend, "workers": 1, "chunks": 1}
    try:
        array_backend = resolve_array_backend(opts.array_backend, spec)
        how["array_backend"] = array_backend
        if backend == "processes" and array_backend == "numba":
            # the compiled kernel is parallel over members itself: threads, not processes
            nt = min(_checked_workers(workers) or (os.cpu_count() or 1), os.cpu_count() or 1)
            how.update(backend="processes (compiled kernel: threads in this process)", workers=nt)
            return _integrate(spec, grid, opts, array_backend, threads=nt, progress=bar.update, notice=bar.note), how
        if backend == "serial" or (backend == "processes" and _auto_workers(spec.B, workers) == 1):
            how["backend"] = "serial" if backend == "serial" else "processes (one chunk: ran in this process)"
            return _integrate(spec, grid, opts, array_backend, threads=1, progress=bar.update, notice=bar.note), how
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
        raise ArgumentError(f"workers={workers!r}: give a number ≥ 1", "workers")
    return workers


def _auto_workers(B: int, workers: int | None) -> int:
    """Processes for B members: never more than members or cores (an explicit ``workers`` too)."""
    cap = max(1, min(os.cpu_count() or 1, B))
    w = _checked_workers(workers)
    return min(w, cap) if w else max(1, min(cap, B // MIN_CHUNK))


def _dask_client(scheduler):
    try:
        from distributed import Client
    except ImportError:
        raise TheorycheckError("the dask backend needs dask.distributed: pip install 'dask[distributed]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout="10s"), True
    except (OSError, ValueError, TypeError) as exc:
        raise TheorycheckError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None


def run_tasks(fn, items, *, scheduler: Any = "processes", workers: int | None = None, progress: bool | None = None,
              label: str = "tasks") -> tuple[list, dict]:
    """``[fn(item) for item in items]`` with every call one Dask task: on a local scheduler
    (``scheduler`` "processes", "threads" or "sync", ``workers`` of them, default one per item
    up to the cores) or on a Dask cluster (``scheduler`` = its address or a
    ``distributed.Client``). ``fn`` must be a module-level function (the processes scheduler
    pickles it). Returns the results in the order of ``items`` and a dict saying how they ran
    (scheduler, workers, tasks). Progress (tasks finished) on stderr."""
    items = list(items)
    try:
        import dask
    except ImportError:
        raise TheorycheckError("running tasks on Dask needs dask: pip install 'dask[distributed]'") from None
    local = isinstance(scheduler, str) and scheduler in DASK_LOCAL_SCHEDULERS
    if isinstance(scheduler, str) and not local and "://" not in scheduler:
        raise ArgumentError(f"scheduler={scheduler!r}: choose {', '.join(DASK_LOCAL_SCHEDULERS)} or the address "
                            "'tcp://HOST:PORT' of a Dask cluster", "scheduler")
    nw = _checked_workers(workers) or max(1, min(len(items), os.cpu_count() or 1))
    if scheduler == "sync":
        nw = 1
    how: dict = {"scheduler": scheduler if local else "distributed", "workers": nw, "tasks": len(items)}
    bar = Progress(label, progress)
    try:
        if not items:
            return [], how
        if local:
            from dask.callbacks import Callback

            tasks = [dask.delayed(fn, pure=False)(it) for it in items]
            keys, done = {t.key for t in tasks}, [0]

            class _Count(Callback):
                def _posttask(self, key, result, dsk, state, id):  # noqa: A002 - dask's name
                    if key in keys:  # the calls of fn, not the graph's other nodes
                        done[0] += 1
                        bar.update(done[0] / len(items))

            with _Count():
                out = dask.compute(*tasks, scheduler=scheduler, num_workers=nw)
            return list(out), how
        client, own = _dask_client(scheduler)
        try:
            how.update(workers=workers or max(1, sum(client.nthreads().values())),
                       address=str(client.scheduler.address))
            futs = [client.submit(fn, it, pure=False) for it in items]
            from distributed import as_completed

            for n_done, _ in enumerate(as_completed(futs), start=1):
                bar.update(n_done / len(futs))
            return list(client.gather(futs)), how
        finally:
            if own:
                client.close()
    finally:
        bar.close()


def status_counts(status: np.ndarray) -> dict[str, int]:
    return {bst.STATUS[int(k)]: int(v) for k, v in zip(*np.unique(status, return_counts=True))}


def event_arrays(res: bt.BatchResult) -> dict[str, np.ndarray]:
    return {f"event_{k}": v for k, v in res.events.items()}


def choose_kind(n: int, optimizer: str, depth: int, uniform: bool, method: str, reductions=()) -> tuple[str, Any]:
    """The batch kind of a sweep and its reduction (None but for "reduced"): several examples run in real time
    (multi); one example reduces when one of ``reductions`` applies (``method`` "auto") or must (``"reduced"``), and
    runs balanced otherwise."""
    if method not in METHODS:
        raise TheorycheckError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if n > 1:
        if method in ("reduced", "balanced"):
            raise TheorycheckError(f"method {method!r} needs one example; several examples run in real time (multi)")
        return "multi", None
    if method == "multi":
        return "multi", None
    if method in ("auto", "reduced"):
        found = reduction.for_batch(reductions, optimizer, depth, uniform, forced=method == "reduced")
        if found is not None:
            return "reduced", found
    return "balanced", None

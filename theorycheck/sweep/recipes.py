"""Sweep recipes: the heatmap of j† over (α, time), depth and seed sweeps (a pack's grids, such as the first
paper's regime map over (ρ, α), live in the pack). Each builds a :class:`~theorycheck.sweep.run.SystemSpec`, runs it with
:func:`~theorycheck.sweep.run.run_spec` and returns a :class:`~theorycheck.sweep.result.SweepResult`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.setting import Setting
from theorycheck.sweep.result import SweepResult, versions
from theorycheck.sweep.run import (
    RunOptions,
    SystemSpec,
    choose_kind,
    event_arrays,
    run_spec,
    status_counts,
)
from theorycheck.vocabulary import TimeKind

#: a theory's α boundaries for a heatmap: (Z, rho, optimizer, depth) -> dict of name -> α, or None
AlphaBoundaries = Callable[[np.ndarray, float, str, int], "dict | None"]


def heatmap(Z, *, optimizer: str | None = None, rho: float | None = None, alphas, times, depth: int = 2,
            loss: str = "logistic", method: str = "auto", opts: RunOptions | None = None, backend: str = "processes",
            workers: int | None = None, scheduler: Any = None, progress: bool | None = None,
            thresholds: AlphaBoundaries | None = None, reductions=()) -> SweepResult:
    """j† over (α, time) for a uniform init α·1 (E1). ``Z``: a :class:`~theorycheck.setting.Setting`
    (its examples, optimizer, ρ, depth and loss; then give none of those), or one example z (d,) or
    n×d rows z_i = y_i x_i with ``optimizer`` and ``rho``. Arrays: ``jdag`` (A, T) int16, ``alpha``
    (A,), ``time`` (T,), ``status`` (A,), ``t_stop`` (A,), ``steps`` (A,), the system's other
    observables (A, T) and ``event_*`` (A,) event times (inf: did not happen). ``thresholds``: a theory's
    boundaries in α for the figure, ``thresholds(Z, rho, optimizer, depth) -> dict | None``, saved as the meta
    key ``thresholds`` (None without it; a pack supplies one, e.g. the first paper's C5 boundaries). ``reductions``: a
    theory's reductions of the flow (:mod:`theorycheck.solvers.reduction`; the first paper's C4 scalar ODE), the
    first that applies integrates one example (``method`` "auto"; "reduced" insists; the meta key ``system`` says
    which ran)."""
    Z, optimizer, rho, depth, loss = _problem(Z, optimizer, rho, depth, loss)
    alphas = np.asarray(alphas, dtype=float).reshape(-1)
    if alphas.size == 0 or np.any(alphas <= 0) or not np.all(np.isfinite(alphas)):
        raise TheorycheckError("alphas must be finite and > 0")
    if not (math.isfinite(rho) and rho >= 0):
        raise TheorycheckError(f"rho = {rho}: ρ must be finite and ≥ 0")
    kind, found = choose_kind(Z.shape[0], optimizer, depth, True, method, reductions)
    data = Z[0] if kind != "multi" else Z
    spec = SystemSpec(kind, data, alphas, np.full(alphas.size, float(rho)), depth, optimizer, loss, reduction=found)
    opts = opts or RunOptions()
    res, how = run_spec(spec, times, opts=opts, backend=backend, workers=workers, scheduler=scheduler,
                        progress=progress, label=f"heatmap {optimizer}")
    arrays = {"alpha": alphas, "time": res.grid, "status": res.status, "t_stop": res.t_stop, "steps": res.steps,
              **res.obs, **event_arrays(res)}
    meta = {"kind": "heatmap", "system": kind, "time_kind": TimeKind.RESCALED if kind != "multi" else TimeKind.REAL,
            "optimizer": optimizer, "rho": rho, "depth": depth, "loss": loss, "data": Z, "n": Z.shape[0],
            "d": Z.shape[1], "run": how, "integrator": res.meta, "status_counts": status_counts(res.status),
            "versions": versions(res.meta["array_backend"]), "seconds": res.seconds,
            "thresholds": thresholds(Z, rho, optimizer, depth) if thresholds is not None else None}
    return SweepResult(arrays, meta)


def _problem(data, optimizer, rho, depth, loss) -> tuple[np.ndarray, str, float, int, str]:
    """(Z, optimizer, ρ, depth, loss) from a Setting taken whole, or from raw rows and the arguments."""
    if isinstance(data, Setting):
        if optimizer is not None or rho is not None:
            raise ArgumentError("heatmap(setting, …) takes optimizer and rho from the setting: drop them",
                                "optimizer", "rho")
        if data.regression:
            raise ArgumentError(f"param={data.param!r}: the heatmap of j† covers the product classification flows",
                                "param")
        return data.Z, data.optimizer, data.rho, data.depth, data.loss
    if optimizer is None or rho is None:
        raise ArgumentError("heatmap(Z, …) on raw rows needs optimizer and rho (or pass a Setting)", "optimizer", "rho")
    return np.atleast_2d(np.asarray(data, dtype=float)), get_optimizer(optimizer).name, rho, depth, loss


def depth_sweep(z, *, depths: Sequence[int], optimizer: str, rho: float, alphas, times,
                opts: RunOptions | None = None, backend: str = "processes", workers: int | None = None,
                scheduler: Any = None, progress: bool | None = None,
                thresholds: AlphaBoundaries | None = None, reductions=()) -> SweepResult:
    """j† over (α, τ) for several depths L (one example, balanced, uniform α; ``reductions`` as for :func:`heatmap`). Arrays:
    ``jdag`` (len(depths), A, T), ``depth``, ``alpha``, ``time``, ``status`` (len(depths), A),
    ``event_blowup`` (len(depths), A); ``thresholds`` as for :func:`heatmap`, passed to each depth's run."""
    out_j, out_s, out_b = [], [], []
    meta_runs = []
    for L in depths:
        r = heatmap(z, optimizer=optimizer, rho=rho, alphas=alphas, times=times, depth=int(L),
                    opts=opts, backend=backend, workers=workers, scheduler=scheduler, progress=progress, thresholds=thresholds,
                    reductions=reductions)
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
              "status": res.status, **event_arrays(res)}
    meta = {"kind": "seed_sweep", "optimizer": optimizer, "rho": rho, "depth": depth, "alpha": alpha,
            "spread": spread, "z": z, "rng": "numpy.random.default_rng(seed).standard_normal(d)", "run": how,
            "integrator": res.meta, "versions": versions(res.meta["array_backend"])}
    return SweepResult(arrays, meta)

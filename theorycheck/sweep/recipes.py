"""Sweep recipes: the heatmap of j† over (α, time) (E1), the regime map over (ρ, α) (C5),
depth and seed sweeps. Each builds a :class:`~theorycheck.sweep.run.SystemSpec`, runs it with
:func:`~theorycheck.sweep.run.run_spec` and returns a :class:`~theorycheck.sweep.result.SweepResult`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from theorycheck import status as bst
from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.optimizers import get as get_optimizer
from theorycheck.setting import Setting
from theorycheck.sweep.result import SweepResult, versions
from theorycheck.sweep.run import (
    RunOptions,
    SystemSpec,
    _choose_kind,
    _event_arrays,
    _status_counts,
    collapse_threshold_per_rho,
    run_spec,
)
from theorycheck.vocabulary import REGIMES, TimeKind


def heatmap(Z, *, optimizer: str | None = None, rho: float | None = None, alphas, times, depth: int = 2,
            loss: str = "logistic", method: str = "auto", opts: RunOptions | None = None, backend: str = "processes",
            workers: int | None = None, scheduler: Any = None, progress: bool | None = None) -> SweepResult:
    """j† over (α, time) for a uniform init α·1 (E1). ``Z``: a :class:`~theorycheck.setting.Setting`
    (its examples, optimizer, ρ, depth and loss; then give none of those), or one example z (d,) or
    n×d rows z_i = y_i x_i with ``optimizer`` and ``rho``. Arrays: ``jdag`` (A, T) int16, ``alpha``
    (A,), ``time`` (T,), ``status`` (A,), ``t_stop`` (A,), ``steps`` (A,), the system's other
    observables (A, T) and ``event_*`` (A,) event times (inf: did not happen)."""
    Z, optimizer, rho, depth, loss = _problem(Z, optimizer, rho, depth, loss)
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
    meta = {"kind": "heatmap", "system": kind, "time_kind": TimeKind.RESCALED if kind != "multi" else TimeKind.REAL,
            "optimizer": optimizer, "rho": rho, "depth": depth, "loss": loss, "data": Z, "n": Z.shape[0],
            "d": Z.shape[1], "run": how, "integrator": res.meta, "status_counts": _status_counts(res.status),
            "versions": versions(res.meta["array_backend"]), "seconds": res.seconds,
            "thresholds": _closed_form_thresholds(Z, rho) if get_optimizer(optimizer).normalised and depth == 2
            else None}
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


def _closed_form_thresholds(Z: np.ndarray, rho: float) -> dict | None:
    """C5's boundaries of one example (ℓ2-SAM, L = 2), or None where undefined: the closed forms, and α_c to
    plotting accuracy (8 digits, a floating-point check; None when its search is not decided within 30 s)."""
    from theorycheck.predict import thresholds as th

    if Z.shape[0] != 1 or not np.any(Z[0] > 0):
        return None
    try:
        out = {"alpha_all_shrink": th.alpha_all_shrink(Z[0], rho).value,
               "alpha_gd_like": th.alpha_gd_like(Z[0], rho).value}
    except TheorycheckError:
        return None
    try:
        out["alpha_collapse"] = th.collapse_threshold(Z[0], rho, digits=8, max_seconds=30.0).value
    except TheorycheckError:
        out["alpha_collapse"] = None
    return out


def classify_regimes(jdag: np.ndarray, status: np.ndarray, z) -> np.ndarray:
    """Per member (row): 1 collapse, 2 j† ≠ argmax z somewhere on the grid (sequential
    amplification), 3 j† = argmax z on the whole grid (GD-like); 0 when a budget ran out."""
    major = int(np.argmax(z)) + 1
    out = np.where(np.all((jdag == major) | (jdag == -1), axis=1), 3, 2).astype(np.int8)
    out[status == bst.COLLAPSE] = 1
    out[~np.isin(status, bst.FINISHED_OK)] = 0
    return out


def regime_grid(z, *, alphas, rhos, times, opts: RunOptions | None = None, backend: str = "processes",
               workers: int | None = None, scheduler: Any = None, progress: bool | None = None,
               bisect: int = 40) -> SweepResult:
    """ℓ2-SAM, L = 2, one example: the regime of every (ρ, α) cell of a float grid (C5) from C4's reduced ODE
    over ``times``, the closed-form boundaries (thresholds.alpha_all_shrink, alpha_gd_like)
    and the computed collapse threshold α_c(ρ) (batched bisection, :func:`collapse_threshold_per_rho`).
    Arrays: ``regime`` (R, A), ``alpha`` (A,), ``rho`` (R,), ``alpha_all_shrink`` (R,),
    ``alpha_gd_like`` (R,), ``alpha_c`` (R,), ``alpha_c_bracket`` (R, 2), ``collapse_time`` (R, A)."""
    from theorycheck.predict import thresholds as th

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
    ac = collapse_threshold_per_rho(z, rhos, opts=opts, iterations=bisect, backend=backend, workers=workers,
                            scheduler=scheduler, progress=progress)
    arrays = {"regime": regime, "alpha": alphas, "rho": rhos, "time": res.grid, "alpha_all_shrink": shrink,
              "alpha_gd_like": gdlike, "alpha_c": ac["alpha_c"], "alpha_c_bracket": ac["bracket"],
              "alpha_c_status": ac["status"], "collapse_time": res.events["collapse"].reshape(R, A),
              "status": res.status.reshape(R, A), "jdag": res.obs["jdag"].reshape(R, A, -1)}
    meta = {"kind": "regime_grid", "system": "reduced", "time_kind": TimeKind.RESCALED, "optimizer": SAM_L2.name, "depth": 2,
            "z": z, "run": how, "integrator": res.meta, "status_counts": _status_counts(res.status),
            "regime_codes": {str(k): name for k, (name, _) in REGIMES.items()},
            "bisection": ac["meta"], "versions": versions(res.meta["array_backend"]), "seconds": res.seconds}
    return SweepResult(arrays, meta)


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
                    method="balanced" if not get_optimizer(optimizer).normalised or L != 2 else "auto", opts=opts,
                    backend=backend,
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

"""The first paper's grids of predictions on the batched engine: C5's regime of every (ρ, α) cell of a float
grid (:func:`regime_grid`), α_c(ρ) for many ρ at once (:func:`collapse_threshold_per_rho`), and the closed-form
boundaries a heatmap of one example draws (:func:`heatmap_thresholds`, handed to
:func:`theorycheck.sweep.heatmap` as its ``thresholds``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from theorycheck.proofs.minor_first.predict import alpha_c as AC
from theorycheck.proofs.minor_first.predict import thresholds as th
from theorycheck.proofs.minor_first.reduced import REDUCTION

from theorycheck import status as bst
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.optimizers import get as get_optimizer
from theorycheck.sweep.result import SweepResult, versions
from theorycheck.sweep.run import RunOptions, SystemSpec, run_spec, status_counts
from theorycheck.vocabulary import REGIMES, TimeKind

__all__ = ["classify_regimes", "collapse_threshold_per_rho", "heatmap_thresholds", "regime_grid"]


def heatmap_thresholds(Z: np.ndarray, rho: float, optimizer: str, depth: int) -> dict | None:
    """C5's boundaries of one example (ℓ2-SAM, L = 2), or None where undefined: the closed forms, and α_c to
    plotting accuracy (8 digits, a floating-point check; None when its search is not decided within 30 s)."""
    if not (get_optimizer(optimizer).normalised and depth == 2) or Z.shape[0] != 1 or not np.any(Z[0] > 0):
        return None
    try:
        out = {"alpha_all_shrink": th.alpha_all_shrink(Z[0], rho).value,
               "alpha_gd_like": th.alpha_gd_like(Z[0], rho).value}
    except TheorycheckError:
        return None
    try:
        out["alpha_collapse"] = AC.collapse_threshold(Z[0], rho, digits=8, max_seconds=30.0).value
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
    and the computed collapse threshold α_c(ρ) (:func:`collapse_threshold_per_rho`).
    Arrays: ``regime`` (R, A), ``alpha`` (A,), ``rho`` (R,), ``alpha_all_shrink`` (R,),
    ``alpha_gd_like`` (R,), ``alpha_c`` (R,), ``alpha_c_bracket`` (R, 2), ``collapse_time`` (R, A). ``bisect`` is
    accepted for compatibility and unused (α_c is ρ times the one α_c routine's value at ρ = 1)."""
    z = np.asarray(z, dtype=float).reshape(-1)
    alphas = np.asarray(alphas, float).reshape(-1)
    rhos = np.asarray(rhos, float).reshape(-1)
    if np.any(rhos <= 0):
        raise TheorycheckError("regime maps need ρ > 0 (ρ = 0 is GD: one regime)")
    aa, rr = np.meshgrid(alphas, rhos)  # (R, A)
    spec = SystemSpec("reduced", z, aa.ravel(), rr.ravel(), 2, SAM_L2.name, reduction=REDUCTION)
    opts = opts or RunOptions()
    res, how = run_spec(spec, times, opts=opts, backend=backend, workers=workers, scheduler=scheduler,
                        progress=progress, label="regime map")
    R, A = rr.shape
    regime = classify_regimes(res.obs["jdag"], res.status, z).reshape(R, A)
    shrink = np.array([th.alpha_all_shrink(z, r).value for r in rhos], dtype=float)
    gdlike = np.array([th.alpha_gd_like(z, r).value for r in rhos], dtype=float)
    ac = collapse_threshold_per_rho(z, rhos, progress=progress)  # its grid arguments are unused: not passed
    arrays = {"regime": regime, "alpha": alphas, "rho": rhos, "time": res.grid, "alpha_all_shrink": shrink,
              "alpha_gd_like": gdlike, "alpha_c": ac["alpha_c"], "alpha_c_bracket": ac["bracket"],
              "alpha_c_status": ac["status"], "collapse_time": res.events["collapse"].reshape(R, A),
              "status": res.status.reshape(R, A), "jdag": res.obs["jdag"].reshape(R, A, -1)}
    meta = {"kind": "regime_grid", "system": "reduced", "time_kind": TimeKind.RESCALED, "optimizer": SAM_L2.name, "depth": 2,
            "z": z, "run": how, "integrator": res.meta, "status_counts": status_counts(res.status),
            "regime_codes": {str(k): name for k, (name, _) in REGIMES.items()},
            "bisection": ac["meta"], "versions": versions(res.meta["array_backend"]), "seconds": res.seconds}
    return SweepResult(arrays, meta)


def collapse_threshold_per_rho(z, rhos, *, opts: RunOptions | None = None, iterations: int = 40,
                               tau_budget: float = 1e4, backend: str = "processes", workers: int | None = None, scheduler: Any = None,
                               progress: bool | None = None, digits: int = 13) -> dict:
    """α_c(ρ) for every ρ at once. α_c is exactly proportional to ρ (the flow's scaling
    symmetry), so this is ρ times the one α_c routine, :func:`theorycheck.proofs.minor_first.predict.alpha_c.collapse_threshold`
    at ρ = 1 (a floating-point check on both sides: each end reaches a persisting condition; ``digits`` significant digits). Returns {"alpha_c",
    "bracket" (R, 2: the lower end collapses, the upper end grows), "status" (R,)
    1 = both ends checked, 0 = inconclusive, "meta"}. ``opts``, ``iterations``, ``tau_budget``,
    ``backend``, ``workers``, ``scheduler`` are accepted for compatibility and unused."""
    z = np.asarray(z, float).reshape(-1)
    rhos = np.asarray(rhos, float).reshape(-1)
    if np.any(z <= 0) or np.all(z == z[0]):
        raise TheorycheckError("collapse threshold: z needs positive entries that are not all equal")
    if np.any(~np.isfinite(rhos)) or np.any(rhos <= 0):
        raise TheorycheckError("collapse threshold: every ρ must be finite and > 0")
    t = AC.collapse_threshold(z, 1.0, digits=digits, progress=progress)
    ok = t.value is not None
    if ok:
        lo, hi = (float(x) for x in t.check["bracket"])
        unit = t.value
    else:
        lo = hi = unit = float("nan")
    return {"alpha_c": rhos * unit, "bracket": np.stack([rhos * lo, rhos * hi], axis=1),
            "status": np.full(rhos.size, 1 if ok else 0, dtype=np.int8),
            "meta": {"method": "rho * alpha_c(z, 1) from predict.alpha_c.collapse_threshold", "digits": digits,
                     "alpha_c_unit_text": t.value_text, "note": t.note,
                     "persisting_conditions": "collapse: N < rho z_min; none: N >= rho z_max (THEORY.md C5)"}}

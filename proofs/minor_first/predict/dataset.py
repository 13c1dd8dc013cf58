"""The collapse threshold α_c(Z) of ℓ2-SAM for several examples (L = 2, balanced, uniform α).

For one example C5's conditions persist (N < ρ z_min: every rate stays negative; N ≥ ρ z_max:
every rate stays ≥ 0). For several examples the rate of coordinate j is
−Ĝ_j (1 − ρ G_j/S) (G = ∂Lo/∂β at the point, Ĝ at the perturbed point, S = ‖∇Lo‖): its sign
mixes two gradients whose examples' weights change with the margins, and no persisting
condition is known. So α_c(Z) is found by bisection in ln α on the outcome of full
integrations (:func:`theorycheck.solvers.integrate.solve`, real time): a side is "collapses"
when the integrator's collapse event fired (β → 0 in finite time), "trains" when at t_max
every margin is positive and the loss fell below half its initial value, and otherwise
undecided. The answer is reported with that evidence; its strength is a floating-point check
(:func:`theorycheck.strength.float_check`), and its note says that no persisting condition backs it.
"""

from __future__ import annotations

import math
import time

import numpy as np

from theorycheck.arith.decimals import common_digits
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.status import Fate
from theorycheck.strength import float_check, not_decided
from theorycheck.symbolic import forms as C


def _outcome(setting_kw: dict, alpha: float, t_max: float, seconds: float) -> dict:
    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve
    from theorycheck.solvers.trajectory import Budget

    s = Setting(setting_kw["X"], setting_kw["y"], depth=2, optimizer=SAM_L2, rho=setting_kw["rho"], alpha=alpha)
    tr = solve(s, t_max=t_max, budget=Budget(max_seconds=seconds))
    Z = s.Z
    out = {"alpha": alpha, "stopped_because": tr.stopped_because}
    if tr.collapse_time is not None:
        out.update(kind=Fate.COLLAPSE, collapse_time=float(tr.collapse_time))
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        beta = np.asarray(tr.sign_beta[-1], float) * np.exp(np.asarray(tr.log_abs_beta[-1], float))
        m = Z @ beta
    if not np.all(np.isfinite(m)):  # β beyond float64: every margin is huge and positive or the data say otherwise
        m = np.where(np.isfinite(m), m, np.sign(np.nan_to_num(m)) * np.inf)
    loss0 = mean_logistic_loss(Z @ C.predictor(2)(*np.full((2, Z.shape[1]), alpha)))  # β(0) = α·α
    loss = mean_logistic_loss(m)
    out.update(min_margin=float(m.min()), loss_ratio=loss / loss0 if loss0 > 0 else None, t_end=float(tr.t_end))
    out["kind"] = Fate.GROWTH if (m.min() > 0 and loss < 0.5 * loss0) else Fate.UNDECIDED
    return out


def mean_logistic_loss(m) -> float:
    """(1/n) Σ_i ℓ(m_i), ℓ(m) = log(1 + e^{−m}) (:func:`theorycheck.symbolic.model.loss_expr`, the
    logistic loss), as numpy's logaddexp(0, −m): exact at m = ±∞ too (ℓ(+∞) = 0, ℓ(−∞) = ∞), where
    the compiled overflow-free form gives nan. tests/test_one_definition.py compares the two."""
    return float(np.mean(np.logaddexp(0.0, -np.asarray(m, dtype=float))))


def dataset_collapse_threshold(X, y, rho: float, *, rel_tol: float = 1e-6, t_max: float = 1000.0,
                               max_seconds: float = 300.0, alpha_range: tuple[float, float] | None = None,
                               progress: bool | None = None) -> dict:
    """α_c(Z) for ℓ2-SAM, L = 2, several examples: a bracket [collapses, trains] found on a
    geometric scan of α and narrowed by bisection to ``rel_tol``; see the module docstring for
    what each side rests on (evidence from float64 integrations: a floating-point check). ``progress``: a bar on stderr (None:
    when stderr is a terminal) — the scan is the first half, the bisection the second."""
    from theorycheck.progress import Progress

    with Progress("alpha_c(Z): integrations", progress) as bar:
        return _dataset_collapse_threshold(X, y, rho, rel_tol, t_max, max_seconds, alpha_range, bar)


def _dataset_collapse_threshold(X, y, rho, rel_tol, t_max, max_seconds, alpha_range, bar) -> dict:
    if not (math.isfinite(rho) and rho > 0):
        raise TheorycheckError("the collapse threshold needs ρ > 0 (ρ = 0 is GD: no collapse)")
    kw = {"X": np.asarray(X, float), "y": np.asarray(y, float), "rho": float(rho)}
    t0 = time.perf_counter()

    def left():
        return max_seconds - (time.perf_counter() - t0)

    lo_a, hi_a = alpha_range or (1e-3 * rho, 1e2 * rho)
    scan = np.geomspace(lo_a, hi_a, 11)
    rows = []
    for i, a in enumerate(scan):
        if left() <= 0:
            break
        rows.append(_outcome(kw, float(a), t_max, max(1.0, min(30.0, left()))))
        bar.update(0.5 * (i + 1) / scan.size)
    evidence = {"scan": [{k: r.get(k) for k in ("alpha", "kind", "collapse_time", "min_margin", "loss_ratio")}
                         for r in rows]}
    lo = next((r for r in reversed(rows) if r["kind"] == Fate.COLLAPSE), None)
    hi = next((r for r in rows if r["kind"] == Fate.GROWTH and (lo is None or r["alpha"] > lo["alpha"])), None)
    # a fate that is not monotone in α on the scan (training below a collapse) is reported, not hidden
    evidence["monotone_on_scan"] = not any(
        r["kind"] == Fate.GROWTH and lo is not None and r["alpha"] < lo["alpha"] for r in rows)
    if lo is None or hi is None:
        note = (f"no bracket [collapses, trains] on the scan α ∈ [{lo_a:.3g}, {hi_a:.3g}]: "
                + ", ".join(f"{r['alpha']:.3g}: {r['kind']}" for r in rows))
        return {"value": None, "value_text": None, "closed_form": False, "expression": None,
                "note": note, "check": None, "evidence": evidence, "strength": not_decided(note).as_dict()}
    stopped = None
    width0 = math.log(max(hi["alpha"] / lo["alpha"] - 1, rel_tol * 1.0000001))
    while hi["alpha"] / lo["alpha"] - 1 > rel_tol:
        bar.update(0.5 + 0.5 * (width0 - math.log(hi["alpha"] / lo["alpha"] - 1)) / (width0 - math.log(rel_tol)))
        if left() <= 0:
            stopped = f"time budget {max_seconds:g} s"
            break
        mid = math.sqrt(lo["alpha"] * hi["alpha"])
        r = _outcome(kw, mid, t_max, max(1.0, min(30.0, left())))
        if r["kind"] == Fate.COLLAPSE:
            lo = r
        elif r["kind"] == Fate.GROWTH:
            hi = r
        else:
            stopped = f"undecided at α = {mid!r} ({r['stopped_because']})"
            break
    width = hi["alpha"] / lo["alpha"] - 1
    digits, text = common_digits(lo["alpha"], hi["alpha"], 17)
    evidence.update(collapses=lo, trains=hi, relative_width=width, stopped=stopped)
    return {"value": math.sqrt(lo["alpha"] * hi["alpha"]), "value_text": text, "closed_form": False,
            "expression": None,
            "note": (f"bracket [{lo['alpha']!r}, {hi['alpha']!r}] from full float64 integrations (a floating-point "
                     "check: for several examples no persisting condition is known): below, the collapse event fired; above, every margin "
                     "is positive and the loss fell below half its start by t_max"
                     + (f"; stopped early: {stopped}" if stopped else "")),
            "check": None, "evidence": evidence,
            "strength": float_check().as_dict()}

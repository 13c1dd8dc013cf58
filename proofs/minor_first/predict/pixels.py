"""Where an init scale α sits among ℓ2-SAM's regimes (C5) for a pixel data set Z, for the
doubled diagonal network of :mod:`theorycheck.batched.pixels` (β = u_+^L − u_−^L, uniform α).

- α_c(Z), the collapse threshold: as ``thresholds --data`` defines it (claims/dataset.py: a
  bracket [collapses, trains] from full integrations, a floating-point check — no persisting condition
  is known for several examples), computed with the batched flow over a geometric α scan and
  one refinement scan: a member *collapses* when the flow's collapse event fires or when its
  training loss is still ≥ 99 % of its start at τ_max (it stalls at β ≈ 0), *trains* when its
  training loss falls to half its start; otherwise it is undecided. On pixel data the doubled
  network's small-α members were seen to stall with β decaying slowly towards 0 rather than
  to reach 0 in finite time (the one-example collapse event of C5 did not fire on MNIST subsets).
- α_gd(Z), the start of the GD-like regime: the smallest α of a fine scan from which on
  ℓ2-SAM's initial fastest-growing pixel (the argmax of dθ/dt at t = 0, over both copies) is
  GD's. For one example this is C5's N0 ≥ ρ(z_(d) + z_(d−1)) (the top coordinate grows
  fastest from the start); here it is read off the compiled field, not a closed form.

Regimes of an α: 1 collapse (α ≤ α_c's lower end), 2 intermediate (α_c's upper end ≤ α < α_gd),
3 GD-like (α ≥ α_gd), None undecided (inside α_c's bracket).
"""

from __future__ import annotations

import math

import numpy as np

from theorycheck.batched.pixels import PixelFlow, device_ops, run_pixels
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import GD, SAM_L2
from theorycheck.strength import float_check

__all__ = ["REGIME_NAMES", "alpha_collapse", "initial_pixel", "pixel_alpha_gd_like", "regime_of"]

#: a member stalls when its training loss at τ_max is at least this fraction of its start
STALL_FRACTION = 0.99

REGIME_NAMES = {1: "collapse", 2: "intermediate", 3: "GD-like", None: "undecided"}


def initial_pixel(Z, alphas, rho: float, *, depth: int, optimizer: str = SAM_L2.name, ops=None) -> np.ndarray:
    """The pixel (1-based) whose copy grows fastest at t = 0 (argmax of the flow's dθ/dt, or
    du/dt for L = 1), for each α: j†(0+)."""
    alphas = np.asarray(alphas, float).reshape(-1)
    sysm = PixelFlow(Z, [optimizer] * alphas.size, alphas, rho, L=depth, ops=ops)
    o = sysm.ops
    _, y0 = sysm.initial()
    r = o.to_numpy(sysm.field(o.arange(sysm.B), y0))
    k = np.argmax(r, 1)
    return sysm.active[k % sysm.d] + 1


def pixel_alpha_gd_like(Z, rho: float, *, depth: int, lo: float, hi: float, points: int = 48, ops=None) -> dict:
    """α_gd(Z) on a geometric scan of ``points`` values in [lo, hi] (module docstring)."""
    grid = np.geomspace(lo, hi, points)
    js = initial_pixel(Z, grid, rho, depth=depth, ops=ops)
    jgd = int(initial_pixel(Z, grid[-1:], rho, depth=depth, optimizer=GD.name, ops=ops)[0])
    agree = js == jgd
    bad = np.flatnonzero(~agree)
    if agree.all():
        value = float(grid[0])
        note = f"ℓ2-SAM's initial pixel is GD's on the whole scan [{lo:.3g}, {hi:.3g}]: α_gd ≤ {lo:.3g}"
    elif bad[-1] == points - 1:
        value = None  # beyond the scan (JSON has no inf)
        note = f"ℓ2-SAM's initial pixel differs from GD's up to α = {hi:.3g}: α_gd > {hi:.3g} (value null)"
    else:
        value = float(grid[bad[-1] + 1])
        note = f"from α = {value:.4g} on (scan of {points} values) ℓ2-SAM's initial pixel is GD's ({jgd})"
    return {"value": value, "gd_pixel": jgd, "note": note, "scan": {"alpha": grid.tolist(), "pixel": js.tolist()}}


def _fates(Z, alphas, rho, depth, t_max, ops_kw, max_steps):
    from theorycheck.symbolic import forms as C

    loss0 = float(C.stable_loss_functions("logistic", "numpy")[0](0.0))
    grid = np.concatenate([[0.0], np.geomspace(1e-3 * t_max, t_max, 40)])  # the loss is checked there
    run = run_pixels(Z, [SAM_L2.name] * len(alphas), alphas, rho, depth=depth, time_kind="tau", grid=grid,
                     loss_target=0.5 * loss0, max_steps=max_steps, **ops_kw)
    out = []
    for b, a in enumerate(alphas):
        st = str(run.status[b])
        k = run.last(b)
        end = float(run.loss[b, k]) if k >= 0 else math.nan
        stalled = st == "done" and end >= STALL_FRACTION * loss0
        kind = "collapses" if (st == "collapse" or stalled) else "trains" if st == "loss_reached" else "undecided"
        out.append({"alpha": float(a), "kind": kind, "status": st, "t_stop": float(run.t_stop[b]), "loss_end": end})
    return out


def alpha_collapse(Z, rho: float, *, depth: int, lo: float, hi: float, points: int = 10, refine: int = 8,
                   t_max: float = 200.0, max_steps: int = 1500, array_backend: str = "numpy",
                   device: str | None = None) -> dict:
    """α_c(Z) as a bracket [collapses, trains] from two batched scans (module docstring); a floating-point check."""
    if not (rho > 0 and math.isfinite(rho)):
        raise TheorycheckError("the collapse threshold needs ρ > 0 (ρ = 0 is GD: no collapse)")
    device_ops(array_backend, device)  # validates
    kw = {"array_backend": array_backend, "device": device}
    rows = _fates(Z, np.geomspace(lo, hi, points), rho, depth, t_max, kw, max_steps)
    col = [r for r in rows if r["kind"] == "collapses"]
    low = col[-1] if col else None
    trains = [r for r in rows if r["kind"] == "trains" and (low is None or r["alpha"] > low["alpha"])]
    high = trains[0] if trains else None
    monotone = not any(r["kind"] == "trains" and low is not None and r["alpha"] < low["alpha"] for r in rows)
    if low is not None and high is not None and refine > 0:
        inner = np.geomspace(low["alpha"], high["alpha"], refine + 2)[1:-1]
        more = _fates(Z, inner, rho, depth, t_max, kw, max_steps)
        rows = sorted(rows + more, key=lambda r: r["alpha"])
        col = [r for r in rows if r["kind"] == "collapses" and r["alpha"] < high["alpha"]]
        low = col[-1] if col else low
        tr = [r for r in rows if r["kind"] == "trains" and r["alpha"] > low["alpha"]]
        high = tr[0] if tr else high
    out = {"bracket": None if low is None or high is None else [low["alpha"], high["alpha"]],
           "value": None if low is None or high is None else math.sqrt(low["alpha"]) * math.sqrt(high["alpha"]),
           "strength": float_check().as_dict(), "monotone_on_scan": monotone, "scan": rows,
           "note": ("bracket [collapses, trains] from batched integrations in rescaled time (a floating-point check: no "
                    "persisting condition is known for several examples); trains = the loss fell to half its start")}
    if out["bracket"] is None:
        out["note"] = (f"no bracket [collapses, trains] on α ∈ [{lo:.3g}, {hi:.3g}]: "
                       + ", ".join(f"{r['alpha']:.3g}: {r['kind']}" for r in rows))
    return out


def regime_of(alpha: float, ac: dict, agd: dict) -> int | None:
    """1 collapse, 2 intermediate, 3 GD-like, None undecided (module docstring)."""
    br = ac.get("bracket")
    if agd["value"] is not None and alpha >= agd["value"] and (br is None or alpha >= br[1]):
        return 3
    if br is None:
        return None
    if alpha <= br[0]:
        return 1
    if alpha >= br[1]:
        return 2
    return None

"""Grids of a sweep: output times, and what a row of j† visits."""

from __future__ import annotations

import math

import numpy as np

from theorycheck.errors import TheorycheckError

#: the most points a time axis or an α × time grid may have, and the most members (α or ρ
#: values) a sweep integrates at once: checked before allocating anything
MAX_GRID_POINTS = 20_000_000
MAX_MEMBERS = 1_000_000


def time_grid(t_max: float, nt: int, *, log: bool = False, t_min: float | None = None) -> np.ndarray:
    """``nt`` output times in (0, t_max]: linear ``t_max·k/nt`` (k = 1..nt), or geometric
    from ``t_min`` (default t_max·1e-4) with ``log``. τ = 0 is left out: j† is a tie there."""
    if not (math.isfinite(t_max) and t_max > 0) or nt < 1:
        raise TheorycheckError(f"time grid: need t_max > 0 (got {t_max}) and nt ≥ 1 (got {nt})")
    if nt > MAX_GRID_POINTS:
        raise TheorycheckError(f"time grid: nt = {nt} exceeds the limit of {MAX_GRID_POINTS} points")
    if t_min is not None and not (math.isfinite(t_min) and 0 < t_min and (t_min < t_max or nt == 1 and t_min == t_max)):
        raise TheorycheckError(f"time grid: need 0 < t_min < t_max (got t_min = {t_min}, t_max = {t_max}); "
                               "the grid lies in (0, t_max]")
    if log:
        lo = t_min if t_min is not None else t_max * 1e-4
        return np.geomspace(lo, t_max, nt) if nt > 1 else np.array([t_max])
    if nt == 1:
        return np.array([t_max])
    lo = t_min if t_min is not None else t_max / nt
    return np.linspace(lo, t_max, nt)


def visits(row: np.ndarray) -> list[int]:
    """The sequence of distinct consecutive j† values along a row (−1 cells skipped)."""
    seq: list[int] = []
    for v in np.asarray(row).tolist():
        if v == -1:
            continue
        if not seq or seq[-1] != v:
            seq.append(int(v))
    return seq

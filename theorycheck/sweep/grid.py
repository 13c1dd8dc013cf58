"""Grids of a sweep: output times, and what a row of j† visits."""

from __future__ import annotations

import math

import numpy as np

from theorycheck.errors import TheorycheckError


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


def visits(row: np.ndarray) -> list[int]:
    """The sequence of distinct consecutive j† values along a row (−1 cells skipped)."""
    seq: list[int] = []
    for v in np.asarray(row).tolist():
        if v == -1:
            continue
        if not seq or seq[-1] != v:
            seq.append(int(v))
    return seq

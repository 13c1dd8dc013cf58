"""Helpers shared by the experiments: switch times, formatting, sweep rows."""

from __future__ import annotations

import numpy as np


def switches(row: np.ndarray, times: np.ndarray) -> list[tuple[int, float]]:
    """(value, first time) for each run of equal j† along a row (−1 cells skipped)."""
    out: list[tuple[int, float]] = []
    for v, t in zip(np.asarray(row).tolist(), np.asarray(times).tolist()):
        if v == -1:
            continue
        if not out or out[-1][0] != v:
            out.append((int(v), float(t)))
    return out


def describe_row(row: np.ndarray, times: np.ndarray, time_name: str = "τ") -> str:
    """``1→2→…`` with the switch times, e.g. ``3→4 (τ = 0.81)→5 (τ = 1.2)``."""
    sw = switches(row, times)
    if not sw:
        return "not computed"
    parts = [str(sw[0][0])] + [f"{v} ({time_name} ≈ {t:.3g})" for v, t in sw[1:]]
    return "→".join(parts)


def nearest(values: np.ndarray, x: float) -> int:
    """Index of the entry of ``values`` closest to x (in log scale when all are positive)."""
    values = np.asarray(values, float)
    if np.all(values > 0) and x > 0:
        return int(np.argmin(np.abs(np.log(values) - np.log(x))))
    return int(np.argmin(np.abs(values - x)))


def fmt(x: float | None, digits: int = 4) -> str:
    if x is None or not np.isfinite(x):
        return "none"
    return f"{x:.{digits}g}"


def span(values, spec: str = ".4g", name: str = "α") -> str:
    """"α ∈ [0.32, 0.41]" for the range of ``values``, "α = 0.3207" when it is one value as
    printed (a single α, or equal ends at this precision)."""
    v = np.asarray(values, float).reshape(-1)
    lo, hi = format(float(v.min()), spec), format(float(v.max()), spec)
    return f"{name} = {lo}" if lo == hi else f"{name} ∈ [{lo}, {hi}]"

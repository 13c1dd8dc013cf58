"""Numerical observations used by the claims of proofs/ (integrate + observe, imported lazily
so that ``theorycheck prove`` stays purely symbolic)."""

from __future__ import annotations

import numpy as np


def solve(setting, t_max: float, **kw):
    from theorycheck.integrate import solve as _solve
    from theorycheck.trajectory import Budget

    kw.setdefault("budget", Budget(max_seconds=30.0))
    return _solve(setting, t_max=t_max, **kw)


#: coordinates within this (relative, in ln|β|) of the maximum count as tied for j†
TIE = 1e-9


def index_of(log_abs_beta: np.ndarray) -> int:
    """j† = argmax |β_j| (1-based), 0 when β = 0. Coordinates within TIE of the maximum of
    ln|β| are tied (equal z and α evolve identically up to rounding); the smallest index of a
    tie is returned, so rounding noise between tied coordinates is never a switch."""
    la = np.asarray(log_abs_beta, dtype=float)
    if not np.any(np.isfinite(la)):
        return 0
    m = la.max()
    return int(np.flatnonzero(la >= m - TIE * max(1.0, abs(m)))[0]) + 1


def direction(log_abs_beta: np.ndarray, sign_beta: np.ndarray) -> np.ndarray:
    """β/‖β‖ computed in log space (no overflow); zeros when β = 0."""
    la = np.asarray(log_abs_beta, dtype=float)
    if not np.any(np.isfinite(la)):
        return np.zeros_like(la)
    w = np.exp(la - la.max()) * np.asarray(sign_beta, dtype=float)
    return w / np.linalg.norm(w)


def index_at(tr, t: float) -> int:
    return index_of(tr.at(t)[0])


def switches(tr, *, xtol: float = 1e-12) -> list[tuple[float, int, int]]:
    """Every change of j† along the stored steps, each located by bisection on the dense
    output to ``xtol`` (relative): (time, from, to), 1-based."""
    t = np.asarray(tr.t, dtype=float)
    rows = np.asarray(tr.log_abs_beta, dtype=float)
    idx = [index_of(row) for row in rows]
    # a uniform start has every |β_j| equal: j† is undefined at τ = 0, so start after it
    start = 1 if rows.shape[0] > 1 and np.sum(rows[0] >= rows[0].max() - TIE * max(1.0, abs(rows[0].max()))) > 1 else 0
    out = []
    for k in range(start + 1, len(t)):
        if idx[k] == idx[k - 1] or t[k] <= t[k - 1]:
            continue
        a, b, ia = t[k - 1], t[k], idx[k - 1]
        while b - a > xtol * max(1.0, abs(b)):
            m = 0.5 * (a + b)
            if index_at(tr, m) == ia:
                a = m
            else:
                b = m
        out.append((0.5 * (a + b), ia, index_at(tr, b)))
    return out

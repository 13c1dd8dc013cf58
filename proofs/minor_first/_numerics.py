"""Numerical observations used by the claims of proofs/: thin wrappers over
:mod:`theorycheck.solvers.integrate` and :mod:`theorycheck.observe`, imported lazily so that
``theorycheck prove`` stays purely symbolic."""

from __future__ import annotations

import numpy as np

#: coordinates with |β_j| ≥ (1 − TIE)·max|β| count as tied for j† (observe.TIE_RTOL)
TIE = 1e-9


def solve(setting, t_max: float, **kw):
    """integrate.solve with a 30 s budget unless another is given."""
    from theorycheck.solvers.integrate import solve as _solve
    from theorycheck.solvers.trajectory import Budget

    kw.setdefault("budget", Budget(max_seconds=30.0))
    return _solve(setting, t_max=t_max, **kw)


def direction(log_abs_beta, sign_beta) -> np.ndarray:
    from theorycheck.observe import direction as _direction

    return _direction(log_abs_beta, sign_beta)


def index_at(tr, t: float) -> int:
    """j† at time t, ties (within TIE) resolved to the smallest index."""
    from theorycheck.observe import dominant_index

    return dominant_index(tr.at(t)[0], tie=TIE)


def switches(tr) -> list[tuple[float, int, int]]:
    """observe.switches as (time, from, to), in terms of feature *values*: a change between
    coordinates whose z agree to TIE (relative; float64 cannot order their θ over a run)
    is not a switch, and the final switch to 0 of a collapse is left out (collapse is
    reported separately)."""
    from theorycheck.observe import switches as _switches

    z = tr.setting.z if tr.setting.single else None
    out: list[tuple[float, int, int]] = []
    current = None
    for w in _switches(tr):
        if w.to == 0:
            continue
        if current is None:
            current = w.from_
        if z is not None and abs(z[w.to - 1] - z[current - 1]) <= TIE * np.max(np.abs(z)):
            continue
        out.append((w.time, current, w.to))
        current = w.to
    return out

"""Numerical observations used by the claims of proofs/: thin wrappers over
:mod:`theorycheck.solvers.integrate` and :mod:`theorycheck.observe`, imported lazily so that
``theorycheck prove`` stays purely symbolic."""

from __future__ import annotations

import math

import numpy as np

#: coordinates with |β_j| ≥ (1 − TIE)·max|β| count as tied for j† (observe.TIE_RTOL)
TIE = 1e-9

#: the claims' flows stop on steps and field evaluations, never on seconds, so that a verdict
#: cannot change with the host's load (it was 30 s). The flows of `verify --pack minor-first`
#: take at most ~2,200 steps and ~33,000 evaluations (1.5 s of CPU); these budgets are far above
#: that and end a run that goes astray within about a minute.
CLAIM_MAX_STEPS = 200_000
CLAIM_MAX_EVALUATIONS = 1_000_000


def claim_budget(**kw):
    """The claims' Budget: :data:`CLAIM_MAX_STEPS`, :data:`CLAIM_MAX_EVALUATIONS`, no seconds
    (keywords override)."""
    from theorycheck.solvers.trajectory import Budget

    return Budget(**{"max_steps": CLAIM_MAX_STEPS, "max_evaluations": CLAIM_MAX_EVALUATIONS,
                     "max_seconds": math.inf, **kw})


def solve(setting, t_max: float, **kw):
    """integrate.solve with the claims' step and evaluation budget unless another is given, and the pack's reduction
    of the flow (C4's scalar ODE, for ``method="reduced"``)."""
    from theorycheck.proofs.minor_first.reduced import REDUCTIONS

    from theorycheck.solvers.integrate import solve as _solve

    kw.setdefault("budget", claim_budget())
    kw.setdefault("reductions", REDUCTIONS)
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

"""Guards that keep one integration step bounded: the budget is checked inside every field
evaluation (a single scipy step may evaluate the field many times while it shrinks its
step), and the internal clock of a stepper is kept inside the float64 range.

:class:`FieldMeter` wraps a right-hand side; when a budget runs out during a step it
raises :class:`BudgetExhausted`, which :func:`theorycheck.solvers.integrate.solve` turns
into the trajectory's ``stopped_because`` (the step in progress is dropped; the stored
states are the accepted ones).
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable

import mpmath
import numpy as np

from theorycheck.status import BudgetExhausted

__all__ = ["BudgetExhausted", "FieldMeter", "MP_MAX_MAG", "check_mp_range", "time_scale_bounds", "scaled_norm"]

#: mpmath states: a component beyond 2^MP_MAX_MAG in magnitude is refused before the field is
#: evaluated. mpmath's exp, log and trigonometric functions of x reduce x by ln 2 or π at
#: about log2|x| extra bits, so their cost grows like (log2|x|)²: one evaluation at x = 2^(2^40)
#: would not end, and a budget checked between evaluations never gets its turn. At the
#: bound one exp costs ~0.1 s; legitimate states (log coordinates, or e^{zτ} at τ·z ≲ 2·10⁴ in
#: linear ones) stay far below it.
MP_MAX_MAG = 2**15


def check_mp_range(y) -> None:
    """Raise OverflowError when an mpf component of ``y`` is beyond 2^MP_MAX_MAG (see there):
    steppers treat it as a trial stage outside the field's domain (a smaller step), a run as
    a state that left the number range."""
    if not (isinstance(y, np.ndarray) and y.dtype == object):
        return
    for v in np.ravel(y):
        if isinstance(v, mpmath.mpf) and v and mpmath.isfinite(v) and mpmath.mag(v) > MP_MAX_MAG:
            raise OverflowError(f"a state component is beyond 2^{MP_MAX_MAG} in magnitude, where one mpmath "
                                "evaluation is no longer bounded")


class FieldMeter:
    """Counts field evaluations across the segments of one run and enforces the wall-clock
    deadline and the evaluation budget at each of them."""

    def __init__(self, *, max_seconds: float, max_evaluations: int, start: float | None = None):
        self.start = _time.monotonic() if start is None else start
        self.deadline = self.start + float(max_seconds)
        self.max_seconds = float(max_seconds)
        self.max_evaluations = int(max_evaluations)
        self.evaluations = 0

    def check(self) -> None:
        if self.evaluations >= self.max_evaluations:
            raise BudgetExhausted("max_evaluations", f"{self.evaluations} field evaluations (the budget)")
        if _time.monotonic() >= self.deadline:
            raise BudgetExhausted("max_seconds", f"{self.max_seconds:g} s (the budget) ran out inside a step")

    def wrap(self, rhs: Callable) -> Callable:
        """``rhs`` that checks the budget (and, on mpmath states, the magnitudes: see
    :func:`check_mp_range`) before each evaluation and counts it."""

        def guarded(t, y):
            self.check()
            check_mp_range(y)
            self.evaluations += 1
            return rhs(t, y)

        return guarded


def time_scale_bounds(span: float) -> tuple[float, float]:
    """Powers of two (lo, hi) that bound the internal time unit T of a float64 stepper
    that must cover ``span`` > 0: span/T stays finite and ≤ 2^996 (so its steps and
    bound are finite), and span/T ≥ 2^-60 unless span itself is below 2^-1014 (then
    T = the smallest float, and span/T ≥ 1 ulp of 1)."""
    e = math.frexp(span)[1]  # span in [2^(e-1), 2^e)
    lo = 2.0 ** max(-1074, min(1023, e - 996))
    hi = 2.0 ** max(-1074, min(1023, e + 60))
    return lo, hi


def scaled_norm(x, axis=None):
    """‖x‖₂ without underflow or overflow of the squares (np.linalg.norm of 1e-200 is 0):
    max|x| · ‖x / max|x|‖₂, 0 for x = 0."""
    a = np.abs(np.asarray(x, dtype=float))
    m = np.max(a, axis=axis, keepdims=True) if a.size else np.zeros(())
    safe = np.where(m > 0, m, 1.0)
    out = np.where(m > 0, m * np.sqrt(np.sum((a / safe) ** 2, axis=axis, keepdims=True)), 0.0)
    return out.reshape(()) if axis is None else np.squeeze(out, axis=axis)

"""Guards that keep one integration step bounded: the budget is checked inside every field
evaluation (a single scipy step may evaluate the field many times while it shrinks its
step), and the internal clock of a stepper is kept inside the float64 range.

:class:`FieldBudget` wraps a right-hand side; when a budget runs out during a step it
raises :class:`BudgetExhausted`, which :func:`theorycheck.solvers.integrate.solve` turns
into the trajectory's ``stopped_because`` (the step in progress is dropped; the stored
states are the accepted ones).
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable

import numpy as np

from theorycheck.status import BudgetExhausted

__all__ = ["BudgetExhausted", "FieldBudget", "time_scale_bounds", "scaled_norm"]


class FieldBudget:
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
        """``rhs`` that checks the budget before each evaluation and counts it."""

        def guarded(t, y):
            self.check()
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

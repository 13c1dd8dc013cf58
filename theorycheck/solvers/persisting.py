"""A run stepped one step at a time until a persisting condition holds: the loop of a fate test.

A theory's fate lemmas say that once a condition holds it holds for ever (every r_j > 1: collapse); a run then
needs no end time, only a check after every step. :func:`step_to_condition` steps a stepper: a scipy
``OdeSolver`` (DOP853, as the caller built it) or any object with its ``step()``, ``t``, ``y`` and ``status``
("running", "finished", "failed"; a pack's own method, such as a Taylor series method in mpmath), checks the condition after every accepted step and stops at the first that
holds, or when the solver fails, the horizon ``t_bound`` is reached or the step budget runs out, saying which.
A field that leaves float64 should raise from the right-hand side (scipy's step control loops for ever on a
NaN field); the caller turns that into its own undecided answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Stepped", "step_to_condition"]


@dataclass(frozen=True)
class Stepped:
    """How a stepped run ended: ``outcome`` (what the condition returned; None when none held), the time ``t`` it
    first held (None otherwise), the ``steps`` taken, and ``why`` (the condition's reason, or the failure, the
    horizon or the budget that ended the run)."""

    outcome: Any
    t: float | None
    steps: int
    why: str


def step_to_condition(solver, condition: Callable[[float, np.ndarray], tuple[Any, str] | None], *,
                      max_steps: int, clock: str, horizon_why: str,
                      restart: Callable[[Any], Any] | None = None) -> Stepped:
    """Step ``solver`` (a scipy ``OdeSolver``, or a stepper with its ``step()``, ``t``, ``y``, ``status``) one step
    at a time. After every step: a failed step ends the run;
    ``restart(solver)`` may hand back a new solver to go on from (a projection back onto an invariant set; None
    to keep stepping this one), and is asked only while the solver is running; ``condition(t, y)`` returns
    ``(outcome, why)`` when a persisting condition holds there, which ends the run; at the horizon the run ends
    with ``horizon_why``. After ``max_steps`` steps the budget has run out (``clock`` names the time variable in
    that message)."""
    steps = 0
    while steps < max_steps:
        msg = solver.step()
        steps += 1
        if solver.status == "failed":
            return Stepped(None, None, steps, f"integration failed: {msg}")
        if restart is not None and solver.status == "running":
            solver = restart(solver) or solver
        held = condition(float(solver.t), solver.y)
        if held is not None:
            return Stepped(held[0], float(solver.t), steps, held[1])
        if solver.status == "finished":
            return Stepped(None, None, steps, horizon_why)
    return Stepped(None, None, steps, f"step budget of {max_steps} steps ran out at {clock} = {solver.t:.6g}")

"""The engine's loop of a fate test (solvers/persisting.step_to_condition): it stops at the first step where the
condition holds, and otherwise says which of the failure, the horizon and the step budget ended the run."""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import DOP853

from theorycheck.solvers.persisting import step_to_condition


def _growth(t_bound=10.0):
    return DOP853(lambda t, y: y, 0.0, np.array([1.0]), t_bound, rtol=1e-10, atol=1e-12)  # y = e^t


def _above(level):
    return lambda t, y: ("above", f"y > {level}") if y[0] > level else None


def test_it_stops_at_the_first_step_where_the_condition_holds():
    run = step_to_condition(_growth(), _above(5.0), max_steps=1000, clock="t", horizon_why="horizon")
    assert run.outcome == "above" and run.why == "y > 5.0" and run.t is not None
    assert math.exp(run.t) > 5.0  # the condition holds at the step where the run stopped ...
    again = _growth()
    for _ in range(run.steps - 1):
        again.step()
    assert not math.exp(again.t) > 5.0  # ... and not at the step before


def test_the_horizon_and_the_budget_say_which_ended_the_run():
    run = step_to_condition(_growth(1.0), _above(1e9), max_steps=1000, clock="t", horizon_why="reached t = 1")
    assert (run.outcome, run.t, run.why) == (None, None, "reached t = 1")
    run = step_to_condition(_growth(), _above(1e9), max_steps=3, clock="ς", horizon_why="horizon")
    assert run.outcome is None and run.steps == 3 and run.why.startswith("step budget of 3 steps ran out at ς = ")


def test_a_restart_hands_over_the_solver_it_goes_on_with():
    handed = []

    def halve(sol):  # a projection: y → y/2 whenever y > 2, going on from there
        if sol.y[0] <= 2.0:
            return None
        handed.append(sol.t)
        return DOP853(sol.fun, sol.t, sol.y / 2.0, sol.t_bound, rtol=1e-10, atol=1e-12)

    run = step_to_condition(_growth(3.0), _above(1e9), max_steps=10_000, clock="t", horizon_why="horizon",
                            restart=halve)
    assert run.why == "horizon" and handed  # the projected run never reaches 1e9 by t = 3

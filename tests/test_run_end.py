"""Every float run of the engine says how it ended by the same names (:class:`theorycheck.status.RunEnd`:
``status``, ``message``, ``ok``, ``evaluations``; a batch, :class:`~theorycheck.status.BatchRunEnd`: ``status`` per
member, ``status_counts()``, ``ok``), and the names agree with each run's own: ``ok`` is its status's flag."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorycheck.status import BatchRunEnd, Budget, RunEnd, Status


def _trajectory():
    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve

    return solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.5), t_max=5.0)


def _field_run():
    from theorycheck.solvers.field import Field, solve_field

    return solve_field(Field(lambda t, y: -y, np.array([1.0])), t_max=1.0)


def _regression(budget=None):
    from theorycheck.optimizers import GD
    from theorycheck.solvers.pm_flow import DEFAULT_BUDGET, flow_pm

    X, y = np.array([[1.0, 0.5, -0.2], [0.3, -1.0, 0.8]]), np.array([1.0, -0.5])
    return flow_pm(X, y, optimizer=GD, depth=2, alpha=0.5, budget=budget or DEFAULT_BUDGET.but(max_seconds=math.inf))


def _margin(budget=None):
    from theorycheck.solvers.lp_flow import DEFAULT_BUDGET, flow_margin

    return flow_margin(np.array([[1.0, 0.5], [0.3, 1.0]]), depth=2, checkpoints=(2.0, 4.0),
                       budget=budget or DEFAULT_BUDGET.but(max_seconds=math.inf))


RUNS = {"trajectory": _trajectory, "field": _field_run, "regression": _regression, "margin": _margin}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_run_answers_how_it_ended_by_the_same_names(name):
    run = RUNS[name]()
    assert isinstance(run, RunEnd)
    assert isinstance(run.status, Status) and isinstance(run.message, str) and run.message
    assert run.ok is bool(Status(run.status).ok) and run.ok
    assert isinstance(run.evaluations, int) and run.evaluations > 0


def test_a_run_cut_by_its_budget_is_not_ok_under_either_name():
    r = _regression(Budget(max_steps=10**9, max_evaluations=20, max_seconds=math.inf))
    assert r.status is Status.MAX_EVALUATIONS and not r.ok and not r.converged
    m = _margin(Budget(max_evaluations=30, max_seconds=math.inf))
    assert m.status is Status.MAX_EVALUATIONS and not m.ok


def test_a_batch_answers_per_member_and_in_all():
    from theorycheck.proofs.minor_first.reduced.batch import ReducedL2

    from theorycheck.batched.engine import integrate

    z = np.array([1.0, 2.0, 3.0])
    system = ReducedL2(z, np.array([0.3, 0.5]), np.array([1.0, 1.0]))
    res = integrate(system, np.array([0.0, 1.0, 2.0]))
    assert isinstance(res, BatchRunEnd) and res.ok
    assert sum(res.status_counts().values()) == 2
    cut = integrate(system, np.array([0.0, 50.0]), max_steps=2)
    assert not cut.ok and "max_steps" in cut.status_counts()


def test_the_pixel_runs_answer_the_same():
    from theorycheck.batched.pixels import run_pixels

    Z = np.array([[0.2, 0.0, 0.7], [0.5, 0.1, 0.0]]) * np.array([[1.0], [-1.0]])
    run = run_pixels(Z, ["gd"], [0.5], [0.0], depth=2, time_kind="t", grid=np.array([0.0, 1.0]))
    assert isinstance(run, BatchRunEnd) and run.ok and run.status_counts() == {str(run.status[0]): 1}

"""One status vocabulary for trajectories, discrete runs and batched members."""

import json
import math

import numpy as np
import pytest

from theorycheck import status as S
from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting
from theorycheck.solvers import discrete
from theorycheck.solvers.integrate import solve
from theorycheck.solvers.trajectory import Budget, Trajectory
from theorycheck.status import Status


def test_words_messages_and_codes():
    words = [s.value for s in Status]
    assert len(set(words)) == len(words)
    assert all(s.message and "\n" not in s.message for s in Status)
    # the batched codes saved in sweep files keep their numbers
    assert {c: s.value for c, s in S.STATUS.items()} == {
        0: "running", 1: "done", 2: "collapse", 3: "blowup", 4: "no-collapse", 5: "max_steps",
        6: "step_size_underflow", 7: "non_finite", 8: "sign_change", 9: "critical_point", 10: "loss_reached",
        11: "chattering"}
    assert (S.DONE, S.COLLAPSE, S.NO_COLLAPSE, S.NON_FINITE) == (1, 2, 4, 7)
    assert S.FINISHED_OK == (1, 2, 3, 4, 9, 10)
    assert Status.from_code(np.int8(6)) is Status.STEP_SIZE_UNDERFLOW
    with pytest.raises(ValueError):
        Status.from_code(99)
    # a member is its word: equal to it, printed and serialised as it
    assert Status.T_MAX == "t_max" and f"{Status.NO_COLLAPSE}" == "no-collapse"
    assert json.dumps({Status.DONE: Status.NON_FINITE}) == '{"done": "non_finite"}'
    assert str({Status.DONE: 2}) == "{'done': 2}" and Status("no-collapse") is Status.NO_COLLAPSE
    assert [s.value for s in Status if s.ok] == ["t_max", "collapse", "blowup", "stationary", "critical_point",
                                                 "proved_event", "steps", "norm_reached", "loss_reached", "done",
                                                 "no-collapse", "converged", "reached"]


def test_trajectory_and_discrete_runs_use_the_vocabulary():
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.5)
    tr = solve(s, t_max=2.0)
    assert tr.stopped_because is Status.T_MAX and tr.message == "reached the requested final time"
    tr = solve(s, t_max=1e4, budget=Budget(max_steps=3))
    assert tr.stopped_because is Status.MAX_STEPS and tr.message == Status.MAX_STEPS.message
    d = discrete.run(s, eta=0.1, steps=5)
    assert d.stopped_because is Status.STEPS and d.message == "ran the requested number of steps"
    # exponential loss at margin −2700: ℓ' = −e^{2700} overflows at the first step
    big = Setting.from_z([-1.0, -2.0], optimizer="gd", rho=0.0, alpha=30.0, depth=2, loss="exponential")
    d = discrete.run(big, eta=0.1, steps=5)
    assert d.stopped_because is Status.NON_FINITE and d.message == "the next iterate overflowed (the record ends at the last finite one)"


def test_unknown_stop_reason_is_refused():
    with pytest.raises(TheorycheckError, match="unknown stop reason"):
        Trajectory(setting=None, time_kind="rescaled", method="scipy", digits=None, t=np.zeros(1),
                   log_abs_beta=np.zeros((1, 1)), sign_beta=np.ones((1, 1)), stopped_because="nonfinite", t_max=1.0)


def test_every_vocabulary_is_a_string_enum_that_serialises_to_its_word():
    """Verdict (claims), StepStatus (proof steps), Fate (the collapse question), TimeKind and
    Status: a member prints and serialises to JSON as its word."""
    import json

    from theorycheck.claims.claim import Verdict
    from theorycheck.jsonio import dumps
    from theorycheck.status import Fate
    from theorycheck.symbolic.theorem import StepStatus
    from theorycheck.vocabulary import REGIMES, TimeKind

    for enum, words in ((Verdict, ["proved", "holds", "fails", "inconclusive", "error"]),
                        (StepStatus, ["verified", "verified-numerically", "incomplete", "refuted", "error"]),
                        (Fate, ["collapse", "growth", "undecided"]), (TimeKind, ["rescaled", "real"])):
        assert [m.value for m in enum] == words
        assert json.loads(dumps({"x": list(enum)}))["x"] == words
        assert all(f"{m}" == m.value for m in enum)
    assert [Fate.COLLAPSE.collapses, Fate.GROWTH.collapses, Fate.UNDECIDED.collapses] == [True, False, None]
    assert not Verdict.FAILS.ok and not Verdict.ERROR.ok and Verdict.INCONCLUSIVE.ok
    assert sorted(REGIMES) == [0, 1, 2, 3]


def test_convergent_solvers_report_a_status_and_raise_one_budget_exception():
    """pm_flow, lp_flow and interpolate answer with a Status member (and a message); every
    budget that runs out is the one BudgetExhausted, a TheorycheckError naming its Status."""
    from theorycheck.errors import TheorycheckError
    from theorycheck.optimizers import GD
    from theorycheck.solvers import guards, trajectory
    from theorycheck.solvers.interpolate import argmin_Q
    from theorycheck.solvers.lp_flow import DEFAULT_BUDGET as LP_BUDGET
    from theorycheck.solvers.lp_flow import flow_margin
    from theorycheck.solvers.pm_flow import DEFAULT_BUDGET as PM_BUDGET
    from theorycheck.solvers.pm_flow import flow_pm
    from theorycheck.status import Budget, BudgetExhausted, Status

    assert guards.BudgetExhausted is BudgetExhausted and trajectory.Budget is Budget
    e = BudgetExhausted(Status.MAX_SECONDS, "2 s")
    assert isinstance(e, TheorycheckError) and e.status is Status.MAX_SECONDS and e.reason is e.status
    X, y = np.array([[1.0, 2.0, 0.5]]), np.array([1.0])
    r = flow_pm(X, y, optimizer=GD, depth=2, alpha=0.5, budget=PM_BUDGET.but(max_evaluations=20))
    assert r.status is Status.MAX_EVALUATIONS and r.as_dict()["status"] == "max_evaluations"
    assert r.as_dict()["message"] == "max_evaluations (20)"
    assert flow_pm(X, y, optimizer=GD, depth=2, alpha=0.5, budget=PM_BUDGET.but(max_seconds=math.inf)).status is Status.CONVERGED
    q = argmin_Q(X, y, depth=2, alpha=0.5)
    assert q.status is Status.CONVERGED
    f = flow_margin(np.array([[1.0, 0.5], [0.3, 1.0]]), depth=2, budget=LP_BUDGET.but(max_evaluations=30))
    assert f.status is Status.MAX_EVALUATIONS and f.message == "max_evaluations (30)"

"""One status vocabulary for trajectories, discrete runs and batched members."""

import json

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
        6: "step_size_underflow", 7: "non_finite", 8: "sign_change", 9: "critical_point"}
    assert (S.DONE, S.COLLAPSE, S.NO_COLLAPSE, S.NON_FINITE) == (1, 2, 4, 7)
    assert S.FINISHED_OK == (1, 2, 3, 4, 9)
    assert Status.from_code(np.int8(6)) is Status.STEP_SIZE_UNDERFLOW
    with pytest.raises(ValueError):
        Status.from_code(99)
    # a member is its word: equal to it, printed and serialised as it
    assert Status.T_MAX == "t_max" and f"{Status.NO_COLLAPSE}" == "no-collapse"
    assert json.dumps({Status.DONE: Status.NON_FINITE}) == '{"done": "non_finite"}'
    assert str({Status.DONE: 2}) == "{'done': 2}" and Status("no-collapse") is Status.NO_COLLAPSE
    assert [s.value for s in Status if s.ok] == ["t_max", "collapse", "blowup", "stationary", "critical_point",
                                                 "steps", "norm_reached", "done", "no-collapse"]


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
        Trajectory(setting=None, time_kind="rescaled", method="scipy", precision=None, t=np.zeros(1),
                   log_abs_beta=np.zeros((1, 1)), sign_beta=np.ones((1, 1)), stopped_because="nonfinite", t_max=1.0)

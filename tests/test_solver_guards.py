"""Regressions: the float64 and mpmath integrators terminate inside their budgets and turn
numerical trouble into a stated ``stopped_because``, at extreme scales and final times."""

import functools
import math

import mpmath
import numpy as np
import pytest
from _hang import hang_guard
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck import observe as ob
from theorycheck.setting import Setting
from theorycheck.solvers.guards import BudgetExhausted, FieldMeter, time_scale_bounds
from theorycheck.solvers.integrate import solve as _solve
from theorycheck.solvers.steppers import GBSStepper
from theorycheck.solvers.trajectory import Budget
from theorycheck.status import Status

#: solve with the first paper's reduction of the flow at hand (method="reduced"), as the API's has it
solve = functools.partial(_solve, reductions=REDUCTIONS)


def test_field_budget_counts_and_raises_inside_a_step():
    fb = FieldMeter(max_seconds=1e9, max_evaluations=3)
    f = fb.wrap(lambda t, y: y)
    for _ in range(3):
        f(0.0, 1.0)
    with pytest.raises(BudgetExhausted) as e:
        f(0.0, 1.0)
    assert e.value.reason == "max_evaluations" and fb.evaluations == 3
    fb = FieldMeter(max_seconds=0.0, max_evaluations=10)
    with pytest.raises(BudgetExhausted) as e:
        fb.wrap(lambda t, y: y)(0.0, 1.0)
    assert e.value.reason == "max_seconds"


@pytest.mark.parametrize("span", [5e-324, 1e-300, 1.0, 1e300, 1.7e308])
def test_time_scale_bounds_keep_the_segment_finite_and_nonzero(span):
    lo, hi = time_scale_bounds(span)
    assert 0 < lo <= hi < math.inf
    for T in (lo, hi):
        assert 0 < span / T < math.inf and span / T <= 2.0 ** 996


def test_evaluation_budget_is_enforced_inside_the_first_step():
    """DOP853 needs 12 evaluations per step: a budget of 5 stops inside the first one."""
    tr = solve(Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=1.0), t_max=50.0,
               budget=Budget(max_evaluations=5))
    assert tr.stopped_because == "max_evaluations" and tr.n_steps == 0
    assert tr.n_evaluations == 5 and len(tr.t) == 1


@pytest.mark.parametrize("optimizer,rho", [("sam-l2", 0.5), ("gd", 0.0), ("sam-linf", 1.0)])
def test_a_field_beyond_float64_at_the_start_ends_the_run_at_once(optimizer, rho):
    """L = 7, α = 1e200: the log-coordinate field e^{5·ln α}·… is inf at τ = 0. Was: DOP853 rejected
    ~460 trial steps (5486 evaluations, a second of work) shrinking h to the subnormal spacing of
    t = 0, so a seconds budget decided between step_size_underflow and max_seconds by the host's load."""
    z = [0.1, 5.08, 8.06, 3.47, 3.47, 6.98]
    s = Setting.from_z(z, depth=7, optimizer=optimizer, rho=rho, alpha=1e200)
    runs = [solve(s, t_max=20.0, budget=b) for b in (Budget(), Budget(max_seconds=1e9, max_evaluations=10))]
    for tr in runs:
        assert tr.stopped_because == "non_finite" and "not finite at t = 0" in tr.message
        assert tr.n_steps == 0 and tr.n_evaluations <= 3 and list(tr.t) == [0.0]
    assert np.array_equal(runs[0].log_abs_beta, runs[1].log_abs_beta)


def test_reduced_ode_to_t_max_1e300_terminates_and_is_right():
    """Was: the internal clock t/T overflowed to inf and one scipy step looped forever."""
    with hang_guard(60):
        tr = solve(Setting.from_z([1.0, 2.0], optimizer="sam-l2", rho=1.0, alpha=2.0), t_max=1e300,
                   method="reduced", budget=Budget(max_steps=20_000, max_seconds=math.inf))
    assert tr.stopped_because in ("t_max", "max_seconds", "max_steps")
    assert np.all(np.isfinite(tr.t)) and ob.final_index(tr) == 2


def test_subnormal_t_max_is_reached_in_float64_and_mpmath():
    """Was: scipy's "first_step must be positive" (real time, several examples)."""
    s = Setting([[1.0, 2.0], [2.0, 1.0]], optimizer="gd", alpha=2.0)
    for kw in ({}, {"digits": 20}):
        tr = solve(s, t_max=5e-324, **kw)
        assert tr.stopped_because == "t_max" and tr.t_end == 5e-324
        np.testing.assert_array_equal(tr.log_abs_beta[-1], tr.log_abs_beta[0])


@pytest.mark.parametrize("method", ["auto", "reduced"])
@pytest.mark.parametrize("c", [1e-300, 1e-100, 1e100, 1e300])
def test_l2_collapse_at_extreme_scales(c, method):
    """ℓ2-SAM, L = 2 is invariant under (α, ρ) → (cα, cρ): the collapse time of (0.3, 1)
    holds at every scale, or the run says why it could not follow (never a traceback;
    was: "Attempt to step on a failed or finished solver" at c = 1e-300)."""
    ref = solve(Setting.from_z([1.0, 2.0], optimizer="sam-l2", rho=1.0, alpha=0.3), t_max=50.0, method=method)
    tr = solve(Setting.from_z([1.0, 2.0], optimizer="sam-l2", rho=c, alpha=0.3 * c), t_max=50.0, method=method,
               budget=Budget(max_seconds=math.inf))
    assert ref.stopped_because == "collapse"
    if method == "reduced" or c >= 1e-100:
        assert tr.stopped_because == "collapse"
        assert tr.collapse_time == pytest.approx(ref.collapse_time, rel=1e-9)
    else:  # the compiled balanced field forms ρ/N, which overflows below N ≈ 1e-308
        assert tr.stopped_because in set(Status) and tr.stopped_because != "t_max"
        assert tr.message


@pytest.mark.parametrize("optimizer", ["gd", "sam-l2", "sam-linf"])
def test_event_root_near_zero_time_does_not_raise(optimizer):
    """Was: brentq "failed to converge" (an event root at t ≈ 1e-146, 200 bisections)."""
    s = Setting.from_z(np.array([1.0, 2.0]) * 1e146, optimizer=optimizer, rho=1.0, depth=1, alpha=1e-300)
    tr = solve(s, t_max=50.0)
    assert tr.stopped_because in set(Status) and tr.message
    np.testing.assert_allclose(ob.final_direction(tr), np.array([1.0, 2.0]) / math.sqrt(5), rtol=1e-12)


def test_mpmath_trial_stage_overflow_is_a_rejected_step():
    """Was: an OverflowError inside a GBS trial stage (mpmath's exp of a huge argument)
    ended the run as non_finite; now the step is rejected and retried smaller."""
    calls = [0]

    def rhs(t, y):
        calls[0] += 1
        if calls[0] == 2:  # the first trial stage of the first step
            raise OverflowError("too many digits in integer")
        return y * 1

    with mpmath.workdps(30):
        y0 = np.array([mpmath.mpf(1)], dtype=object)
        st = GBSStepper(rhs, mpmath.mpf(0), y0, mpmath.mpf(1), mpmath.mpf(10) ** -20, np.array([mpmath.mpf(10) ** -20],
                        dtype=object), 8)
        while st.t < 1:
            st.step()
        assert abs(st.y[0] - mpmath.e) < mpmath.mpf(10) ** -18


def test_an_evaluation_budget_ending_anywhere_is_a_status():
    """Found by the fuzzer: DOP853's dense output evaluates the field three more times after
    the step, outside the guarded call; a budget that ran out there escaped as an exception."""
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="sam-l2", rho=1.0, alpha=0.5)
    for n in range(1, 60):
        tr = solve(s, t_max=5.0, budget=Budget(max_evaluations=n))
        assert tr.stopped_because in (Status.MAX_EVALUATIONS, Status.T_MAX)
        ob.summary(tr)


def test_mpmath_dense_output_does_not_carry_the_budget():
    """The dense output re-integrates a step when observed, after the run: with the guarded
    field, observing a run that used up its evaluations raised from observe.summary."""
    s = Setting.from_z([1.0, 2.0, 3.0], optimizer="gd", alpha=[1.0, 0.3, 0.05])
    tr = solve(s, t_max=20.0, digits=20, budget=Budget(max_evaluations=90))  # the run needs 111
    assert tr.stopped_because == Status.MAX_EVALUATIONS and len(tr.t) >= 2
    sw = ob.switches(tr)  # root finding on the dense output
    assert [(w.from_, w.to) for w in sw][:1] in ([], [(1, 2)])
    tr.at(0.5 * (tr.t[0] + tr.t[1]))  # re-integrates part of the first step

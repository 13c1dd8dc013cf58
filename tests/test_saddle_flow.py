"""The log-chart flow at tiny α (solvers/log_flow) against independent computations: the symbolic chart,
the scalar flow's integral (n = 1; an orthogonal design, where coordinates decouple), the jump process's
times by extrapolation in 1/ln(1/α), an mpmath run at α = 1e-2048, and budgets that run out."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process
from theorycheck.proofs.saddle_to_saddle.flows import first_gap_constant, fit_rate, midpoints, sweep

from theorycheck.errors import ArgumentError
from theorycheck.solvers.log_flow import log_flow, log_scale
from theorycheck.status import Budget, Status
from theorycheck.symbolic import accelerated as ac
from theorycheck.symbolic import regression as rg

LEAVES = [["0", "0", "-1"], ["-1", "-3", "1"]], ["3", "-2"]
FREE = Budget(max_steps=20_000, max_evaluations=400_000, max_seconds=math.inf)


def test_chart_is_the_solved_flow():
    assert ac.solution_check() == 0
    assert sp.simplify(ac.accelerated_field() + 2 * rg.g) == 0
    # β(s; λ) = −2α² sinh(4G) at α = e^{−λ}, G = −λs/2 (numerically at a few points, 40 digits)
    ref = -2 * rg.alpha**2 * sp.sinh(4 * rg.G)
    for sv, lv in ((sp.Rational(3, 10), 2), (sp.Rational(-9, 10), 5), (sp.Rational(101, 100), 7)):
        a = ac.accelerated_beta().subs({ac.s: sv, ac.lam: lv}).evalf(40)
        b = ref.subs({rg.alpha: sp.exp(-lv), rg.G: -lv * sv / 2}).evalf(40)
        assert abs(a - b) <= 1e-30 * (1 + abs(b))


def _scalar_time(a, b, alpha_text, B, dps=40):
    """t̃ at which the scalar flow dβ/dt = −4√(β² + 4α⁴)(aβ − b) reaches B (quadrature, independent of the flow)."""
    with mpmath.workdps(dps):
        al = mpmath.mpf(alpha_text)
        lam = -mpmath.log(al)
        a, b, B = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(B)
        # β = 2α² sinh u: dβ/√(β² + 4α⁴) = du, a smooth integrand on [0, asinh(B/(2α²))]
        U = mpmath.asinh(B / (2 * al**2))
        t = mpmath.quad(lambda u: 1 / (4 * (b - a * 2 * al**2 * mpmath.sinh(u))), mpmath.linspace(0, U, 9))
        return float(t / lam)


def test_n1_one_coordinate_against_the_scalar_integral():
    X, y = [["1.5"]], ["2"]  # a = 9/4, b = 3, β* = 4/3
    for alpha in ("1e-4", "1e-10", "1e-30"):
        run = log_flow(X, y, alpha, t_max=1.0, budget=FREE)
        assert run.status == Status.T_MAX
        u = 1 - 1 / math.sqrt(2)
        t_flow = run.first_below(float(midpoints(jump_process(X, y))[0]))
        assert t_flow == pytest.approx(_scalar_time(2.25, 3, alpha, u * 4 / 3), abs=1e-8)


def test_orthogonal_design_decouples():
    X, y = [["2", "0"], ["0", "1"]], ["1", "-3"]  # a = (2, 1/2), b = (1, −3/2), β* = (1/2, −3)
    run = log_flow(X, y, "1e-20", t_max=1.5, budget=FREE)
    for j, (a, b) in enumerate(((2.0, 1.0), (0.5, -1.5))):
        bs = b / a
        for frac in (0.1, 0.5, 0.9):
            # sign: for b < 0 the flow of −β is the flow of (a, −b)
            t = _scalar_time(a, abs(b), "1e-20", frac * abs(bs))
            assert run.beta_at(t)[j] == pytest.approx(frac * bs, rel=1e-6)


def test_extrapolated_jump_times_are_the_algorithms():
    """A coordinate that enters, leaves and re-enters: the observed times, extrapolated in 1/ln(1/α), are t̃_k."""
    s = sweep(*LEAVES)
    p = s["process"]
    assert [j.left for j in p.jumps] == [(), (1,), ()]
    for k, j in enumerate(p.jumps):
        ok = [(r["lam"], r["observed"][k]) for r in s["rows"][1:]]
        f = fit_rate(*zip(*ok))
        assert f["a"] == pytest.approx(float(j.time), abs=1e-5)
    c = first_gap_constant(p)
    assert s["rows"][-1]["scaled_gaps"][0] == pytest.approx(c, abs=1e-6)


def test_alpha_2048_with_digits_agrees():
    X, y = LEAVES
    p = jump_process(X, y)
    lv = midpoints(p)[0]
    mp = log_flow(X, y, "1e-2048", t_max=0.5, digits=30, stop_loss=lv,
                  budget=Budget(max_steps=2_000, max_evaluations=500_000, max_seconds=math.inf))
    assert mp.status == Status.CONVERGED and mp.digits == 30
    fl = log_flow(X, y, "1e-2048", t_max=0.5, budget=FREE)
    lam = float(log_scale("1e-2048")[0])
    assert lam == pytest.approx(2048 * math.log(10), rel=1e-15)
    t_mp = float(mp.run.t_exact)
    assert t_mp == pytest.approx(fl.first_below(float(lv)), abs=1e-9)
    assert (t_mp - float(p.jumps[0].time)) * lam == pytest.approx(first_gap_constant(p), abs=1e-8)


@pytest.mark.parametrize("digits", [None, 20])
def test_budgets_report_their_status(digits):
    X, y = LEAVES
    r = log_flow(X, y, "1e-30", t_max=2.0, digits=digits, budget=Budget(max_steps=3, max_seconds=math.inf))
    assert r.status == Status.MAX_STEPS and r.run.steps == 3
    r = log_flow(X, y, "1e-30", t_max=2.0, digits=digits,
                 budget=Budget(max_evaluations=40, max_seconds=math.inf))
    assert r.status == Status.MAX_EVALUATIONS


@pytest.mark.parametrize("alpha", ["2", "0", "-1e-3", "abc", 1.5])
def test_bad_alpha_is_one_line(alpha):
    with pytest.raises(ArgumentError):
        log_flow([[1.0]], [1.0], alpha, t_max=1.0)


def test_observations_are_consistent_with_the_limit():
    X, y = [["1"]], ["1"]
    r = log_flow(X, y, "1e-100", t_max=1.0, budget=FREE)
    assert np.allclose(r.beta_at(1.0), [1.0], atol=1e-12)
    assert r.beta_at(0.3)[0] < 1e-30  # before t̃₁ = 1/2: β ~ α^{2(1 − 2t̃)}

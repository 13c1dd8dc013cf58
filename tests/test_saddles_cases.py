"""The exact jump process (pack saddle-to-saddle) on hand-made cases with known answers, and against two
independent computations: a float re-implementation whose constrained least squares enumerates supports, and
the gradient flow itself at α = e^(−100) integrated by scipy in the coordinates s."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process
from theorycheck.proofs.saddle_to_saddle.claims import LEAVES, problem


def times(p):
    return [j.time for j in p.jumps]


# ---------------------------------------------------------------------------- closed forms
def test_one_example_closed_form():
    """n = 1: the largest |x_i| enters at t̃ = 1/(2|x_i y|) with β_i = y/x_i, and the loss is 0 at once."""
    p = jump_process([["0.5", "-2", "1"]], ["3"])
    assert len(p.jumps) == 1
    (j,) = p.jumps
    assert j.time == F(1, 2) / (2 * 3) and j.beta == (0, F(-3, 2), 0) and j.support == {1: -1}
    assert j.loss == 0 and p.final_loss == 0 and p.status == "stopped at a zero gradient" and not p.non_unique


def test_orthogonal_design_each_coordinate_on_its_own():
    """XᵀX/n = diag(c), b = Xᵀy/n: coordinate i enters at t̃ = 1/(2|b_i|) with β_i = b_i/c_i and never leaves."""
    X = [["2", "0", "0"], ["0", "1", "0"], ["0", "0", "-3"]]
    y = ["1", "-4", "0.3"]
    p = jump_process(X, y)
    b = [F(2, 3), F(-4, 3), F(-9, 10) / 3]  # Xᵀy / n
    c = [F(4, 3), F(1, 3), F(9, 3)]
    order = sorted(range(3), key=lambda i: -abs(b[i]))
    assert [j.entered for j in p.jumps] == [(i,) for i in order] and all(not j.left for j in p.jumps)
    assert times(p) == [1 / (2 * abs(b[i])) for i in order]
    assert p.final == tuple(b[i] / c[i] for i in range(3)) and p.final_loss == 0


def test_enters_leaves_and_reenters_by_hand():
    """THEORY.md's instance, computed by hand: ∇L(0) = (−1, −3, 5/2); coordinate 2 enters at 1/6 with 2/3;
    s₃ reaches −1 at 2/9, where the unconstrained fit would make β₂ = −1/3 < 0, so β = (0, 0, −5/2) and
    ∇L₂ = 3/4 > 0 sends s₂ back; s₂ reaches −1 at 2/9 + 4/3 = 14/9 (before s₁ at 2/9 + 8/3)."""
    p = jump_process(*problem(LEAVES))
    assert times(p) == [F(1, 6), F(2, 9), F(14, 9)]
    assert [j.beta for j in p.jumps] == [(0, F(2, 3), 0), (0, 0, F(-5, 2)), (0, F(-1, 3), -3)]
    assert [(j.entered, j.left) for j in p.jumps] == [((1,), ()), ((2,), (1,)), ((1,), ())]
    assert p.jumps[1].active == {1: 1, 2: -1} and p.jumps[2].support == {1: -1, 2: -1}
    assert [j.loss for j in p.jumps] == [F(9, 4), F(1, 8), 0]
    assert sum(abs(b) for b in p.final) == F(10, 3)  # the minimum-ℓ1 interpolator: β₃ = −3, β₁ + 3β₂ = −1


def test_exact_tie_enters_together():
    p = jump_process([["1", "0"], ["0", "1"]], ["1", "-1"])
    assert len(p.jumps) == 1 and p.jumps[0].entered == (0, 1) and p.jumps[0].time == 1
    assert p.final == (1, -1)


def test_near_tie_two_jumps_a_millionth_apart():
    """y = (1, 1.000001) on an orthogonal design: two jumps at t̃ = 1/1.000001 and 1, exact and distinct."""
    p = jump_process([["1", "0"], ["0", "1"]], ["1", "1.000001"])
    assert times(p) == [1 / F("1.000001"), F(1)]
    assert [j.entered for j in p.jumps] == [(1,), (0,)]
    assert 0 < times(p)[1] - times(p)[0] < F(1, 10**6)


def test_more_examples_than_coordinates_ends_at_least_squares():
    X = [["1", "0"], ["0", "1"], ["1", "1"]]
    y = ["1", "2", "0"]
    p = jump_process(X, y)
    A, b = np.array(X, float), np.array(y, float)
    ls = np.linalg.lstsq(A, b, rcond=None)[0]
    assert np.allclose([float(v) for v in p.final], ls, atol=1e-14) and p.final_loss > 0
    assert p.final == (F(0), F(1))  # normal equations [[2,1],[1,2]]β = (1, 2), exactly


def test_zero_column_never_enters():
    p = jump_process([["0", "1", "2"], ["0", "-1", "1"]], ["1", "1"])
    assert all(0 not in j.support and 0 not in j.active for j in p.jumps) and p.final[0] == 0


def test_zero_labels_no_jump():
    p = jump_process([["1", "2"], ["3", "4"]], ["0", "0"])
    assert p.jumps == [] and p.final == (0, 0) and p.status == "stopped at a zero gradient"


def test_collinear_columns_of_different_norms_only_the_longer_enters():
    """Column 2 = 2 × column 1: column 2 reaches |s| = 1 first, and its fit leaves no gradient on column 1."""
    p = jump_process([["1", "2"], ["2", "4"]], ["1", "3"])
    assert [j.entered for j in p.jumps] == [(1,)] and not p.non_unique and p.final == (0, F(7, 10))


def test_collinear_columns_reported_not_unique():
    """Equal columns reach |s| = 1 together: every split of the coefficient is a saddle; reported, not chosen."""
    p = jump_process([["1", "1"], ["2", "2"]], ["1", "3"])
    assert p.non_unique and p.non_unique[0]["jump"] == 1 and "x1, x2" in p.non_unique[0]["reason"]
    other = p.non_unique[0]["other"]
    X, y = p.X, p.y
    from theorycheck.solvers.exact_lsq import loss

    assert other != p.jumps[0].beta and loss(X, y, other) == loss(X, y, p.jumps[0].beta)
    assert p.jumps[0].unique is False


def test_jump_budget_is_reported():
    p = jump_process(*problem(LEAVES), max_jumps=2)
    assert p.status == "jump budget" and len(p.jumps) == 2


# ---------------------------------------------------------------------------- a second method (floats)
def _float_lsq(A, y, signs):
    """Brute force: among subsets S of the allowed set, the least squares on S that keeps the signs and
    satisfies the KKT conditions off S (independent of Lawson–Hanson)."""
    n, d = A.shape
    idx = sorted(signs)
    best = np.zeros(d)
    for k in range(len(idx), -1, -1):
        for S in itertools.combinations(idx, k):
            b = np.zeros(d)
            if S:
                b[list(S)] = np.linalg.lstsq(A[:, list(S)], y, rcond=None)[0]
            g = A.T @ (A @ b - y) / n
            if all(signs[j] * b[j] > 1e-12 for j in S) and all(signs[j] * g[j] >= -1e-10 for j in idx if j not in S):
                return b
    return best


def _float_process(A, y, max_jumps=50):
    n, d = A.shape
    s, b, t, out = np.zeros(d), np.zeros(d), 0.0, []
    for _ in range(max_jumps):
        g = A.T @ (A @ b - y) / n
        if np.max(np.abs(g)) < 1e-12:
            break
        tau = min((1 + np.sign(g[i]) * s[i]) / (2 * abs(g[i])) for i in range(d) if abs(g[i]) > 1e-12)
        t += tau
        s = s - 2 * tau * g
        signs = {i: int(np.sign(s[i])) for i in range(d) if abs(abs(s[i]) - 1) < 1e-9}
        s[list(signs)] = [signs[i] for i in signs]
        b = _float_lsq(A, y, signs)
        out.append((t, b.copy()))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_agrees_with_an_independent_float_implementation(seed):
    x = {"seed": seed, "n": 3, "d": 5}
    X, y = problem(x)
    p = jump_process(X, y)
    ref = _float_process(np.array(X, float), np.array(y, float))
    assert len(ref) == len(p.jumps)
    for (t, b), j in zip(ref, p.jumps):
        assert abs(t - float(j.time)) <= 1e-9 * max(1.0, t)
        assert np.allclose(b, [float(v) for v in j.beta], atol=1e-9)


# ---------------------------------------------------------------------------- a second method (the flow)
def _flow_beta(X, y, alpha_log, t_eval):
    """The gradient flow from w±(0) = α·1 in s = 1 + ln(w₊)/ln(1/α) (SS1: β = α^(2−2s) − α^(2+2s),
    ds/dt̃ = −2∇L), integrated by scipy's LSODA in the accelerated time; α = e^(alpha_log)."""
    from scipy.integrate import solve_ivp

    A, b = np.array(X, float), np.array(y, float)
    n = A.shape[0]

    def beta(s):  # exponents clipped: a trial step of the implicit solver may overshoot |s| = 1
        return np.exp(np.minimum(alpha_log * (2 - 2 * s), 50.0)) - np.exp(np.minimum(alpha_log * (2 + 2 * s), 50.0))

    def f(_, s):
        return -2 * A.T @ (A @ beta(s) - b) / n

    sol = solve_ivp(f, (0, t_eval[-1]), np.zeros(A.shape[1]), method="LSODA", t_eval=t_eval, rtol=1e-8, atol=1e-11)
    assert sol.success
    return [beta(sol.y[:, k]) for k in range(len(t_eval))]


def test_the_flow_at_tiny_alpha_sits_on_the_saddles():
    """α = e^(−100): midway between two jump times the flow's β is within 0.02 of the saddle."""
    X, y = problem(LEAVES)
    p = jump_process(X, y)
    ts = [float(t) for t in times(p)] + [3.0]
    mids = [(a + b) / 2 for a, b in zip(ts, ts[1:])]
    got = _flow_beta(X, y, -100.0, mids)
    for j, b in zip(p.jumps, got):
        assert np.max(np.abs(b - [float(v) for v in j.beta])) < 0.02

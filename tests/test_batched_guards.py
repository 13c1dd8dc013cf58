"""Regressions: the batched engine's systems at extreme scales, on zero data and at a
critical point of the loss (no traceback, no member that runs until its step budget)."""

import signal
from contextlib import contextmanager

import numpy as np
import pytest

from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting
from theorycheck.solve.guards import scaled_norm
from theorycheck.solve.integrate import solve
from theorycheck.status import Status
from theorycheck.sweep.run import heatmap


@contextmanager
def hang_guard(seconds: int):
    def fire(*_):
        raise AssertionError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_scaled_norm_neither_underflows_nor_overflows():
    assert scaled_norm([3e-213, 4e-213]) == pytest.approx(5e-213, rel=1e-15)
    assert scaled_norm([3e200, 4e200]) == pytest.approx(5e200, rel=1e-15)
    np.testing.assert_array_equal(scaled_norm(np.zeros((2, 3)), axis=1), [0.0, 0.0])
    np.testing.assert_allclose(scaled_norm(np.array([[3e-300, 4e-300], [1.0, 0.0]]), axis=1), [5e-300, 1.0], rtol=1e-15)


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf"])
@pytest.mark.parametrize("c", [1e-213, 1e200, 1e300])
def test_one_example_heatmap_is_scale_invariant(optimizer, c):
    """One example, L = 2: z → cz with τ → τ/c is the same flow (was: math domain error at
    1e-213 from ln‖z‖ of an underflowed norm; at 1e200 a GD member that never moved, since
    ‖θ'‖² overflowed and its clock dτ/ds was 0, and ℓ∞ members that stopped non_finite: the
    error norm's squares overflowed and the step floor assumed a clock of size ≥ 1)."""
    if optimizer == "sam-linf" and c == 1e300:
        pytest.skip("ℓ∞ at |z| ~ 1e300: the sliding member ends non_finite (named), the rest agree")
    z = np.array([1.0, 2.0, 1.5])
    times = np.array([0.5, 1.0, 2.0])
    a = heatmap(z, optimizer=optimizer, rho=0.5, alphas=[0.3, 1.0, 2.0], times=times, backend="serial")
    with hang_guard(120):
        b = heatmap(z * c, optimizer=optimizer, rho=0.5, alphas=[0.3, 1.0, 2.0], times=times / c, backend="serial")
    np.testing.assert_array_equal(a["jdag"], b["jdag"])
    np.testing.assert_array_equal(a["status"], b["status"])


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf", "sam-l2"])
def test_zero_data_is_a_one_line_error(optimizer):
    for Z in ([0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]]):
        with pytest.raises(TheorycheckError):
            heatmap(Z, optimizer=optimizer, rho=1.0, alphas=[0.5, 1.0], times=[1.0, 2.0], backend="serial")


@pytest.mark.parametrize("optimizer", ["gd", "sam-linf", "sam-l2"])
def test_several_tiny_examples_run(optimizer):
    """Rows of size 1e-213 (time scale 1e213): was non_finite for every member (the clock's
    scale max_i ‖z_i‖ underflowed to 0). ℓ2-SAM still stops non_finite there: the compiled
    ln(term of S²) squares G ~ 1e-213 (an underflow in the symbolic form), and says so."""
    Z = np.array([[1.0, 2.0], [2.0, 1.0]]) * 1e-213
    res = heatmap(Z, optimizer=optimizer, rho=0.1, alphas=[0.5, 1.0], times=[1e212, 2e212], backend="serial")
    ok = {Status.DONE, Status.COLLAPSE} | ({Status.NON_FINITE} if optimizer == "sam-l2" else set())
    assert {Status.from_code(c) for c in res["status"]} <= ok
    done = res["status"] == Status.DONE.code
    assert np.all(res["jdag"][done] >= 1)


def test_l2_several_examples_stop_at_a_critical_point():
    """Mixed-sign rows that no β ≥ 0 separates: Lo has a critical point in the cone the
    balanced network reaches, where ℓ2-SAM's ε = ρ∇Lo/‖∇Lo‖ is undefined (was: each member
    chattered there until its 200 000-step budget, minutes for five members). Each member
    now stops with critical_point where the single-trajectory solver does."""
    Z = np.array([[-0.26, 0.484], [-0.042, -0.096], [-0.082, 1.064], [-1.156, -1.556], [-1.053, 0.561]])
    alphas = np.linspace(0.5, 4.8, 5)
    with hang_guard(120):
        res = heatmap(Z, optimizer="sam-l2", rho=2.0, alphas=alphas, times=np.linspace(0.1, 10.0, 10), backend="serial")
    assert np.all(res["status"] == Status.CRITICAL_POINT.code)
    assert np.all(res["steps"] < 1000)
    for a, t_stop in zip(alphas, res["t_stop"]):
        tr = solve(Setting(Z, optimizer="sam-l2", rho=2.0, alpha=a, check_separability=False), t_max=100.0)
        assert tr.stopped_because == "critical_point"
        assert t_stop == pytest.approx(tr.t_end, rel=1e-2)
    after = res["time"][None, :] > res["t_stop"][:, None]
    assert np.all(res["jdag"][after] == -1)  # unknown past the critical point

"""Nothing symbolic on a hot path: once a form is compiled, a heatmap, a threshold or a
classification call runs no sympy code at all (sympy runs once per form, at first use)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from theorycheck.proofs.minor_first.predict import thresholds as th

import theorycheck as tc


def _sympy_calls(fn) -> list[str]:
    """The sympy functions entered while ``fn()`` runs (a profile hook on every Python call)."""
    seen: list[str] = []

    def hook(frame, event, arg):
        if event == "call" and "/sympy/" in frame.f_code.co_filename:
            seen.append(f"{frame.f_code.co_filename.split('/sympy/')[1]}:{frame.f_code.co_name}")

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("optimizer,depth", [("sam-l2", 2), ("gd", 2), ("sam-linf", 3)])
def test_heatmap_runs_no_sympy_after_first_call(optimizer, depth):
    z = np.array([1.0, 2.0, 3.0])

    def call(alphas):
        return tc.heatmap(tc.Setting.from_z(z, optimizer=optimizer, rho=1.0, depth=depth), alphas=alphas,
                          times=np.linspace(0.5, 5, 6), backend="serial", progress=False,
                          opts=tc.RunOptions(array_backend="numpy"))

    first = call([0.3, 1.5])
    calls = []
    second = _sympy_calls(lambda: calls.append(call([0.4, 0.9, 1.7])))
    assert second == [], second[:10]
    if optimizer == "sam-l2":  # the closed-form boundaries are still reported, from the compiled forms
        t = calls[0].as_dict()["thresholds"]
        assert t["alpha_all_shrink"] == pytest.approx(1 / np.sqrt(28))  # ρ z_min/(√2‖z‖), ‖z‖ = √14
        assert t["alpha_gd_like"] == pytest.approx(5 / np.sqrt(28))
        assert first.as_dict()["thresholds"] == t


def test_closed_form_thresholds_run_no_sympy_after_first_call():
    z = [1.0, 2.0, 2.0, 0.5]
    th.alpha_all_shrink(z, 1.0), th.alpha_gd_like(z, 1.0), th.initial_index(z, 0.7, 1.0)
    out = {}

    def again():
        out["s"] = th.alpha_all_shrink([3.0, 1.0], 2.0)
        out["g"] = th.alpha_gd_like([3.0, 1.0, 3.0], 2.0)
        out["j"] = th.initial_index([1.0, 2.0, 3.0], 0.5, 1.0)

    assert _sympy_calls(again) == []
    n = np.sqrt(10.0)
    assert out["s"].value == pytest.approx(2.0 * (1 / 3) / (np.sqrt(2) * n / 3))
    assert out["s"].expression == "sqrt(2)*rho*z_min/(2*||z||_2)"
    assert out["g"].value == pytest.approx(2.0 * (1 + 1 / 3) / (np.sqrt(2) * np.sqrt(19) / 3))
    assert out["j"] == 1  # α = 0.5 is in the sequential regime of z = (1, 2, 3): j†(0+) = 1


def test_a_closed_form_is_its_compiled_function():
    from theorycheck.symbolic import theory_forms as MF

    f = MF.alpha_all_shrink()
    assert f(1.0, np.sqrt(14.0), 1.0) == f.fn(1.0, np.sqrt(14.0), 1.0) == pytest.approx(1 / np.sqrt(28))
    g = MF.alpha_gd_like()
    assert g(3.0, 2.0, np.sqrt(14.0), 1.0) == pytest.approx(5 / np.sqrt(28))

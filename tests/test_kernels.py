"""The compiled kernel (theorycheck.kernels, numba) against the numpy engine it transcribes:
same method, same steps, same cells; budgets, events and edge cases of C4's reduced ODE."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from theorycheck.proofs.minor_first.predict import grids as G
from theorycheck.proofs.minor_first.predict import thresholds as th
from theorycheck.proofs.minor_first.reduced import REDUCTIONS
from theorycheck.proofs.minor_first.reduced.batch import ReducedL2

from theorycheck import status as bst
from theorycheck import sweep as S
from theorycheck.batched import engine as bt
from theorycheck.batched import systems as bsys
from theorycheck.errors import TheorycheckError

kn = pytest.importorskip("theorycheck.proofs.minor_first.reduced.kernel")
if not kn.available():  # pragma: no cover
    pytest.skip("numba is not installed", allow_module_level=True)

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
S_heatmap = functools.partial(S.heatmap, reductions=REDUCTIONS)
S_depth_sweep = functools.partial(S.depth_sweep, reductions=REDUCTIONS)


def _both(z, alphas, rho, grid, **kw):
    opts = {k: kw.pop(k) for k in ("rtol", "atol", "max_steps") if k in kw}
    a = bt.integrate(ReducedL2(z, alphas, rho, **kw), grid, **opts)
    b = kn.integrate_reduced(ReducedL2(z, alphas, rho, **kw), grid, **opts)
    return a, b


def _assert_same(a, b, *, I_rtol=1e-9):
    """Same statuses, step counts and j† cells; I and the event times to rounding."""
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.steps, b.steps)
    np.testing.assert_array_equal(a.rejected, b.rejected)
    np.testing.assert_array_equal(a.obs["jdag"], b.obs["jdag"])
    Ia, Ib = a.obs["I"], b.obs["I"]
    np.testing.assert_array_equal(np.isfinite(Ia), np.isfinite(Ib))
    np.testing.assert_array_equal(np.isnan(Ia), np.isnan(Ib))
    fin = np.isfinite(Ia)
    np.testing.assert_allclose(Ib[fin], Ia[fin], rtol=I_rtol, atol=0)
    for k in a.events:
        np.testing.assert_array_equal(np.isfinite(a.events[k]), np.isfinite(b.events[k]), err_msg=k)
        f = np.isfinite(a.events[k])
        # events are recorded at the end of the step where they hold: step sizes come from
        # error estimates (differences of nearly equal numbers), so they differ in late digits
        np.testing.assert_allclose(b.events[k][f], a.events[k][f], rtol=1e-4, err_msg=k)
    np.testing.assert_allclose(b.t_stop, a.t_stop, rtol=1e-4)


def test_kernel_equals_the_numpy_engine_across_the_three_regimes():
    z = np.linspace(1.0, 2.0, 30)
    lo, hi = th.alpha_all_shrink(z, 1.0).value, th.alpha_gd_like(z, 1.0).value
    alphas = np.geomspace(lo / 2, 2 * hi, 60)
    a, b = _both(z, alphas, 1.0, S.time_grid(20.0, 150))
    counts = a.status_counts() if hasattr(a, "status_counts") else None
    assert counts["collapse"] > 5 and counts["done"] > 5  # both regimes are in the batch
    _assert_same(a, b)
    assert b.meta["array_backend"] == "numba" and a.meta["array_backend"] == "numpy"
    assert len(np.unique(b.obs["jdag"])) > 5  # sequential amplification is in the batch too


def test_kernel_log_norm_cells_and_theta_mode():
    z = np.arange(1.0, 7.0)
    a, b = _both(z, np.geomspace(0.05, 1.5, 25), 1.0, S.time_grid(10.0, 40), observe_norm=True)
    _assert_same(a, b)
    la, lb = a.obs["log_norm"], b.obs["log_norm"]
    np.testing.assert_array_equal(np.isfinite(la), np.isfinite(lb))
    f = np.isfinite(la)
    np.testing.assert_allclose(lb[f], la[f], rtol=1e-9, atol=1e-12)
    with pytest.raises(TheorycheckError, match="switch levels"):
        kn.integrate_reduced(ReducedL2(z, [0.5], 1.0, observe="theta"), [1.0])


def test_kernel_per_member_rho_and_stop_on_safe():
    """An (α, ρ) grid: coefficient rows and switch levels per member; classification stops."""
    z = np.array([0.5, 1.0, 1.6, 2.3])
    al, rh = np.meshgrid(np.geomspace(0.05, 3.0, 12), np.geomspace(0.3, 3.0, 7))
    a, b = _both(z, al.ravel(), rh.ravel(), np.array([1e4]), stop_on_safe=True)
    _assert_same(a, b)
    assert set(np.unique(a.status)) <= {bst.COLLAPSE, bst.NO_COLLAPSE} and len(np.unique(a.status)) == 2


def test_collapse_threshold_is_the_same_on_both_array_backends():
    z = np.arange(1.0, 7.0)
    rhos = np.array([0.5, 1.0, 2.0])
    a = G.collapse_threshold_per_rho(z, rhos, opts=S.RunOptions(array_backend="numpy"), backend="serial", progress=False)
    b = G.collapse_threshold_per_rho(z, rhos, opts=S.RunOptions(array_backend="numba"), backend="serial", progress=False)
    np.testing.assert_allclose(b["alpha_c"], a["alpha_c"], rtol=1e-12)
    # α_c = 0.31948487657496… ρ (certified on both sides; the batched float64 bisection gave 0.3194848776,
    # which an independent DOP853 integration of the full flow refutes: α = 0.3194848770 already grows)
    np.testing.assert_allclose(b["alpha_c"] / rhos, 0.31948487657496, rtol=1e-12)


@pytest.mark.parametrize("case", ["grid from 0", "one distinct z", "a negative and a zero z", "rho 0 (GD)",
                                  "tied top"])
def test_kernel_edge_cases(case):
    z, alphas, rho, grid = np.arange(1.0, 5.0), np.geomspace(0.1, 2.0, 9), 1.0, S.time_grid(8.0, 30)
    if case == "grid from 0":
        grid = np.concatenate([[0.0], grid])
        z = np.array([1.0, 1.2, 3.0])  # N0 between the levels: j† at τ = 0+ is not the major feature
    elif case == "one distinct z":
        z = np.full(4, 1.5)
    elif case == "a negative and a zero z":
        z = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])
    elif case == "rho 0 (GD)":
        rho = 0.0
    elif case == "tied top":
        z = np.array([1.0, 2.0, 2.0])
    a, b = _both(z, alphas, rho, grid)
    _assert_same(a, b)
    if case == "grid from 0":  # the first column is j† just after the start (C5's initial index)
        for i, al in enumerate(alphas):
            assert b.obs["jdag"][i, 0] == th.initial_index(z, al, rho), al


def test_step_budget_is_reported_and_cells_stay_unknown():
    a, b = _both(np.arange(1.0, 7.0), [0.5, 0.05], 1.0, S.time_grid(10.0, 50), max_steps=3)
    _assert_same(a, b)
    assert np.all(b.status == bst.MAX_STEPS) and np.all(b.steps == 3)
    assert np.all(b.obs["jdag"][:, -1] == -1)
    with pytest.raises(TheorycheckError, match="max_steps"):
        kn.integrate_reduced(ReducedL2(np.arange(1.0, 3.0), [0.5], 1.0), [1.0], max_steps=0)


@pytest.mark.parametrize("grid", [[], [1.0, 0.5], [-1.0, 1.0], [0.0, np.inf]])
def test_bad_grids_are_refused(grid):
    with pytest.raises(TheorycheckError, match="grid"):
        kn.integrate_reduced(ReducedL2(np.arange(1.0, 3.0), [0.5], 1.0), np.asarray(grid, float))


def test_kernel_refuses_other_systems():
    with pytest.raises(TheorycheckError, match="reduced"):
        kn.integrate_reduced(bsys.BalancedLog(np.arange(1.0, 3.0), [0.5], 1.0, optimizer="gd"), [1.0])


def test_one_thread_and_two_threads_are_bitwise_equal():
    sys_ = lambda: ReducedL2(np.linspace(1, 2, 20), np.geomspace(0.02, 2, 300), 1.0)  # noqa: E731
    grid = S.time_grid(15.0, 60)
    with kn.thread_limit(1):
        a = kn.integrate_reduced(sys_(), grid)
    with kn.thread_limit(2):
        b = kn.integrate_reduced(sys_(), grid)
    for k in a.obs:
        np.testing.assert_array_equal(a.obs[k], b.obs[k])
    np.testing.assert_array_equal(a.steps, b.steps)


def test_progress_is_reported_per_chunk():
    seen = []
    kn.integrate_reduced(ReducedL2(np.arange(1.0, 4.0), np.geomspace(0.1, 1, kn.CHUNK + 10), 1.0),
                         S.time_grid(2.0, 5), progress=seen.append)
    assert seen[-1] == 1.0 and len(seen) >= 2 and seen == sorted(seen)


# ---------------------------------------------------------------------------- choosing the array backend
def test_auto_picks_the_kernel_for_the_reduced_ode_only():
    z = np.arange(1.0, 5.0)
    r = S_heatmap(z, optimizer="sam-l2", rho=1.0, alphas=[0.3, 0.8], times=[1.0, 2.0], backend="serial")
    assert r.meta["run"]["array_backend"] == "numba" and r.meta["integrator"]["array_backend"] == "numba"
    assert "numba" in r.meta["versions"]
    g = S_heatmap(z, optimizer="gd", rho=1.0, alphas=[0.3, 0.8], times=[1.0, 2.0], backend="serial")
    assert g.meta["run"]["array_backend"] == "numpy"
    with pytest.raises(TheorycheckError, match="reduced"):
        S_heatmap(z, optimizer="gd", rho=1.0, alphas=[0.3], times=[1.0], backend="serial",
                  opts=S.RunOptions(array_backend="numba"))
    with pytest.raises(TheorycheckError, match="unknown array backend"):
        S_heatmap(z, optimizer="sam-l2", rho=1.0, alphas=[0.3], times=[1.0], backend="serial",
                  opts=S.RunOptions(array_backend="cupy"))


def test_without_numba_auto_falls_back_and_numba_is_a_clear_error(monkeypatch):
    from theorycheck.sweep import run as sweep_run

    monkeypatch.setattr(sweep_run, "_numba_installed", lambda spec: False)
    z = np.arange(1.0, 5.0)
    r = S_heatmap(z, optimizer="sam-l2", rho=1.0, alphas=[0.3, 0.8], times=[1.0, 2.0], backend="serial")
    assert r.meta["run"]["array_backend"] == "numpy"
    with pytest.raises(TheorycheckError, match="pip install"):
        S_heatmap(z, optimizer="sam-l2", rho=1.0, alphas=[0.3], times=[1.0], backend="serial",
                  opts=S.RunOptions(array_backend="numba"))


def test_cli_array_backend_numba(capsys):
    import json

    from theorycheck.cli.main import main

    rc = main(["heatmap", "--z", "1,2,3", "--optimizer", "sam-l2", "--rho", "1", "--alphas", "0.1:1:5", "--log",
               "--t-max", "5", "--nt", "10", "--array-backend", "numba", "--backend", "serial", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["array_backend"] == "numba"
    rc = main(["heatmap", "--z", "1,2,3", "--optimizer", "gd", "--rho", "1", "--alphas", "0.1:1:5",
               "--t-max", "5", "--array-backend", "numba", "--json"])
    err = capsys.readouterr().err
    assert rc != 0 and "reduced" in err and "Traceback" not in err

"""Batched sweeps (theorycheck.batch, theorycheck.sweep): against per-α references, the
symbolic flow, closed forms and certificates; backends; budgets; save/load."""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from theorycheck.proofs.minor_first.predict import alpha_c as AC
from theorycheck.proofs.minor_first.predict import grids as G
from theorycheck.proofs.minor_first.predict import thresholds as th
from theorycheck.proofs.minor_first.reduced import REDUCTIONS
from theorycheck.proofs.minor_first.reduced.batch import ReducedL2

from theorycheck import status as bst
from theorycheck import sweep as S
from theorycheck.batched import discrete as bdisc
from theorycheck.batched import engine as bt
from theorycheck.batched import systems as bsys
from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import theory_forms as MF

Z6 = np.arange(1.0, 7.0)

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
S_heatmap = functools.partial(S.heatmap, reductions=REDUCTIONS)
S_depth_sweep = functools.partial(S.depth_sweep, reductions=REDUCTIONS)


# ---------------------------------------------------------------------------- compiled forms
def test_reduced_log_forms_equal_the_summand():
    rng = np.random.default_rng(0)
    z, tau, I, a, r = (rng.uniform(lo, hi, 64) for lo, hi in ((0.1, 3), (0, 5), (0, 2), (0.01, 2), (0, 2)))
    summand, _ = MF.reduced_l2()
    logs = MF.reduced_l2_log()
    lin = MF.reduced_l2_log_linear()
    np.testing.assert_allclose(logs(z, tau, I, a, r), np.log(summand(z, tau, I, a, r)), rtol=1e-12, atol=1e-12)
    affine = lin.c0(z, a, r) + lin.c_tau(z, a, r) * tau + lin.c_I(z, a, r) * I
    np.testing.assert_allclose(affine, logs(z, tau, I, a, r), rtol=1e-12, atol=1e-12)


def test_switch_levels_give_the_argmax_of_theta():
    """C4: argmax_j θ_j(τ, I) is the z_j nearest N̄/(2ρ); the batch reads it off the levels."""
    z = np.array([0.5, 1.0, 1.7, 2.0, 3.1])
    s = ReducedL2(z, [0.3], [0.7])
    rng = np.random.default_rng(1)
    tau, I = rng.uniform(0.01, 5, 400), rng.uniform(0.001, 4, 400)
    idx = np.zeros(400, dtype=int)
    j_levels = s.observe(idx, tau, I[:, None])["jdag"]
    s.observe_mode = "theta"
    j_theta = s.observe(idx, tau, I[:, None])["jdag"]
    np.testing.assert_array_equal(j_levels, j_theta)


@pytest.mark.parametrize("optimizer,L", [("gd", 2), pytest.param("sam-l2", 2, marks=pytest.mark.slow), ("sam-linf", 2),
                                         ("gd", 3), pytest.param("sam-linf", 3, marks=pytest.mark.slow)])
def test_multi_example_field_equals_the_symbolic_flow(optimizer, L):
    """The batched real-time field (per-coordinate forms + sums over examples) against
    symbolic.flow, derived from the model by sympy.diff, at balanced points."""
    Zn = np.array([[1.0, 0.4, 2.0], [0.7, 1.3, 0.5]])
    W = sy.layer_symbols(L, 3)
    F = sy.flow(W, sp.Matrix(Zn.tolist()), optimizer)
    f = sp.lambdify((*W, sy.rho), F, modules=["numpy"])
    rng = np.random.default_rng(2)
    U = rng.uniform(0.2, 1.5, (5, 3))
    rho = 0.35
    system = bsys.MultiExample(Zn, U, rho, L=L, optimizer=optimizer)
    rate = system.theta_rate(np.arange(5), None, np.log(U))
    for b in range(5):
        ref = np.asarray(f(*np.tile(U[b], L), rho), dtype=float)
        np.testing.assert_allclose(ref, np.tile(ref[0], (L, 1)), rtol=1e-12)  # balanced stays balanced
        np.testing.assert_allclose(rate[b] * U[b], ref[0], rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------------------- reduced ℓ2 vs the full system
def _reference(z, alpha, rho, taus, rtol=1e-11):
    """Per-α solve_ivp on the full d-dimensional balanced ℓ2-SAM system in θ, with the
    batch's collapse stop; returns θ (d, T) (NaN after the stop) and the stop time."""
    f = C.balanced_field(2, "sam-l2", "numpy", log=True)

    def rhs(t, x):
        return f.field(z, x, np.sqrt(np.sum(f.summand(z, x))), rho)

    m = np.abs(z[z != 0]).min()
    n_stop = 1e-10 * rho * m**2 / (2 * z.max())

    def stop(t, x):
        return np.sqrt(np.sum(f.summand(z, x))) - n_stop

    stop.terminal = True
    sol = solve_ivp(rhs, (0, taus[-1]), np.full(z.size, np.log(alpha)), t_eval=taus, rtol=rtol, atol=1e-13,
                    events=stop)
    out = np.full((z.size, taus.size), np.nan)
    out[:, : sol.t.size] = sol.y
    return out, (sol.t_events[0][0] if sol.t_events[0].size else np.inf)


def test_reduced_batch_matches_per_alpha_reference():
    z, rho = np.array([1.0, 2.0, 3.0, 4.0]), 1.0
    alphas = np.geomspace(0.5 * th.alpha_all_shrink(z, rho).value, 2 * th.alpha_gd_like(z, rho).value, 10)
    taus = S.time_grid(8.0, 60)
    res = S_heatmap(z, optimizer="sam-l2", rho=rho, alphas=alphas, times=taus, backend="serial")
    tight = S_heatmap(z, optimizer="sam-l2", rho=rho, alphas=alphas, times=taus, backend="serial",
                      opts=S.RunOptions(rtol=1e-11, atol=1e-13))
    assert res.meta["system"] == "reduced"
    checked = 0
    for i, a in enumerate(alphas):
        theta, t_stop = _reference(z, a, rho, taus)
        if np.isfinite(t_stop):
            assert res["status"][i] == bst.COLLAPSE
            assert res["event_collapse"][i] == pytest.approx(t_stop, rel=1e-6)
        alive = np.isfinite(theta[0])
        th_ = np.where(alive, theta, -np.inf)
        jref = np.where(alive, np.argmax(th_, axis=0) + 1, 0)
        top2 = np.sort(theta[:, alive], axis=0)[-2:]
        resolved = ~alive
        resolved[alive] = top2[1] - top2[0] > 1e-6
        np.testing.assert_array_equal(res["jdag"][i][resolved], jref[resolved])
        # I from θ_1 = ln α + z_1 τ − ρ z_1² I (C4), where the flow is alive (at matched tight tolerances:
        # near α_c the flow amplifies integration errors, so rtol 1e-8 gives I to ~1e-6 only)
        I_ref = (np.log(a) + z[0] * taus - theta[0]) / (rho * z[0] ** 2)
        np.testing.assert_allclose(tight["I"][i][alive], I_ref[alive], rtol=1e-8, atol=1e-10)
        checked += int(resolved.sum())
    assert checked > 0.98 * alphas.size * taus.size


def test_balanced_l2_equals_reduced():
    alphas = np.geomspace(0.05, 1.5, 16)
    taus = S.time_grid(10.0, 80, log=True, t_min=1e-3)
    a = S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=alphas, times=taus, backend="serial")
    b = S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=alphas, times=taus, backend="serial", method="balanced")
    assert b.meta["system"] == "balanced"
    resolved = b["gap"] > 1e-7
    assert resolved.mean() > 0.98
    np.testing.assert_array_equal(a["jdag"][resolved], b["jdag"][resolved])
    np.testing.assert_array_equal(a["status"], b["status"])
    fin = np.isfinite(a["event_collapse"])
    np.testing.assert_allclose(a["event_collapse"][fin], b["event_collapse"][fin], rtol=1e-6)


# ---------------------------------------------------------------------------- GD, ℓ∞ against closed forms
def test_gd_heatmap_is_argmax_z_everywhere():
    z = np.array([3.0, 1.0, 6.0, 2.0, 5.0, 4.0])
    res = S_heatmap(z, optimizer="gd", rho=0.0, alphas=np.geomspace(1e-3, 10, 12), times=S.time_grid(20.0, 50),
                    backend="serial")
    assert np.all(res["jdag"] == 3) and np.all(res["status"] == bst.DONE)


def test_gd_depth_3_blows_up_on_the_major_feature_at_the_closed_form_time():
    z = np.array([1.0, 3.0, 2.0])
    alphas = np.array([0.2, 0.5, 1.0])
    res = S_heatmap(z, optimizer="gd", rho=0.0, alphas=alphas, times=S.time_grid(10.0, 40), depth=3,
                    backend="serial")
    t_star = C.lambdify((cf.z_j, cf.alpha_j), TE.gd_blowup_time(3))(3.0, alphas)
    assert np.all(res["status"] == bst.BLOWUP)
    np.testing.assert_allclose(res["event_blowup"], t_star, rtol=1e-6)
    assert np.all(res["jdag"] == 2)  # the blown-up feature stays dominant after the blow-up


def _linf_u(z, alpha, rho, tau):
    """C2's closed form u_j(τ) = ρ + (α_j − ρ)e^{z_j τ}, 0 once it reached 0 (compiled)."""
    u = C.lambdify((cf.z_j, cf.alpha_j, sy.rho, sy.tau), TE.linf_l2_solution())(z, alpha, rho, tau)
    below = alpha < rho
    tz = np.full(z.shape, np.inf)
    tz[below] = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_l2_zero_time())(z[below], alpha[below], rho)
    return np.where(tau >= tz, 0.0, u), tz


def test_linf_matches_c2_with_sliding_and_the_alpha_equal_rho_equilibrium():
    z, rho = np.array([1.0, 2.0, 3.0, 4.0]), 0.8
    A = np.array([[rho, 0.5 * rho, 0.3 * rho, 0.2 * rho],  # α_1 = ρ exactly: stays at ρ
                  [1.5 * rho, 0.5 * rho, 2.0 * rho, 0.9 * rho],
                  [0.9 * rho, 0.6 * rho, 0.4 * rho, 0.7 * rho]])  # all below ρ: every coordinate slides to 0
    taus = S.time_grid(30.0, 300)
    system = bsys.BalancedLog(z, A, rho, optimizer="sam-linf")
    res = bt.integrate(system, taus)
    assert list(res.status) == [bst.DONE, bst.DONE, bst.COLLAPSE]
    assert res.events["frozen_at_start"].tolist() == [1.0, 0.0, 0.0]
    assert np.all(res.obs["jdag"][0] == 1)  # u_1 ≡ ρ, the rest slid to 0
    for b in range(3):
        U = np.stack([_linf_u(z, A[b], rho, t)[0] for t in taus], axis=1)
        tz = _linf_u(z, A[b], rho, 0.0)[1]
        if np.isfinite(tz).any():
            assert res.events["first_zero"][b] == pytest.approx(np.min(tz), abs=1e-9 + res.events["event_time_error"][b])
        alive = U.max(axis=0) > 0
        expect = np.where(alive, np.argmax(U, axis=0) + 1, 0)
        top2 = np.sort(U, axis=0)[-2:]
        ok = (top2[1] - top2[0] > 1e-9 * np.maximum(top2[1], 1)) | ~alive
        np.testing.assert_array_equal(res.obs["jdag"][b][ok], expect[ok])
    assert res.events["collapse"][2] == pytest.approx(np.max(_linf_u(z, A[2], rho, 0.0)[1]), rel=1e-8)


def test_linf_depth_3_blows_up_where_c3_says():
    z, rho = np.array([1.0, 2.0, 3.0]), 0.5
    A = np.array([[0.9, 0.8, 0.6], [0.6, 0.55, 0.9], [1.2, 0.6, 0.52]])
    res = bt.integrate(bsys.BalancedLog(z, A, rho, L=3, optimizer="sam-linf"), S.time_grid(40.0, 100))
    t_star = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_blowup_time(3))
    for b in range(3):
        above = A[b] > rho
        assert res.status[b] == bst.BLOWUP
        assert res.obs["jdag"][b, -1] == th.linf_prediction(z, A[b], rho, 3)
        assert res.events["blowup"][b] == pytest.approx(np.min(t_star(z[above], A[b][above], rho)), rel=1e-6)


# ---------------------------------------------------------------------------- ℓ2-SAM: what the sweeps show
def test_l2_jdag_nondecreasing_in_alpha_before_collapse():
    """At fixed τ, larger α never has a smaller j† (z sorted ascending), in regime 2 and
    before collapse in regime 1."""
    alphas = np.geomspace(0.05, 1.0, 60)
    res = S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=alphas, times=S.time_grid(20.0, 200, log=True),
                    backend="serial")
    J = res["jdag"].astype(int)
    both = (J[1:] > 0) & (J[:-1] > 0)
    assert both.sum() > 5000
    assert not np.any((np.diff(J, axis=0) < 0) & both)


def test_l2_jdag_is_not_monotone_in_time_just_above_alpha_c():
    """What is true instead of 'minor first, then larger and larger': just above α_c, j†
    goes 2 → 1 (while N falls below its harmonic mean N̄) and only then climbs to 6."""
    ac = G.collapse_threshold_per_rho(Z6, [1.0], backend="serial")["alpha_c"][0]
    res = S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=[ac * (1 + 1e-6)], times=S.time_grid(300.0, 3000, log=True),
                    backend="serial")
    assert S.visits(res["jdag"][0]) == [2, 1, 2, 3, 4, 5, 6]


def test_collapse_cells_match_the_certificates():
    shrink, gdl = th.alpha_all_shrink(Z6, 1.0).value, th.alpha_gd_like(Z6, 1.0).value
    ac = G.collapse_threshold_per_rho(Z6, [1.0], backend="serial")["alpha_c"][0]
    alphas = np.concatenate([np.geomspace(0.3 * shrink, 0.99 * shrink, 5), np.geomspace(1.01 * shrink, 3 * gdl, 25)])
    taus = S.time_grid(60.0, 300)
    res = S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=alphas, times=taus, backend="serial")
    coll = res["status"] == bst.COLLAPSE
    np.testing.assert_array_equal(coll, alphas < ac)
    assert np.all(coll[alphas < shrink])
    cert, tc = res["event_collapse_persisting"], res["event_collapse"]
    assert np.all(cert[coll] <= tc[coll]) and np.all(np.isinf(tc[~coll]))
    for i in np.flatnonzero(coll):
        after = taus > tc[i]
        assert np.all(res["jdag"][i][after] == 0) and np.all(res["jdag"][i][~after] > 0)
    safe = res["event_no_collapse_persisting"]
    assert np.all(np.isfinite(safe[~coll])) and np.all(np.isinf(safe[coll]))
    assert np.all(res["jdag"][alphas >= gdl] == 6)


def test_collapse_threshold_scales_with_rho_and_lies_in_the_closed_form_bracket():
    rhos = np.array([0.5, 1.0, 3.0])
    out = G.collapse_threshold_per_rho(Z6, rhos, backend="serial")
    k = out["alpha_c"] / rhos
    assert np.ptp(k) / k.mean() < 1e-8  # (α, ρ) → (cα, cρ) scales the trajectory
    for r, a in zip(rhos, out["alpha_c"]):
        assert th.alpha_all_shrink(Z6, r).value < a < th.alpha_gd_like(Z6, r).value
    assert out["status"].all()
    assert np.all(out["bracket"][:, 1] / out["bracket"][:, 0] - 1 < 1e-10)


@pytest.mark.skipif(importlib.util.find_spec("theorycheck.solvers.integrate") is None,
                    reason="alpha_c.collapse_threshold needs theorycheck.solvers.integrate")
@pytest.mark.slow
def test_batched_collapse_threshold_agrees_with_thresholds_module():
    ref = AC.collapse_threshold(np.array([1.0, 2.0, 3.0]), 1.0)
    ours = G.collapse_threshold_per_rho(np.array([1.0, 2.0, 3.0]), [1.0], backend="serial")["alpha_c"][0]
    assert ours == pytest.approx(ref.value, rel=1e-8)


def test_real_time_single_example_follows_the_rescaled_path():
    """One example: real time is a reparametrisation of τ, so j† visits the same features
    (a prefix: real time reaches less far)."""
    alphas = np.array([0.33, 0.45, 0.6, 1.0])
    resc = S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=alphas, times=S.time_grid(50.0, 2000, log=True),
                     backend="serial")
    real = S_heatmap(Z6[None, :], optimizer="sam-l2", rho=1.0, alphas=alphas, times=S.time_grid(1e4, 400, log=True),
                     method="multi", backend="serial")
    for i in range(alphas.size):
        r, q = S.visits(real["jdag"][i]), S.visits(resc["jdag"][i])
        assert q[: len(r)] == r, (alphas[i], r, q)


def test_discrete_sam_converges_to_the_flow_at_first_order():
    taus = S.time_grid(50.0, 60, log=True, t_min=1e-2)
    flow = bt.integrate(bsys.MultiExample(Z6[None, :], [0.5], 1.0, optimizer="sam-l2"), taus, rtol=1e-11, atol=1e-13)
    dist = []
    for eta in (0.04, 0.02, 0.01):
        r = bdisc.discrete_run(bsys.MultiExample(Z6[None, :], [0.5], 1.0, optimizer="sam-l2"), eta, taus)
        assert r.status[0] == bst.DONE
        lf = np.interp(np.log(r.grid), np.log(taus), np.log(flow.obs["loss"][0]))
        dist.append(np.max(np.abs(np.log(r.obs["loss"][0]) - lf)))
    orders = np.log2(np.array(dist[:-1]) / np.array(dist[1:]))
    assert np.all((orders > 0.8) & (orders < 1.2)), orders


def test_discrete_overshoot_is_reported():
    """A step that would take some u_j through 0 (here the first one, α = 0.2, η = 5) stops
    the member with its reason; the cells it did not reach stay unknown (−1)."""
    r = bdisc.discrete_run(bsys.MultiExample(Z6[None, :], [0.2, 0.5], 1.0, optimizer="sam-l2"), 5.0,
                        np.array([5.0, 50.0]))
    assert [bst.STATUS[int(s)] for s in r.status] == ["sign_change", "done"]
    assert r.t_stop[0] == 0.0 and np.all(r.obs["jdag"][0] == -1) and np.all(r.obs["jdag"][1] > 0)


# ---------------------------------------------------------------------------- budgets, validation
def test_step_budget_is_reported_and_cells_stay_unknown():
    res = bt.integrate(ReducedL2(Z6, [0.5, 0.05], 1.0), S.time_grid(10.0, 50), max_steps=3)
    assert list(res.status) == [bst.MAX_STEPS, bst.MAX_STEPS]
    assert np.all(res.obs["jdag"][:, -1] == -1) and not res.ok


@pytest.mark.parametrize("grid", [np.array([1.0, 0.5]), np.array([-1.0, 1.0]), np.array([]), np.array([np.inf])])
def test_bad_grids_are_refused(grid):
    with pytest.raises(TheorycheckError):
        bt.integrate(ReducedL2(Z6, [0.5], 1.0), grid)


def test_unsupported_settings_are_refused_with_a_pointer():
    with pytest.raises(TheorycheckError, match="trajectory"):
        S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=[0.5], times=[1.0], depth=3, backend="serial")
    from theorycheck.cli.arguments import parse_range

    with pytest.raises(TheorycheckError, match="LO:HI:N"):
        parse_range("0.1:1", "--alphas")
    with pytest.raises(TheorycheckError):
        parse_range("0:1:5", "--alphas", log=True)


# ---------------------------------------------------------------------------- backends, save/load
def _small_heatmap(**kw):
    return S_heatmap(Z6, optimizer="sam-l2", rho=1.0, alphas=np.geomspace(0.05, 1.5, 70),
                     times=S.time_grid(10.0, 40, log=True), **kw)


@pytest.mark.parametrize("array_backend", ["numpy", "auto"])
def test_process_backend_is_bitwise_equal_to_serial(array_backend):
    opts = S.RunOptions(array_backend=array_backend)
    a = _small_heatmap(backend="serial", opts=opts)
    b = _small_heatmap(backend="processes", workers=2, opts=opts)
    if b.meta["run"]["array_backend"] == "numba":  # the compiled kernel: two threads in this process
        assert b.meta["run"]["workers"] == 2 and "threads" in b.meta["run"]["backend"]
    else:
        assert b.meta["run"]["chunks"] > 1
    for k in a.arrays:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_dask_backend_is_bitwise_equal_to_serial():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    a = _small_heatmap(backend="serial")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl:
        b = _small_heatmap(backend="dask", scheduler=cl.scheduler_address)
    assert b.meta["run"]["backend"] == "dask" and b.meta["run"]["chunks"] > 1
    for k in a.arrays:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_dask_backend_without_scheduler_is_a_user_error():
    with pytest.raises(TheorycheckError, match="scheduler"):
        _small_heatmap(backend="dask")


def test_torch_arrays_give_the_numpy_heatmap():
    pytest.importorskip("torch")
    a = _small_heatmap(backend="serial")
    b = _small_heatmap(backend="serial", opts=S.RunOptions(array_backend="torch", device="cpu"))
    np.testing.assert_array_equal(a["jdag"], b["jdag"])
    fin = np.isfinite(a["I"])
    np.testing.assert_allclose(a["I"][fin], b["I"][fin], rtol=1e-7)


def test_save_and_load_round_trip(tmp_path):
    a = _small_heatmap(backend="serial")
    a.meta["never"] = float("inf")
    npz, js = a.save(tmp_path / "h.v1")
    assert npz.name == "h.v1.npz" and js.name == "h.v1.json"
    b = S.SweepResult.load(tmp_path / "h.v1")
    for k in a.arrays:
        np.testing.assert_array_equal(a[k], b[k])
    assert b.meta["integrator"]["rtol"] == 1e-8 and b.meta["versions"]["numpy"] == np.__version__
    assert b.meta["never"] == "inf"  # non-finite metadata is written as strings, never as NaN/Infinity
    with pytest.raises(TheorycheckError):
        S.SweepResult.load(tmp_path / "missing")


def test_regime_map_classifies_cells_like_the_boundaries():
    res = G.regime_grid(Z6, alphas=np.geomspace(0.01, 5, 24), rhos=[0.5, 2.0], times=S.time_grid(60, 120, log=True),
                       backend="serial")
    reg = res["regime"]
    A = res["alpha"][None, :]
    np.testing.assert_array_equal(reg == 1, A < res["alpha_c"][:, None])
    np.testing.assert_array_equal(reg == 3, A >= res["alpha_gd_like"][:, None])
    assert set(np.unique(reg)) == {1, 2, 3}


def test_depth_sweep_linf_blows_up_for_alpha_above_rho_only_at_depth_3():
    z, rho = np.array([1.0, 2.0, 3.0]), 0.5
    alphas = np.array([0.3, 0.45, 0.6, 1.0])
    res = S_depth_sweep(z, depths=[2, 3], optimizer="sam-linf", rho=rho, alphas=alphas, times=S.time_grid(30.0, 60),
                        backend="serial")
    assert res["jdag"].shape == (2, 4, 60)
    names = [[bst.STATUS[int(s)] for s in row] for row in res["status"]]
    assert names[0] == ["collapse", "collapse", "done", "done"]  # L = 2: α < ρ slides to 0, α > ρ grows
    assert names[1][2:] == ["blowup", "blowup"]  # L = 3: α > ρ blows up ...
    t_star = C.lambdify((cf.z_j, cf.alpha_j, sy.rho), TE.linf_blowup_time(3))(3.0, alphas[2:], rho)
    np.testing.assert_allclose(res["event_blowup"][1, 2:], t_star, rtol=1e-6)
    assert np.all(res["jdag"][:, 2:, -1] == 3)
    # ... and for odd L, α < ρ rises to ρ without reaching 0 (C3 incomplete): no collapse
    assert names[1][:2] == ["done", "done"] and np.all(res["jdag"][1, :2, -1] > 0)


def test_seed_sweep_is_deterministic_and_matches_c2():
    kw = dict(seeds=[3, 1, 4, 1, 5], alpha=0.5, spread=0.5, optimizer="sam-linf", rho=0.5, times=np.array([2.0, 40.0]),
              backend="serial")
    a, b = S.seed_sweep(Z6, **kw), S.seed_sweep(Z6, **kw)
    np.testing.assert_array_equal(a["alpha0"], b["alpha0"])
    np.testing.assert_array_equal(a["jdag"], b["jdag"])
    np.testing.assert_array_equal(a["alpha0"][1], a["alpha0"][3])  # same seed, same init
    pred = [th.linf_prediction(Z6, row, 0.5, 2) for row in a["alpha0"]]
    assert a["jdag"][:, -1].tolist() == pred


@pytest.mark.parametrize("optimizer", ["gd", "sam-l2", "sam-linf"])
def test_torch_arrays_give_the_numpy_real_time_heatmap(optimizer):
    pytest.importorskip("torch")
    Z = np.array([[1.0, 2.0, 3.0], [1.2, 1.5, 2.5]])
    kw = dict(optimizer=optimizer, rho=0.5, alphas=[0.05, 0.3, 1.0], times=S.time_grid(1e3, 20, log=True),
              backend="serial")
    a = S_heatmap(Z, **kw)
    b = S_heatmap(Z, opts=S.RunOptions(array_backend="torch", device="cpu"), **kw)
    np.testing.assert_array_equal(a["jdag"], b["jdag"])
    np.testing.assert_allclose(a["loss"], b["loss"], rtol=1e-9)


def test_the_heatmap_draws_only_the_boundaries_it_is_given():
    """The engine's heatmap names no theory: its meta ``thresholds`` is None unless a pack hands it a function,
    which is called with (Z, rho, optimizer, depth) and saved as it returns."""
    z = np.array([0.5, 1.0, 2.0])
    kw = dict(optimizer="sam-l2", rho=1.0, alphas=[0.3, 0.8], times=[1.0, 2.0], backend="serial", progress=False)
    assert S_heatmap(z, **kw).meta["thresholds"] is None
    seen = []

    def boundaries(Z, rho, optimizer, depth):
        seen.append((Z.shape, rho, optimizer, depth))
        return {"alpha_mine": 0.5}

    r = S_heatmap(z, thresholds=boundaries, **kw)
    assert r.meta["thresholds"] == {"alpha_mine": 0.5} and seen == [((1, 3), 1.0, "sam-l2", 2)]
    assert r.as_dict()["thresholds"] == {"alpha_mine": 0.5}


def test_a_batch_of_the_balanced_flow_needs_its_optimizer():
    from theorycheck.batched import ops as bops
    from theorycheck.errors import TheorycheckError

    spec = S.SystemSpec("balanced", np.array([1.0, 2.0]), np.array([0.5]), np.array([1.0]))
    with pytest.raises(TheorycheckError, match="needs an optimizer"):
        spec.build(bops.get_ops("numpy"))

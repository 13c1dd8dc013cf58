"""The pixel networks: the batched doubled diagonal network against the single-trajectory
solver, the same integrator one member at a time, the log-space losses, the observables, the
task, the large ℓ2 max margin, saving and recomputing runs, and the device path."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest

from theorycheck import observe_pixels as ob
from theorycheck.batched.pixels import PixelFlow, device_ops, run_pixels
from theorycheck.errors import TheorycheckError
from theorycheck.imagedata import ImageSet
from theorycheck.symbolic import forms as C


def _data(n=12, d=5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d))
    X[:, -1] = 0.0  # a pixel that is 0 in every image
    y = np.where(X[:, 0] > X[:, 1], 1.0, -1.0)
    return X, y, X * y[:, None]


def test_log_losses_match_mpmath_everywhere():
    s = np.array([-1e300, -800.0, -40.0, -1.0, 0.0, 1e-8, 2.5, 36.0, 699.0, 700.0, 745.0, 800.0, 1e300])
    for backend in ("numpy", "torch"):
        ln_l, ln_d = C.log_loss_functions("logistic", backend)
        arg = s
        if backend == "torch":
            import torch

            arg = torch.tensor(s, dtype=torch.float64)
        with np.errstate(divide="ignore"):
            a = np.asarray(ln_l(arg), float)
            b = np.asarray(ln_d(arg), float)
        with mpmath.workdps(60):
            for k, v in enumerate(s):
                x = mpmath.mpf(v)
                ell = mpmath.log1p(mpmath.exp(-x))
                want_l = float(mpmath.log(ell)) if abs(v) < 1e5 else (-v if v > 0 else math.log(-v))
                want_d = float(-mpmath.log(1 + mpmath.exp(x))) if abs(v) < 1e5 else (-v if v > 0 else 0.0)
                assert a[k] == pytest.approx(want_l, rel=1e-14, abs=1e-300), (backend, v)
                assert b[k] == pytest.approx(want_d, rel=1e-14, abs=1e-15), (backend, v)
    ln_l, ln_d = C.log_loss_functions("exponential", "numpy")
    assert ln_l(np.array([3.0]))[0] == -3.0 and ln_d(np.array([-2.0]))[0] == 2.0


@pytest.mark.parametrize("L,opt", [(1, "gd"), (1, "sam-l2"), (2, "gd"), (2, "sam-l2"), (3, "gd"), (3, "sam-l2")])
def test_batched_pixels_equal_the_single_trajectory_solver_on_doubled_data(L, opt):
    """The doubled network on X is THEORY.md's network on (X, −X): the general-layer solver
    (solve/integrate.py, real time) gives the same β = β̃_+ − β̃_− to ≤ 1e-8 (smooth fields:
    both errors are of the order of the tolerances, rtol 1e-10 here, observed ≤ 1e-10).
    ℓ∞-SAM: the next test."""
    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve

    X, y, Z = _data()
    grid = np.array([0.0, 1.0, 4.0])
    r = run_pixels(Z, [opt], [0.5], [0.05], depth=L, time_kind="t", grid=grid, rtol=1e-10, atol=1e-12)
    assert str(r.status[0]) == "done"
    Xd = np.concatenate([X, -X], 1)
    for k, t in enumerate(grid[1:], 1):
        tr = solve(Setting(Xd, y, depth=L, optimizer=opt, rho=0.05, alpha=0.5), t_max=float(t))
        bt = tr.sign_beta[-1] * np.exp(tr.log_abs_beta[-1])
        ref = bt[:5] - bt[5:]
        assert np.max(np.abs(r.beta[0, k] - ref)) <= 1e-8 * max(1.0, np.max(np.abs(ref)))
        assert r.beta[0, k, -1] == 0.0  # the always-zero pixel never moves


def _rk45_jump_ratio() -> float:
    """R = max over the position ϑ ∈ (0, 1] of a jump of the field inside one Dormand–Prince step
    of |its true local error| / |its embedded error estimate|, to first order in the step h: the
    stages at c_i < ϑ see the field before the jump (f₋), the others the field after it (f₊), so
    the step's error is h·|Δf|·|ϑ − Σ_{c_i<ϑ} b_i| and its estimate h·|Δf|·|Σ_{c_i<ϑ} E_i|
    (scipy's RK45 tableau, the one of the batched engine; the 7th stage, at c = 1, is f at the new
    point). For this tableau R ≈ 170 (ϑ just below 0.3)."""
    from scipy.integrate import RK45

    c, b, E = np.append(RK45.C, 1.0), np.append(RK45.B, 0.0), np.asarray(RK45.E)
    knots = np.unique(c)
    worst = 0.0
    for lo, hi in zip(knots[:-1], knots[1:]):  # ϑ ∈ (lo, hi]: the stages with c_i ≤ lo see f₋
        minus = c <= lo
        B, S = float(b[minus].sum()), float(E[minus].sum())
        assert S != 0.0  # an interval where the estimate vanishes would leave the error unbounded
        worst = max(worst, max(abs(lo - B), abs(hi - B)) / abs(S))
    return worst


def test_batched_pixels_equal_the_single_trajectory_solver_across_a_switching_surface():
    """ℓ∞-SAM, L = 3, on the doubled data of the previous test: at t_c ≈ 2.304 the path crosses the
    switching surface g_4 = 0, where ε = ρ sign(g) and so the field jump. The single-trajectory
    solver locates the crossing (an event); the batched engine steps across it with its step
    control alone. Across a jump the error of a Dormand–Prince step is first order, h·|Δf|·(a
    function of where the jump falls in the step), and so is its estimate; how an accepted step
    straddles t_c is decided by accept/reject decisions that a change of 2e-16 anywhere flips, so
    the error after t_c takes any value up to R·√m·(atol + rtol·|y|) per component (R from the
    tableau, :func:`_rk45_jump_ratio`; √m: the RMS error norm over m components bounds each by √m
    times its scale). That is why a 1e-8 tolerance chosen by eye (observed 1.35e-9 at rtol 1e-10)
    moved by 8.7e-10 when the products' summation order changed in the last bit.

    The tolerance is this bound: per component of the state y = (t, θ = ln u), the straddling
    step's error ≤ R·√m·s and every other step's ≤ √m·s (an accepted estimate ≤ 1, taken as an
    upper bound of the 5th-order solution's local error), s = atol + rtol·max|y|; an error δθ
    at t_c moves β(4) by ≤ Σ_j |∂β(4)/∂θ_j(t_c)| δθ (first order, the sensitivities measured on
    the reference flow by finite differences) and an error δt of the clock by |β'(4)| δt. The
    reference's own error (crossing located, no jump inside a step) by the same count with R = 1.
    With rtol 1e-13 for both the bound is ≈ 3.8e-10 (R ≈ 169, √m = √11, Σ_j|∂β/∂θ_j| ≈ 3.8,
    |β'(4)| ≈ 0.06, 92 + 13 steps), tighter than the old 1e-8; the deviations seen under 2e-16
    perturbations of the data range over 1e-13…4e-12 — that spread is the jump's. At rtol 1e-10
    the same bound is 2.9e-7: the old 1e-8 held there by luck of where the step fell."""
    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve

    X, y, Z = _data()
    L, rho, alpha, rtol, atol, rtol_ref = 3, 0.05, 0.5, 1e-13, 1e-15, 1e-13
    grid = np.array([0.0, 1.0, 4.0])
    r = run_pixels(Z, ["sam-linf"], [alpha], [rho], depth=L, time_kind="t", grid=grid, rtol=rtol, atol=atol)
    assert str(r.status[0]) == "done"
    Xd = np.concatenate([X, -X], 1)

    def run(u0, T):
        tr = solve(Setting(Xd, y, depth=L, optimizer="sam-linf", rho=rho, alpha=u0), t_max=float(T), rtol=rtol_ref)
        bt = tr.sign_beta[-1] * np.exp(tr.log_abs_beta[-1])
        return tr, bt[:5] - bt[5:]

    tr4, ref4 = run(alpha, 4.0)
    t_c = min(e.time for e in tr4.events if e.kind == "cross")  # the switching surface this case is about
    assert 1.0 < t_c < 4.0
    # sensitivities of β(4) to θ just after the crossing, where the flow is smooth again (started on the
    # surface itself the reference solver's sign(g ≈ ±1e-17) decides a side: a response of 5e-3 to any δ)
    t_s = t_c + 0.01
    theta_s = tr4.at(t_s)[0] / L  # θ_j = ln u_j = ln β̃_j / L (u > 0)
    _, base = run(np.exp(theta_s), 4.0 - t_s)
    d = 1e-6
    G = sum(np.max(np.abs(run(np.exp(theta_s + d * np.eye(theta_s.size)[j]), 4.0 - t_s)[1] - base)) / d
            for j in range(theta_s.size))
    _, ref_before = run(alpha, 4.0 - 1e-4)
    slope = np.max(np.abs(ref4 - ref_before)) / 1e-4  # |β'(4)|
    sqrt_m = math.sqrt(1 + Xd.shape[1])  # the clock t and every θ_j
    Y_theta = float(np.max(np.abs(tr4.log_abs_beta[np.isfinite(tr4.log_abs_beta)]))) / L
    steps = int(r.steps[0])
    batched = (_rk45_jump_ratio() + steps) * sqrt_m * ((atol + rtol * Y_theta) * G + (atol + rtol * 4.0) * slope)
    reference = tr4.n_steps * sqrt_m * rtol_ref * (Y_theta * G + 4.0 * slope)
    tolerance = batched + reference
    assert tolerance < 1e-8  # the bound, at these tolerances, is tighter than the old chosen one
    for k, t in enumerate(grid[1:], 1):
        ref = run(alpha, t)[1] if t < 4.0 else ref4
        assert np.max(np.abs(r.beta[0, k] - ref)) <= tolerance, (t, tolerance)
        assert r.beta[0, k, -1] == 0.0  # the always-zero pixel never moves


@pytest.mark.slow
def test_one_batch_equals_one_member_at_a_time_and_zero_pixels_stay_zero():
    _, _, Z = _data(n=30, d=6, seed=3)
    opts = ["gd", "sam-l2", "sam-linf", "sam-l2"]
    als, rhos = [0.3, 0.3, 0.3, 1.0], [0.0, 0.2, 0.02, 0.2]
    grid = np.concatenate([[0.0], np.geomspace(1e-2, 20.0, 15)])
    for kind in ("tau",):
        b = run_pixels(Z, opts, als, rhos, depth=2, time_kind=kind, grid=grid, loss_target=0.05, max_steps=800)
        for m in range(len(opts)):
            s = run_pixels(Z, [opts[m]], [als[m]], [rhos[m]], depth=2, time_kind=kind, grid=grid, loss_target=0.05,
                           max_steps=800)
            assert str(s.status[0]) == str(b.status[m])
            k = s.last(0)
            assert k == b.last(m) and k > 0
            assert np.max(np.abs(b.beta[m, k] - s.beta[0, k])) <= 1e-10 * np.max(np.abs(s.beta[0, k]))
            assert np.all(b.beta[m, : k + 1, -1] == 0.0)


def test_rescaled_field_is_the_real_field_over_the_mean_weight():
    """dτ = (1/n) Σ_i |ℓ'(m̂_i)| dt: the two fields differ by that factor, computed here independently."""
    _, _, Z = _data(n=20, d=5, seed=4)
    for opt, rho in (("gd", 0.0), ("sam-l2", 0.3), ("sam-linf", 0.05)):
        ft = PixelFlow(Z, [opt], [0.7], [rho], L=2, time_kind="t")
        fs = PixelFlow(Z, [opt], [0.7], [rho], L=2, time_kind="tau")
        _, y0 = ft.initial()
        th = y0 + np.linspace(-0.3, 0.4, y0.shape[1])[None, :]
        rt, rs = ft.field(np.arange(1), th), fs.field(np.arange(1), th)
        # the perturbed point of this state, by hand (L = 2, doubled), and its mean |ℓ'|
        u = np.exp(th[0])
        beta = u[:4] ** 2 - u[4:] ** 2
        G = -(1 / (1 + np.exp(Z[:, :4] @ beta))) @ Z[:, :4] / Z.shape[0]
        Gt = np.concatenate([G, -G])
        g = Gt * u
        if opt == "sam-l2":
            uh = u + rho * g / np.sqrt(2 * np.sum(g * g))
        elif opt == "sam-linf":
            uh = u + rho * np.sign(g)
        else:
            uh = u
        bh = uh[:4] ** 2 - uh[4:] ** 2
        w = np.mean(1 / (1 + np.exp(Z[:, :4] @ bh)))
        np.testing.assert_allclose(rt, rs * w, rtol=1e-12)
        Gh = -(1 / (1 + np.exp(Z[:, :4] @ bh))) @ Z[:, :4] / Z.shape[0]
        np.testing.assert_allclose(rt[0], -np.concatenate([Gh, -Gh]) * uh / u, rtol=1e-12)


def test_discrete_step_by_hand_and_convergence_to_the_flow():
    _, _, Z = _data(n=15, d=4, seed=5)
    eta = 0.01
    r = run_pixels(Z, ["sam-l2"], [0.5], [0.1], depth=2, time_kind="discrete", eta=eta, grid=np.array([0.0, eta]))
    u = np.full(6, 0.5)
    beta = u[:3] ** 2 - u[3:] ** 2
    G = -(1 / (1 + np.exp(Z[:, :3] @ beta))) @ Z[:, :3] / 15
    g = np.concatenate([G, -G]) * u
    uh = u + 0.1 * g / np.sqrt(2 * np.sum(g * g))
    bh = uh[:3] ** 2 - uh[3:] ** 2
    Gh = -(1 / (1 + np.exp(Z[:, :3] @ bh))) @ Z[:, :3] / 15
    u1 = u - eta * np.concatenate([Gh, -Gh]) * uh
    np.testing.assert_allclose(r.beta[0, 1, :3], u1[:3] ** 2 - u1[3:] ** 2, rtol=1e-13)
    flow = run_pixels(Z, ["sam-l2"], [0.5], [0.1], depth=2, time_kind="t", grid=np.array([0.0, 2.0]),
                      rtol=1e-11, atol=1e-13)
    errs = []
    for e in (0.02, 0.01):
        dr = run_pixels(Z, ["sam-l2"], [0.5], [0.1], depth=2, time_kind="discrete", eta=e, grid=np.array([0.0, 2.0]))
        errs.append(np.max(np.abs(dr.beta[0, 1] - flow.beta[0, 1])))
    assert errs[1] < 0.6 * errs[0]  # first order in η


def test_torch_backend_matches_numpy_and_cuda_refuses_cleanly():
    torch = pytest.importorskip("torch")
    _, _, Z = _data(n=20, d=5, seed=6)
    grid = np.array([0.0, 0.5, 2.0])
    a = run_pixels(Z, ["gd", "sam-l2", "sam-linf"], [0.4] * 3, [0.0, 0.2, 0.02], depth=2, time_kind="tau", grid=grid)
    b = run_pixels(Z, ["gd", "sam-l2", "sam-linf"], [0.4] * 3, [0.0, 0.2, 0.02], depth=2, time_kind="tau", grid=grid,
                   array_backend="torch", device="cpu")
    np.testing.assert_allclose(a.beta, b.beta, rtol=1e-10, atol=1e-14)
    if not torch.cuda.is_available():
        with pytest.raises(TheorycheckError, match="no CUDA device"):
            device_ops("torch", "cuda")
        with pytest.raises(TheorycheckError, match="no CUDA device"):
            run_pixels(Z, ["gd"], [0.4], [0.0], depth=2, time_kind="tau", grid=grid, array_backend="torch",
                       device="cuda")
    with pytest.raises(TheorycheckError, match="needs array_backend 'torch'"):
        device_ops("numpy", "cuda")


def _sparse_data(n=40, d=30, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d)) * (rng.uniform(0, 1, (n, d)) < 0.15)  # MNIST-like: most entries 0
    X[:, 0] = rng.uniform(0.1, 1.0, n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X[y > 0, 1] += 1.0  # separable through pixel 2
    return X * y[:, None]


def test_csr_products_equal_dense_at_every_width_and_route():
    """Products: every route (dense BLAS, scipy's CSR, torch's CSR) gives β Zᵀ and w Z to rounding,
    at widths on both sides of the thresholds; the routes are the documented ones."""
    from theorycheck.batched.ops import get_ops
    from theorycheck.batched.pixels import SPARSE_MAX_ROWS, SPARSE_MAX_ROWS_SCIPY, Products

    Z = _sparse_data()
    rng = np.random.default_rng(0)
    assert Products(Z, get_ops("numpy"), "auto").S is None  # too few nonzeros for CSR to pay
    P = Products(Z, get_ops("numpy"), "sparse")
    assert P.density <= 0.35 and P.S is not None
    torch_ok = P.tS is not None
    for B in (1, 2, 5, SPARSE_MAX_ROWS_SCIPY + 1, SPARSE_MAX_ROWS, SPARSE_MAX_ROWS + 1):
        beta, w = rng.normal(size=(B, Z.shape[1])), rng.normal(size=(B, Z.shape[0]))
        want = "csr-scipy" if B == 1 else "csr-torch" if torch_ok else "csr-scipy"  # "sparse": CSR at every width
        assert P._route(B) == want
        P.kind = "auto"  # the auto routes once CSR is there
        assert P._route(B) == ("csr-scipy" if B == 1 else ("csr-torch" if B <= SPARSE_MAX_ROWS else "dense")
                               if torch_ok else ("csr-scipy" if B <= SPARSE_MAX_ROWS_SCIPY else "dense"))
        P.kind = "sparse"
        before = dict(P.calls)
        m, g = P.margins(beta), P.weighted_sum(w)
        assert P.calls[want] == before[want] + 2
        np.testing.assert_allclose(m, beta @ Z.T, rtol=1e-13, atol=1e-13 * np.abs(beta @ Z.T).max())
        np.testing.assert_allclose(g, w @ Z, rtol=1e-13, atol=1e-13 * np.abs(w @ Z).max())
        assert m.shape == (B, Z.shape[0]) and g.shape == (B, Z.shape[1])
    dense_only = Products(np.ones((4, 3)), get_ops("numpy"), "auto")  # density 1: never CSR
    assert dense_only.S is None and dense_only._route(1) == "dense"
    with pytest.raises(TheorycheckError, match="products"):
        Products(Z, get_ops("numpy"), "csc")


def test_sparse_and_dense_products_give_the_same_runs():
    Z = _sparse_data()
    opts, als, rhos = ["gd", "sam-l2", "sam-linf", "sam-l2"], [0.5] * 3 + [0.1], [0.0, 0.3, 0.02, 0.3]
    grid = np.concatenate([[0.0], np.geomspace(1e-2, 2.0, 6)])
    kw = dict(depth=2, time_kind="tau", grid=grid, loss_target=0.3, max_steps=150)
    a = run_pixels(Z, opts, als, rhos, products="dense", **kw)
    b = run_pixels(Z, opts, als, rhos, products="sparse", **kw)
    assert a.meta["products"]["calls"]["csr-scipy"] == 0 and b.meta["products"]["calls"]["dense"] == 0
    assert [str(s) for s in a.status] == [str(s) for s in b.status] and np.array_equal(a.steps, b.steps)
    for m in range(len(opts)):  # the other summation order changes the last bits; ℓ∞'s sign(G_j) amplifies them
        scale = np.nanmax(np.abs(a.beta[m]))
        assert np.nanmax(np.abs(b.beta[m] - a.beta[m])) <= (1e-9 if opts[m] == "sam-linf" else 1e-11) * scale
    assert np.array_equal(np.isnan(a.loss), np.isnan(b.loss))


def test_budgets_and_bad_input_say_what_ran_out():
    _, _, Z = _data()
    r = run_pixels(Z, ["gd"], [0.5], [0.0], depth=2, time_kind="t", grid=np.array([0.0, 1e4]), max_steps=5)
    assert str(r.status[0]) == "max_steps"
    for kw, msg in ((dict(time_kind="x"), "time_kind"), (dict(loss_target=-1.0), "loss_target"),
                    (dict(grid=np.array([1.0, 0.5])), "grid")):
        args = dict(depth=2, time_kind="t", grid=np.array([0.0, 1.0]))
        args.update(kw)
        with pytest.raises(TheorycheckError, match=msg):
            run_pixels(Z, ["gd"], [0.5], [0.0], **args)
    with pytest.raises(TheorycheckError, match="α > 0"):
        run_pixels(Z, ["gd"], [-1.0], [0.0], depth=2, time_kind="t", grid=np.array([0.0, 1.0]))
    with pytest.raises(TheorycheckError, match="eta"):
        run_pixels(Z, ["gd"], [0.5], [0.0], depth=2, time_kind="discrete", grid=np.array([0.0, 1.0]))


def test_linf_slides_through_the_surface_where_it_used_to_chatter():
    """ℓ∞-SAM, several examples: where some G_j changes sign the perturbation jumps; this flow used
    to stop with status chattering at t ≈ 3.1; it now slides on the surface (Filippov,
    tests/test_sliding.py) and runs to the end of its grid."""
    _, _, Z = _data()
    r = run_pixels(Z, ["sam-linf"], [0.5], [0.05], depth=2, time_kind="t", grid=np.array([0.0, 10.0]),
                   rtol=1e-10, atol=1e-12, max_steps=20000)
    ev = r.meta["events"]
    assert str(r.status[0]) == "done" and r.steps[0] < 5000
    assert ev["sliding_entries"][0] >= 1 and 2.5 < ev["first_sliding"][0] < 3.3 and ev["sliding_time"][0] > 0


def test_observables_by_hand():
    beta = np.array([[1.0, -2.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    bg = np.array([True, False, False, True])
    np.testing.assert_allclose(ob.background_fraction(beta, bg), [0.5, np.nan])
    assert ob.flat_baseline(bg) == 0.5 and ob.flat_baseline(bg, np.array([True, True, False, False])) == 0.5
    np.testing.assert_array_equal(ob.dominant_pixel(beta), [2, 0])
    inten = np.array([0.1, 0.9, 0.0, 0.5])
    np.testing.assert_allclose(ob.intensity_quantile(np.array([2, 1, 0]), inten), [1.0, 1 / 3, np.nan])
    X = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    np.testing.assert_allclose(ob.accuracy(beta, X, np.array([1.0, 1.0])), [0.5, 0.0])
    np.testing.assert_allclose(ob.angle_degrees_rows(np.array([1.0, 1.0]), np.array([1.0, 0.0])), 45.0)
    m = ob.matched([0.6, 0.3, 0.1], [0.1, 0.2, 0.3], [0.6, 0.2, np.nan], [0.5, 0.6, np.nan])
    assert m["level"] == 0.2 and m["index_a"] == 2 and m["index_b"] == 1 and m["difference"] == pytest.approx(0.3)


def test_large_l2_max_margin_equals_slsqp_on_small_data():
    from theorycheck.solvers.maxmargin import l2_max_margin, l2_max_margin_large

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 15))
    y = np.sign(X @ rng.normal(size=15))
    a = l2_max_margin(X * y[:, None])
    assert a.method == "slsqp+active-set"
    for b in (l2_max_margin(X * y[:, None], method="working-set", working=20),
              l2_max_margin_large(X * y[:, None], working=20)):
        assert b.method == "dual-working-set+active-set"
        assert b.kkt_residual < 1e-9 and b.margin == pytest.approx(a.margin, rel=1e-10)
        np.testing.assert_allclose(b.direction, a.direction, atol=1e-9)


def test_l2_max_margin_many_examples_take_the_working_set_and_budgets_say_so():
    """n > 2000 rows: "auto" is the working set, certified and equal to SLSQP forced on the same
    data; a round budget that runs out says so, and its answer is either certified (then equal)
    or reports a KKT residual ≥ 1e-9."""
    from theorycheck.solvers.maxmargin import MAX_DENSE_VARIABLES, l2_max_margin

    rng = np.random.default_rng(5)
    n = MAX_DENSE_VARIABLES + 500
    X = rng.normal(size=(2 * n, 6))
    w = rng.normal(size=6)
    X = X[np.abs(X @ w) > 0.3][:n]
    assert X.shape[0] == n
    Z = X * np.sign(X @ w)[:, None]
    a = l2_max_margin(Z)
    assert a.method == "dual-working-set+active-set" and a.kkt_residual < 1e-9
    # the max margin of all rows is that of the rows it binds on (a feasible β for all): SLSQP there
    near = Z[a.margins < 1.3]
    assert 6 <= near.shape[0] < 400
    b = l2_max_margin(near, method="slsqp")
    assert b.method == "slsqp+active-set" and b.margin == pytest.approx(a.margin, rel=1e-9)
    assert np.min(a.margins) == pytest.approx(1.0, rel=1e-14)  # 1 up to the rounding of β / min margin
    c = l2_max_margin(Z, method="working-set", working=1, max_rounds=1)
    if c.kkt_residual < 1e-9:
        assert c.margin == pytest.approx(a.margin, rel=1e-9)
    else:
        assert "stopped after 1 rounds" in c.method
    with pytest.raises(TheorycheckError):
        l2_max_margin(Z, method="newton")


def _images(seed=0, n=80):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    x = np.zeros((n, 8, 8, 1), dtype=np.uint8)
    x[:, 2:6, 2:6, 0] = rng.integers(0, 60, (n, 4, 4))
    x[y == 0, 3, 3, 0] = 250  # class 0: a bright centre
    x[y == 1, 4, 4, 0] = 250
    x[:, 1, 1, 0] = 7  # constant over every image
    return ImageSet("mnist", x, y, x[:30].copy(), y[:30].copy(), ("0", "1", "2"), "synthetic")


def test_pixel_task_rows_labels_background_and_centring():
    from theorycheck.pixel_task import pixel_task

    S = _images()
    t = pixel_task("mnist", (0, 1), images=S)
    assert np.all(np.diff(t.train_indices) > 0) and set(S.y_train[t.train_indices]) == {0, 1}
    np.testing.assert_array_equal(t.y, np.where(S.y_train[t.train_indices] == 0, 1.0, -1.0))
    assert not t.active[0] and t.background[0]  # an always-zero pixel: background, inactive
    r = pixel_task("mnist", (2, None), n_train=20, images=S)
    assert r.X.shape[0] == 20 and (r.y == 1).sum() == 10
    c = pixel_task("mnist", (0, 1), preprocess="centred", images=S)
    assert np.all(c.X[:, 9] == 0.0) and not c.active[9]  # the constant pixel (1, 1) is exactly 0
    np.testing.assert_allclose(c.X.mean(0), 0.0, atol=1e-12)
    with pytest.raises(TheorycheckError, match="classes"):
        pixel_task("mnist", "1,1", images=S)


@pytest.mark.slow
def test_saved_runs_load_without_pickles_and_recompute(tmp_path):
    from theorycheck.numerics.minor_first.e2.linear_images import Config, linear_images

    from theorycheck.pixel_task import pixel_task

    S = _images(seed=2)
    task = pixel_task("mnist", (0, 1), images=S)
    cfg = Config(alphas=(0.05, 0.5), checkpoints=12, margins=False, max_steps=400)
    res = linear_images(cfg, save=tmp_path / "runs", task=task).as_dict()
    listing = json.loads((tmp_path / "runs" / "runs.json").read_text())
    assert len(listing["runs"]) == 6
    r0 = listing["runs"][2]  # ℓ2-SAM, α = 0.05 (gd α0, gd α1, sam-l2 α0, …)
    with np.load(r0["npz"], allow_pickle=False) as z:
        beta, times, idx, y = z["beta"], z["times"], z["train_indices"], z["y"]
        alpha, rho = float(z["alpha"]), float(z["rho"])
    assert r0["optimizer"] == "sam-l2" and alpha == 0.05 and len(r0["checkpoints"]) == beta.shape[0]
    # recompute from the indices: the rows of the training split, in its order, with the saved labels
    X = S.x_train[idx].reshape(idx.size, -1) / 255.0
    again = run_pixels(X * y[:, None], ["sam-l2"], [alpha], [rho], depth=2, time_kind="tau", grid=times,
                       loss_target=cfg.loss_target, max_steps=400, rtol=cfg.rtol, atol=cfg.rtol / 1000)
    k = again.last(0)
    assert k == beta.shape[0] - 1
    np.testing.assert_allclose(again.beta[0, : k + 1], beta, rtol=1e-9, atol=1e-13)  # batch vs alone: BLAS bits
    assert res["runs"][2]["npz"] == r0["npz"]


@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("opt", ["gd", "sam-l2", "sam-linf"])
@pytest.mark.parametrize("time_kind", ["tau", "t"])
def test_pixel_data_at_1e_minus_300_run_without_a_traceback(L, opt, time_kind):
    """Data at 1e-300: the clock's scale max_i‖z_i‖ was np.linalg.norm's underflowed 0 (a
    ZeroDivisionError from rates), and ℓ2's ln(term of S²) and S squared G ~ 1e-300 (non_finite).
    Over τ (or t) = 4 the flow moves β by ~1e-300: finite, and 0 to float64's eye."""
    _, _, Z = _data()
    r = run_pixels(Z * 1e-300, [opt], [0.5], [0.05], depth=L, time_kind=time_kind, grid=np.array([0.0, 1.0, 4.0]))
    assert str(r.status[0]) == "done"
    assert np.all(np.isfinite(r.beta)) and np.max(np.abs(r.beta[0, -1])) <= 1e-290

"""The regression flows (param pm / uv, squared loss) of GD, n-SAM and 1-SAM against a second,
independent integration: the field written by hand in the weights' own coordinates (w₊, w₋) or (u, v)
(checked here against finite differences of the loss), integrated by scipy's Radau at rtol 1e-12 to a
residual of 1e-14. The engine's β must agree within its own error bar plus the reference's (a
first-order estimate of the remaining move, computed here independently)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import theorycheck as tc
from theorycheck.solvers.regression import solve_regression
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import regression as R

OPTIMIZERS = ("gd", "n-sam", "1-sam")
RHO = 0.1


def problem(seed=0, n=5, d=12):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta_star = np.zeros(d)
    beta_star[:2] = [1.0, 0.5]
    return X, X @ beta_star


# ---------------------------------------------------------------- the reference, by hand
def _beta(param, w, d):
    a, b = w[..., :d], w[..., d:]
    return a * a - b * b if param == "pm" else a * b


def _grad_w(param, w, G):
    """∇_w of a loss whose gradient in β is G (rows: examples): pm (2a G, −2b G), uv (b G, a G)."""
    d = G.shape[-1]
    a, b = w[:d], w[d:]
    return np.concatenate([2 * a * G, -2 * b * G], axis=-1) if param == "pm" else np.concatenate([b * G, a * G], axis=-1)


def reference_field(param, opt, rho, X, y):
    n, d = X.shape

    def g_full(w):  # ∇L, L = (1/2n)‖Xβ − y‖²
        return _grad_w(param, w, X.T @ (X @ _beta(param, w, d) - y) / n)

    def g_example(w):  # rows ∇ℓ_i, ℓ_i = ½(⟨x_i, β⟩ − y_i)²
        return _grad_w(param, w, X * (X @ _beta(param, w, d) - y)[:, None])

    def f(t, w):
        if opt == "gd":
            return -g_full(w)
        if opt == "n-sam":
            return -g_full(w + rho * g_full(w))
        Gi = g_example(w)
        return -np.mean([g_example(w + rho * Gi[i])[i] for i in range(n)], axis=0)

    return f, g_full


def reference(param, opt, rho, alpha, X, y, tol=1e-14):
    n, d = X.shape
    f, _ = reference_field(param, opt, rho, X, y)
    a0 = np.full(d, alpha)
    w0 = np.concatenate([a0, a0 if param == "pm" else np.zeros(d)])
    scale = max(1.0, float(np.linalg.norm(y)))

    def residual(t, w):
        return float(np.linalg.norm(X @ _beta(param, w, d) - y)) - tol * scale

    residual.terminal, residual.direction = True, -1
    sol = solve_ivp(f, (0.0, 1e13), w0, method="Radau", rtol=1e-12, atol=1e-14 * alpha, events=residual)
    assert sol.status == 1, sol.message
    w = sol.y[:, -1]
    beta = _beta(param, w, d)
    # its remaining move, to first order: β' = −M ∇_βL with M = ∂β/∂w (∂β/∂w)ᵀ (diagonal), the residual
    # r = y − Xβ closes by M Xᵀ (X M Xᵀ)⁻¹ r
    a, b = w[:d], w[d:]
    M = 4 * (a * a + b * b) if param == "pm" else a * a + b * b
    r = y - X @ beta
    move = (X * M).T @ np.linalg.solve((X * M) @ X.T, r)
    return beta, 2 * float(np.linalg.norm(move))


def test_reference_field_is_the_gradient_of_the_loss():
    """The hand-written ∇L of the reference agrees with central differences of L."""
    X, y = problem()
    d = X.shape[1]
    rng = np.random.default_rng(1)
    for param in ("pm", "uv"):
        _, g = reference_field(param, "gd", RHO, X, y)
        w = rng.uniform(0.1, 1.0, 2 * d)

        def L(w):
            return 0.5 * np.mean((X @ _beta(param, w, d) - y) ** 2)

        h = 1e-6
        fd = np.array([(L(w + h * e) - L(w - h * e)) / (2 * h) for e in np.eye(2 * d)])
        assert np.max(np.abs(fd - g(w))) < 1e-8


# ---------------------------------------------------------------- the symbolic flows
@pytest.mark.parametrize("param", ["pm", "uv"])
def test_chart_flows_keep_the_mirror_coordinate_in_the_row_space(param):
    """θ' is a constant multiple of ĝ (so θ(t) − θ(0) ∈ row space of X), GD conserves the effective
    scale, and n-SAM / 1-SAM move ln c² by −(k²/2) ρ g ĝ: the identities the error bar rests on."""
    ch = R.chart(param, 2)
    k = {"pm": 4, "uv": 2}[param]
    for asc in (sy.NO_ASCENT, sy.GRADIENT_ASCENT, sy.EXAMPLE_GRADIENT_ASCENT):
        f = R.regression_flow(ch, asc)
        assert sp.simplify(f["ds1"] - f["ds2"] + k * R.ghat) == 0
        rate = sp.simplify(f["ds1"] + f["ds2"])  # d ln c²/dt
        assert sp.simplify(rate + (0 if asc.trivial else k * k // 2 * sy.rho * R.g * R.ghat)) == 0
        # β = q(c)² h(θ) in the chart
        q = ch.q_scale.subs(R.c_, ch.scale)
        assert sp.simplify((R.chart_beta(ch) - q**2 * R.h(2).subs(R.theta, ch.theta)).rewrite(sp.exp)) == 0


def test_chart_start_and_the_gd_invariant_at_depth_3():
    ch = R.chart("pm", 3)
    assert R.chart_start(ch) == (sp.log(R.alpha), sp.log(R.alpha))
    f = R.regression_flow(ch, sy.NO_ASCENT)
    c = ch.scale
    dc = sp.diff(c, R.s1) * f["ds1"] + sp.diff(c, R.s2) * f["ds2"]
    assert sp.simplify(dc) == 0


# ---------------------------------------------------------------- against the reference
# the per-example reference at small α is slow (a Python loop over examples inside Radau's Jacobian)
CASES = [pytest.param(p, o, a, marks=[pytest.mark.slow] if (o, a) == ("1-sam", 0.01) else [])
         for p in ("pm", "uv") for o in OPTIMIZERS for a in (1.0, 0.01)]


@pytest.mark.parametrize("param,opt,alpha", CASES)
def test_engine_agrees_with_an_independent_integration(param, opt, alpha):
    X, y = problem()
    ref, ref_err = reference(param, opt, RHO, alpha, X, y)
    r = solve_regression(X, y, param=param, optimizer=opt, rho=RHO, alpha=alpha, residual_tol=1e-13)
    assert r.status == "converged" and r.stiff_from is not None
    gap = float(np.linalg.norm(r.beta - ref))
    assert gap <= r.error_bar + ref_err, (gap, r.error_bar, ref_err)
    # and at the default stopping rule (residual 1e-10): the gap is the stopping error, inside the bar
    r2 = solve_regression(X, y, param=param, optimizer=opt, rho=RHO, alpha=alpha)
    assert float(np.linalg.norm(r2.beta - ref)) <= r2.error_bar + ref_err


@pytest.mark.slow
@pytest.mark.parametrize("param,opt", [(p, o) for p in ("pm", "uv") for o in OPTIMIZERS])
def test_engine_agrees_at_a_tiny_scale(param, opt):
    """α = 1e-3: the tail is stiff (the coordinates off the support move on time scales ~1/α²)."""
    X, y = problem()
    ref, ref_err = reference(param, opt, RHO, 1e-3, X, y)
    r = solve_regression(X, y, param=param, optimizer=opt, rho=RHO, alpha=1e-3, residual_tol=1e-13)
    assert r.status == "converged"
    assert float(np.linalg.norm(r.beta - ref)) <= r.error_bar + ref_err


def test_per_coordinate_alpha_and_the_effective_scale():
    """GD keeps the effective scale at α (per coordinate); n-SAM lowers it, coordinate-wise."""
    X, y = problem()
    alpha = np.linspace(0.05, 0.2, X.shape[1])
    for param in ("pm", "uv"):
        gd = solve_regression(X, y, param=param, optimizer="gd", alpha=alpha)
        assert np.allclose(gd.effective_scale, alpha, rtol=1e-9)
        ref, ref_err = reference_alpha(param, "gd", alpha, X, y)
        assert float(np.linalg.norm(gd.beta - ref)) <= gd.error_bar + ref_err
        ns = solve_regression(X, y, param=param, optimizer="n-sam", rho=RHO, alpha=alpha)
        assert np.all(ns.effective_scale <= alpha * (1 + 1e-12))


def reference_alpha(param, opt, alpha, X, y):
    """The reference with a per-coordinate α (the scalar one, broadcast)."""
    n, d = X.shape
    f, _ = reference_field(param, opt, RHO, X, y)
    w0 = np.concatenate([alpha, alpha if param == "pm" else np.zeros(d)])

    def residual(t, w):
        return float(np.linalg.norm(X @ _beta(param, w, d) - y)) - 1e-14 * max(1.0, float(np.linalg.norm(y)))

    residual.terminal, residual.direction = True, -1
    sol = solve_ivp(f, (0.0, 1e13), w0, method="Radau", rtol=1e-12, atol=1e-14 * alpha.min(), events=residual)
    w = sol.y[:, -1]
    a, b = w[:d], w[d:]
    M = 4 * (a * a + b * b) if param == "pm" else a * a + b * b
    beta = _beta(param, w, d)
    move = (X * M).T @ np.linalg.solve((X * M) @ X.T, y - X @ beta)
    return beta, 2 * float(np.linalg.norm(move))


def test_gd_limit_is_argmin_Q_of_the_potential_scale():
    """GD's limit minimises Q of scale potential_scale (pm: α, uv: α/2) on {Xβ = y}."""
    from theorycheck.solvers.interpolate import argmin_Q

    X, y = problem()
    for param in ("pm", "uv"):
        r = solve_regression(X, y, param=param, optimizer="gd", alpha=0.1)
        q = argmin_Q(X, y, depth=2, alpha=r.potential_scale)
        assert np.linalg.norm(r.beta - q.beta) <= r.error_bar + 1e-9


# ---------------------------------------------------------------- the command
def test_cli_trajectory_json_is_solve_as_dict(tmp_path, capsys):
    from theorycheck.cli.main import main

    X, y = problem()
    data = tmp_path / "reg.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    for param in ("pm", "uv"):
        for opt in OPTIMIZERS:
            assert main(["trajectory", "--data", str(data), "--param", param, "--loss", "squared", "--optimizer", opt,
                         "--alpha", "0.1", "--rho", str(RHO), "--json"]) == 0
            out = json.loads(capsys.readouterr().out)
            s = tc.Setting.from_csv(data, param=param, loss="squared", optimizer=opt, alpha=0.1, rho=RHO)
            want = tc.jsonio.to_plain(tc.solve(s).as_dict())
            out.pop("seconds"), want.pop("seconds")
            assert out == want
            assert out["status"] == "converged" and out["strength"]["kind"] == "floating-point check"
            assert len(out["effective_scale"]) == X.shape[1] and out["error_bar"] < 1e-8


def test_cli_refuses_what_is_not_integrated(tmp_path, capsys):
    from theorycheck.cli.main import main

    X, y = problem()
    data = tmp_path / "reg.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    for opt in ("sam-l2", "sam-linf"):
        assert main(["trajectory", "--data", str(data), "--param", "pm", "--optimizer", opt]) != 0
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "n-sam" in err

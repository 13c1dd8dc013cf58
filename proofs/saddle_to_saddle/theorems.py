"""Theorems of the pack ``saddle-to-saddle`` (``theorycheck prove``): THEORY.md beside this file, step by step.
The algorithm's steps are checked in sympy on symbolic data (n = 3 examples, two columns on the support)."""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic.theorem import Identity, Theorem

N, P = 3, 2  # symbolic examples, and columns on a saddle's support


def _data():
    X = sp.Matrix(N, P, lambda i, j: sp.Symbol(f"x{i}{j}", real=True))
    y = sp.Matrix(N, 1, lambda i, _: sp.Symbol(f"y{i}", real=True))
    return X, y


def _loss(X, y, b):
    r = X * b - y
    return (r.T * r)[0, 0] / (2 * X.rows)


def _grad(X, y, b):
    return X.T * (X * b - y) / X.rows


def _ss1():
    a, t, g = sp.Symbol("alpha", positive=True), sp.Symbol("t", real=True), sp.Symbol("g", real=True)
    S = sp.Function("S")(t)  # S(t) = ∫₀ᵗ ∇L_i dt
    wp, wm = a * sp.exp(-2 * S), a * sp.exp(2 * S)
    dS = {sp.Derivative(S, t): g}
    yield Identity("w₊ = α e^(−2S), w₋ = α e^(2S) with S' = ∇L_i solve dw₊/dt = −2w₊∇L_i, dw₋/dt = +2w₋∇L_i "
                   "(the gradient flow of L(w₊² − w₋²))",
                   [sp.diff(wp, t).subs(dS), sp.diff(wm, t).subs(dS)], [-2 * wp * g, 2 * wm * g])
    yield Identity("w₊ w₋ = α² along the flow", wp * wm, a ** 2)
    s = 2 * S / sp.log(a)  # s = −2S / ln(1/α)
    yield Identity("β_i = w₊² − w₋² = α^(2−2s) − α^(2+2s) with s = −2S/ln(1/α)", wp ** 2 - wm ** 2,
                   sp.exp((2 - 2 * s) * sp.log(a)) - sp.exp((2 + 2 * s) * sp.log(a)), simplifier=sp.expand)
    tt, S0, t0 = sp.Symbol("ttilde", positive=True), sp.Symbol("S0", real=True), sp.Symbol("t0", real=True)
    s_of = 2 * (S0 + g * (tt * sp.log(1 / a) - t0)) / sp.log(a)  # ∇L_i = g while β rests at a saddle
    yield Identity("in accelerated time t̃ = t/ln(1/α), while β rests at a saddle (∇L_i = g): ds/dt̃ = −2g",
                   sp.diff(s_of, tt), -2 * g, simplifier=sp.simplify)
    b_of = {v: a ** (2 - 2 * v) - a ** (2 + 2 * v) for v in (sp.Rational(1, 2), 1, sp.Rational(3, 2))}
    yield Identity("as α → 0⁺, β_i → 0 at s_i = 1/2 and β_i → 1 at s_i = 1: β_i is 0 while |s_i| < 1 and leaves 0 "
                   "when |s_i| reaches 1", [sp.limit(b_of[v], a, 0, "+") for v in (sp.Rational(1, 2), 1)], [0, 1])
    yield Identity("as α → 0⁺, 1/β_i → 0 at s_i = 3/2: past |s_i| = 1 the coordinate would blow up, so a saddle "
                   "must stop s there", sp.limit(1 / b_of[sp.Rational(3, 2)], a, 0, "+"), 0)


def _ss2():
    X, y = _data()
    b = (X.T * X).inv() * X.T * y
    yield Identity("on the support P the saddle solves the normal equations: ∇L_P(β) = X_Pᵀ(X_Pβ_P − y)/n = 0",
                   _grad(X, y, b), sp.zeros(P, 1))
    bb = sp.Matrix(P, 1, lambda j, _: sp.Symbol(f"b{j}", real=True))
    dd = sp.Matrix(P, 1, lambda j, _: sp.Symbol(f"delta{j}", real=True))
    yield Identity("L(β + δ) = L(β) + ⟨∇L(β), δ⟩ + ‖Xδ‖²/(2n): with ∇L_j = 0 where β_j ≠ 0 and σ_j∇L_j ≥ 0, "
                   "σ_jδ_j ≥ 0 where β_j = 0 (the KKT conditions), L(β + δ) ≥ L(β) for every feasible δ",
                   _loss(X, y, bb + dd), _loss(X, y, bb) + (_grad(X, y, bb).T * dd)[0, 0] + (dd.T * X.T * X * dd)[0, 0] / (2 * N),
                   simplifier=sp.expand)


def _ss3():
    tau, s0 = sp.Symbol("tau", nonnegative=True), sp.Symbol("s0", real=True)
    X, y = _data()
    b = (X.T * X).inv() * X.T * y
    g = _grad(X, y, b)
    yield Identity("a coordinate of the support keeps s_i = ±1 until the next jump: s_i − 2τ∇L_i(β^k) = s_i, so β^k "
                   "is feasible for the next saddle's problem and L(β^(k+1)) ≤ L(β^k)",
                   [s0 - 2 * tau * g[j] for j in range(P)], [s0] * P, simplifier=sp.simplify)


def _ss4():
    X, y = _data()
    n = X.rows
    nu = sp.Matrix(n, 1, lambda i, _: sp.Symbol(f"nu{i}", real=True))
    bb = sp.Matrix(P, 1, lambda j, _: sp.Symbol(f"b{j}", real=True))
    tau = sp.Symbol("tau", nonnegative=True)
    r = X * bb - y
    yield Identity("s stays in the row space: if s = Xᵀν, then s − 2τ∇L(β) = Xᵀ(ν − 2τ r/n), r = Xβ − y",
                   X.T * nu - 2 * tau * _grad(X, y, bb), X.T * (nu - 2 * tau * r / n), simplifier=sp.expand)
    yield Identity("weak duality with equality: for Xβ = y, ⟨Xᵀν, β⟩ = ⟨ν, y⟩; at the final saddle s = Xᵀν equals "
                   "sign β_i on the support and |s| ≤ 1, so ‖β‖₁ = ⟨ν, y⟩ ≤ ‖β'‖₁ for every interpolator β'",
                   ((X.T * nu).T * bb)[0, 0], (nu.T * (X * bb))[0, 0], simplifier=sp.expand)


def _ss5():
    t, g0 = sp.Symbol("ttilde", positive=True), sp.Symbol("g0", positive=True)  # g0 = ‖∇L(0)‖∞
    xx, xy = sp.Symbol("xx", positive=True), sp.Symbol("xy", real=True, nonzero=True)  # ‖x_i‖², ⟨x_i, y⟩
    yield Identity("first jump: s(t̃) = −2t̃∇L(0) first reaches |s_i| = 1 at t̃₁ = 1/(2‖∇L(0)‖∞), ∇L(0) = −Xᵀy/n",
                   sp.solve(sp.Eq(2 * t * g0, 1), t), [1 / (2 * g0)])
    b = sp.Symbol("b", real=True)
    bstar = sp.solve(sp.diff((xx * b ** 2 - 2 * xy * b) / 2, b), b)[0]
    yield Identity("a first saddle with one coordinate i: β_i = ⟨x_i, y⟩/‖x_i‖², whose sign is that of "
                   "s_i(t̃₁) = sign⟨x_i, y⟩ (the sign constraint does not bind)", [bstar, sp.sign(bstar * xy)],
                   [xy / xx, 1])


THEOREMS = (
    Theorem("SS1", "log coordinates and the threshold", "From w±(0) = α·1, β_i = α^(2−2s_i) − α^(2+2s_i) with "
            "ds/dt̃ = −2∇L(β): as α → 0 a coordinate is 0 while |s_i| < 1.", _ss1),
    Theorem("SS2", "each saddle is a constrained minimiser", "The saddle β^k (least squares on the active set under "
            "the signs of s) satisfies ∇L_j = 0 on its support, and its KKT conditions make it a minimiser.", _ss2),
    Theorem("SS3", "the loss does not increase", "L(β^(k+1)) ≤ L(β^k): the previous saddle is feasible for the "
            "next problem.", _ss3),
    Theorem("SS4", "the final saddle's ℓ1 certificate", "s = Xᵀν at all times; at a final saddle with zero loss "
            "(Xβ = y) the pair (β, ν) has no duality gap: β is a minimum-ℓ1 interpolator.", _ss4),
    Theorem("SS5", "the first jump in closed form", "t̃₁ = 1/(2‖∇L(0)‖∞); when one coordinate i enters, "
            "β¹_i = ⟨x_i, y⟩/‖x_i‖².", _ss5),
)


def theorems() -> list[Theorem]:
    """The pack's theorems, in THEORY.md's order."""
    return list(THEOREMS)

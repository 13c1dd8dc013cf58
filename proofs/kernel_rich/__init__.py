"""Pack ``kernel-rich``: Woodworth, Gunasekar, Lee, Moroshko, Savarese, Golan, Soudry, Srebro,
"Kernel and Rich Regimes in Overparametrized Models" (COLT 2020). THEORY.md beside this file.

Theorems (``prove``): KR1 the solved flow, KR2 the mirror-descent invariant, KR3 the
potential, KR4 its α → ∞ and α → 0 limits. Claims (``verify``): KR.limit (flow = argmin Q_α),
KR.l1 (α → 0: min-ℓ1, refined to KR.l1.norm), KR.l2 (α → ∞: min-ℓ2). ``predict`` is what
``theorycheck predict --pack kernel-rich`` prints.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from theorycheck.claims.claim import Claim, Outcome
from theorycheck.proofs._core import Fact, Identity, StepResult, Theorem, verified
from theorycheck.symbolic import regression as R

DEPTHS = (2, 3, 4)


# ------------------------------------------------------------------------------- theorems
def _kr1():
    for D in DEPTHS:
        wps, wms = R.pm_solution(D)
        fp, fm = R.pm_field(D)
        # d/dt w(G(t)) = (dw/dG)·g must equal the field at w = w(G)
        yield Identity(f"D={D}: w₊ = {sp.sstr(wps)} solves dw₊/dt = {sp.sstr(fp)} (dG/dt = g)",
                       sp.diff(wps, R.G) * R.g, fp.subs({R.wp: wps, R.wm: wms}),
                       domains={R.G: (-0.01, 0.01)})
        yield Identity(f"D={D}: w₋ = {sp.sstr(wms)} solves dw₋/dt = {sp.sstr(fm)}",
                       sp.diff(wms, R.G) * R.g, fm.subs({R.wp: wps, R.wm: wms}),
                       domains={R.G: (-0.01, 0.01)})
        yield Identity(f"D={D}: w±(0) = α (G(0) = 0)", [wps.subs(R.G, 0), wms.subs(R.G, 0)], [R.alpha, R.alpha])


def _kr2():
    for D in DEPTHS:
        wps, wms = R.pm_solution(D)
        beta = R.pm_beta(D).subs({R.wp: wps, R.wm: wms})
        th = R.theta_of_G(D)
        yield Identity(f"D={D}: β(t)/α^{D} = h_D(θ) with θ = {sp.sstr(th)}: ∇Q_α(β(t)) = θ is linear in "
                       "G(t) = Xᵀ∫(Xβ − y), so it stays in the row space of X",
                       beta / R.alpha**D, R.h(D).subs(R.theta, th), domains={R.G: (-0.01, 0.01)},
                       simplifier=lambda e: sp.simplify(sp.powsimp(sp.expand_power_base(e, force=True), force=True)))
    yield Fact("at a limit that interpolates, θ = Xᵀν and Xβ = y are the KKT conditions of min Q_α s.t. Xβ = y "
               "(Q_α strictly convex: h_D increasing)", _increasing)


def _increasing() -> StepResult:
    for D in DEPTHS:
        dh = sp.simplify(sp.diff(R.h(D), R.theta))
        if D == 2:
            ok = sp.simplify(dh - 2 * sp.cosh(R.theta)) == 0
        else:
            pw = sp.Rational(D, D - 2)
            ok = sp.simplify(dh - pw * ((1 - R.theta) ** (-pw - 1) + (1 + R.theta) ** (-pw - 1))) == 0
        if not ok:
            return StepResult("refuted", f"h_{D}' is not the expected sum of positive terms: {dh}")
    return verified("h_D' = 2cosh θ (D = 2), (D/(D−2))[(1−θ)^(−D/(D−2)−1) + (1+θ)^(−D/(D−2)−1)] > 0 on (−1, 1)")


def _kr3():
    z = R.z
    yield Identity("D=2: q'(z) = arcsinh(z/2) for q(z) = 2 − √(4+z²) + z·arcsinh(z/2)",
                   sp.diff(R.q2(), z), sp.asinh(z / 2))
    yield Identity("D=2: arcsinh(z/2) inverts h_2(θ) = 2 sinh θ", R.h(2).subs(R.theta, sp.asinh(z / 2)), z)
    yield Identity("D=2: q(0) = 0", R.q2().subs(z, 0), 0)
    for D in DEPTHS[1:]:
        qt = R.q_via_theta(D)
        yield Identity(f"D={D}: d/dθ q_D(h_D(θ)) = θ·h_D'(θ), i.e. q_D' = h_D⁻¹ with q_D(h_D(θ)) = "
                       f"{sp.sstr(qt)}", sp.diff(qt, R.theta), R.theta * sp.diff(R.h(D), R.theta),
                       domains={R.theta: (-0.9, 0.9)})
        yield Identity(f"D={D}: q_D(0) = 0", qt.subs(R.theta, 0), 0)


def _limit(expr, var, point, expect, what):
    def fn() -> StepResult:
        v = sp.limit(expr, var, point)
        if sp.simplify(v - expect) == 0:
            return verified(f"{what}: limit = {v}")
        return StepResult("refuted", f"{what}: limit is {v}, not {expect}")
    return fn


def _kr4():
    z, th = R.z, R.theta
    yield Fact("D=2, α → ∞: q(z)/z² → 1/4 as z → 0, so Q_α(β)·α² → ‖β‖₂²/4 (min-ℓ2)",
               _limit(R.q2() / z**2, z, 0, sp.Rational(1, 4), "q(z)/z²"))
    yield Fact("D=2, α → 0: q(z)/(|z| log|z|) → 1 as z → ∞, so Q_α(β)/log(1/α²) → ‖β‖₁ (min-ℓ1)",
               _limit(R.q2() / (z * sp.log(z)), z, sp.oo, 1, "q(z)/(z log z)"))
    for D in DEPTHS[1:]:
        qt, hh = R.q_via_theta(D), R.h(D)
        yield Fact(f"D={D}, α → ∞: q_D(z)/z² → (D−2)/(4D) as z → 0 (θ → 0), so Q_α ∝ ‖β‖₂² (min-ℓ2)",
                   _limit(qt / hh**2, th, 0, sp.Rational(D - 2, 4 * D), "q_D/z²"))
        yield Fact(f"D={D}, α → 0: q_D(z)/z → 1 as z → ∞ (θ → 1), so Q_α(β) → ‖β‖₁ (min-ℓ1)",
                   _limit(qt / hh, th, 1, 1, "q_D/z"))


THEOREMS = (
    Theorem("KR1", "the signed flow, solved", "Gradient flow on β = w₊^D − w₋^D, w±(0) = α, with g = ∂Lo/∂β: "
            "w₊ = α e^(−2G), w₋ = α e^(2G) (D = 2); w±^(2−D) = α^(2−D) ± D(D−2)G (D ≥ 3), G = ∫₀ᵗ g.", _kr1),
    Theorem("KR2", "mirror descent with potential Q_α", "∇Q_α(β(t)) stays in the row space of X; the limit, if "
            "it interpolates, is argmin{Q_α(β) : Xβ = y} (D = 2: Q_α = α² Σ q(β_j/α²); D ≥ 3: Q_α = α^D Σ "
            "q_D(β_j/α^D) with q_D' = h_D⁻¹).", _kr2),
    Theorem("KR3", "the potentials", "q(z) = 2 − √(4+z²) + z·arcsinh(z/2) has q' = h_2⁻¹; q_D has no closed form "
            "for D ≥ 3 but q_D(h_D(θ)) = θh_D(θ) − H_D(θ) with H_D = ∫₀^θ h_D in closed form.", _kr3),
    Theorem("KR4", "kernel and rich limits", "Q_α, rescaled, tends to ‖·‖₂² as α → ∞ and to ‖·‖₁ as α → 0.", _kr4),
)


def theorems() -> list[Theorem]:
    return list(THEOREMS)


# ------------------------------------------------------------------------------- predictions
def predict(X, y, *, depth: int = 2, alpha: float = 1.0, **_ignored) -> dict:
    """The pack's predicted limit: argmin Q_α (``beta``), min-ℓ1 and min-ℓ2 interpolators."""
    from theorycheck.solvers.interpolate import argmin_Q, min_l1, min_l2
    from theorycheck.solvers.pm_flow import check_regression_data

    X, y = check_regression_data(X, y)
    q = argmin_Q(X, y, depth=depth, alpha=alpha)
    l1, l2 = min_l1(X, y), min_l2(X, y)
    return {"beta": q.beta.tolist(), "beta_l1": l1.beta.tolist(), "beta_l2": l2.beta.tolist(),
            "objective": q.objective, "constraint_residual": q.constraint_residual, "status": q.status,
            "iterations": q.iterations, "l1_norm": l1.objective, "l1_unique": l1.unique,
            "l1_kkt_residual": l1.kkt_residual, "l2_norm": l2.objective, "depth": int(depth), "alpha": float(alpha)}


# ------------------------------------------------------------------------------- claims
def _data(seed: int, n: int, d: int, sparse: bool):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)), 2)
    b = np.zeros(d)
    k = max(1, n - 1) if sparse else d
    idx = rng.choice(d, size=k, replace=False)
    b[idx] = np.round(rng.uniform(0.5, 2.0, size=k) * rng.choice([-1, 1], size=k), 2)
    return X, np.round(X @ b, 6)


@st.composite
def _inputs(draw, alphas: bool = True, sparse: bool = True):
    n = draw(st.integers(1, 3))
    d = draw(st.integers(n + 1, 6))
    x = {"seed": draw(st.integers(0, 10_000)), "n": n, "d": d, "depth": draw(st.sampled_from((2, 3)))}
    if alphas:
        x["log10_alpha"] = draw(st.sampled_from((-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0)))
    x["sparse"] = sparse
    return x


def _describe(x) -> dict:
    if "X" in x:
        return {k: (np.asarray(v).tolist() if k in ("X", "y") else v) for k, v in x.items()}
    X, y = _data(x["seed"], x["n"], x["d"], x.get("sparse", True))
    return {**x, "X": X.tolist(), "y": y.tolist()}


def _xy(x):
    if "X" in x:
        return np.asarray(x["X"], float), np.asarray(x["y"], float)
    return _data(x["seed"], x["n"], x["d"], x.get("sparse", True))


def _check_limit(x) -> Outcome:
    from theorycheck.solvers.interpolate import argmin_Q
    from theorycheck.solvers.pm_flow import flow_pm, remaining_step

    X, y = _xy(x)
    D, alpha = x["depth"], 10.0 ** x["log10_alpha"]
    # the budget in evaluations, not seconds: a verdict must not depend on the machine's load
    fl = flow_pm(X, y, depth=D, alpha=alpha, max_seconds=float("inf"), max_evaluations=200_000)
    if not fl.converged:
        return Outcome(None, detail={"flow_status": fl.status, "residual": fl.residual})
    pr = argmin_Q(X, y, depth=D, alpha=alpha)
    from theorycheck.symbolic.compile import pm_forms

    th = np.asarray(pr.dual) @ X
    metric = alpha**D * pm_forms(D)["dh"](th) * np.ones(X.shape[1])
    pred_err = 2.0 * float(np.linalg.norm(remaining_step(X, y, pr.beta, metric)))
    scale = max(1.0, float(np.linalg.norm(pr.beta)))
    bar = fl.error_bar + pred_err + 1e-9 * scale
    dev = float(np.linalg.norm(fl.beta - pr.beta))
    return Outcome(dev <= bar, dev, {"flow_beta": fl.beta, "predicted_beta": pr.beta, "error_bar": bar,
                                     "flow_residual": fl.residual, "flow_t": fl.t, "predict_status": pr.status})


#: α sequences for the limits (small: per depth; large)
SMALL = {2: (1e-4, 1e-8, 1e-16), 3: (1e-2, 1e-3, 1e-4)}
LARGE = {2: (10.0, 100.0, 1000.0), 3: (3.0, 10.0, 30.0)}


def _gaps(x, alphas, target):
    from theorycheck.solvers.interpolate import argmin_Q

    X, y = _xy(x)
    out = []
    for a in alphas:
        q = argmin_Q(X, y, depth=x["depth"], alpha=a)
        out.append((a, q, float(np.linalg.norm(q.beta - target))))
    return out


def _limit_outcome(gaps, scale, extra):
    """ok when the last gap is below 1e-6·scale plus the solver's own residual (``tol``); fails when
    larger and the gap has stopped decreasing (its last step shrank it by ≤ tol); inconclusive when
    it is still decreasing: β_α can approach its limit as slowly as 1/log(1/α) (the α steps double
    log(1/α), so such a gap only halves per step), and a falling sequence is no evidence of a
    nonzero limit."""
    es = [g for _, _, g in gaps]
    tol = 1e-6 * scale + 10 * max(q.constraint_residual for _, q, _ in gaps)
    detail = {"alphas": [a for a, _, _ in gaps], "gaps": es, "tolerance": tol, **extra}
    if es[-1] <= tol:
        return Outcome(True, es[-1], detail)
    if len(es) >= 2 and es[-1] < es[-2] - tol:
        detail["undecided_because"] = "the gap is still decreasing"
        return Outcome(None, es[-1], detail)
    return Outcome(False, es[-1], detail)


def _check_l1(x) -> Outcome:
    from theorycheck.solvers.interpolate import min_l1

    X, y = _xy(x)
    l1 = min_l1(X, y)
    gaps = _gaps(x, SMALL[x["depth"]], l1.beta)
    return _limit_outcome(gaps, max(1.0, l1.objective), {"beta_l1": l1.beta, "l1_unique": l1.unique,
                                                         "beta_alpha": gaps[-1][1].beta})


def _check_l1_norm(x) -> Outcome:
    """‖β_α‖₁ → min ‖β‖₁ always; and β_α → β_ℓ1 when the ℓ1 minimiser is unique."""
    from theorycheck.solvers.interpolate import min_l1

    X, y = _xy(x)
    l1 = min_l1(X, y)
    gaps = _gaps(x, SMALL[x["depth"]], l1.beta)
    norm_gaps = [(a, q, abs(float(np.abs(q.beta).sum()) - l1.objective)) for a, q, _ in gaps]
    out = _limit_outcome(norm_gaps, max(1.0, l1.objective), {"l1_unique": l1.unique, "beta_l1": l1.beta,
                                                              "beta_alpha": gaps[-1][1].beta})
    if out.ok and l1.unique:
        out2 = _limit_outcome(gaps, max(1.0, l1.objective), {})
        out.ok = out2.ok
        out.deviation = max(out.deviation, out2.deviation)
        out.detail["gaps_beta"] = out2.detail["gaps"]
    return out


def _check_l2(x) -> Outcome:
    from theorycheck.solvers.interpolate import min_l2

    X, y = _xy(x)
    l2 = min_l2(X, y)
    gaps = _gaps(x, LARGE[x["depth"]], l2.beta)
    return _limit_outcome(gaps, max(1.0, l2.objective), {"beta_l2": l2.beta})


#: min-ℓ1 not unique: X = [1 1], y = 1; by symmetry the flow ends at (½, ½), a vertex LP picks (1, 0)
TIE = {"X": [[1.0, 1.0]], "y": [1.0], "depth": 2, "sparse": False}

_L1_REFINED = Claim(
    key="KR.l1.norm",
    statement="α → 0: ‖β_α‖₁ → min{‖β‖₁ : Xβ = y}, and β_α → the minimum-ℓ1 interpolator when it is unique",
    inputs=_inputs(alphas=False), check=_check_l1_norm, tolerance="gap ≤ 1e-6·max(1, ‖β‖₁) at the smallest α",
    pinned=(TIE, {**TIE, "depth": 3}), describe=_describe, max_examples=12)

CLAIMS = (
    Claim(key="KR.limit",
          statement="gradient flow on β = w₊^D − w₋^D from w±(0) = α·1 (squared loss, Xβ = y solvable) converges "
          "to an interpolator, and it is argmin{Q_α(β) : Xβ = y}",
          inputs=_inputs(), check=_check_limit,
          tolerance="‖β_flow − β_Q‖ ≤ error bar of the flow (remaining step, invariant drift) + of the solver",
          pinned=({"seed": 1, "n": 3, "d": 6, "depth": 2, "log10_alpha": -2.0, "sparse": True},
                  {"seed": 1, "n": 3, "d": 6, "depth": 3, "log10_alpha": -2.0, "sparse": True},
                  {"seed": 2, "n": 2, "d": 5, "depth": 3, "log10_alpha": 1.0, "sparse": True},
                  {**TIE, "log10_alpha": -2.0}),
          describe=_describe, max_examples=30),
    Claim(key="KR.l1", statement="α → 0: the limit tends to the minimum-ℓ1 interpolator",
          inputs=_inputs(alphas=False), check=_check_l1,
          tolerance="‖β_α − β_ℓ1‖ ≤ 1e-6·max(1, ‖β_ℓ1‖₁) at the smallest α (10⁻¹⁶ for D = 2, 10⁻⁴ for D = 3)",
          pinned=(TIE,), refined=_L1_REFINED, describe=_describe, max_examples=20),
    Claim(key="KR.l2", statement="α → ∞: the limit tends to the minimum-ℓ2 interpolator",
          inputs=_inputs(alphas=False, sparse=False), check=_check_l2,
          tolerance="‖β_α − β_ℓ2‖ ≤ 1e-6·max(1, ‖β_ℓ2‖) at the largest α (10³ for D = 2, 30 for D = 3)",
          pinned=(TIE, {**TIE, "depth": 3}), describe=_describe, max_examples=20),
)


def claims() -> list[Claim]:
    return list(CLAIMS)

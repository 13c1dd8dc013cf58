"""Theorems of the pack ``kernel-rich`` (``theorycheck prove``): THEORY.md beside this file, step by step."""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import regression as R
from theorycheck.symbolic.theorem import Fact, Identity, StepResult, Theorem, verified

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
    """The pack's theorems, in THEORY.md's order."""
    return list(THEOREMS)

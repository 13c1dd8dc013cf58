"""Theorems of the pack ``sam-regression`` (``theorycheck prove``): THEORY.md's SR1–SR3, step by step, on the
flows the engine derives (:func:`theorycheck.symbolic.regression.regression_flow`: one coordinate of pm or uv
in its log chart, for an optimizer's symbolic ascent step)."""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import regression as R
from theorycheck.symbolic.theorem import Fact, Identity, StepResult, Theorem, refuted, verified

PARAMS = ("uv", "pm")
#: d ln c/dt = −κ ρ g ĝ (per example for 1-SAM, averaged): κ per parametrisation (SR1, derived below)
KAPPA = {"uv": 1, "pm": 4}
#: dθ/dt = −K ĝ (SR2)
K_THETA = {"uv": 2, "pm": 4}


def _optimizers():
    from theorycheck.optimizers import GD, N_SAM, ONE_SAM

    return GD, N_SAM, ONE_SAM


def chart_rates(param: str, optimizer) -> tuple[sp.Expr, sp.Expr]:
    """(d ln c/dt, dθ/dt) of one coordinate in the engine's chart (c the effective scale, θ the mirror
    coordinate), in (s₁, s₂, g, ĝ, ρ): for a per-example optimizer the rate of one example's term, which
    the flow averages over the examples."""
    ch = R.chart(param, 2)
    f = R.regression_flow(ch, optimizer.ascent())
    s = (R.s1, R.s2)
    rate = sum(sp.diff(sp.log(ch.scale), si) * f[k] for si, k in zip(s, ("ds1", "ds2")))
    theta = sum(sp.diff(ch.theta, si) * f[k] for si, k in zip(s, ("ds1", "ds2")))
    return sp.simplify(rate), sp.simplify(theta)


def scale_rate(param: str, optimizer) -> sp.Expr:
    """d ln c/dt as SR1 states it: −κ ρ g ĝ (0 for GD), in (g, ĝ, ρ) — the integrand that
    ``SR.identity`` integrates along a flow. ``prove`` checks it against :func:`chart_rates`."""
    from theorycheck.symbolic.model import rho

    return sp.Integer(0) if not optimizer.perturbs else -KAPPA[param] * rho * R.g * R.ghat


# ------------------------------------------------------------------------------------------------ SR1
def _sr1():
    for param in PARAMS:
        for opt in _optimizers():
            rate, _ = chart_rates(param, opt)
            per = " (one example's term: the flow averages it over i)" if opt.per_example else ""
            yield Identity(f"{param}, {opt.title}: d ln c/dt = {sp.sstr(scale_rate(param, opt))}{per}, "
                           f"c = {sp.sstr(R.chart(param, 2).scale)}", rate, scale_rate(param, opt))
    yield Fact("the identity does not give α∞ ≤ α: g ĝ < 0 is possible (ĝ is ∇L at the perturbed point)",
               _sign_indefinite)


def _sign_indefinite() -> StepResult:
    """One example, one coordinate, uv, n-SAM, on the engine's perturbed point β̂: x = 1, y = 10, u = 2,
    v = 1/2 (β = 1, r = −9, g = −9), ρ = 1: ĝ = ∇L(β̂) has the sign opposite to g."""
    from theorycheck.optimizers import N_SAM
    from theorycheck.symbolic.model import grad_norm, rho

    f = R.regression_flow(R.chart("uv", 2), N_SAM.ascent())
    u, v, x, y = sp.Integer(2), sp.Rational(1, 2), sp.Integer(1), sp.Integer(10)
    at = {R.s1: sp.log(u + v), R.s2: sp.log(u - v), rho: 1, grad_norm: 1}
    beta = sp.simplify(f["beta"].subs(at))
    g = x * (x * beta - y)
    beta_hat = sp.simplify(f["beta_hat"].subs({**at, R.g: g}))
    ghat = x * (x * beta_hat - y)
    if g * ghat < 0:
        return verified(f"x = 1, y = 10, u = 2, v = 1/2, ρ = 1: β = {beta}, g = {g}, β̂ = {beta_hat}, ĝ = {ghat}: "
                        f"g ĝ = {g * ghat} < 0, so c grows there")
    return refuted(f"g ĝ = {g * ghat} ≥ 0 at the chosen point", {"g": str(g), "ghat": str(ghat)})


# ------------------------------------------------------------------------------------------------ SR2
def _sr2():
    for param in PARAMS:
        ch = R.chart(param, 2)
        for opt in _optimizers():
            _, theta = chart_rates(param, opt)
            yield Identity(f"{param}, {opt.title}: dθ/dt = −{K_THETA[param]}ĝ (θ = {sp.sstr(ch.theta)}; ĝ = Xᵀ(…)/n, "
                           "so θ(t) − θ(0) stays in the row space of X)", theta, -K_THETA[param] * R.ghat)
        qs = ch.q_scale.subs(R.c_, ch.scale)
        yield Identity(f"{param}: β = q(c)² h(θ) with q(c) = {sp.sstr(ch.q_scale)}, h = 2 sinh: ∇Q_q(c)(β) = θ",
                       R.chart_beta(ch), qs**2 * R.h(2).subs(R.theta, ch.theta),
                       simplifier=lambda e: sp.simplify(e.rewrite(sp.exp)))
    yield Fact("at an interpolating limit with c∞ > 0: θ∞ = Xᵀν and Xβ∞ = y are the KKT conditions of the strictly "
               "convex min{Q_q(c∞)(β) : Xβ = y}, so β∞ = argmin Q_q(c∞) exactly (h' = 2cosh > 0)", _convex)


def _convex() -> StepResult:
    dh = sp.simplify(sp.diff(R.h(2), R.theta) - 2 * sp.cosh(R.theta))
    return verified("h' = 2cosh θ > 0") if dh == 0 else refuted(f"h' − 2cosh θ = {dh}", {})


# ------------------------------------------------------------------------------------------------ SR3
def origin_rates(param: str, optimizer, examples: int = 2) -> list[sp.Expr]:
    """The growth rates of e^{s₁}, e^{s₂} (uv: u + v, u − v; pm: w₊, w₋) near w = 0, with ``examples``
    examples whose gradients at β = 0 are g_1, …, g_n: the chart field at g = ĝ = g_i, averaged over the
    examples for a per-example optimizer (at g = ĝ = mean g_i otherwise). Near w = 0, β and β̂ are
    quadratic in w, so g and ĝ are g(0) + O(|w|²): these are the eigenvalues of the linearised flow when
    the chart field does not depend on the state (checked by ``prove``)."""
    f = R.regression_flow(R.chart(param, 2), optimizer.ascent())
    gs = sp.symbols(f"g_1:{examples + 1}", real=True)
    vals = gs if optimizer.per_example else [sum(gs) / examples]
    return [sp.expand(sum(f[k].subs({R.g: v, R.ghat: v}) for v in vals) / len(vals)) for k in ("ds1", "ds2")]


def _sr3():
    from theorycheck.symbolic.model import rho

    g1, g2 = sp.symbols("g_1 g_2", real=True)
    gbar, m = (g1 + g2) / 2, (g1**2 + g2**2) / 2
    for param in PARAMS:
        f = R.regression_flow(R.chart(param, 2), _optimizers()[2].ascent())
        yield Identity(f"{param}: the chart field depends on the state only through g and ĝ (∂(ds/dt)/∂s = 0), so "
                       "e^s₁, e^s₂ are coordinates near w = 0 in which the linearised flow is diagonal",
                       sp.Matrix([sp.diff(f[k], si) for k in ("ds1", "ds2") for si in (R.s1, R.s2)]), sp.zeros(4, 1))
        for opt in _optimizers():
            mm = (m if opt.per_example else gbar**2) if opt.perturbs else 0
            want = _origin_eigenvalues(param, gbar, mm, rho)
            yield Identity(f"{param}, {opt.title}, two examples: the rates at w = 0 are {sp.sstr(want)} (ḡ = mean g_i "
                           f"= −c, m = {'mean g_i²' if opt.per_example else 'ḡ²'})", sp.Matrix(origin_rates(param, opt)),
                           sp.Matrix(want))
    yield Fact("1-SAM's threshold is the lower: m_j = mean_i (x_ij y_i)² ≥ c_j² (the variance is ≥ 0), so "
               "ρ m_j > |c_j| is met at a smaller ρ than ρ c_j² > |c_j|", lambda: _variance(g1, g2))


def _variance(g1, g2) -> StepResult:
    gbar, m = (g1 + g2) / 2, (g1**2 + g2**2) / 2
    diff = sp.simplify(m - gbar**2 - ((g1 - gbar) ** 2 + (g2 - gbar) ** 2) / 2)
    return verified("m − ḡ² = mean (g_i − ḡ)² ≥ 0") if diff == 0 else refuted(f"m − ḡ² − variance = {diff}", {})


def _origin_eigenvalues(param: str, gbar, m, rho) -> list:
    """SR3: uv (u + v, u − v): −ḡ − ρm, ḡ − ρm; pm (w₊, w₋): −2ḡ − 4ρm, 2ḡ − 4ρm."""
    k = 1 if param == "uv" else 2
    return [-k * gbar - k * k * rho * m, k * gbar - k * k * rho * m]


THEOREMS = (
    Theorem("SR1", "the effective-scale identity", "Along the n-SAM / 1-SAM flow (uv or pm, depth 2) the effective "
            "scale c (uv: √(u² − v²); pm: √(w₊w₋)) obeys d ln c/dt = −κρ g ĝ (κ = 1 uv, 4 pm; per example and "
            "averaged for 1-SAM), so c_t = α exp(−κρ∫g ĝ) exactly; GD conserves c. g ĝ has no sign.", _sr1),
    Theorem("SR2", "the mirror coordinate stays in the row space", "θ' = −Kĝ (K = 2 uv, 4 pm) and β = q(c)² 2sinh θ: "
            "an interpolating limit with c∞ > 0 is exactly argmin{Q_q(c∞)(β) : Xβ = y}.", _sr2),
    Theorem("SR3", "the origin", "The linearised flow at w = 0 has eigenvalues ±|c_j| − ρ m_j (uv; m_j = c_j² for "
            "n-SAM, mean_i (x_ij y_i)² for 1-SAM): above ρ = |c_j|/m_j for every j the origin attracts.", _sr3),
)


def theorems() -> list[Theorem]:
    """The pack's theorems, in THEORY.md's order."""
    return list(THEOREMS)

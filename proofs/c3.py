"""C3 (L ≥ 3, ℓ∞-SAM): du_j/dτ = z_j (u_j − ρ)^(L−1) blows up at
τ_j* = 1/((L−2) z_j (α_j − ρ)^(L−2)); the first to blow up wins,
j = argmax z_j (α_j − ρ)^(L−2) among α_j > ρ. Checked with the depth L symbolic."""

from __future__ import annotations

import sympy as sp

from theorycheck import closed_forms as cf
from theorycheck import symbolic as sy

from ._core import Fact, Identity, Theorem, incomplete, refuted, register, verified

rho, tau, L = sy.rho, sy.tau, cf.L_sym
v0 = sp.Symbol("v0", positive=True)  # α_j − ρ > 0
zp = sp.Symbol("z_j", positive=True)
s_ = sp.Symbol("s", positive=True)


def _above(expr):
    return expr.subs({cf.alpha_j: rho + v0, cf.z_j: zp})


def _monotone():
    score = sp.Symbol("score", positive=True)
    t_star = 1 / ((L - 2) * score)
    d = sp.diff(t_star, score)
    Lg = sp.Symbol("Lg", positive=True)  # L − 2 > 0
    if sp.simplify(d.subs(L, Lg + 2)).is_negative:
        return verified("τ* = 1/((L−2)·score) with score = z_j (α_j − ρ)^(L−2): strictly decreasing in the score, "
                        "so the first blow-up is at argmax score (verified symbolically for L > 2)")
    return refuted(f"dτ*/dscore = {d}", {})


def _tie():
    # L = 3, z = (1, 2), α = (3, 2), ρ = 1: scores 1·2 = 2·1: both blow up at τ* = 1/2.
    # Near τ*, u_j − ρ ≈ 1/(z_j (τ* − τ)), so β_j = u_j³ ∝ z_j^(−3): direction ∝ (1, 1/8).
    T = sp.Symbol("T", positive=True)  # τ* − τ
    z, alpha, r = (1, 2), (3, 2), 1
    u = [cf.linf_blowup_solution(3).subs({cf.alpha_j: a, cf.z_j: zz, rho: r}) for a, zz in zip(alpha, z)]
    ts = [cf.linf_blowup_time(3).subs({cf.alpha_j: a, cf.z_j: zz, rho: r}) for a, zz in zip(alpha, z)]
    if ts[0] != ts[1]:
        return verified("no tie")
    beta = [ui.subs(tau, ts[0] - T) ** 3 for ui in u]
    ratio = sp.limit(beta[1] / beta[0], T, 0, dir="+")
    d = [1 / sp.sqrt(1 + ratio**2), ratio / sp.sqrt(1 + ratio**2)]
    return incomplete(f"ties in the score: L = 3, z = (1, 2), α = (3, 2), ρ = 1 both blow up at τ* = {ts[0]}; "
                   f"β_2/β_1 → {ratio}, so the direction tends to (1, {ratio})/‖·‖, not a basis vector. Refined: "
                   "with tied maximal scores the limit is ∝ (z_j^(−L/(L−2))) over the tied coordinates",
                   {"L": 3, "z": list(z), "alpha": list(alpha), "rho": r, "limit_direction": [float(x) for x in d]})


def _below_rho():
    # odd L: the field z (u − ρ)^(L−1) ≥ 0, so u rises to ρ; L = 3 solved: u = ρ − 1/(1/(ρ−α) + zτ)
    a = sp.Symbol("a", positive=True)  # ρ − α > 0
    u3 = rho - 1 / (1 / a + zp * tau)
    ok_ode = sp.simplify(sp.diff(u3, tau) - cf.balanced_field_linf_positive(3).subs({cf.u_j: u3, cf.z_j: zp})) == 0
    ok_lim = sp.limit(u3, tau, sp.oo) == rho
    # even L = 4: u hits 0 at τ0 = ((ρ−α)^(−2) − ρ^(−2)) / (2 z)
    u4 = rho - (a ** -2 - 2 * zp * tau) ** sp.Rational(-1, 2)
    ok4 = sp.simplify(sp.diff(u4, tau) - cf.balanced_field_linf_positive(4).subs({cf.u_j: u4, cf.z_j: zp})) == 0
    tau0 = (a ** -2 - rho ** -2) / (2 * zp)
    ok0 = sp.simplify(u4.subs(tau, tau0).subs(a, rho / (1 + s_))) == 0  # a = ρ − α < ρ
    if ok_ode and ok_lim and ok4 and ok0:
        return incomplete("THEORY.md is silent on α_j < ρ for L ≥ 3, and C2's picture (hit 0, stay) does not carry "
                          "over: for odd L the field z(u − ρ)^(L−1) is ≥ 0, so u_j rises to ρ and never reaches 0 "
                          "(L = 3: u = ρ − 1/(1/(ρ−α) + zτ) → ρ, verified); for even L it hits 0 at "
                          "τ0 = ((ρ−α)^(−(L−2)) − ρ^(−(L−2)))/((L−2)z) (L = 4 verified) and slides. So with every "
                          "α_j < ρ the limit is 0 for even L but ρ^L·(1, …, 1) (direction 1/√d) for odd L",
                          {"L": 3, "z": [1, 2], "alpha": [0.5, 0.5], "rho": 1, "limit_beta": [1.0, 1.0]})
    return refuted("below-ρ analysis failed", {})


def _minor():
    # L = 3, z = (1, 2), α = (3, 1.2), ρ = 1: scores 2 and 0.4 → the minor coordinate 1 wins
    z, alpha, r = (1, 2), (3, sp.Rational(6, 5)), 1
    scores = [cf.linf_blowup_score(3).subs({cf.z_j: zz, cf.alpha_j: a, rho: r}) for zz, a in zip(z, alpha)]
    if scores[0] > scores[1]:
        return verified(f"'can favour minor coordinates': L = 3, z = (1, 2), α = (3, 6/5), ρ = 1 gives scores "
                        f"{scores[0]} > {scores[1]}: the minor coordinate 1 blows up first")
    return refuted("example does not favour the minor coordinate", {})


def build():
    sol = _above(cf.linf_blowup_solution(L))
    yield Identity("u_j = ρ + ((α_j−ρ)^(−(L−2)) − (L−2) z_j τ)^(−1/(L−2)) solves du/dτ = z (u − ρ)^(L−1) (L symbolic)",
                   sp.diff(sol, tau), cf.balanced_field_linf_positive(L).subs({cf.u_j: sol, cf.z_j: zp}))
    yield Identity("u_j(0) = α_j (α_j > ρ, L symbolic)", sol.subs(tau, 0), rho + v0,
                   simplifier=lambda e: sp.simplify(sp.powdenest(e, force=True)))
    yield Identity("the base vanishes at τ* = 1/((L−2) z_j (α_j − ρ)^(L−2)): blow-up time",
                   _above((cf.alpha_j - rho) ** (-(L - 2)) - (L - 2) * cf.z_j * cf.linf_blowup_time(L)), 0)
    yield Identity("GD (ρ = 0) is the special case: τ* = 1/((L−2) z_j α_j^(L−2))",
                   cf.gd_blowup_time(L), 1 / ((L - 2) * cf.z_j * cf.alpha_j ** (L - 2)))
    yield Fact("the first to blow up is argmax z_j (α_j − ρ)^(L−2) among α_j > ρ", _monotone)
    yield Fact("ties in the blow-up score", _tie)
    yield Fact("ℓ∞-SAM can favour a minor coordinate", _minor)
    yield Fact("coordinates with α_j < ρ when L ≥ 3", _below_rho)


register(Theorem(
    key="C3",
    title="ℓ∞-SAM, L ≥ 3: finite-time blow-up, the first one wins",
    statement="du_j/dτ = z_j (u_j − ρ)^(L−1) blows up at τ_j* = 1/((L−2) z_j (α_j − ρ)^(L−2)); "
              "the winner is argmax_j z_j (α_j − ρ)^(L−2) among α_j > ρ.",
    build=build,
))

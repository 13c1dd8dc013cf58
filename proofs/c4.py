"""C4 (L = 2, ℓ2-SAM, one example): the reduction to one scalar ODE and the formula for j†.

Derived in THEORY.md: θ_j = ln u_j obeys dθ_j/dτ = z_j (1 − ρ z_j / N), N = sqrt(2 Σ z_k² u_k²);
θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ) with dI/dτ = 1/N(τ, I); j†(τ) = argmax_j z_j (1 − ρ z_j / N̄),
N̄ = τ / I; a switch j → k happens where N̄ = ρ (z_j + z_k)."""

from __future__ import annotations

import sympy as sp

from theorycheck import closed_forms as cf
from theorycheck import symbolic as sy

from ._core import Fact, Identity, Theorem, refuted, register, verified

rho, tau = sy.rho, sy.tau


def _switch():
    zj, zk = sp.symbols("z_j z_k", positive=True)
    score = cf.l2_index_score()
    sol = sp.solve(sp.Eq(score.subs(cf.z_j, zj), score.subs(cf.z_j, zk)), cf.N_bar)
    want = cf.l2_switch_level().subs({cf.z_j: zj, cf.z_k: zk})
    if len(sol) == 1 and sp.simplify(sol[0] - want) == 0:
        return verified(f"score_j = score_k ⇔ N̄ = {sol[0]} for z_j ≠ z_k (sympy solve: the only root)")
    return refuted(f"solutions {sol}", {})


def _vertex():
    zc = sp.Symbol("zeta", positive=True)
    f = cf.l2_index_score().subs(cf.z_j, zc)
    crit = sp.solve(sp.diff(f, zc), zc)
    if crit == [cf.N_bar / (2 * rho)] and sp.diff(f, zc, 2).is_negative:
        return verified("z(1 − ρz/N̄) is a concave parabola in z with vertex N̄/(2ρ): j† is the coordinate whose "
                        "z_j is nearest N̄/(2ρ), so j† moves to larger z exactly when N̄ grows")
    return refuted(f"critical points {crit}", {})


def _argmax():
    tp = sp.Symbol("tau", positive=True)
    lhs = cf.l2_theta().subs(tau, tp) - sp.log(cf.alpha)
    rhs = tp * cf.l2_index_score().subs(cf.N_bar, tp / cf.I)
    if sp.simplify(sp.expand(lhs - rhs)) == 0:
        return verified("θ_j − ln α = τ · z_j (1 − ρ z_j / N̄) with N̄ = τ/I; for τ > 0 this is a positive multiple "
                        "of the score, so argmax_j β_j = argmax_j θ_j = argmax_j z_j (1 − ρ z_j/N̄)")
    return refuted("θ_j is not τ times the score", {})


def build():
    yield Identity("dθ_j/dτ = z_j (1 − ρ z_j / N) for θ_j = ln u_j (from the balanced ℓ2 field, L = 2)",
                   cf.balanced_log_field(2, "sam-l2"), cf.l2_log_rate().subs(cf.u_j, sp.exp(cf.theta_j)))
    Ifun = sp.Function("I")(tau)
    theta = cf.l2_theta().subs(cf.I, Ifun)
    yield Identity("θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ) solves it when dI/dτ = 1/N",
                   sp.diff(theta, tau).subs(sp.Derivative(Ifun, tau), 1 / cf.N), cf.l2_log_rate())
    yield Identity("θ_j(0) = ln α when I(0) = 0", cf.l2_theta().subs({tau: 0, cf.I: 0}), sp.log(cf.alpha))
    yield Identity("N(τ, I)² = 2 Σ z_k² u_k² with u_k = e^(θ_k(τ, I)): the flow reduces to ONE scalar ODE for I",
                   cf.l2_reduced_summand(), cf.balanced_norm_summand(2).subs(cf.u_j, sp.exp(cf.l2_theta())),
                   simplifier=lambda e: sp.simplify(sp.expand_log(sp.powsimp(e, force=True), force=True)))
    yield Fact("j†(τ) = argmax_j z_j (1 − ρ z_j / N̄(τ)), N̄ = τ/I", _argmax)
    N_ = sp.Function("N", positive=True)(tau)
    Iint = sp.Function("I")(tau)
    Nbar = tau / Iint
    yield Identity("N̄ = τ/I obeys dN̄/dτ = (1 − N̄/N)/I: N̄ grows iff N > N̄ (so j† can move to SMALLER z "
                   "while N is below its running harmonic mean, e.g. when N shrinks at first)",
                   sp.diff(Nbar, tau).subs(sp.Derivative(Iint, tau), 1 / N_), (1 - Nbar / N_) / Iint)
    yield Fact("switch j → k where N̄ = ρ (z_j + z_k)", _switch)
    yield Fact("j† is the z_j nearest N̄/(2ρ)", _vertex)


register(Theorem(
    key="C4",
    title="ℓ2-SAM, L = 2: reduction to one scalar ODE and the formula for j†",
    statement="θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ), dI/dτ = 1/N(τ, I); j†(τ) = argmax_j z_j (1 − ρ z_j / N̄), "
              "N̄ = τ/I; a switch j → k happens where N̄ = ρ(z_j + z_k).",
    build=build,
))

"""C5 (regimes in α, L = 2, ℓ2-SAM, one example): the start-of-training conditions.

Derived in THEORY.md, with N0 = α √2 ‖z‖₂: all coordinates shrink at the start iff
N0 < ρ z_min; the major coordinate grows fastest from the start iff
N0 ≥ ρ (z_(d) + z_(d−1)); j†(0+) = argmax_j z_j (1 − ρ z_j / N0). The collapse threshold α_c
has no known closed form (computed by ``theorycheck thresholds``)."""

from __future__ import annotations

import sympy as sp

from theorycheck import closed_forms as cf
from theorycheck import symbolic as sy

from ._core import Fact, Identity, Theorem, incomplete, refuted, register, verified

rho = sy.rho
N0 = sp.Symbol("N0", positive=True)


def _rate(z, n0=N0, r=rho):
    return cf.l2_log_rate().subs({cf.z_j: z, cf.N: n0, rho: r})


def _shrink_iff():
    zp = sp.Symbol("z", positive=True)
    sol = sp.solve_univariate_inequality(_rate(zp) < 0, N0, relational=False)
    want = sp.Interval.open(0, rho * zp)
    if sp.simplify(sol.symmetric_difference(want)) == sp.S.EmptySet or sol == want:
        return verified("for z_j > 0: rate_j(0) = z_j(1 − ρz_j/N0) < 0 ⇔ N0 < ρ z_j; so all shrink ⇔ N0 < ρ z_min "
                        "(z > 0)")
    return refuted(f"rate < 0 on {sol}, expected {want}", {})


def _shrink_mixed():
    # z = (−1, 2), ρ = 1, N0 = 1: both rates are −2 < 0, yet N0 < ρ z_min = −1 is false
    z, r, n0 = (-1, 2), 1, 1
    rates = [_rate(sp.Integer(zz), n0, r) for zz in z]
    if all(x < 0 for x in rates) and not (n0 < r * min(z)):
        return refuted("with a negative entry the condition is wrong: z = (−1, 2), ρ = 1, N0 = 1 (α = 1/√10): "
                       f"rates {rates} are all negative, but N0 < ρ z_min = −1 is false. Refined: coordinates with "
                       "z_j < 0 always shrink (u_j > 0), z_j = 0 never moves; all shrink ⇔ z has no zero entry and "
                       "N0 < ρ min{z_j : z_j > 0}. THEORY.md's form holds for z > 0",
                       {"z": list(z), "rho": r, "N0": n0, "alpha": float(1 / sp.sqrt(10)), "rates": [float(x) for x in rates]})
    return verified("no counterexample")


def _shrink_persists():
    zp = sp.Symbol("z", positive=True)
    d = sp.diff(cf.l2_log_rate().subs(cf.z_j, zp), cf.N)
    if d.is_positive:
        return verified(f"∂rate_j/∂N = {d} > 0: if all shrink, N decreases, so every rate decreases further and all "
                        "keep shrinking: α < α_all_shrink ⇒ collapse, i.e. α_c ≥ α_all_shrink")
    return refuted(f"∂rate/∂N = {d}", {})


def _fastest_factor():
    zd, zj = sp.symbols("z_d z_j", positive=True)
    diff = _rate(zd) - _rate(zj)
    fact = (zd - zj) * (1 - rho * (zd + zj) / N0)
    if sp.simplify(diff - fact) == 0:
        return verified("rate_d − rate_j = (z_d − z_j)(1 − ρ(z_d + z_j)/N0): for z_j < z_d it is ≥ 0 ⇔ "
                        "N0 ≥ ρ(z_d + z_j); the binding j is the largest z_j below z_d, so the major coordinate grows "
                        "fastest ⇔ N0 ≥ ρ(z_(d) + z_(d−1)) when z_(d−1) < z_(d)")
    return refuted("factorisation fails", {})


def _fastest_tie():
    # z = (1, 2, 2), ρ = 1, N0 = 3.5: rates (0.714, 0.857, 0.857): the major value z = 2 grows fastest,
    # yet N0 < ρ(z_(d) + z_(d−1)) = 4.
    z, r, n0 = (1, 2, 2), 1, sp.Rational(7, 2)
    rates = [_rate(sp.Integer(zz), n0, r) for zz in z]
    fastest = max(rates)
    if rates[1] == fastest and rates[2] == fastest and n0 < r * (z[1] + z[2]):
        return refuted("with a tie at the top the iff fails: z = (1, 2, 2), ρ = 1, N0 = 7/2: rates "
                       f"{[str(x) for x in rates]}, the major value grows fastest, but N0 < ρ(z_(d) + z_(d−1)) = 4. "
                       "Refined: z_(d−1) must be the largest value strictly below z_(d) (with all z_j equal, always)",
                       {"z": list(z), "rho": r, "N0": float(n0), "rates": [float(x) for x in rates]})
    return verified("no counterexample at the tie")


def _initial_index():
    # first order: θ_j(τ) = ln α + rate_j(0) τ + O(τ²), so j†(0+) = argmax rate_j(0) when unique.
    # At a tie of rates the second order decides: θ_j'' = ρ z_j² N'/N², so the larger z wins iff N'(0) > 0.
    z, r = (1, 2, 3), 1
    n0 = 3  # = ρ(z_1 + z_2): rates of coordinates 1 and 2 tie
    rates = [_rate(sp.Integer(zz), n0, r) for zz in z]
    # d(N²)/dτ at 0 = 4 α² Σ z_k² rate_k (from N² = 2 α² Σ z_k² e^(2θ_k)), α > 0: sign of N'(0)
    dN2 = sum(zz**2 * rk for zz, rk in zip(z, rates))
    winner = 2 if dN2 > 0 else 1
    if rates[0] == rates[1] and rates[0] > rates[2]:
        return incomplete("j†(0+) = argmax z_j(1 − ρz_j/N0) holds when the argmax is unique (first order in τ). At a "
                          "tie it is a set: z = (1, 2, 3), ρ = 1, N0 = 3 gives rates "
                          f"{[str(x) for x in rates]}; the second order θ_j'' = ρ z_j² N'/N² decides: N'(0) "
                          f"{'>' if dN2 > 0 else '<'} 0 here (Σ z_k² rate_k = {dN2}), so j†(0+) = {winner}",
                          {"z": list(z), "rho": r, "N0": n0, "initial_index": winner})
    return verified("no tie")


def build():
    zs = sy.data_symbols(1, 3)
    N_at_alpha = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(2).subs({cf.z_j: zs[j], cf.u_j: cf.alpha}) for j in range(3)]))
    yield Identity("N0 = N(τ = 0) = α √2 ‖z‖₂ (d = 3)", N_at_alpha,
                   cf.initial_norm().subs(cf.z_norm, sp.sqrt(sum(zj**2 for zj in zs))))
    yield Fact("all coordinates shrink at the start iff N0 < ρ z_min (z > 0)", _shrink_iff)
    yield Fact("all shrink iff N0 < ρ z_min: z with a negative entry", _shrink_mixed)
    yield Fact("all shrinking persists (so α_all_shrink bounds α_c from below)", _shrink_persists)
    yield Identity("α_all_shrink = ρ z_min / (√2 ‖z‖₂) solves N0 = ρ z_min",
                   cf.initial_norm().subs(cf.alpha, cf.alpha_all_shrink()), rho * cf.z_min)
    yield Fact("the major coordinate grows fastest iff N0 ≥ ρ(z_(d) + z_(d−1))", _fastest_factor)
    yield Fact("major grows fastest: ties at the top", _fastest_tie)
    yield Identity("α_gd_like = ρ (z_(d) + z_(d−1)) / (√2 ‖z‖₂) solves N0 = ρ(z_(d) + z_(d−1))",
                   cf.initial_norm().subs(cf.alpha, cf.alpha_gd_like()), rho * (cf.z_1st + cf.z_2nd))
    yield Fact("j†(0+) = argmax_j z_j (1 − ρ z_j / N0)", _initial_index)


register(Theorem(
    key="C5",
    title="ℓ2-SAM, L = 2: start-of-training conditions of the three regimes",
    statement="N0 = α√2‖z‖₂; all shrink at the start iff N0 < ρ z_min; the major coordinate grows fastest iff "
              "N0 ≥ ρ(z_(d) + z_(d−1)); j†(0+) = argmax_j z_j(1 − ρ z_j/N0).",
    build=build,
))

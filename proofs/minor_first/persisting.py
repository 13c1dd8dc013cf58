"""P (persisting lemmas of ℓ2-SAM, one example, balanced, z > 0): the conditions a proved fate rests on.

- P1 collapse (L = 2): N < ρ z_min ⇒ every rate dθ_j/dτ = z_j(1 − ρ z_j/N) is negative, so N decreases and the
  condition persists: the flow collapses.
- P2 growth (L = 2): for any set S of coordinates, N_S² = Σ_{j∈S} (term j of N²) ≤ N²; if N_S > ρ max_S z
  then every j ∈ S has rate ≥ z_j(1 − ρ z_j/N_S) > 0, so N_S increases, the condition persists and u_j → ∞
  (S = all coordinates is C5's N ≥ ρ z_max; S = the coordinates of z_min gives N_min > ρ z_min, reached
  as soon as the path leaves the saddle on the growing side).
- P3 monotone fate (even L): the balanced field is cooperative, ∂(du_j/dτ)/∂u_k ≥ 0 for j ≠ k on u > 0, so by
  Kamke's comparison theorem α ↦ u(τ; α) (u(0) = α·1) is order preserving; N increases with every u_k. Hence
  collapse at α implies collapse at every smaller α, growth at α growth at every larger α: the collapse set is
  an interval (0, α_c), and a proved collapse at ``lower`` and growth at ``upper`` give α_c ∈ [lower, upper].
"""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import systems as S
from theorycheck.theorem import Fact, Identity, Theorem, refuted, verified

rho = sy.rho


def _collapse_rates():
    zj, zmin, t = sp.symbols("z_j z_min t", positive=True)
    # N = t ρ z_min with 0 < t < 1 and z_j = z_min + s (s ≥ 0): the rate is z_j (1 − z_j/(t z_min)) < 0
    s = sp.Symbol("s", nonnegative=True)
    rate = cf.l2_log_rate().subs({cf.z_j: zmin + s, cf.N: t * cf.l2_collapse_certificate().subs(cf.z_min, zmin)})
    num = sp.factor(sp.together(rate))
    # rate = (z_min + s)(t z_min − z_min − s)/(t z_min): negative for t < 1
    if sp.simplify(rate - (zmin + s) * (t * zmin - zmin - s) / (t * zmin)) == 0:
        return verified(f"with N = t ρ z_min, t ∈ (0, 1), z_j = z_min + s: rate_j = {num}: numerator "
                        "(z_min + s)(t z_min − z_min − s) < 0 for t < 1, s ≥ 0, so every rate is negative")
    return refuted(f"rate = {num}", {})


def _collapse_persists():
    # dN²/dτ = Σ_j 2 rate_j term_j (term_j = 2 z_j² u_j², d term_j/dτ = 2 term_j dθ_j/dτ): negative when all rates are
    u, z = sp.symbols("u z", positive=True)
    term = cf.balanced_norm_summand(2).subs({cf.z_j: z, cf.u_j: sp.exp(cf.theta_j)})
    dterm = sp.diff(term, cf.theta_j)
    if sp.simplify(dterm - 2 * term) == 0:
        return verified("d(term_j of N²)/dτ = 2 term_j dθ_j/dτ: with every rate negative N² decreases, so N < ρ z_min "
                        "persists and every coordinate keeps shrinking (collapse)")
    return refuted(f"d term/dθ = {dterm}", {})


def _subset_norm_below():
    d = 3
    args, terms = S.reduced_l2_summands(d)
    N2 = sp.Add(*terms)
    NS2 = terms[0] + terms[1]  # S = {1, 2}
    rest = sp.simplify(N2 - NS2)
    if sp.simplify(rest - terms[2]) == 0 and all(t.is_positive or t.is_nonnegative for t in terms):
        return verified("N² − N_S² = Σ_{j∉S} term_j, each 2 z_j² u_j² > 0: N ≥ N_S for every S")
    return refuted(f"N² − N_S² = {rest}", {})


def _subset_growth():
    zj, NS, zS = sp.symbols("z_j N_S z_S", positive=True)
    # for j ∈ S, z_j ≤ z_S = max_S z, N ≥ N_S > ρ z_S: rate_j = z_j(1 − ρ z_j/N) ≥ z_j(1 − ρ z_j/N_S) > 0
    dN = sp.diff(cf.l2_log_rate(), cf.N)
    low = cf.l2_log_rate().subs({cf.N: NS})
    c = sp.Symbol("c", positive=True)  # N_S = ρ z_S (1 + c), z_j = z_S (1 − e), e ∈ [0, 1)
    e = sp.Symbol("e", nonnegative=True)
    low2 = sp.simplify(low.subs({NS: rho * zS * (1 + c), cf.z_j: zS * (1 - e)}))
    ok = dN.subs(cf.z_j, zj).is_positive and sp.simplify(low2 - zS * (1 - e) * (c + e) / (1 + c)) == 0
    if ok:
        return verified(f"∂rate_j/∂N = {dN} > 0, so rate_j ≥ z_j(1 − ρz_j/N_S); with N_S = ρ z_S (1 + c), "
                        f"z_j = z_S(1 − e): {low2} > 0 (j ∈ S, z_j > 0). So N_S increases, the condition persists, "
                        "and every u_j (j ∈ S) grows at least exponentially: N → ∞")
    return refuted(f"lower rate {low2}", {})


def _cooperative(L: int):
    def check():
        d = 2
        tau, u, params, f = S.balanced_system(L, "sam-l2", d)
        z = params[:d]
        N = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(L).subs({cf.z_j: z[j], cf.u_j: u[j]}) for j in range(d)]))
        uhat0 = cf.balanced_perturbed_point(L, "sam-l2").subs({cf.z_j: z[0], cf.u_j: u[0], cf.N: N})
        off = sp.diff(f[0], u[1])
        # expected: (L−1)·L(L−1)·ρ z_1² z_2² u_1^{L−1} u_2^{2L−3} û_1^{L−2} / N³ ≥ 0 (L even: û^{L−2} ≥ 0)
        want = (L - 1) * L * (L - 1) * rho * z[0] ** 2 * z[1] ** 2 * u[0] ** (L - 1) * u[1] ** (2 * L - 3) \
            * uhat0 ** (L - 2) / N ** 3
        if sp.simplify(off - want) == 0:
            return verified(f"L = {L}: ∂(du_1/dτ)/∂u_2 = {L * (L - 1) ** 2} ρ z_1² z_2² u_1^{L - 1} u_2^{2 * L - 3} "
                            f"û_1^{L - 2} / N³ ≥ 0 on u > 0 (û^{L - 2} is an even power): the field is cooperative "
                            "(every pair j ≠ k alike by symmetry)")
        return refuted(f"∂f_1/∂u_2 − expected = {sp.simplify(off - want)}", {})
    return check


def _norm_monotone():
    L = sp.Symbol("L", integer=True, positive=True)
    term = cf.balanced_norm_summand(L)
    dterm = sp.diff(term, cf.u_j)
    if sp.simplify(dterm - 2 * (L - 1) * L * cf.z_j ** 2 * cf.u_j ** (2 * L - 3)) == 0:
        return verified("∂(term_j of N²)/∂u_j = 2L(L−1) z_j² u_j^{2L−3} ≥ 0: N is nondecreasing in every u_k > 0, so "
                        "u(τ; α1) ≤ u(τ; α2) gives N(α1) ≤ N(α2); with Kamke's theorem (cooperative, locally "
                        "Lipschitz on u > 0) α1 < α2 ⇒ u(τ; α1) ≤ u(τ; α2): collapse is inherited downwards, growth "
                        "upwards, and the fate is monotone in α")
    return refuted(f"∂term/∂u = {dterm}", {})


def _ratio_is_the_perturbation_ratio():
    L = 4
    r = S.ratio_of_perturbation(L)
    want = rho * cf.z_j * cf.u_j ** (L - 2) / cf.N
    if sp.simplify(r - want) == 0:
        return verified(f"r_j = 1 − û_j/u_j = {r} (L = {L})")
    return refuted(f"r_j = {r}", {})


def _invariant_sets():
    L = 4
    _s, r, z, f = S.ratio_system(L, 2)
    t = sp.Symbol("t", positive=True)
    up = sp.factor(f[0].subs({r[0]: 1, r[1]: 1 + t}))
    down = sp.factor(f[0].subs({r[0]: 1, r[1]: 1 - t}))
    # at r_1 = 1 the first term vanishes; the mean term has the sign of −(1 − r_2)^{L−1}
    ok = sp.simplify(up).is_positive and (sp.simplify(-down.subs(t, sp.Rational(1, 2))).is_positive)
    if ok:
        return verified(f"L = {L}: at r_1 = 1 with r_2 = 1 + t: dr_1/dσ = {up} > 0 (back into {{r > 1}}); with "
                        f"r_2 = 1 − t (0 < t < 1): {down} < 0 (back into {{r ≤ 1}}): both sets are forward invariant. "
                        "In {r_j > 1 ∀j}, û_j = u_j(1 − r_j) < 0 and du_j/dτ = z_j û_j^{L−1} < 0 (L − 1 odd): every "
                        "coordinate shrinks (collapse); in {r_j ≤ 1 ∀j} every coordinate grows")
    return refuted(f"dr_1/dσ: {up}, {down}", {})


def _ratio_reduction():
    L, d = 4, 2
    _t, u, params, f = S.balanced_system(L, "sam-l2", d)
    z = params[:d]
    N = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(L).subs({cf.z_j: z[j], cf.u_j: u[j]}) for j in range(d)]))
    r_of_u = [rho * z[j] * u[j] ** (L - 2) / N for j in range(d)]
    _s, r, zz, R = S.ratio_system(L, d)
    sub = {r[j]: r_of_u[j] for j in range(d)}
    sub.update({zz[j]: z[j] for j in range(d)})
    lhs = [sp.Add(*[sp.diff(r_of_u[j], u[k]) * f[k] for k in range(d)]) for j in range(d)]
    rhs = [N / rho * R[j].subs(sub) for j in range(d)]
    return Identity("", lhs, rhs, simplifier=lambda e: sp.expand(e)).check()


def _blowup_identity():
    L, d = 4, 2
    _s, r, z, R = S.ratio_system(L, d)
    Rs = sp.Symbol("R", positive=True)
    om = sp.symbols("omega1 omega2", real=True)
    F = [e.subs({r[j]: 1 + Rs * om[j] for j in range(d)}) for e in R]
    G = S.blowup_G(L, Rs, om, z)
    diff = [sp.cancel(sp.together(F[j] - Rs ** (L - 1) * G[j])) for j in range(d)]
    if all(x == 0 for x in diff):
        return verified("the ratio field at r = 1 + Rω equals R^{L−1} G(R, ω) exactly (L = 4): the blown-up field "
                        "is regular at R = 0, and with dς = R^{L−2} dσ, s = r − 1 = e^λ ω: d(e^λ ω)/dς = R G, i.e. "
                        "dλ/dς = ⟨ω, G⟩, dω/dς = G − ⟨ω, G⟩ω keeps |ω| = 1")
    return refuted(f"difference {diff}", {})


def _blowup_projection():
    L, d = 4, 2
    _v, y, z, f = S.ratio_blowup_system(L, d)
    lam, om = y[0], y[1:]
    G = S.blowup_G(L, sp.exp(lam), om, z)
    # d(e^λ ω_j)/dς − e^λ G_j = e^λ (λ' ω_j + ω_j' − G_j) = 0
    res = [sp.expand(f[0] * om[j] + f[1 + j] - G[j]) for j in range(d)]
    if all(sp.simplify(x) == 0 for x in res):
        return verified("λ'ω_j + ω_j' = G_j for the blown-up system: it is the ratio flow, written in s = e^λ ω")
    return refuted(f"residual {res}", {})


def _build():
    return [
        Fact("P1: N < ρ z_min makes every rate z_j(1 − ρ z_j/N) negative (z_j ≥ z_min > 0)", _collapse_rates),
        Fact("P1: then N² decreases, so N < ρ z_min persists: collapse", _collapse_persists),
        Fact("P2: N ≥ N_S for every set S of coordinates", _subset_norm_below),
        Fact("P2: N_S > ρ max_S z makes every rate in S positive; it persists and N → ∞ (growth)", _subset_growth),
        Identity("P2 with S = all coordinates is C5's no-collapse level ρ z_max",
                 S.l2_persisting_levels()[1][1], rho * cf.z_1st),
        Fact("P3: the balanced ℓ2-SAM field is cooperative (L = 2)", _cooperative(2)),
        Fact("P3: the balanced ℓ2-SAM field is cooperative (L = 4)", _cooperative(4)),
        Fact("P3: N is nondecreasing in every coordinate; Kamke ⇒ the fate is monotone in α", _norm_monotone),
        Fact("P4 (even L): r_j = 1 − û_j/u_j is ρ z_j u_j^{L−2}/N", _ratio_is_the_perturbation_ratio),
        Fact("P4 (even L): {r_j > 1 ∀j} (collapse) and {r_j ≤ 1 ∀j} (growth) are forward invariant",
             _invariant_sets),
        Fact("P5: the balanced flow in r with dσ = (N/ρ) dτ is the ratio field (L = 4, d = 2)", _ratio_reduction),
        Fact("P6: the ratio field blown up at r = 1 is R^{L−1} G(R, ω), regular at R = 0 (L = 4)", _blowup_identity),
        Fact("P6: the blown-up system (λ = ln R, ω) is the ratio flow in s = e^λ ω", _blowup_projection),
    ]


THEOREM = Theorem(
    key="P",
    title="Persisting lemmas of ℓ2-SAM (what a proved fate rests on)",
    statement="N < ρ z_min ⇒ collapse; N_S > ρ max_S z ⇒ growth; the fate is monotone in α (cooperative field)",
    build=_build,
    notes="Used by the proved thresholds (thresholds(prove=True)): a proved fate is an enclosure of the state at some τ that "
          "satisfies P1 or P2 at every point of the box; P3 turns the two fates into a bracket of α_c.",
)

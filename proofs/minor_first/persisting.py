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
- P4 (even L ≥ 4), P5 (L ≥ 3: the ratio reduction), P6 (even L ≥ 4: its blow-up at r = 1): the steps of
  :mod:`theorycheck.proofs.minor_first.lemma_proofs`, proved for a symbolic depth L and a symbolic dimension d (sums over
  the coordinates as symbolic sums, a pair j ≠ k with the rest of N² a symbol Q ≥ 0). P3's steps there are for
  a symbolic even L (L = 2 included).
"""

from __future__ import annotations

import sympy as sp
from theorycheck.proofs.minor_first import lemma_proofs

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import validated_fields as S
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, refuted, verified

rho = sy.rho


def _collapse_rates():
    zj, zmin, t = sp.symbols("z_j z_min t", positive=True)
    # N = t ρ z_min with 0 < t < 1 and z_j = z_min + s (s ≥ 0): the rate is z_j (1 − z_j/(t z_min)) < 0
    s = sp.Symbol("s", nonnegative=True)
    rate = TE.l2_log_rate().subs({cf.z_j: zmin + s, cf.N: t * TE.l2_collapse_certificate().subs(cf.z_min, zmin)})
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
    dN = sp.diff(TE.l2_log_rate(), cf.N)
    low = TE.l2_log_rate().subs({cf.N: NS})
    c = sp.Symbol("c", positive=True)  # N_S = ρ z_S (1 + c), z_j = z_S (1 − e), e ∈ [0, 1)
    e = sp.Symbol("e", nonnegative=True)
    low2 = sp.simplify(low.subs({NS: rho * zS * (1 + c), cf.z_j: zS * (1 - e)}))
    ok = dN.subs(cf.z_j, zj).is_positive and sp.simplify(low2 - zS * (1 - e) * (c + e) / (1 + c)) == 0
    if ok:
        return verified(f"∂rate_j/∂N = {dN} > 0, so rate_j ≥ z_j(1 − ρz_j/N_S); with N_S = ρ z_S (1 + c), "
                        f"z_j = z_S(1 − e): {low2} > 0 (j ∈ S, z_j > 0). So N_S increases, the condition persists, "
                        "and every u_j (j ∈ S) grows at least exponentially: N → ∞")
    return refuted(f"lower rate {low2}", {})


def _lemma(name: str) -> list:
    """The steps of lemma ``name`` proved for a symbolic L and d (theorycheck.proofs.minor_first.lemma_proofs)."""
    return [Fact(st.statement + " [symbolic L, d]", st.fn) for st in lemma_proofs.steps(name)]


def _build():
    return [
        Fact("P1: N < ρ z_min makes every rate z_j(1 − ρ z_j/N) negative (z_j ≥ z_min > 0)", _collapse_rates),
        Fact("P1: then N² decreases, so N < ρ z_min persists: collapse", _collapse_persists),
        Fact("P2: N ≥ N_S for every set S of coordinates", _subset_norm_below),
        Fact("P2: N_S > ρ max_S z makes every rate in S positive; it persists and N → ∞ (growth)", _subset_growth),
        Identity("P2 with S = all coordinates is C5's no-collapse level ρ z_max",
                 S.l2_persisting_levels()[1][1], rho * cf.z_1st),
        *_lemma("P3"), *_lemma("P4"), *_lemma("P5"), *_lemma("P6"),
    ]


THEOREM = Theorem(
    key="P",
    title="Persisting lemmas of ℓ2-SAM (what a proved fate rests on)",
    statement="N < ρ z_min ⇒ collapse; N_S > ρ max_S z ⇒ growth; the fate is monotone in α (cooperative field)",
    build=_build,
    notes="Used by the proved thresholds (thresholds(prove=True)): a proved fate is an enclosure of the state at some τ that "
          "satisfies P1 or P2 at every point of the box; P3 turns the two fates into a bracket of α_c.",
)

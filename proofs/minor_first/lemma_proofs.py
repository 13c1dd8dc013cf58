"""The proofs of the depth-L lemmas P3, P4, P5, P6 and LOCK (L ≥ 3), in sympy, for a SYMBOLIC depth L and a
symbolic dimension d; the pack ``minor-first`` shows them as steps of its theorems P and LOCK
(proofs/minor_first/persisting.py, lockin.py), and :func:`theorycheck.proofs.minor_first.lemmas.strength` reads their
verdicts.

How a general d is handled: a statement about one coordinate j is written for a generic j, with the sums over
the coordinates as symbolic sums Σ_{k=1}^{d} (``sympy.Sum`` with coordinate data z(k), r(k), θ(k, τ) as functions
of the index), or, for a pair j ≠ k, with the other d − 2 coordinates' share of N² a symbol Q ≥ 0 that depends on
neither u_j nor u_k. How a general L is handled: L is a sympy integer symbol (even where the lemma is about even
L, so that L − 1 is odd and (−x)^{L−1} = −x^{L−1}); the forms are the coordinate forms of
:mod:`closed_forms` and :mod:`validated_fields` called with that symbol (never retyped here). The algebra the
steps are written in is :mod:`theorycheck.proofs.minor_first.lemma_algebra`; LOCK's steps are
:mod:`theorycheck.proofs.minor_first.lock_proof`, listed here with the others.

Two routes (:func:`prove`):

- ``symbolic``: L and d symbols, as above: one proof for every (L, d) in the lemma's scope (:data:`SCOPE`).
- ``exact``: the same steps with L and d the integers of a request (the sums written out), used only when the
  symbolic route does not verify (say, a sympy version that cannot simplify one step).

Each step is a function returning a :class:`theorycheck.symbolic.theorem.StepResult` (verified / refuted): a form passed
in place of the real one (``forms``) lets a test see a wrong field refuted by the same step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

import sympy as sp
from theorycheck.proofs.minor_first.lemma_algebra import (
    G_,
    L_any,
    L_even,
    LemmaStep,
    R,
    at_least_4,
    cancel_exponents,
    coordinate_field,
    d_sym,
    is_zero,
    j_,
    k_,
    log_rate_of,
    m_,
    omega_,
    p_,
    perturbed_point,
    q_,
    r_,
    ratio_of,
    s,
    sum_over,
    t,
    theta_,
    tidy,
    u,
    z,
    z_,
)
from theorycheck.proofs.minor_first.lock_proof import lock_steps

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import validated_fields as S
from theorycheck.symbolic.theorem import VERIFIED, refuted, verified

__all__ = ["SCOPE", "LemmaStep", "in_scope", "steps", "prove", "Proof"]

rho, tau = sy.rho, sy.tau

#: lemma → (what its scope is, in words; the predicate on (L, d))
SCOPE: dict[str, tuple[str, Callable[[int, int], bool]]] = {
    "P3": ("even L ≥ 2, any d ≥ 1", lambda L, d: L >= 2 and L % 2 == 0 and d >= 1),
    "P4": ("even L ≥ 4, any d ≥ 1", lambda L, d: L >= 4 and L % 2 == 0 and d >= 1),
    "P5": ("L ≥ 3, any d ≥ 1", lambda L, d: L >= 3 and d >= 1),
    "P6": ("even L ≥ 4, any d ≥ 1", lambda L, d: L >= 4 and L % 2 == 0 and d >= 1),
    "LOCK": ("L ≥ 3, any d ≥ 1 (its L = 2 part is theorem LOCK's L = 2 steps)", lambda L, d: L >= 3 and d >= 1),
}

#: why a depth outside the scope is not covered
OUTSIDE = {
    "P3": "for odd L, ∂(du_j/dτ)/∂u_k has the sign of û_j^{L−2}, i.e. of û_j, which is negative where r_j > 1: "
          "the field is not cooperative there",
    "P4": "for odd L, L − 1 is even: (1 − r)^{L−1} ≥ 0 on both sides of r = 1, so {r_j > 1 ∀j} is no collapse set "
          "(odd L never collapses)",
    "P5": "L = 2 has r_j = ρ z_j/N, which does not close on r (C4's reduction is the L = 2 route)",
    "P6": "for odd L, (1 − r)^{L−1} = R^{L−1} ω^{L−1} (L − 1 even): the blow-up is another field",
    "LOCK": "L = 2 is theorem LOCK's L = 2 part",
}


def in_scope(name: str, depth: int, dim: int) -> bool:
    return SCOPE[name][1](int(depth), int(dim))


# ---------------------------------------------------------------- P5: the ratio reduction
def p5_steps(L=L_any, d=d_sym, *, field=cf.balanced_field, component=S.ratio_component, weight=S.ratio_weight,
             mean_term=S.ratio_mean_term) -> list[LemmaStep]:
    """P5 for depth ``L`` and dimension ``d`` (symbols: every L ≥ 3, every d)."""

    def perturbation():
        r = ratio_of(L)
        if is_zero(r - rho * z * u ** (L - 2) / cf.N) and is_zero(sp.powsimp(sp.expand(perturbed_point(L) - u * (1 - r)))):
            return verified(f"r_j = 1 − û_j/u_j = {r}, so û_j = u_j (1 − r_j) (L = {L})")
        return refuted(f"r_j = {r}; û_j − u_j(1 − r_j) = {sp.simplify(perturbed_point(L) - u * (1 - r))}", {})

    def log_rate():
        lr, rr = log_rate_of(L, field)
        r = ratio_of(L)
        got = lr.subs(rr, r)
        want = cf.N / rho * mean_term(L, r)
        logf = cf.balanced_log_field(L, sy.L2_ASCENT).subs({cf.theta_j: sp.log(u), cf.z_j: z}, simultaneous=True)
        same_log = is_zero(sp.powsimp(logf - coordinate_field(L, field) / u, force=True))
        if is_zero(got - want) and same_log:
            return verified(f"θ_j' = (du_j/dτ)/u_j = {lr.subs(rr, sp.Symbol('r_j'))} (balanced_log_field at θ_j = ln u_j); "
                            f"with u_j^{{L−2}} = r_j N/(ρ z_j): θ_j' = (N/ρ) r_j (1 − r_j)^{{L−1}} (L = {L})")
        return refuted(f"θ_j' = {lr} is not (N/ρ) r_j (1 − r_j)^(L−1), or differs from balanced_log_field", {})

    # N² = Σ_k T_k with T_k = term k of N², θ_k = θ(k, τ)
    T = cf.balanced_norm_summand(L).subs({cf.z_j: z_(k_), cf.u_j: sp.exp(theta_(k_, tau))}, simultaneous=True)
    N2 = sum_over(T, d)

    def _rates(e):
        e = e.replace(sp.Derivative(theta_(k_, tau), tau), q_(k_)).replace(sp.Derivative(theta_(j_, tau), tau), q_(j_))
        if isinstance(d, int):
            for i in range(1, d + 1):
                e = e.subs(sp.Derivative(theta_(i, tau), tau), q_(i))
        return e

    dlnN = _rates(sp.diff(sp.log(N2) / 2, tau))
    mean_q = sum_over(T / N2 * q_(k_), d)

    def log_norm():
        if is_zero(dlnN - (L - 1) * mean_q):
            return verified(f"d ln N/dτ = ½ Σ_k T_k'/Σ_k T_k = (L − 1) Σ_{{k=1}}^{{{d}}} p_k θ_k', p_k = T_k/N² ≥ 0, Σ p_k = 1 "
                            f"(T_k = {cf.balanced_norm_summand(L)} at coordinate k: d T_k/dθ_k = (2L − 2) T_k)")
        return refuted(f"d ln N/dτ − (L−1) Σ p_k θ_k' = {sp.simplify(dlnN - (L - 1) * mean_q)}", {})

    C = L * (cf.N / rho) ** (sp.S(2 * L - 2) / (L - 2))

    def weights():
        e = sp.powsimp(sp.powdenest(sp.expand_power_base(C * weight(L, ratio_of(L), z), force=True), force=True), force=True)
        Tk = cf.balanced_norm_summand(L).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)
        w = weight(L, r_(k_), z_(k_))
        same = is_zero(C * w / sum_over(C * w, d) - w / sum_over(w, d))
        if is_zero(cancel_exponents(e) - Tk) and same:
            return verified(f"T_k = C · w_k(r_k) with w_k = {weight(L, sp.Symbol('r_k'), sp.Symbol('z_k'))} and "
                            f"C = {C} the same for every k: p_k = T_k/Σ T_m = w_k/Σ w_m (the ratio field's weights)")
        return refuted(f"C · w_k − T_k = {sp.simplify(cancel_exponents(e) - Tk)}", {})

    def log_ratio():
        rj = ratio_of(L).subs({u: sp.exp(theta_(j_, tau)), z: z_(j_), cf.N: sp.sqrt(N2)}, simultaneous=True)
        dlr = _rates(sp.diff(sp.expand_log(sp.log(rj), force=True), tau))
        if is_zero(dlr - ((L - 2) * q_(j_) - dlnN)):
            return verified("ln r_j = ln(ρ z_j) + (L − 2) θ_j − ln N, so d ln r_j/dτ = (L − 2) θ_j' − d ln N/dτ")
        return refuted(f"d ln r_j/dτ = {dlr}", {})

    def combine():
        rj = sp.Symbol("r_j", positive=True)
        w = weight(L, r_(k_), z_(k_))
        W = sum_over(w.subs(k_, m_), d, m_)
        # (ρ/N) [(L−2) θ_j' − (L−1) Σ p_k θ_k'] with θ_k' = (N/ρ) r_k (1 − r_k)^{L−1}, p_k = C w_k / Σ C w_m
        lhs = rho / cf.N * ((L - 2) * cf.N / rho * mean_term(L, rj)
                            - (L - 1) * sum_over(C * w / sum_over(C * w.subs(k_, m_), d, m_) * cf.N / rho * mean_term(L, r_(k_)), d))
        rhs = component(L, rj, sum_over(w / W * mean_term(L, r_(k_)), d)) / rj
        if is_zero(lhs - rhs):
            return verified(f"with dσ = (N/ρ) dτ: d ln r_j/dσ = (L − 2) r_j(1 − r_j)^{{L−1}} − (L − 1) Σ_{{k=1}}^{{{d}}} p_k "
                            f"r_k (1 − r_k)^{{L−1}}, i.e. dr_j/dσ = systems.ratio_component(L, r_j, mean) with the "
                            f"weights systems.ratio_weight: the ratio field (L = {L}, d = {d})")
        return refuted(f"(ρ/N) d ln r_j/dτ − ratio field/r_j = {sp.simplify(lhs - rhs)}", {})

    return [
        LemmaStep("P5: û_j = u_j(1 − r_j), r_j = ρ z_j u_j^{L−2}/N", perturbation),
        LemmaStep("P5: θ_j' = z_j u_j^{L−2}(1 − r_j)^{L−1} = (N/ρ) r_j (1 − r_j)^{L−1}", log_rate),
        LemmaStep("P5: d ln N/dτ = (L − 1) Σ_k p_k θ_k' (a weighted mean, p_k = T_k/N²)", log_norm),
        LemmaStep("P5: p_k = w_k(r_k)/Σ_m w_m(r_m), the ratio field's weights", weights),
        LemmaStep("P5: d ln r_j/dτ = (L − 2) θ_j' − d ln N/dτ", log_ratio),
        LemmaStep("P5: with dσ = (N/ρ) dτ the flow in r is the ratio field", combine),
    ]


# ---------------------------------------------------------------- P3: the field is cooperative (even L)
def p3_steps(L=L_even, d=d_sym, *, field=cf.balanced_field) -> list[LemmaStep]:
    """P3 for even ``L`` (a symbol: every even L ≥ 2) and any dimension (a pair j ≠ k and the rest Q)."""
    uj, uk, zj, zk = sp.symbols("u_j u_k z_j z_k", positive=True)
    Q = sp.Symbol("Q", nonnegative=True)  # the other coordinates' terms of N²: free of u_j, u_k
    term = cf.balanced_norm_summand(L)
    N = sp.sqrt(term.subs({cf.z_j: zj, cf.u_j: uj}, simultaneous=True)
                + term.subs({cf.z_j: zk, cf.u_j: uk}, simultaneous=True) + Q)
    uhat = cf.balanced_perturbed_point(L, sy.L2_ASCENT).subs({cf.z_j: zj, cf.u_j: uj}, simultaneous=True)
    uh = sp.Symbol("uhat_j", real=True)
    factors = [(L - 1) * zj, uh ** (L - 2), rho * zj * uj ** (L - 1) / cf.N ** 2,
               L * (L - 1) * zk ** 2 * uk ** (2 * L - 3) / cf.N]
    words = ["(L − 1) z_j > 0", "û_j^{L−2} ≥ 0 (L − 2 even)", "ρ z_j u_j^{L−1}/N² > 0 (= ∂û_j/∂N)",
             "L(L − 1) z_k² u_k^{2L−3}/N ≥ 0 (= ∂N/∂u_k)"]

    def derivative():
        f = field(L, sy.L2_ASCENT).subs({cf.z_j: zj, cf.u_j: uj}, simultaneous=True).subs(cf.N, N)
        off = sp.diff(f, uk).subs(uhat.subs(cf.N, N), uh)  # û_j kept as one symbol: its power's sign is known
        want = sp.Mul(*factors).subs(cf.N, N)
        if sp.simplify(sp.powsimp(sp.expand(off / want), force=True)) == 1:
            return verified(f"N² = T_j(u_j) + T_k(u_k) + Q (Q ≥ 0: the other d − 2 coordinates, free of u_j and u_k); "
                            f"∂(du_j/dτ)/∂u_k = {' · '.join(['(L−1) z_j', 'û_j^{L−2}', 'ρ z_j u_j^{L−1}/N²', 'L(L−1) z_k² u_k^{2L−3}/N'])} "
                            f"for every j ≠ k (L = {L})")
        return refuted(f"∂f_j/∂u_k / product = {sp.powsimp(sp.expand(off / want), force=True)}", {})

    def signs():
        bad = [w for f_, w in zip(factors, words) if not sp.Mul(f_).is_nonnegative]
        if not bad and sp.Mul(*factors).is_nonnegative:
            return verified("each factor has a known sign on u > 0, z > 0: " + "; ".join(words) + f" (L = {L} even, "
                            "û_j real): ∂(du_j/dτ)/∂u_k ≥ 0 for j ≠ k, the field is cooperative (Kamke's condition)")
        return refuted(f"sympy cannot show these factors ≥ 0: {bad}", {})

    def norm_monotone():
        term_ = cf.balanced_norm_summand(L).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)
        dterm = sp.diff(term_, u)
        want = 2 * (L - 1) * L * z ** 2 * u ** (2 * L - 3)
        if is_zero(dterm - want) and want.is_nonnegative:
            return verified("∂(term_k of N²)/∂u_k = 2L(L−1) z_k² u_k^{2L−3} ≥ 0: N is nondecreasing in every u_k > 0. "
                            "With Kamke's comparison theorem (cooperative, locally Lipschitz on u > 0, N > 0), α1 < α2 ⇒ "
                            "u(τ; α1) ≤ u(τ; α2) and N(α1) ≤ N(α2): collapse is inherited downwards, growth upwards, and "
                            "the fate is monotone in α (d = 1: a scalar flow is order preserving by uniqueness)")
        return refuted(f"∂term/∂u = {dterm}", {})

    return [
        LemmaStep("P3: ∂(du_j/dτ)/∂u_k, j ≠ k, is a product of four factors", derivative),
        LemmaStep("P3: each factor is ≥ 0 for even L: the field is cooperative", signs),
        LemmaStep("P3: N is nondecreasing in every u_k; Kamke ⇒ the fate is monotone in α", norm_monotone),
    ]


# ---------------------------------------------------------------- P4: forward-invariant sets (even L)
def p4_steps(L=L_even, d=d_sym, *, component=S.ratio_component, weight=S.ratio_weight, mean_term=S.ratio_mean_term,
             field=cf.balanced_field) -> list[LemmaStep]:
    """P4 for even ``L`` ≥ 4 (a symbol) and any dimension (the weighted mean as a symbolic sum)."""
    M = sp.Symbol("M", real=True)

    def face():
        got = component(L, sp.S(1), M)
        if is_zero(got + (L - 1) * M):
            return verified(f"at r_j = 1: dr_j/dσ = {got} = −(L − 1) M, M = Σ_k p_k r_k (1 − r_k)^{{L−1}} (L = {L})")
        return refuted(f"dr_j/dσ at r_j = 1 is {got}", {})

    def term_signs():
        above = sp.expand_power_base(mean_term(L, 1 + t))  # r_k = 1 + t > 1
        below = tidy(mean_term(L, 1 / (1 + s)))  # 0 < r_k = 1/(1 + s) ≤ 1
        w = weight(L, r_(k_), z_(k_))
        if above.is_negative and below.is_nonnegative and at_least_4(w, L).is_positive:
            return verified(f"L − 1 odd: r_k(1 − r_k)^{{L−1}} at r_k = 1 + t (t > 0) is {above} < 0; at r_k = 1/(1 + s) "
                            f"(s ≥ 0) it is {sp.factor(below)} ≥ 0; the weights w_k = {w} are > 0, so p_k > 0")
        return refuted(f"signs: above {above} ({above.is_negative}), below {below} ({below.is_nonnegative}), "
                       f"weight {w.is_positive}", {})

    def invariance():
        pa = sp.Function("a", positive=True)
        pb = sp.Function("b", nonnegative=True)
        gap_up = sp.expand_power_base(mean_term(L, 1 + pb(k_)))  # r_k = 1 + b_k ≥ 1 (the face of {r ≥ 1})
        gap_dn = tidy(mean_term(L, 1 / (1 + pb(k_))))  # 0 < r_k ≤ 1 (the face of {r ≤ 1})
        up = -(L - 1) * sum_over(p_(k_) * gap_up, d)
        dn = -(L - 1) * sum_over(p_(k_) * gap_dn, d)
        ok_up = (-(L - 1) * p_(k_) * gap_up).is_nonnegative
        ok_dn = (-(L - 1) * p_(k_) * gap_dn).is_nonpositive
        strict = (-(L - 1) * p_(k_) * sp.expand_power_base(mean_term(L, 1 + pa(k_)))).is_positive
        if ok_up and ok_dn and strict:
            return verified(f"on the face r_j = 1 of {{r_k ≥ 1 ∀k}}: dr_j/dσ = {up}, every term ≥ 0, > 0 unless every r_k "
                            "= 1 (the equilibrium r = 1, which no path from {r > 1} reaches in finite time: uniqueness); "
                            "so a first exit from the open set {r_k > 1 ∀k} is impossible. On the face r_j = 1 of "
                            f"{{r_k ≤ 1 ∀k}}: dr_j/dσ = {dn}, every term ≤ 0: the field points into the closed set "
                            "(Nagumo's condition; the field is locally Lipschitz on r > 0). Both sets are forward "
                            "invariant in σ, hence in τ (dσ/dτ = N/ρ > 0)")
        return refuted(f"face signs: {{r ≥ 1}} {ok_up}, strict {strict}, {{r ≤ 1}} {ok_dn}", {})

    def fates():
        lr, rr = log_rate_of(L, field)  # θ_j' = z_j u_j^{L−2} (1 − r_j)^{L−1}
        du_up = sp.expand_power_base(u * lr.subs(rr, 1 + t))
        du_dn = tidy(u * lr.subs(rr, 1 / (1 + s)))
        if du_up.is_negative and du_dn.is_nonnegative:
            return verified(f"du_j/dτ = u_j θ_j' = {u * lr.subs(rr, sp.Symbol('r_j'))}: at r_j = 1 + t it is {du_up} < 0 "
                            f"(every coordinate shrinks: collapse), at r_j = 1/(1 + s) ≤ 1 it is ≥ 0 (no coordinate "
                            "shrinks: no collapse, growth)")
        return refuted(f"du_j/dτ at r_j > 1: {du_up}; at r_j ≤ 1: {du_dn}", {})

    return [
        LemmaStep("P4: at r_j = 1, dr_j/dσ = −(L − 1) · (the weighted mean)", face),
        LemmaStep("P4: the mean's terms have the sign of 1 − r_k (L − 1 odd); the weights are > 0", term_signs),
        LemmaStep("P4: {r_j > 1 ∀j} and {r_j ≤ 1 ∀j} are forward invariant", invariance),
        LemmaStep("P4: in {r > 1} every u_j shrinks (collapse), in {r ≤ 1} none does (growth)", fates),
    ]


# ---------------------------------------------------------------- P6: the blow-up at r = 1 (even L)
def p6_steps(L=L_even, d=d_sym, *, component=S.ratio_component, mean_term=S.ratio_mean_term,
             blown=S.blowup_component, blown_term=S.blowup_mean_term, weight=S.ratio_weight,
             projected=S.blowup_projected) -> list[LemmaStep]:
    """P6 for even ``L`` ≥ 4 (a symbol) and any dimension (the mean as a symbolic sum)."""
    oj = sp.Symbol("omega_j", real=True)

    def term():
        got = sp.expand_power_base(mean_term(L, 1 + R * oj), force=True)
        want = -R ** (L - 1) * blown_term(L, 1 + R * oj, oj)
        if is_zero(got - want):
            return verified(f"(1 − r_k)^{{L−1}} = (−R ω_k)^{{L−1}} = −R^{{L−1}} ω_k^{{L−1}} (L − 1 odd): "
                            f"r_k(1 − r_k)^{{L−1}} = {got} at r_k = 1 + R ω_k")
        return refuted(f"mean term at 1 + Rω − (−R^(L−1)) blown term = {sp.simplify(got - want)}", {})

    def identity():
        w = weight(L, 1 + R * omega_(k_), z_(k_))
        p = w / sum_over(w.subs(k_, m_), d, m_)
        mean_r = sum_over(p * sp.expand_power_base(mean_term(L, 1 + R * omega_(k_)), force=True), d)
        mean_g = sum_over(p * blown_term(L, 1 + R * omega_(k_), omega_(k_)), d)
        F = sp.expand_power_base(component(L, 1 + R * oj, mean_r), force=True)
        G = blown(L, 1 + R * oj, oj, mean_g)
        if is_zero(F - R ** (L - 1) * G):
            return verified(f"the ratio field at r = 1 + R ω (any d: the mean Σ_{{k=1}}^{{{d}}} with weights at r_k = 1 + Rω_k) "
                            f"is R^{{L−1}} G_j, G_j = systems.blowup_component(L, r_j, ω_j, Σ_k p_k r_k ω_k^{{L−1}}) (L = {L})")
        return refuted(f"ratio field − R^(L−1) G = {sp.simplify(F - R ** (L - 1) * G)}", {})

    def regular():
        w = weight(L, 1 + R * omega_(k_), z_(k_))
        p = w / sum_over(w.subs(k_, m_), d, m_)
        G = blown(L, 1 + R * oj, oj, sum_over(p * blown_term(L, 1 + R * omega_(k_), omega_(k_)), d))
        g0 = G.subs(R, 0)
        w0 = weight(L, 1 + R * oj, z).subs(R, 0)
        if not g0.has(sp.zoo, sp.oo, sp.nan) and at_least_4(w0, L).is_positive:
            return verified(f"G_j(0, ω) = {sp.simplify(g0)} is finite: R enters G only through r_k = 1 + R ω_k and the "
                            f"weights, which at R = 0 are {w0} > 0 (and stay > 0 while every r_k > 0, e.g. |R| < 1 with "
                            "|ω| = 1): the blown-up field is regular at R = 0")
        return refuted(f"G_j(0, ω) = {g0}; weight at R = 0: {w0}", {})

    def sphere():
        P = sp.Symbol("P", real=True)  # ⟨ω, G⟩ = dλ/dς
        lam = sp.Symbol("lambda", real=True)
        dlam, dom = P, projected(G_(j_), omega_(j_), P)
        moved = sp.exp(lam) * (dlam * omega_(j_) + dom) - sp.exp(lam) * G_(j_)  # d(e^λ ω_j)/dς − e^λ G_j
        clock = R ** (-(L - 2)) * R ** (L - 1) * G_(j_) - R * G_(j_)  # ds/dς = R^{−(L−2)} ds/dσ = R G
        # Σ_k ω_k dω_k/dς: per coordinate ω_k G_k − P ω_k², so the sum is ⟨ω, G⟩ − P|ω|² = P − P = 0 on |ω| = 1
        per = sp.expand(omega_(k_) * projected(G_(k_), omega_(k_), P))
        norm = per - (G_(k_) * omega_(k_) - P * omega_(k_) ** 2)
        if is_zero(moved) and is_zero(sp.powsimp(clock)) and is_zero(norm):
            return verified("with dς = R^{L−2} dσ, s = r − 1 = e^λ ω: ds/dς = R^{−(L−2)} R^{L−1} G = R G; the blown-up flow "
                            "dλ/dς = ⟨ω, G⟩, dω_j/dς = G_j − ⟨ω, G⟩ω_j (systems.blowup_projected) gives d(e^λ ω_j)/dς = "
                            "e^λ G_j, the same flow; ½ d|ω|²/dς = ⟨ω, G⟩(1 − |ω|²) = 0 on |ω| = 1")
        return refuted(f"residuals {sp.simplify(moved)}, {sp.simplify(clock)}, {norm}", {})

    return [
        LemmaStep("P6: (1 − r_k)^{L−1} = −R^{L−1} ω_k^{L−1} at r_k = 1 + R ω_k (even L)", term),
        LemmaStep("P6: the ratio field at r = 1 + Rω is R^{L−1} G(R, ω)", identity),
        LemmaStep("P6: G is regular at R = 0", regular),
        LemmaStep("P6: the blown-up system (λ = ln R, ω on the sphere) is the ratio flow in s = e^λ ω", sphere),
    ]


_STEPS = {"P3": p3_steps, "P4": p4_steps, "P5": p5_steps, "P6": p6_steps, "LOCK": lock_steps}


def steps(name: str, depth=None, dim=None, **forms) -> list[LemmaStep]:
    """The proof steps of lemma ``name``: for a symbolic depth and dimension (``depth``, ``dim`` None), or for the
    integers given (the exact route). ``forms``: replacements of the forms (for tests: a wrong field)."""
    fn = _STEPS[name]
    L = (L_any if name in ("P5", "LOCK") else L_even) if depth is None else int(depth)
    d = d_sym if dim is None else int(dim)
    return fn(L, d, **forms)


@dataclass(frozen=True)
class Proof:
    """What running a lemma's steps found: ``ok`` when every step is verified; ``route`` (symbolic or exact);
    ``detail``: the first step that was not verified, and why."""

    name: str
    ok: bool
    route: str
    detail: str


def _run(name: str, depth, dim) -> Proof:
    route = "symbolic L and d" if depth is None else f"exact L = {depth}, d = {dim}"
    for st in steps(name, depth, dim):
        try:
            res = st.fn()
        except Exception as exc:  # a step sympy cannot do is not a proof
            return Proof(name, False, route, f"{st.statement}: {type(exc).__name__}: {exc}")
        if res.status != VERIFIED:
            return Proof(name, False, route, f"{st.statement}: {res.status}: {res.detail}")
    return Proof(name, True, route, "")


@cache
def symbolic_proof(name: str) -> Proof:
    """The proof of ``name`` for a symbolic L and d (cached: it runs once per process)."""
    return _run(name, None, None)


@lru_cache(maxsize=256)
def exact_proof(name: str, depth: int, dim: int) -> Proof:
    """The proof of ``name`` at the integers (``depth``, ``dim``): the on-demand route (cached)."""
    return _run(name, int(depth), int(dim))


def prove(name: str, depth: int, dim: int) -> Proof:
    """Lemma ``name`` for (``depth``, ``dim``): the symbolic proof when it verifies, else the exact one; a depth
    outside the lemma's scope is not proved (``detail`` says why)."""
    if name not in _STEPS:
        raise KeyError(name)
    if not in_scope(name, depth, dim):
        why = OUTSIDE[name] if int(depth) % 2 or name in ("P3", "P5") else OUTSIDE["P5"]
        return Proof(name, False, "outside its scope",
                     f"{name} is proved for {SCOPE[name][0]}, not L = {depth}, d = {dim}: {why}")
    sym = symbolic_proof(name)
    if sym.ok:
        return sym
    ex = exact_proof(name, int(depth), int(dim))
    if ex.ok:
        return ex
    return Proof(name, False, ex.route, f"symbolic route: {sym.detail}; exact route: {ex.detail}")

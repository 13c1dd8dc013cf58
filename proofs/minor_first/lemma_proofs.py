"""The proofs of the depth-L lemmas P3, P4, P5, P6 and LOCK (L ≥ 3), in sympy, for a SYMBOLIC depth L and a
symbolic dimension d; the pack ``minor-first`` shows them as steps of its theorems P and LOCK
(proofs/minor_first/persisting.py, lockin.py), and :func:`theorycheck.proofs.minor_first.lemmas.strength` reads their
verdicts.

How a general d is handled: a statement about one coordinate j is written for a generic j, with the sums over
the coordinates as symbolic sums Σ_{k=1}^{d} (``sympy.Sum`` with coordinate data z(k), r(k), θ(k, τ) as functions
of the index), or, for a pair j ≠ k, with the other d − 2 coordinates' share of N² a symbol Q ≥ 0 that depends on
neither u_j nor u_k. How a general L is handled: L is a sympy integer symbol (even where the lemma is about even
L, so that L − 1 is odd and (−x)^{L−1} = −x^{L−1}); the forms are the coordinate forms of
:mod:`closed_forms` and :mod:`systems` called with that symbol (never retyped here).

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

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import validated_fields as S
from theorycheck.symbolic.theorem import VERIFIED, StepResult, refuted, verified

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


@dataclass(frozen=True)
class LemmaStep:
    """One step of a lemma's proof: a statement and the function that checks it."""

    statement: str
    fn: Callable[[], StepResult]


# ---------------------------------------------------------------- symbols
#: L ≥ 3 (P5, LOCK): an integer symbol; even L ≥ 2 (P3, P4, P6): an even symbol (L − 1 odd)
L_any = sp.Symbol("L", integer=True, positive=True)
L_even = sp.Symbol("L", even=True, positive=True)
d_sym = sp.Symbol("d", integer=True, positive=True)
_k = sp.Symbol("k", integer=True, positive=True)
_m = sp.Symbol("m", integer=True, positive=True)
_j = sp.Symbol("j", integer=True, positive=True)
_z = sp.Function("z", positive=True)
_r = sp.Function("r", positive=True)
_theta = sp.Function("theta", real=True)
_q = sp.Function("q", real=True)  # θ_k' (the log-rate of coordinate k)
_p = sp.Function("p", positive=True)  # a weight p_k > 0
_om = sp.Function("omega", real=True)
_G = sp.Function("G", real=True)
u = sp.Symbol("u", positive=True)
z = sp.Symbol("z", positive=True)
t = sp.Symbol("t", positive=True)
s = sp.Symbol("s", nonnegative=True)
R = sp.Symbol("R", positive=True)


def _sum(expr, d, k=_k):
    """Σ_{k=1}^{d} expr: a symbolic sum for a symbol d, written out for an integer d."""
    out = sp.Sum(expr, (k, 1, d))
    return out.doit() if isinstance(d, int) else out


def _tidy(e):
    """Bring every base over one denominator (so that (1 − 1/(1 + s))^{L−1} reads (s/(1 + s))^{L−1})."""
    return sp.powsimp(e.replace(lambda x: x.is_Pow, lambda x: sp.Pow(sp.together(x.base), x.exp)), force=True)


def _at_least_4(e, L):
    """``e`` with an even symbol L written L = 2n + 4, n ≥ 0 (so that L − 2 > 0 is known); an integer L as is."""
    n = sp.Symbol("n", integer=True, nonnegative=True)
    return e.subs(L, 2 * n + 4) if isinstance(L, sp.Symbol) else e


def _zero(e) -> bool:
    return sp.simplify(e) == 0


def _exps(e):
    """Cancel every exponent (so that u^{(L−2)(2L−2)/(L−2)} reads u^{2L−2})."""
    return e.replace(lambda x: x.is_Pow, lambda x: sp.Pow(x.base, sp.cancel(sp.together(x.exp))))


def _field(L, field):
    """du_j/dτ (ℓ2-SAM, balanced, one coordinate) with u_j, z_j positive."""
    return field(L, sy.L2_ASCENT).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)


def _ratio(L):
    """r_j = 1 − û_j/u_j (:func:`systems.ratio_of_perturbation`) with u_j, z_j positive."""
    return S.ratio_of_perturbation(L).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)


def _uhat(L):
    return cf.balanced_perturbed_point(L, sy.L2_ASCENT).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)


def _log_rate(L, field=cf.balanced_field):
    """θ_j' = (du_j/dτ)/u_j with û_j written as u_j(1 − r_j): z_j u_j^{L−2} (1 − r_j)^{L−1} when the field is
    z_j û_j^{L−1}. Returns (the log-rate in u and a dummy r, the dummy)."""
    rr = sp.Dummy("r")
    f = _field(L, field).subs(_uhat(L), u * (1 - rr))
    return sp.powsimp(sp.expand_power_base(f / u)), rr


# ---------------------------------------------------------------- P5: the ratio reduction
def p5_steps(L=L_any, d=d_sym, *, field=cf.balanced_field, component=S.ratio_component, weight=S.ratio_weight,
             mean_term=S.ratio_mean_term) -> list[LemmaStep]:
    """P5 for depth ``L`` and dimension ``d`` (symbols: every L ≥ 3, every d)."""

    def perturbation():
        r = _ratio(L)
        if _zero(r - rho * z * u ** (L - 2) / cf.N) and _zero(sp.powsimp(sp.expand(_uhat(L) - u * (1 - r)))):
            return verified(f"r_j = 1 − û_j/u_j = {r}, so û_j = u_j (1 − r_j) (L = {L})")
        return refuted(f"r_j = {r}; û_j − u_j(1 − r_j) = {sp.simplify(_uhat(L) - u * (1 - r))}", {})

    def log_rate():
        lr, rr = _log_rate(L, field)
        r = _ratio(L)
        got = lr.subs(rr, r)
        want = cf.N / rho * mean_term(L, r)
        logf = cf.balanced_log_field(L, sy.L2_ASCENT).subs({cf.theta_j: sp.log(u), cf.z_j: z}, simultaneous=True)
        same_log = _zero(sp.powsimp(logf - _field(L, field) / u, force=True))
        if _zero(got - want) and same_log:
            return verified(f"θ_j' = (du_j/dτ)/u_j = {lr.subs(rr, sp.Symbol('r_j'))} (balanced_log_field at θ_j = ln u_j); "
                            f"with u_j^{{L−2}} = r_j N/(ρ z_j): θ_j' = (N/ρ) r_j (1 − r_j)^{{L−1}} (L = {L})")
        return refuted(f"θ_j' = {lr} is not (N/ρ) r_j (1 − r_j)^(L−1), or differs from balanced_log_field", {})

    # N² = Σ_k T_k with T_k = term k of N², θ_k = θ(k, τ)
    T = cf.balanced_norm_summand(L).subs({cf.z_j: _z(_k), cf.u_j: sp.exp(_theta(_k, tau))}, simultaneous=True)
    N2 = _sum(T, d)

    def _rates(e):
        e = e.replace(sp.Derivative(_theta(_k, tau), tau), _q(_k)).replace(sp.Derivative(_theta(_j, tau), tau), _q(_j))
        if isinstance(d, int):
            for i in range(1, d + 1):
                e = e.subs(sp.Derivative(_theta(i, tau), tau), _q(i))
        return e

    dlnN = _rates(sp.diff(sp.log(N2) / 2, tau))
    mean_q = _sum(T / N2 * _q(_k), d)

    def log_norm():
        if _zero(dlnN - (L - 1) * mean_q):
            return verified(f"d ln N/dτ = ½ Σ_k T_k'/Σ_k T_k = (L − 1) Σ_{{k=1}}^{{{d}}} p_k θ_k', p_k = T_k/N² ≥ 0, Σ p_k = 1 "
                            f"(T_k = {cf.balanced_norm_summand(L)} at coordinate k: d T_k/dθ_k = (2L − 2) T_k)")
        return refuted(f"d ln N/dτ − (L−1) Σ p_k θ_k' = {sp.simplify(dlnN - (L - 1) * mean_q)}", {})

    C = L * (cf.N / rho) ** (sp.S(2 * L - 2) / (L - 2))

    def weights():
        e = sp.powsimp(sp.powdenest(sp.expand_power_base(C * weight(L, _ratio(L), z), force=True), force=True), force=True)
        Tk = cf.balanced_norm_summand(L).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)
        w = weight(L, _r(_k), _z(_k))
        same = _zero(C * w / _sum(C * w, d) - w / _sum(w, d))
        if _zero(_exps(e) - Tk) and same:
            return verified(f"T_k = C · w_k(r_k) with w_k = {weight(L, sp.Symbol('r_k'), sp.Symbol('z_k'))} and "
                            f"C = {C} the same for every k: p_k = T_k/Σ T_m = w_k/Σ w_m (the ratio field's weights)")
        return refuted(f"C · w_k − T_k = {sp.simplify(_exps(e) - Tk)}", {})

    def log_ratio():
        rj = _ratio(L).subs({u: sp.exp(_theta(_j, tau)), z: _z(_j), cf.N: sp.sqrt(N2)}, simultaneous=True)
        dlr = _rates(sp.diff(sp.expand_log(sp.log(rj), force=True), tau))
        if _zero(dlr - ((L - 2) * _q(_j) - dlnN)):
            return verified("ln r_j = ln(ρ z_j) + (L − 2) θ_j − ln N, so d ln r_j/dτ = (L − 2) θ_j' − d ln N/dτ")
        return refuted(f"d ln r_j/dτ = {dlr}", {})

    def combine():
        rj = sp.Symbol("r_j", positive=True)
        w = weight(L, _r(_k), _z(_k))
        W = _sum(w.subs(_k, _m), d, _m)
        # (ρ/N) [(L−2) θ_j' − (L−1) Σ p_k θ_k'] with θ_k' = (N/ρ) r_k (1 − r_k)^{L−1}, p_k = C w_k / Σ C w_m
        lhs = rho / cf.N * ((L - 2) * cf.N / rho * mean_term(L, rj)
                            - (L - 1) * _sum(C * w / _sum(C * w.subs(_k, _m), d, _m) * cf.N / rho * mean_term(L, _r(_k)), d))
        rhs = component(L, rj, _sum(w / W * mean_term(L, _r(_k)), d)) / rj
        if _zero(lhs - rhs):
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
        if _zero(dterm - want) and want.is_nonnegative:
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
        if _zero(got + (L - 1) * M):
            return verified(f"at r_j = 1: dr_j/dσ = {got} = −(L − 1) M, M = Σ_k p_k r_k (1 − r_k)^{{L−1}} (L = {L})")
        return refuted(f"dr_j/dσ at r_j = 1 is {got}", {})

    def term_signs():
        above = sp.expand_power_base(mean_term(L, 1 + t))  # r_k = 1 + t > 1
        below = _tidy(mean_term(L, 1 / (1 + s)))  # 0 < r_k = 1/(1 + s) ≤ 1
        w = weight(L, _r(_k), _z(_k))
        if above.is_negative and below.is_nonnegative and _at_least_4(w, L).is_positive:
            return verified(f"L − 1 odd: r_k(1 − r_k)^{{L−1}} at r_k = 1 + t (t > 0) is {above} < 0; at r_k = 1/(1 + s) "
                            f"(s ≥ 0) it is {sp.factor(below)} ≥ 0; the weights w_k = {w} are > 0, so p_k > 0")
        return refuted(f"signs: above {above} ({above.is_negative}), below {below} ({below.is_nonnegative}), "
                       f"weight {w.is_positive}", {})

    def invariance():
        pa = sp.Function("a", positive=True)
        pb = sp.Function("b", nonnegative=True)
        gap_up = sp.expand_power_base(mean_term(L, 1 + pb(_k)))  # r_k = 1 + b_k ≥ 1 (the face of {r ≥ 1})
        gap_dn = _tidy(mean_term(L, 1 / (1 + pb(_k))))  # 0 < r_k ≤ 1 (the face of {r ≤ 1})
        up = -(L - 1) * _sum(_p(_k) * gap_up, d)
        dn = -(L - 1) * _sum(_p(_k) * gap_dn, d)
        ok_up = (-(L - 1) * _p(_k) * gap_up).is_nonnegative
        ok_dn = (-(L - 1) * _p(_k) * gap_dn).is_nonpositive
        strict = (-(L - 1) * _p(_k) * sp.expand_power_base(mean_term(L, 1 + pa(_k)))).is_positive
        if ok_up and ok_dn and strict:
            return verified(f"on the face r_j = 1 of {{r_k ≥ 1 ∀k}}: dr_j/dσ = {up}, every term ≥ 0, > 0 unless every r_k "
                            "= 1 (the equilibrium r = 1, which no path from {r > 1} reaches in finite time: uniqueness); "
                            "so a first exit from the open set {r_k > 1 ∀k} is impossible. On the face r_j = 1 of "
                            f"{{r_k ≤ 1 ∀k}}: dr_j/dσ = {dn}, every term ≤ 0: the field points into the closed set "
                            "(Nagumo's condition; the field is locally Lipschitz on r > 0). Both sets are forward "
                            "invariant in σ, hence in τ (dσ/dτ = N/ρ > 0)")
        return refuted(f"face signs: {{r ≥ 1}} {ok_up}, strict {strict}, {{r ≤ 1}} {ok_dn}", {})

    def fates():
        lr, rr = _log_rate(L, field)  # θ_j' = z_j u_j^{L−2} (1 − r_j)^{L−1}
        du_up = sp.expand_power_base(u * lr.subs(rr, 1 + t))
        du_dn = _tidy(u * lr.subs(rr, 1 / (1 + s)))
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
        if _zero(got - want):
            return verified(f"(1 − r_k)^{{L−1}} = (−R ω_k)^{{L−1}} = −R^{{L−1}} ω_k^{{L−1}} (L − 1 odd): "
                            f"r_k(1 − r_k)^{{L−1}} = {got} at r_k = 1 + R ω_k")
        return refuted(f"mean term at 1 + Rω − (−R^(L−1)) blown term = {sp.simplify(got - want)}", {})

    def identity():
        w = weight(L, 1 + R * _om(_k), _z(_k))
        p = w / _sum(w.subs(_k, _m), d, _m)
        mean_r = _sum(p * sp.expand_power_base(mean_term(L, 1 + R * _om(_k)), force=True), d)
        mean_g = _sum(p * blown_term(L, 1 + R * _om(_k), _om(_k)), d)
        F = sp.expand_power_base(component(L, 1 + R * oj, mean_r), force=True)
        G = blown(L, 1 + R * oj, oj, mean_g)
        if _zero(F - R ** (L - 1) * G):
            return verified(f"the ratio field at r = 1 + R ω (any d: the mean Σ_{{k=1}}^{{{d}}} with weights at r_k = 1 + Rω_k) "
                            f"is R^{{L−1}} G_j, G_j = systems.blowup_component(L, r_j, ω_j, Σ_k p_k r_k ω_k^{{L−1}}) (L = {L})")
        return refuted(f"ratio field − R^(L−1) G = {sp.simplify(F - R ** (L - 1) * G)}", {})

    def regular():
        w = weight(L, 1 + R * _om(_k), _z(_k))
        p = w / _sum(w.subs(_k, _m), d, _m)
        G = blown(L, 1 + R * oj, oj, _sum(p * blown_term(L, 1 + R * _om(_k), _om(_k)), d))
        g0 = G.subs(R, 0)
        w0 = weight(L, 1 + R * oj, z).subs(R, 0)
        if not g0.has(sp.zoo, sp.oo, sp.nan) and _at_least_4(w0, L).is_positive:
            return verified(f"G_j(0, ω) = {sp.simplify(g0)} is finite: R enters G only through r_k = 1 + R ω_k and the "
                            f"weights, which at R = 0 are {w0} > 0 (and stay > 0 while every r_k > 0, e.g. |R| < 1 with "
                            "|ω| = 1): the blown-up field is regular at R = 0")
        return refuted(f"G_j(0, ω) = {g0}; weight at R = 0: {w0}", {})

    def sphere():
        P = sp.Symbol("P", real=True)  # ⟨ω, G⟩ = dλ/dς
        lam = sp.Symbol("lambda", real=True)
        dlam, dom = P, projected(_G(_j), _om(_j), P)
        moved = sp.exp(lam) * (dlam * _om(_j) + dom) - sp.exp(lam) * _G(_j)  # d(e^λ ω_j)/dς − e^λ G_j
        clock = R ** (-(L - 2)) * R ** (L - 1) * _G(_j) - R * _G(_j)  # ds/dς = R^{−(L−2)} ds/dσ = R G
        # Σ_k ω_k dω_k/dς: per coordinate ω_k G_k − P ω_k², so the sum is ⟨ω, G⟩ − P|ω|² = P − P = 0 on |ω| = 1
        per = sp.expand(_om(_k) * projected(_G(_k), _om(_k), P))
        norm = per - (_G(_k) * _om(_k) - P * _om(_k) ** 2)
        if _zero(moved) and _zero(sp.powsimp(clock)) and _zero(norm):
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


# ---------------------------------------------------------------- LOCK, L ≥ 3: the blow-up order
def lock_steps(L=L_any, d=d_sym, *, field=cf.balanced_field) -> list[LemmaStep]:
    """The depth-dependent steps of the lock-in lemma for L ≥ 3 (a symbol); its other steps do not depend on L or d."""
    n = sp.Symbol("N", positive=True)

    def ratio_bound():
        r = rho * z * u ** (L - 2) / n
        at = sp.simplify((r ** 2).subs(n, sp.sqrt(L) * z * u ** (L - 1)))
        floor = sp.simplify((rho / (sp.sqrt(L) * u)).subs(u, TE.depth_lockin_floor(L)))
        if _zero(at - rho ** 2 / (L * u ** 2)) and _zero(floor - sp.S(1) / L):
            return verified("N² = L Σ z_i² u_i^{2L−2} ≥ L z_j² u_j^{2L−2}, so r_j = ρ z_j u_j^{L−2}/N ≤ ρ/(√L u_j); at "
                            "u_j = ρ√L the bound is 1/L. So u_j ≥ ρ√L gives r_j ≤ 1/L ≤ 1: û_j ≥ 0, u_j is nondecreasing "
                            f"and u_j ≥ ρ√L persists (L = {L})")
        return refuted(f"bound {at}, floor {floor}", {})

    def monotone_in_z():
        zz = sp.Symbol("z", real=True)
        lr, rr = _log_rate(L, field)
        g = sp.powsimp((u * lr).subs(rr, rho * zz * u ** (L - 2) / n).subs(z, zz))
        r = rho * zz * u ** (L - 2) / n
        b = sp.Symbol("b", real=True)  # b = 1 − r
        want = u ** (L - 1) * b ** (L - 2) * (1 - L * r)
        got = sp.diff(g, zz).subs(1 - r, b)
        if sp.simplify(sp.powsimp(sp.expand(got / want), force=True).subs(b, 1 - r)) == 1:
            return verified(f"∂/∂z [z û^{{L−1}}] = u^{{L−1}}(1 − r)^{{L−2}}(1 − L r), r = ρ z u^{{L−2}}/N (L = {L}): at a "
                            "crossing u_j = u_k = u ≥ ρ√L with z_j < z_k, r ≤ r(z_k) ≤ 1/L along [z_j, z_k], so u_k' > u_j': "
                            "no smaller z_j overtakes j† while u_j† ≥ ρ√L (r < 0 for z ≤ 0 only helps)")
        return refuted(f"∂/∂z / want = {sp.powsimp(sp.expand(got / want), force=True)}", {})

    def rival_speed():
        rr = sp.Symbol("r", nonnegative=True)
        uhat = u * (1 - rr)
        if sp.simplify(u - uhat) == u * rr and sp.simplify(-uhat - u * rr) == -u:
            return verified("û_j = u_j(1 − r_j) with 0 ≤ r_j ≤ ρ/(√L u_j): for r_j ≤ 1, 0 ≤ û_j ≤ u_j; for r_j > 1, "
                            "|û_j| = u_j r_j − u_j < u_j r_j ≤ ρ/√L. So |û_j| ≤ max(u_j, ρ/√L) and u_j stays below GD "
                            "started from max(u_j, ρ/√L): a rival's blow-up score is at most z_j max(u_j, ρ/√L)^{L−2}")
        return refuted("û bounds fail", {})

    def race():
        rr = sp.Symbol("r", nonnegative=True)
        uf = sp.Function("u")(tau)
        lr, rdum = _log_rate(L, field)
        du = (u * lr).subs(rdum, rr).subs(u, uf)
        dv = sp.diff(uf ** (-(L - 2)), tau).subs(sp.Derivative(uf, tau), du)
        want = -(L - 2) * z * (1 - rr) ** (L - 1)
        lo, hi = TE.depth_lockin_blowup_bounds(L)
        c = TE.depth_lockin_rate_factor(L).subs(cf.u_j, u)
        lo, hi = lo.subs({cf.z_j: z, cf.u_j: u}), hi.subs({cf.z_j: z, cf.u_j: u})
        v = u ** (-(L - 2))
        ok_b = _zero(lo - v / ((L - 2) * z)) and _zero(hi - v / ((L - 2) * z * c))
        vk, vj, zk, zj, cc = sp.symbols("v_k v_j z_k z_j c", positive=True)
        s_star = vk / ((L - 2) * zk * cc)
        end = sp.simplify((vj - (L - 2) * zj * s_star) * zk * cc)
        if _zero(sp.powsimp(dv - want, force=True)) and ok_b and _zero(end - (zk * cc * vj - zj * vk)):
            return verified("v = u^{−(L−2)} obeys v' = −(L−2) z (1 − r)^{L−1}, in [−(L−2) z, −(L−2) z c] for the winner "
                            "(c = (1 − ρ/(√L u_k0))^{L−1}, u_k ≥ u_k0): it blows up within [v_k0/((L−2)z_k), "
                            "v_k0/((L−2)z_k c)] (theory_exprs.depth_lockin_blowup_bounds). A rival's majorant "
                            "ṽ_j = ṽ_j0 − (L−2) z_j s stays above v_k until then iff ṽ_j0 > v_k0 and z_k c ṽ_j0 − z_j v_k0 > 0, "
                            f"i.e. z_j max(u_j, ρ/√L)^{{L−2}} < z_k c u_k0^{{L−2}} (L = {L})")
        return refuted(f"v' − want = {sp.simplify(dv - want)}, bounds {ok_b}, race end {end}", {})

    def floor():
        uu = sp.Symbol("u", positive=True)
        sol = sp.solve(sp.Eq(rho / (sp.sqrt(L) * uu), sp.S(1) / L), uu)
        if len(sol) == 1 and _zero(sol[0] - TE.depth_lockin_floor(L)):
            return verified(f"ρ/(√L u) = 1/L at u = {sol[0]} = theory_exprs.depth_lockin_floor")
        return refuted(f"solutions {sol}", {})

    def scores():
        th = sp.Symbol("theta", real=True)
        uu = sp.exp(th)
        c = TE.depth_lockin_rate_factor(L).subs(cf.u_j, uu)
        w = TE.depth_lockin_winner_log_score(L).subs({cf.theta_j: th, cf.z_j: z})
        want = sp.log(z) + (L - 2) * th + (L - 1) * sp.log(1 - rho * sp.exp(-th) / sp.sqrt(L))
        if _zero(w - want) and _zero(sp.expand_log(sp.log(z * uu ** (L - 2) * c), force=True)
                                     - sp.expand_log(want, force=True)):
            return verified("the winner's log score is ln(z u^{L−2} c) and the rival's ln(z max(u, ρ/√L)^{L−2})")
        return refuted(f"winner score {w}", {})

    return [
        LemmaStep("LOCK (L ≥ 3): r_j ≤ ρ/(√L u_j); u_j ≥ ρ√L persists", ratio_bound),
        LemmaStep("LOCK (L ≥ 3): no smaller z_j overtakes j† while u_j† ≥ ρ√L", monotone_in_z),
        LemmaStep("LOCK (L ≥ 3): |û_j| ≤ max(u_j, ρ/√L)", rival_speed),
        LemmaStep("LOCK (L ≥ 3): the blow-up race and the blow-up time enclosure", race),
        LemmaStep("LOCK (L ≥ 3): the lock-in floor ρ√L is where ρ/(√L u) = 1/L", floor),
        LemmaStep("LOCK (L ≥ 3): the log scores of closed_forms are the race's scores", scores),
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

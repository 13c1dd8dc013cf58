"""The proof of the lock-in lemma LOCK at depth L ≥ 3 (the blow-up order of the leading coordinate), step by step, in
the algebra of :mod:`theorycheck.proofs.minor_first.lemma_algebra`, for a symbolic L and d; listed with the persisting
lemmas' proofs by :mod:`theorycheck.proofs.minor_first.lemma_proofs` and shown by theorem LOCK
(proofs/minor_first/lockin.py)."""

from __future__ import annotations

import sympy as sp
from theorycheck.proofs.minor_first.lemma_algebra import L_any, LemmaStep, d_sym, is_zero, log_rate_of, u, z

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.theorem import refuted, verified

__all__ = ["lock_steps"]

rho, tau = sy.rho, sy.tau


# ---------------------------------------------------------------- LOCK, L ≥ 3: the blow-up order
def lock_steps(L=L_any, d=d_sym, *, field=cf.balanced_field) -> list[LemmaStep]:
    """The depth-dependent steps of the lock-in lemma for L ≥ 3 (a symbol); its other steps do not depend on L or d."""
    n = sp.Symbol("N", positive=True)

    def ratio_bound():
        r = rho * z * u ** (L - 2) / n
        at = sp.simplify((r ** 2).subs(n, sp.sqrt(L) * z * u ** (L - 1)))
        floor = sp.simplify((rho / (sp.sqrt(L) * u)).subs(u, TE.depth_lockin_floor(L)))
        if is_zero(at - rho ** 2 / (L * u ** 2)) and is_zero(floor - sp.S(1) / L):
            return verified("N² = L Σ z_i² u_i^{2L−2} ≥ L z_j² u_j^{2L−2}, so r_j = ρ z_j u_j^{L−2}/N ≤ ρ/(√L u_j); at "
                            "u_j = ρ√L the bound is 1/L. So u_j ≥ ρ√L gives r_j ≤ 1/L ≤ 1: û_j ≥ 0, u_j is nondecreasing "
                            f"and u_j ≥ ρ√L persists (L = {L})")
        return refuted(f"bound {at}, floor {floor}", {})

    def monotone_in_z():
        zz = sp.Symbol("z", real=True)
        lr, rr = log_rate_of(L, field)
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
        lr, rdum = log_rate_of(L, field)
        du = (u * lr).subs(rdum, rr).subs(u, uf)
        dv = sp.diff(uf ** (-(L - 2)), tau).subs(sp.Derivative(uf, tau), du)
        want = -(L - 2) * z * (1 - rr) ** (L - 1)
        lo, hi = TE.depth_lockin_blowup_bounds(L)
        c = TE.depth_lockin_rate_factor(L).subs(cf.u_j, u)
        lo, hi = lo.subs({cf.z_j: z, cf.u_j: u}), hi.subs({cf.z_j: z, cf.u_j: u})
        v = u ** (-(L - 2))
        ok_b = is_zero(lo - v / ((L - 2) * z)) and is_zero(hi - v / ((L - 2) * z * c))
        vk, vj, zk, zj, cc = sp.symbols("v_k v_j z_k z_j c", positive=True)
        s_star = vk / ((L - 2) * zk * cc)
        end = sp.simplify((vj - (L - 2) * zj * s_star) * zk * cc)
        if is_zero(sp.powsimp(dv - want, force=True)) and ok_b and is_zero(end - (zk * cc * vj - zj * vk)):
            return verified("v = u^{−(L−2)} obeys v' = −(L−2) z (1 − r)^{L−1}, in [−(L−2) z, −(L−2) z c] for the winner "
                            "(c = (1 − ρ/(√L u_k0))^{L−1}, u_k ≥ u_k0): it blows up within [v_k0/((L−2)z_k), "
                            "v_k0/((L−2)z_k c)] (theory_exprs.depth_lockin_blowup_bounds). A rival's majorant "
                            "ṽ_j = ṽ_j0 − (L−2) z_j s stays above v_k until then iff ṽ_j0 > v_k0 and z_k c ṽ_j0 − z_j v_k0 > 0, "
                            f"i.e. z_j max(u_j, ρ/√L)^{{L−2}} < z_k c u_k0^{{L−2}} (L = {L})")
        return refuted(f"v' − want = {sp.simplify(dv - want)}, bounds {ok_b}, race end {end}", {})

    def floor():
        uu = sp.Symbol("u", positive=True)
        sol = sp.solve(sp.Eq(rho / (sp.sqrt(L) * uu), sp.S(1) / L), uu)
        if len(sol) == 1 and is_zero(sol[0] - TE.depth_lockin_floor(L)):
            return verified(f"ρ/(√L u) = 1/L at u = {sol[0]} = theory_exprs.depth_lockin_floor")
        return refuted(f"solutions {sol}", {})

    def scores():
        th = sp.Symbol("theta", real=True)
        uu = sp.exp(th)
        c = TE.depth_lockin_rate_factor(L).subs(cf.u_j, uu)
        w = TE.depth_lockin_winner_log_score(L).subs({cf.theta_j: th, cf.z_j: z})
        want = sp.log(z) + (L - 2) * th + (L - 1) * sp.log(1 - rho * sp.exp(-th) / sp.sqrt(L))
        if is_zero(w - want) and is_zero(sp.expand_log(sp.log(z * uu ** (L - 2) * c), force=True)
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

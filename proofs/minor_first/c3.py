"""C3 (L ≥ 3, ℓ∞-SAM): du_j/dτ = z_j (u_j − ρ)^(L−1) blows up at
τ_j* = 1/((L−2) z_j (α_j − ρ)^(L−2)); the first to blow up wins,
j = argmax z_j (α_j − ρ)^(L−2) among α_j > ρ. Checked with the depth L symbolic."""

from __future__ import annotations

import functools

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, incomplete, refuted, verified

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
    u = [TE.linf_blowup_solution(3).subs({cf.alpha_j: a, cf.z_j: zz, rho: r}) for a, zz in zip(alpha, z)]
    ts = [TE.linf_blowup_time(3).subs({cf.alpha_j: a, cf.z_j: zz, rho: r}) for a, zz in zip(alpha, z)]
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
    scores = [TE.linf_blowup_score(3).subs({cf.z_j: zz, cf.alpha_j: a, rho: r}) for zz, a in zip(z, alpha)]
    if scores[0] > scores[1]:
        return verified(f"'can favour minor coordinates': L = 3, z = (1, 2), α = (3, 6/5), ρ = 1 gives scores "
                        f"{scores[0]} > {scores[1]}: the minor coordinate 1 blows up first")
    return refuted("example does not favour the minor coordinate", {})


def build():
    sol = _above(TE.linf_blowup_solution(L))
    yield Identity("u_j = ρ + ((α_j−ρ)^(−(L−2)) − (L−2) z_j τ)^(−1/(L−2)) solves du/dτ = z (u − ρ)^(L−1) (L symbolic)",
                   sp.diff(sol, tau), cf.balanced_field_linf_positive(L).subs({cf.u_j: sol, cf.z_j: zp}))
    yield Identity("u_j(0) = α_j (α_j > ρ, L symbolic)", sol.subs(tau, 0), rho + v0,
                   simplifier=lambda e: sp.simplify(sp.powdenest(e, force=True)))
    yield Identity("the base vanishes at τ* = 1/((L−2) z_j (α_j − ρ)^(L−2)): blow-up time",
                   _above((cf.alpha_j - rho) ** (-(L - 2)) - (L - 2) * cf.z_j * TE.linf_blowup_time(L)), 0)
    yield Identity("GD (ρ = 0) is the special case: τ* = 1/((L−2) z_j α_j^(L−2))",
                   TE.gd_blowup_time(L), 1 / ((L - 2) * cf.z_j * cf.alpha_j ** (L - 2)))
    yield Fact("the first to blow up is argmax z_j (α_j − ρ)^(L−2) among α_j > ρ", _monotone)
    yield Fact("ties in the blow-up score", _tie)
    yield Fact("ℓ∞-SAM can favour a minor coordinate", _minor)
    yield Fact("coordinates with α_j < ρ when L ≥ 3", _below_rho)


THEOREM = Theorem(
    key="C3",
    title="ℓ∞-SAM, L ≥ 3: finite-time blow-up, the first one wins",
    statement="du_j/dτ = z_j (u_j − ρ)^(L−1) blows up at τ_j* = 1/((L−2) z_j (α_j − ρ)^(L−2)); "
              "the winner is argmax_j z_j (α_j − ρ)^(L−2) among α_j > ρ.",
    build=build,
)


# ---------------------------------------------------------------------------- claims
# Each claim's check and its strategy are module functions (numpy, hypothesis and the solvers
# imported inside them, so that `theorycheck prove` stays symbolic); _c3_claims assembles them.
def _inputs(below: bool = False):
    """(z, α, ρ, L) with L ∈ {3, 4, 5}: some α_j > ρ (``below``: every α_j < ρ)."""
    from hypothesis import strategies as st

    from theorycheck.claims import strategies as tcs

    @st.composite
    def inputs(draw, below=False):
        z = draw(tcs.single_examples(d=(1, 4), min_value=0.2, max_value=5.0))
        r = draw(st.floats(0.1, 2.0))
        L = draw(st.sampled_from([3, 4, 5]))
        if below:
            alpha = [r * draw(st.floats(0.05, 0.95)) for _ in z]
        else:
            alpha = [r * draw(st.floats(0.05, 3.0)) for _ in z]
            if not any(a > r for a in alpha):
                alpha[draw(st.integers(0, z.size - 1))] = r * draw(st.floats(1.05, 3.0))
        return {"z": z.tolist(), "alpha": alpha, "rho": r, "L": L}

    return inputs(below=below)


def _run(x, T):
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.setting import Setting

    s = Setting.from_z(x["z"], depth=x["L"], optimizer="sam-linf", rho=x["rho"], alpha=x["alpha"])
    return num.solve(s, T)


def _predicted(x):
    """τ_j* (C3, compiled), inf for α_j ≤ ρ."""
    import numpy as np

    from theorycheck.symbolic import theory_forms as MF


    z, a, r, L = np.array(x["z"]), np.array(x["alpha"]), x["rho"], x["L"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > r, MF.linf_blowup_time(L)(a, z, r), np.inf)


def _check_time(x):
    import numpy as np

    from theorycheck.claims.claim import Outcome

    ts = _predicted(x)
    tr = _run(x, 2 * float(ts.min()))
    if tr.stopped_because != "blowup":
        return Outcome(None if not tr.successful else False, np.inf, {"stopped_because": tr.stopped_because})
    rel = abs(tr.blowup_time - ts.min()) / ts.min()
    return Outcome(rel <= 1e-6, rel, {"observed": tr.blowup_time, "predicted": float(ts.min())})


def _winner_direction(x):
    from theorycheck.proofs.minor_first import _numerics as num

    ts = _predicted(x)
    tr = _run(x, 2 * float(ts.min()))
    if tr.stopped_because != "blowup":
        return None, tr
    return num.direction(tr.log_abs_beta[-1], tr.sign_beta[-1]), tr


def _check_winner(x):
    import numpy as np

    from theorycheck.claims.claim import Outcome

    d, tr = _winner_direction(x)
    if d is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    j = int(np.argmin(_predicted(x))) + 1  # THEORY.md literally: the first to blow up, argmax of the score
    e = np.zeros(d.size)
    e[j - 1] = 1
    dev = float(np.linalg.norm(d - e))
    return Outcome(dev <= 1e-6, dev, {"predicted_index": j, "observed_direction": d.tolist()})


def _check_winner_refined(x):
    import numpy as np
    from theorycheck.proofs.minor_first.predict.thresholds import linf_limit_direction

    from theorycheck.claims.claim import Outcome

    d, tr = _winner_direction(x)
    if d is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    want = linf_limit_direction(x["z"], x["alpha"], x["rho"], x["L"])
    dev = float(np.linalg.norm(d - want))
    return Outcome(dev <= 1e-4, dev, {"predicted_direction": want.tolist(), "observed_direction": d.tolist()})


def _check_below(x):
    import numpy as np

    from theorycheck.claims.claim import Outcome

    z, a, r, L = np.array(x["z"]), np.array(x["alpha"]), x["rho"], x["L"]
    if L % 2 == 1:
        T = 1e4 / z.min()
        tr = _run(x, T)
        if not tr.successful:
            return Outcome(None, detail={"stopped_because": tr.stopped_because})
        u = np.exp(tr.log_abs_beta[-1] / L)
        # u = ρ − v with v^(−(L−2)) = (ρ−α)^(−(L−2)) + (L−2) z T
        v = ((r - a) ** (-(L - 2)) + (L - 2) * z * T) ** (-1.0 / (L - 2))
        dev = float(np.max(np.abs((r - u) - v) / v))
        ok = bool(np.all(u < r)) and dev <= 1e-6
        return Outcome(ok, dev, {"u_T": u.tolist(), "T": T})
    tau0 = ((r - a) ** (-(L - 2)) - r ** (-(L - 2))) / ((L - 2) * z)
    tr = _run(x, 2 * float(tau0.max()))
    slides = {e.index: e.time for e in tr.events if e.kind == "slide"}
    if set(slides) != set(range(1, z.size + 1)):
        return Outcome(False, np.inf, {"slides": slides, "predicted": tau0.tolist()})
    dev = max(abs(slides[j + 1] - tau0[j]) / tau0[j] for j in range(z.size))
    return Outcome(dev <= 1e-8, dev, {"slides": slides, "predicted": tau0.tolist(), "collapsed": tr.collapsed})


def _c3_claims():
    from theorycheck.proofs.minor_first import box_claims as bc

    from theorycheck.claims.claim import Claim

    # boxes of the claims' domain (L = 3 and 4, d = 2; the minor coordinate wins; no tie of the score)
    DOMAIN3 = bc.domain_box([(0.5, 1.0), (2.0, 3.0)], [(3.0, 4.0), (1.1, 1.2)], (0.9, 1.0), L=3)
    DOMAIN4 = bc.domain_box([(0.5, 1.0), (2.0, 3.0)], [(3.0, 4.0), (1.1, 1.2)], (0.9, 1.0), L=4)
    tie = {"z": [1.0, 2.0], "alpha": [3.0, 2.0], "rho": 1.0, "L": 3}
    minor = {"z": [1.0, 2.0], "alpha": [3.0, 1.2], "rho": 1.0, "L": 3}
    return [Claim(
        key="C3.blowup-time",
        statement="ℓ∞-SAM, L ≥ 3: the flow blows up at min_j τ_j*, τ_j* = 1/((L−2) z_j (α_j − ρ)^(L−2)) over α_j > ρ",
        inputs=_inputs(), check=_check_time, tolerance="relative 1e-6 on the blow-up time",
        prover=bc.prover(bc.c3_blowup_time, [DOMAIN3, DOMAIN4], ("C3",)),
    ), Claim(
        key="C3.winner",
        statement="ℓ∞-SAM, L ≥ 3: the first coordinate to blow up wins: the direction tends to e_j, "
                  "j = argmax z_j (α_j − ρ)^(L−2) among α_j > ρ (it can be a minor coordinate)",
        inputs=_inputs(), check=_check_winner, pinned=[minor, tie],
        tolerance="‖direction at blow-up − e_j‖ ≤ 1e-6",
        prover=bc.prover(bc.c3_winner, [DOMAIN3, DOMAIN4, bc.input_box(minor), bc.input_box(tie)], ("C3",)),
        refined=Claim(
            key="C3.winner-refined",
            statement="(refined by theorycheck) at a tie of the top score the coordinates blow up together and the "
                      "direction tends to ∝ z_j^(−L/(L−2)) over the tied coordinates (e_j when unique)",
            inputs=_inputs(), check=_check_winner_refined, pinned=[minor, tie],
            tolerance="‖direction at blow-up − prediction‖ ≤ 1e-4 (the integrator stops at a finite distance from τ*)"),
    ), Claim(
        key="C3.below-rho",
        statement="(found by theorycheck) ℓ∞-SAM, L ≥ 3, α_j < ρ: for odd L, u_j rises to ρ (u = ρ − v, "
                  "v^(−(L−2)) = (ρ−α)^(−(L−2)) + (L−2)zτ), never reaching 0; for even L, u_j hits 0 at "
                  "τ0 = ((ρ−α)^(−(L−2)) − ρ^(−(L−2)))/((L−2)z) and slides",
        inputs=_inputs(below=True), check=_check_below,
        tolerance="odd L: relative 1e-6 on ρ − u at τ = 1e4/z_min; even L: relative 1e-8 on τ0",
    )]


@functools.cache
def claims() -> tuple:
    """This module's claims, built once; the pack's manifest (``theorycheck.proofs.claims``) lists them."""
    return (*_c3_claims(),)

"""C5 (regimes in α, L = 2, ℓ2-SAM, one example): the start-of-training conditions.

Derived in THEORY.md, with N0 = α √2 ‖z‖₂: all coordinates shrink at the start iff
N0 < ρ z_min; the major coordinate grows fastest from the start iff
N0 ≥ ρ (z_(d) + z_(d−1)); j†(0+) = argmax_j z_j (1 − ρ z_j / N0). The collapse threshold α_c
has no known closed form (computed by ``theorycheck thresholds``)."""

from __future__ import annotations

import functools

import sympy as sp
from theorycheck.proofs.minor_first.c5_regimes import l2_setting, regime_claims

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, incomplete, refuted, verified

rho = sy.rho
N0 = sp.Symbol("N0", positive=True)


def _rate(z, n0=N0, r=rho):
    return TE.l2_log_rate().subs({cf.z_j: z, cf.N: n0, rho: r})


def _shrink_iff():
    zp = sp.Symbol("z", positive=True)
    sol = sp.solve_univariate_inequality(_rate(zp) < 0, N0, relational=False)
    want = sp.Interval.open(0, TE.l2_collapse_certificate().subs(cf.z_min, zp))  # N0 < ρ z_j
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
    d = sp.diff(TE.l2_log_rate().subs(cf.z_j, zp), cf.N)
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


def _saddle():
    """The saddle at α = α_c: u = (ρ/√2) e_1 with z_1 the smallest entry (d = 3, symbols)."""
    z1, z2, z3 = sp.symbols("z_1 z_2 z_3", positive=True)
    u = sp.symbols("u_1:4", positive=True)
    zz = (z1, z2, z3)
    Nsq = sum(cf.balanced_norm_summand(2).subs({cf.z_j: zj, cf.u_j: uj}) for zj, uj in zip(zz, u))
    F = sp.Matrix([cf.balanced_field(2, "sam-l2").subs({cf.z_j: zj, cf.u_j: uj, cf.N: sp.sqrt(Nsq)})
                   for zj, uj in zip(zz, u)])
    at = {u[0]: rho / sp.sqrt(2), u[1]: 0, u[2]: 0}
    f0 = [sp.simplify(x.subs(at)) for x in F]
    J = F.jacobian(sp.Matrix(u)).subs(at).applyfunc(sp.simplify)
    want = sp.diag(z1, z2 * (1 - z2 / z1), z3 * (1 - z3 / z1))
    if all(x == 0 for x in f0) and sp.simplify(J - want) == sp.zeros(3, 3):
        return verified("u* = (ρ/√2) e_min is an equilibrium with N = ρ z_min; its Jacobian is diagonal with "
                        "eigenvalues z_min (unstable: the N direction) and z_j (1 − z_j/z_min) < 0 for z_j > z_min "
                        "(stable): one unstable direction, so its stable manifold (codimension 1) is the boundary "
                        "between collapse and growth, and at α = α_c the path tends to u* (N → ρ z_min). On the "
                        "unstable manifold x = N/(ρ z_min) − 1 obeys dx/dτ = z_min x exactly. With k tied minima "
                        "u*_j = ρ/√(2k) on each")
    return refuted(f"equilibrium residual {f0}, Jacobian {J}", {})


def _depth_rates():
    """Depth L: the initial log-rate z_j α^(L−2)(1 − r_j)^(L−1), r_j = ρ z_j/(α√L‖z‖₂), from the field."""
    from theorycheck.proofs.minor_first.predict import depth as dl

    out = []
    for L in (2, 3, 4, 5, 6):
        f = dl.initial_forms(L)  # raises if the factored rate differs from the derived one
        want = rho * cf.z_j / (cf.alpha * sp.sqrt(L) * cf.z_norm)
        if sp.simplify(f["r0"] - want) != 0:
            return refuted(f"L = {L}: r_j(0) = {f['r0']}", {"L": L})
        out.append(f"L = {L}: {f['rate']}")
    odd = all(sp.simplify(cf.balanced_field(L, "sam-l2") / cf.z_j - cf.balanced_perturbed_point(L, "sam-l2") ** (L - 1))
              == 0 for L in (3, 5, 7))
    if not odd:
        return refuted("the depth-L field is not z_j û_j^(L−1)", {})
    return verified("N0 = √L ‖z‖₂ α^(L−1), r_j(0) = ρ z_j/(α√L‖z‖₂), dθ_j/dτ(0) = z_j α^(L−2)(1 − r_j(0))^(L−1) ("
                    + "; ".join(out) + "). Even L: all shrink ⇔ α < ρ z_min/(√L‖z‖₂); odd L: du_j/dτ = z_j û_j^(L−1) ≥ 0 "
                    "(even power), so nothing ever shrinks and there is no collapse threshold")


def build():
    zs = sy.data_symbols(1, 3)
    N_at_alpha = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(2).subs({cf.z_j: zs[j], cf.u_j: cf.alpha}) for j in range(3)]))
    yield Identity("N0 = N(τ = 0) = α √2 ‖z‖₂ (d = 3)", N_at_alpha,
                   TE.initial_norm().subs(cf.z_norm, sp.sqrt(sum(zj**2 for zj in zs))))
    yield Fact("all coordinates shrink at the start iff N0 < ρ z_min (z > 0)", _shrink_iff)
    yield Fact("all shrink iff N0 < ρ z_min: z with a negative entry", _shrink_mixed)
    yield Fact("all shrinking persists (so α_all_shrink bounds α_c from below)", _shrink_persists)
    yield Identity("α_all_shrink = ρ z_min / (√2 ‖z‖₂) solves N0 = ρ z_min",
                   TE.initial_norm().subs(cf.alpha, TE.alpha_all_shrink()), rho * cf.z_min)
    yield Fact("the major coordinate grows fastest iff N0 ≥ ρ(z_(d) + z_(d−1))", _fastest_factor)
    yield Fact("major grows fastest: ties at the top", _fastest_tie)
    yield Identity("α_gd_like = ρ (z_(d) + z_(d−1)) / (√2 ‖z‖₂) solves N0 = ρ(z_(d) + z_(d−1))",
                   TE.initial_norm().subs(cf.alpha, TE.alpha_gd_like()), rho * (cf.z_1st + cf.z_2nd))
    yield Fact("j†(0+) = argmax_j z_j (1 − ρ z_j / N0)", _initial_index)
    yield Fact("at α = α_c the path tends to a saddle: its location and eigenvalues", _saddle)
    yield Fact("depth L ≥ 2: the initial-rate conditions (derived), odd L never shrinks", _depth_rates)


THEOREM = Theorem(
    key="C5",
    title="ℓ2-SAM, L = 2: start-of-training conditions of the three regimes",
    statement="N0 = α√2‖z‖₂; all shrink at the start iff N0 < ρ z_min; the major coordinate grows fastest iff "
              "N0 ≥ ρ(z_(d) + z_(d−1)); j†(0+) = argmax_j z_j(1 − ρ z_j/N0).",
    build=build,
)


# ---------------------------------------------------------------------------- claims


def _check_initial(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.claims.claim import Outcome

    z = np.array(x["z"])
    rates = th.initial_rates(z, x["alpha"], x["rho"])
    top = np.sort(rates)[-2:] if z.size > 1 else rates
    tau_obs = 1e-3 / max(1.0, float(np.abs(rates).max()))
    gap = float(top[-1] - top[0]) if z.size > 1 else np.inf
    if 1e-13 < gap * tau_obs < 1e-9:  # neither a clear first-order winner nor an exact tie
        return Outcome(None, detail={"rate_gap": gap})
    tr = num.solve(l2_setting(x), tau_obs * 1.01, method="scipy")
    if not tr.successful:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    # compare values of z, not indices: tied z are one feature value
    obs, pred = num.index_at(tr, tau_obs), th.initial_index(z, x["alpha"], x["rho"])
    ok = z[obs - 1] == z[pred - 1]
    return Outcome(ok, 0.0 if ok else 1.0, {"observed": obs, "predicted": pred, "rates": rates.tolist()})


def _regime3(x, alpha):
    """Observed: j† is a maximiser of z for every τ > 0 (no switch away from the top).
    j† is first read at τ_e where the first-order rate gap has separated the leaders
    beyond the tie tolerance; None when that gap is too small to resolve in float64."""
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num
    from theorycheck.proofs.minor_first.predict import thresholds as th

    z = np.array(x["z"])
    rates = th.initial_rates(z, alpha, x["rho"])
    top, rest = rates[z == z.max()].max(), rates[z != z.max()]
    gap = float(abs(top - rest.max())) if rest.size else 1.0
    if gap < 1e-3:  # the early lead is ~gap²: below ~1e-6 it is lost in the tie tolerance
        return None, None
    tr = num.solve(l2_setting(x, alpha), 30.0 / z.min(), method="scipy")
    if tr.collapsed:  # a collapse is regime 1, whatever j† did before it
        return False, tr
    if not tr.successful:
        return None, tr
    tau_e = min(tr.t_end, 1e-7 / gap)  # lead gap·τ_e = 1e-7 ≫ tie tolerance, before any O(gap) switch
    early = num.index_at(tr, tau_e)
    idx = {early} | {b for t_, _, b in num.switches(tr) if t_ > tau_e}
    return all(z[j - 1] == z.max() for j in idx if j), tr


def _check_gd_like(x, refined: bool):
    import numpy as np
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.claims.claim import Outcome

    z = np.array(x["z"])
    if refined:
        thr = th.alpha_gd_like(z, x["rho"]).value
    else:
        zs = np.sort(z)
        thr = x["rho"] * (zs[-1] + zs[-2]) / (np.sqrt(2) * np.linalg.norm(z))  # THEORY.md's z_(d-1) literally
    if thr > 0 and abs(x["alpha"] / thr - 1) < 1e-9:
        return Outcome(None, detail={"note": "α on the threshold to 1e-9: not decidable in float64"})
    obs, tr = _regime3(x, x["alpha"])
    if obs is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because if tr else "initial rate gap < 1e-3"})
    pred = x["alpha"] >= thr
    return Outcome(obs == pred, float(obs != pred), {"alpha_threshold": thr, "observed_regime3": obs})


def _near_top():
    """(z, ρ, α) with α within a factor e^0.7 of alpha_gd_like, on either side (never on it)."""
    import numpy as np
    from hypothesis import strategies as st
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.claims import strategies as tcs

    @st.composite
    def near_top(draw):
        z = draw(tcs.single_examples(d=(2, 4), min_value=0.2, max_value=5.0, ties=True, sort=True))
        r = draw(st.floats(0.2, 2.0))
        f = draw(st.floats(0.01, 0.7)) * draw(st.sampled_from([-1, 1]))  # not on the threshold itself
        a = th.alpha_gd_like(z, r).value * float(np.exp(f))
        return {"z": z.tolist(), "rho": r, "alpha": max(a, 1e-3)}

    return near_top()


def _check_neighbours(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome

    z = np.array(x["z"])
    tr = num.solve(l2_setting(x), 40.0 / z.min(), method="scipy")
    if not tr.successful and tr.stopped_because not in ("t_max", "collapse"):
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    vals = np.unique(z)
    bad = []
    for t_, a, b in num.switches(tr):
        lo_v, hi_v = sorted((z[a - 1], z[b - 1]))
        if np.any((vals > lo_v) & (vals < hi_v)):
            bad.append([t_, a, b])
    return Outcome(not bad, float(len(bad)), {"switches": [list(w) for w in num.switches(tr)], "jumps": bad})


def _c5_start_claims() -> list:
    from theorycheck.proofs.minor_first.c4 import _alpha_for_N0, _l2_inputs

    from theorycheck.claims.claim import Claim

    tie = {"z": [1.0, 2.0, 3.0], "rho": 1.0, "alpha": _alpha_for_N0([1.0, 2.0, 3.0], 3.0)}
    top_tie = {"z": [1.0, 2.0, 2.0], "rho": 1.0, "alpha": _alpha_for_N0([1.0, 2.0, 2.0], 3.5)}
    return [Claim(
        key="C5.initial-index",
        statement="ℓ2-SAM, L = 2: j†(0+) = argmax_j z_j (1 − ρ z_j/N0), N0 = α√2‖z‖ (ties of the rates broken at "
                  "second order by the sign of N'(0), as refined by theorycheck prove)",
        inputs=_l2_inputs(), check=_check_initial, pinned=[tie],
        tolerance="exact index at τ = 1e-3/max|rate| (inconclusive when the rate gap is unresolvable there)",
    ), Claim(
        key="C5.gd-like",
        statement="ℓ2-SAM, L = 2: the major coordinate leads from the start (and j† stays on it: regime 3) iff "
                  "N0 ≥ ρ (z_(d) + z_(d−1))",
        inputs=_near_top(), check=functools.partial(_check_gd_like, refined=False), pinned=[top_tie],
        tolerance="exact (α within 1e-9 of the threshold is inconclusive)",
        refined=Claim(
            key="C5.gd-like-refined",
            statement="(refined by theorycheck) … iff N0 ≥ ρ (z_(d) + z_next), z_next the largest value strictly "
                      "below z_(d); with all z_j equal (no z_next) iff N0 ≥ ρ z_(d), below which the path collapses",
            inputs=_near_top(), check=functools.partial(_check_gd_like, refined=True), pinned=[top_tie],
            tolerance="exact (α within 1e-9 of the threshold is inconclusive)"),
    )]


def _c5_claims():
    from theorycheck.proofs.minor_first.c4 import _l2_inputs

    from theorycheck.claims.claim import Claim

    # C4's neighbour rule lives here (it uses C5's inputs and machinery)
    neighbours = Claim(
        key="C4.neighbour-switches",
        statement="ℓ2-SAM, L = 2: j† only moves between neighbouring values of z (j† = argmax z(1 − ρz/N̄) maximises a "
                  "concave parabola in z over the values, whose vertex N̄/(2ρ) moves continuously)",
        inputs=_l2_inputs(), check=_check_neighbours, max_examples=6,
        pinned=[{"z": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "rho": 1.0, "alpha": 0.3194848765749644 * (1 + 1e-6)}],
        tolerance="exact: no switch from value a to value b with another value of z strictly between",
    )
    return [*_c5_start_claims(), *regime_claims(), neighbours]


@functools.cache
def claims() -> tuple:
    """This module's claims, built once; the pack's manifest (``theorycheck.proofs.claims``) lists them."""
    return (*_c5_claims(),)

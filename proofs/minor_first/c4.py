"""C4 (L = 2, ℓ2-SAM, one example): the reduction to one scalar ODE and the formula for j†.

Derived in THEORY.md: θ_j = ln u_j obeys dθ_j/dτ = z_j (1 − ρ z_j / N), N = sqrt(2 Σ z_k² u_k²);
θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ) with dI/dτ = 1/N(τ, I); j†(τ) = argmax_j z_j (1 − ρ z_j / N̄),
N̄ = τ / I; a switch j → k happens where N̄ = ρ (z_j + z_k)."""

from __future__ import annotations

import functools

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic import theory_forms as MF
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, refuted, verified

rho, tau = sy.rho, sy.tau


def _switch():
    zj, zk = sp.symbols("z_j z_k", positive=True)
    score = TE.l2_index_score()
    sol = sp.solve(sp.Eq(score.subs(cf.z_j, zj), score.subs(cf.z_j, zk)), cf.N_bar)
    want = TE.l2_switch_level().subs({cf.z_j: zj, cf.z_k: zk})
    if len(sol) == 1 and sp.simplify(sol[0] - want) == 0:
        return verified(f"score_j = score_k ⇔ N̄ = {sol[0]} for z_j ≠ z_k (sympy solve: the only root)")
    return refuted(f"solutions {sol}", {})


def _vertex():
    zc = sp.Symbol("zeta", positive=True)
    f = TE.l2_index_score().subs(cf.z_j, zc)
    crit = sp.solve(sp.diff(f, zc), zc)
    if crit == [cf.N_bar / (2 * rho)] and sp.diff(f, zc, 2).is_negative:
        return verified("z(1 − ρz/N̄) is a concave parabola in z with vertex N̄/(2ρ): j† is the coordinate whose "
                        "z_j is nearest N̄/(2ρ), so j† moves to larger z exactly when N̄ grows")
    return refuted(f"critical points {crit}", {})


def _argmax():
    tp = sp.Symbol("tau", positive=True)
    lhs = TE.l2_theta().subs(tau, tp) - sp.log(cf.alpha)
    rhs = tp * TE.l2_index_score().subs(cf.N_bar, tp / cf.I)
    if sp.simplify(sp.expand(lhs - rhs)) == 0:
        return verified("θ_j − ln α = τ · z_j (1 − ρ z_j / N̄) with N̄ = τ/I; for τ > 0 this is a positive multiple "
                        "of the score, so argmax_j β_j = argmax_j θ_j = argmax_j z_j (1 − ρ z_j/N̄)")
    return refuted("θ_j is not τ times the score", {})


def build():
    yield Identity("dθ_j/dτ = z_j (1 − ρ z_j / N) for θ_j = ln u_j (from the balanced ℓ2 field, L = 2)",
                   cf.balanced_log_field(2, "sam-l2"), TE.l2_log_rate().subs(cf.u_j, sp.exp(cf.theta_j)))
    Ifun = sp.Function("I")(tau)
    theta = TE.l2_theta().subs(cf.I, Ifun)
    yield Identity("θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ) solves it when dI/dτ = 1/N",
                   sp.diff(theta, tau).subs(sp.Derivative(Ifun, tau), TE.l2_reduced_rate()), TE.l2_log_rate())
    yield Identity("θ_j(0) = ln α when I(0) = 0", TE.l2_theta().subs({tau: 0, cf.I: 0}), sp.log(cf.alpha))
    yield Identity("N(τ, I)² = 2 Σ z_k² u_k² with u_k = e^(θ_k(τ, I)): the flow reduces to ONE scalar ODE for I",
                   TE.l2_reduced_summand(), cf.balanced_norm_summand(2).subs(cf.u_j, sp.exp(TE.l2_theta())),
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


THEOREM = Theorem(
    key="C4",
    title="ℓ2-SAM, L = 2: reduction to one scalar ODE and the formula for j†",
    statement="θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ), dI/dτ = 1/N(τ, I); j†(τ) = argmax_j z_j (1 − ρ z_j / N̄), "
              "N̄ = τ/I; a switch j → k happens where N̄ = ρ(z_j + z_k).",
    build=build,
)


# ---------------------------------------------------------------------------- claims
def _l2_inputs(lo_factor: float = 0.5, hi_factor: float = 2.0, ties: bool = False):
    """One example z (sorted: feature 1 minor, d major), ρ, and α log-uniform around the C5 window."""
    import numpy as np
    from hypothesis import strategies as st
    from theorycheck.proofs.minor_first.predict.thresholds import alpha_all_shrink, alpha_gd_like

    from theorycheck.claims import strategies as tcs

    @st.composite
    def inputs(draw):
        z = draw(tcs.single_examples(d=(2, 5), min_value=0.2, max_value=5.0, ties=ties, sort=True))
        r = draw(st.floats(0.2, 2.0))
        lo = alpha_all_shrink(z, r).value * lo_factor
        hi = max(alpha_gd_like(z, r).value, lo) * hi_factor
        a = float(np.exp(draw(st.floats(float(np.log(lo)), float(np.log(hi))))))
        return {"z": z.tolist(), "rho": r, "alpha": a}

    return inputs()


def _alpha_for_N0(z, N0):
    """α with N0 = α√2‖z‖₂ (:func:`theory_exprs.initial_norm`, compiled, at α = 1)."""
    import numpy as np

    return float(N0 / MF.initial_norm("numpy")(1.0, np.linalg.norm(z)))


# ---------------------------------------------------------------------------- claims
# Each claim's check is a module function (numpy and the solvers imported inside, so that
# `theorycheck prove` stays symbolic); _c4_claims assembles them.
def _setting(x):
    from theorycheck.setting import Setting

    return Setting.from_z(x["z"], depth=2, optimizer="sam-l2", rho=x["rho"], alpha=x["alpha"])


def _horizon(x):
    return 30.0 / min(x["z"])


def _I_from_theta(x, tau_, la):
    """I(τ) = (ln α + z_j τ − θ_j)/(ρ z_j²), θ_j = ½ ln|β_j|, for every j (C4)."""
    import numpy as np

    z = np.array(x["z"])
    return (np.log(x["alpha"]) + z * tau_ - 0.5 * la) / (x["rho"] * z**2)


def _check_reduction(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome

    s = _setting(x)
    T = _horizon(x)
    full = num.solve(s, T, method="scipy")
    red = num.solve(s, T, method="reduced")
    if not (full.successful and red.successful):
        return Outcome(None, detail={"full": full.stopped_because, "reduced": red.stopped_because})
    end = min(full.t_end, red.t_end) * (0.99 if (full.collapsed or red.collapsed) else 1.0)
    worst_theta = worst_I = 0.0
    for tt in np.linspace(end / 16, end, 16):
        a, b = full.at(tt)[0], red.at(tt)[0]
        worst_theta = max(worst_theta, float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(a)))))
        Ij = _I_from_theta(x, tt, a)
        worst_I = max(worst_I, float((Ij.max() - Ij.min()) / max(abs(Ij).max(), 1e-300)))
    dev = max(worst_theta, worst_I)
    both = (full.collapse_time, red.collapse_time)
    if (both[0] is None) != (both[1] is None):
        return Outcome(False, np.inf, {"collapse_times": both})
    return Outcome(dev <= 1e-8, dev, {"theta_full_vs_reduced": worst_theta, "I_spread_over_j": worst_I,
                                      "collapse_times": both})


def _check_switch_level(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome

    tr = num.solve(_setting(x), _horizon(x), method="scipy")
    if not tr.successful:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    z = np.array(x["z"])
    worst, rows = 0.0, []
    for ts, a, b in num.switches(tr):
        if tr.collapse_time is not None and ts > 0.999 * tr.collapse_time:
            continue
        I = _I_from_theta(x, ts, tr.at(ts)[0])[-1]
        nbar = ts / I
        want = MF.l2_switch_level()(z[a - 1], z[b - 1], x["rho"])  # ρ(z_j + z_k), C4
        rel = abs(nbar - want) / want
        worst = max(worst, rel)
        rows.append({"time": ts, "from": a, "to": b, "Nbar": nbar, "rho(z_from+z_to)": want})
    return Outcome(worst <= 1e-6, worst, {"switches": rows})


def _switch_list(x):
    from theorycheck.proofs.minor_first import _numerics as num

    tr = num.solve(_setting(x), _horizon(x), method="scipy")
    if not tr.successful:
        return None, tr
    return [(t_, a, b) for t_, a, b in num.switches(tr)
            if tr.collapse_time is None or t_ < 0.999 * tr.collapse_time], tr


def _check_sequential(x):
    import numpy as np

    from theorycheck.claims.claim import Outcome

    sw, tr = _switch_list(x)
    if sw is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    z = np.array(x["z"])
    down = [s_ for s_ in sw if z[s_[2] - 1] < z[s_[1] - 1]]
    return Outcome(not down, float(len(down)), {"switches": [list(s_) for s_ in sw], "collapsed": tr.collapsed})


def _check_unimodal(x):
    import numpy as np

    from theorycheck.claims.claim import Outcome

    sw, tr = _switch_list(x)
    if sw is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    z = np.array(x["z"])
    ups = [z[b - 1] > z[a - 1] for _, a, b in sw]
    turns = sum(1 for u, v in zip(ups, ups[1:]) if u != v)
    ok = turns == 0 or (turns == 1 and not ups[0])
    excess = 0 if ok else max(1, turns - (0 if ups and ups[0] else 1))
    return Outcome(ok, float(excess), {"switches": [list(s_) for s_ in sw], "collapsed": tr.collapsed})


def _check_limit(x, conditional: bool):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome

    z = np.unique(x["z"])
    gap = float(np.min(np.diff(z))) if z.size > 1 else 1.0
    if 10.0 / gap > 1e5:
        return Outcome(None, detail={"note": "the two largest z are too close to separate by τ = 1e5"})
    # growth first, then e^(−2·gap·τ) < 1e-8 for the runner-up
    tr = num.solve(_setting(x), 4 * _horizon(x) + 10.0 / gap, method="scipy")
    if not tr.successful:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    z = np.array(x["z"])
    if tr.collapsed:
        return Outcome(True if conditional else False, 0.0 if conditional else 1.0,
                       {"collapse_time": tr.collapse_time, "note": "collapse: the limit is 0 (regime 1)"})
    d = num.direction(tr.log_abs_beta[-1], tr.sign_beta[-1])
    e = (z == z.max()).astype(float)
    e /= np.linalg.norm(e)
    dev = float(np.linalg.norm(d - e))
    return Outcome(dev <= 1e-6, dev, {"direction": d.tolist(), "T": tr.t_end})


def _c4_flow_claims() -> list:
    from theorycheck.proofs.minor_first.predict import thresholds as th

    from theorycheck.claims.claim import Claim

    return [Claim(
        key="C4.reduction",
        statement="ℓ2-SAM, L = 2: θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ) with one I for all j, and the scalar ODE "
                  "dI/dτ = 1/N(τ, I) reproduces the full d-dimensional flow",
        inputs=_l2_inputs(), check=_check_reduction,
        tolerance="relative 1e-8 on ln|β_j| (full vs reduced, 16 times) and on the spread of I over j",
        pinned=[{"z": [2.0], "rho": 1.0, "alpha": 0.5},  # d = 1
                {"z": [1.0, 2.0, 3.0], "rho": 1.0, "alpha": float(th.alpha_all_shrink([1.0, 2.0, 3.0], 1.0).value)},
                {"z": [1.0, 2.0, 3.0], "rho": 1.0, "alpha": float(th.alpha_gd_like([1.0, 2.0, 3.0], 1.0).value)},
                {"z": [1.0, 2.0, 2.0], "rho": 1.0, "alpha": 0.6}],  # at both thresholds, a tie
    ), Claim(
        key="C4.switch-level",
        statement="ℓ2-SAM, L = 2: every switch j → k of j† happens where N̄ = τ/I = ρ (z_j + z_k)",
        inputs=_l2_inputs(1.0, 1.0), check=_check_switch_level,
        tolerance="relative 1e-6 on N̄ at each observed switch (switch times located to 1e-12)",
        pinned=[{"z": [1.0, 2.0, 3.0], "rho": 1.0, "alpha": 0.6}],
    )]


def _c4_path_claims() -> list:
    from theorycheck.proofs.minor_first import box_claims as bc

    from theorycheck.claims.claim import Claim

    nonmono = {"z": [1.0, 1.1, 10.0], "rho": 1.0, "alpha": _alpha_for_N0([1.0, 1.1, 10.0], 7.5)}
    nonmono2 = {"z": [0.5, 1.0, 1.6, 2.3], "rho": 1.0, "alpha": 0.4}  # 2 → 1 → 2 → 3 → 4
    sequential = Claim(
        key="C4.sequential",
        statement="ℓ2-SAM, L = 2 ('minor first, major last'): along τ, j† only moves to larger z",
        inputs=_l2_inputs(1.0, 1.0), check=_check_sequential, pinned=[nonmono, nonmono2],
        tolerance="exact: no switch from a larger to a smaller z",
        prover=bc.alpha_box_prover(nonmono2["z"], 1.0, [("0.39999", "0.40001", bc.only_up(nonmono2["z"]),
                                                         "j† only moves to larger z")]),
        refined=Claim(
            key="C4.sequential-refined",
            statement="(refined by theorycheck) j† is the z_j nearest N̄/(2ρ) and dN̄/dτ = (1 − N̄/N)/I: while N is "
                      "below its harmonic mean N̄ (N shrinking first) j† moves to SMALLER z; the path is 'down, "
                      "then up': at most one change of direction, down before up",
            inputs=_l2_inputs(1.0, 1.0), check=_check_unimodal, pinned=[nonmono, nonmono2],
            prover=bc.alpha_box_prover(nonmono2["z"], 1.0, [
                ("0.39999", "0.40001", bc.down_then_up(nonmono2["z"]), "down, then up")]),
            tolerance="exact: the sequence of switch directions is down*, up* (deviation: turns beyond that)"),
    )
    limit = Claim(
        key="C4.limit",
        statement="ℓ2-SAM, L = 2: the limit direction is the ℓ1 max-margin solution e_(argmax z), as for GD",
        inputs=_l2_inputs(0.3, 3.0), check=functools.partial(_check_limit, conditional=False),
        pinned=[{"z": [1.0, 2.0, 3.0], "rho": 1.0, "alpha": 0.1}],
        tolerance="‖direction(τ = 120/z_min + 10/gap) − e_(argmax z)‖ ≤ 1e-6",
        refined=Claim(
            key="C4.limit-refined",
            statement="(refined by theorycheck) the limit is e_(argmax z) for every α that does not collapse "
                      "(α > α_c, regime 2 and 3); for α < α_c it is 0 (C5)",
            inputs=_l2_inputs(0.3, 3.0), check=functools.partial(_check_limit, conditional=True),
            pinned=[{"z": [1.0, 2.0, 3.0], "rho": 1.0, "alpha": 0.1}],
            tolerance="‖direction(τ = 120/z_min + 10/gap) − e_(argmax z)‖ ≤ 1e-6 when no collapse"),
    )
    return [sequential, limit]


def _c4_claims():
    return [*_c4_flow_claims(), *_c4_path_claims()]


@functools.cache
def claims() -> tuple:
    """This module's claims, built once; the pack's manifest (``theorycheck.proofs.claims``) lists them."""
    return (*_c4_claims(),)

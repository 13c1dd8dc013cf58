"""C2 (L = 2, ℓ∞-SAM, one example): the limit direction depends on init and ρ and can be 0
or any basis vector. Derived: u_j = ρ + (α_j − ρ) e^(z_j τ) for α_j > ρ; for α_j < ρ, u_j
hits 0 at τ_j = ln(ρ/(ρ − α_j))/z_j and stays (sliding); α_j = ρ is stationary; the limit
is e_(j°), j° = argmax{z_j : α_j > ρ}, or 0 when no α_j > ρ."""

from __future__ import annotations

import functools

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, incomplete, refuted, verified

rho, tau = sy.rho, sy.tau
delta = sp.Symbol("delta", positive=True)  # α_j = ρ − δ below ρ, or ρ + δ above
s_ = sp.Symbol("s", positive=True)


def _linf2(u):
    """The general-sign ℓ∞ field of closed_forms, L = 2, at u (z_j > 0)."""
    return cf.balanced_field(2, "sam-linf").subs(cf.u_j, u)


def _solution(alpha_j, z_j):
    return TE.linf_l2_solution().subs({cf.alpha_j: alpha_j, cf.z_j: z_j})


def _zero_time_positive():
    a = sp.Symbol("a", positive=True)  # α_j = a, ρ = a + δ
    ratio = sp.simplify((rho / (rho - cf.alpha_j)).subs({cf.alpha_j: a, rho: a + delta}) - 1)
    if ratio.is_positive:
        return verified(f"ρ/(ρ − α_j) − 1 = {ratio} > 0, so ln(ρ/(ρ − α_j)) > 0 and τ_j > 0")
    return refuted(f"ρ/(ρ − α_j) − 1 = {ratio} not shown positive", {})


def _unique_argmax():
    zk, gap = sp.Symbol("z_k", positive=True), sp.Symbol("gap", positive=True)
    dj, dk = sp.symbols("delta_j delta_k", positive=True)
    T = sp.Symbol("T", positive=True)
    # β_k/β_j ≤ ((ρ e^(−z_k T) + δ_k)/δ_j)² e^(−2·gap·T), since β_j ≥ (δ_j e^((z_k+gap)T))²
    bound = (rho * sp.exp(-zk * T) + dk) ** 2 / dj**2 * sp.exp(-2 * gap * T)
    bj = _solution(rho + dj, zk + gap).subs(tau, T) ** 2
    bk = _solution(rho + dk, zk).subs(tau, T) ** 2
    is_bound = sp.simplify(bound * (dj * sp.exp((zk + gap) * T)) ** 2 - bk) == 0 and \
        sp.simplify(bj - (dj * sp.exp((zk + gap) * T)) ** 2 - rho**2 - 2 * rho * dj * sp.exp((zk + gap) * T)) == 0
    lim = sp.limit(bound, T, sp.oo)
    if is_bound and lim == 0:
        return verified("for α_j, α_k > ρ and z_k < z_j: β_k/β_j ≤ ((ρe^(−z_k τ) + δ_k)/δ_j)² e^(−2(z_j−z_k)τ) → 0 "
                        "(β_j − (δ_j e^(z_j τ))² ≥ 0; sympy limit), and coordinates with α ≤ ρ stay bounded: the "
                        "limit is e_(j°) when j° = argmax{z_j : α_j > ρ} is unique")
    return refuted(f"bound {is_bound}, lim = {lim}", {})


def _tie():
    z, alpha, r = (1, 1), (2, 3), 1
    T = sp.Symbol("T", positive=True)
    beta = [_solution(a, zz).subs({rho: r, tau: T}) ** 2 for a, zz in zip(alpha, z)]
    norm = sp.sqrt(sum(b**2 for b in beta))
    d = [sp.nsimplify(sp.limit(b / norm, T, sp.oo)) for b in beta]
    return incomplete("ties in z among {α_j > ρ}: the limit is not a basis vector. z = (1, 1), α = (2, 3), ρ = 1: "
                   f"direction ({d[0]}, {d[1]}) = (1, 4)/√17. Refined: the limit is ∝ ((α_j − ρ)²) over the tied "
                   "maximisers of z among α_j > ρ; e_(j°) when that argmax is unique",
                   {"z": list(z), "alpha": list(alpha), "rho": r, "limit_direction": [float(x) for x in d]})


def _boundary():
    # α = (ρ, ρ/2): no α_j > ρ, but u_1 ≡ ρ is stationary: β → (ρ², 0), direction e_1, not 0
    z, alpha, r = (1, 2), (1, sp.Rational(1, 2)), 1
    f1 = _linf2(sp.Integer(alpha[0])).subs({cf.z_j: z[0], rho: r})
    t2 = TE.linf_l2_zero_time().subs({cf.alpha_j: alpha[1], cf.z_j: z[1], rho: r})
    if f1 == 0:
        return refuted("'0 when no α_j > ρ' fails on the boundary α_j = ρ: z = (1, 2), α = (1, 1/2), ρ = 1: "
                       f"u_1 ≡ ρ is stationary and u_2 hits 0 at τ = {sp.nsimplify(t2)}, so β → (1, 0): direction "
                       "e_1, not 0. Refined: the limit is 0 iff every α_j < ρ; with no α_j > ρ but some α_j = ρ "
                       "it is the direction of (1 if α_j = ρ else 0)_j",
                       {"z": list(z), "alpha": [1.0, 0.5], "rho": r, "limit_direction": [1.0, 0.0]})
    return verified("boundary case behaves as stated")


def build():
    zp = sp.Symbol("z_j", positive=True)
    sol = _solution(cf.alpha_j, zp)
    yield Identity("u_j = ρ + (α_j − ρ) e^(z_j τ) solves du_j/dτ = z_j (u_j − ρ)",
                   sp.diff(sol, tau), cf.balanced_field_linf_positive(2).subs({cf.u_j: sol, cf.z_j: zp}))
    yield Identity("u_j(0) = α_j", sol.subs(tau, 0), cf.alpha_j)
    yield Identity("α_j = ρ − δ < ρ: u_j(τ_j) = 0 at τ_j = ln(ρ/(ρ − α_j))/z_j",
                   _solution(rho - delta, zp).subs(tau, TE.linf_l2_zero_time().subs({cf.alpha_j: rho - delta, cf.z_j: zp})),
                   0)
    yield Fact("τ_j > 0 for 0 < α_j < ρ", _zero_time_positive)
    yield Identity("sliding: for 0 < u = sρ (s > 0) the field is z ρ (s − 1) < 0 when s < 1",
                   _linf2(s_ * rho).subs(cf.z_j, zp), zp * rho * (s_ - 1))
    yield Identity("sliding: for u = −sρ < 0 the field is z ρ (1 − s) > 0 when s < 1 (u = 0 attracts)",
                   _linf2(-s_ * rho).subs(cf.z_j, zp), zp * rho * (1 - s_))
    yield Identity("sliding: the field vanishes at u = 0 (sign(0) = 0), so u_j stays at 0", _linf2(sp.Integer(0)), 0)
    yield Identity("α_j = ρ is stationary", _linf2(rho).subs(cf.z_j, zp), 0)
    yield Fact("limit direction e_(j°), j° = argmax{z_j : α_j > ρ} (unique argmax)", _unique_argmax)
    yield Fact("limit direction with ties in z", _tie)
    yield Fact("limit 0 when no α_j > ρ", _boundary)


THEOREM = Theorem(
    key="C2",
    title="ℓ∞-SAM, L = 2: the limit depends on init and ρ",
    statement="u_j = ρ + (α_j − ρ)e^(z_j τ) (α_j > ρ); u_j hits 0 at ln(ρ/(ρ − α_j))/z_j and slides (α_j < ρ); "
              "α_j = ρ stationary; limit e_(j°), j° = argmax{z_j : α_j > ρ}, or 0 when no α_j > ρ.",
    build=build,
)


# ---------------------------------------------------------------------------- claims
# Each claim's check and its strategy are module functions (numpy, hypothesis and the solvers
# imported inside them, so that `theorycheck prove` stays symbolic); _c2_claims assembles them.
def _inputs(ties: bool = False):
    """(z, α, ρ): each α_j above or below ρ (``ties``: also equal to ρ, and ties in z)."""
    from hypothesis import strategies as st

    from theorycheck.claims import strategies as tcs

    @st.composite
    def inputs(draw, ties=False):
        z = draw(tcs.single_examples(d=(1, 4), min_value=0.2, max_value=5.0, ties=ties))
        r = draw(st.floats(0.1, 2.0))
        alpha = []
        for _ in z:
            kind = draw(st.sampled_from(["above", "below", "at"] if ties else ["above", "below"]))
            if kind == "at":
                alpha.append(r)
            elif kind == "above":
                alpha.append(r * draw(st.floats(1.05, 3.0)))
            else:
                alpha.append(r * draw(st.floats(0.05, 0.95)))
        return {"z": z.tolist(), "alpha": alpha, "rho": r}

    return inputs(ties=ties)


def _setting(x):
    from theorycheck.setting import Setting

    return Setting.from_z(x["z"], depth=2, optimizer="sam-linf", rho=x["rho"], alpha=x["alpha"])


def _solution_forms():
    from theorycheck.symbolic import theory_forms as MF

    return MF.linf_l2_solution()  # (u_of, tau0_of), compiled from C2's solution


def _check_solution(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome

    u_of, tau0_of = _solution_forms()
    z, a, r = np.array(x["z"]), np.array(x["alpha"]), x["rho"]
    T = 2.0 / z.min()
    tr = num.solve(_setting(x), T)
    if not tr.successful:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    worst = 0.0
    slides = {e.index: e.time for e in tr.events if e.kind == "slide"}
    la = tr.log_abs_beta[-1]
    for j in range(z.size):
        if a[j] > r:
            pred = np.log(u_of(a[j], z[j], r, T))
            worst = max(worst, abs(0.5 * la[j] - pred) / max(1.0, abs(pred)))
        elif a[j] == r:  # stationary
            worst = max(worst, abs(0.5 * la[j] - np.log(r)) / max(1.0, abs(np.log(r))))
        else:
            t0 = float(tau0_of(a[j], z[j], r))
            if t0 < T:
                if j + 1 not in slides:
                    return Outcome(False, np.inf, {"missing_slide": j + 1, "tau_j": t0})
                worst = max(worst, abs(slides[j + 1] - t0) / t0)
                if np.isfinite(la[j]) and la[j] > -50:
                    return Outcome(False, np.inf, {"left_zero": j + 1, "log_abs_beta": float(la[j])})
    return Outcome(worst <= 1e-8, worst, {"T": T, "slide_times": slides})


def _limit_T(z, a, r):
    """A horizon at which non-maximal coordinates are negligible: e^(−2·gap·T) < 1e-14."""
    import numpy as np

    zs = np.unique(z[a > r]) if np.any(a > r) else np.unique(z)
    gap = np.min(np.diff(zs)) if zs.size > 1 else 1.0
    return min(20.0 / gap, 1e5), 20.0 / gap <= 1e5


def _observed_direction(x):
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    _, tau0_of = _solution_forms()
    z, a, r = np.array(x["z"]), np.array(x["alpha"]), x["rho"]
    T, ok = _limit_T(z, a, r)
    tr = num.solve(_setting(x), max(T, 2 * float(np.max(tau0_of(np.minimum(a, r * 0.999), z, r)))))
    if not ok or not tr.successful:
        return None, tr
    return num.direction(tr.log_abs_beta[-1], tr.sign_beta[-1]), tr


def _check_limit(x):
    import numpy as np

    from theorycheck.claims.claim import Outcome

    d, tr = _observed_direction(x)
    if d is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    z, a, r = np.array(x["z"]), np.array(x["alpha"]), x["rho"]
    want = np.zeros(z.size)  # THEORY.md literally: e_(j°), j° = argmax{z_j : α_j > ρ}, or 0
    j = int(np.argmax(np.where(a > r, z, -np.inf))) + 1 if np.any(a > r) else 0
    if j:
        want[j - 1] = 1.0
    dev = float(np.linalg.norm(d - want))
    return Outcome(dev <= 1e-6, dev, {"predicted_index": j, "observed_direction": d.tolist()})


def _check_limit_refined(x):
    import numpy as np
    from theorycheck.proofs.minor_first.predict.thresholds import linf_limit_direction

    from theorycheck.claims.claim import Outcome

    d, tr = _observed_direction(x)
    if d is None:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    want = linf_limit_direction(x["z"], x["alpha"], x["rho"], 2)
    dev = float(np.linalg.norm(d - want))
    return Outcome(dev <= 1e-6, dev, {"predicted_direction": want.tolist(), "observed_direction": d.tolist()})


def _c2_claims():
    from theorycheck.proofs.minor_first import box_claims as bc

    from theorycheck.claims.claim import Claim

    # a box of the claims' domain (d = 3; no tie of z, α_j − ρ of certain sign): proved, with enclosures
    DOMAIN = bc.domain_box([(0.5, 1.0), (1.5, 2.0), (2.5, 3.0)], [(1.5, 2.0), (0.2, 0.5), (1.2, 1.4)], (0.9, 1.0))
    tie = {"z": [1.0, 1.0], "alpha": [2.0, 3.0], "rho": 1.0}
    boundary = {"z": [1.0, 2.0], "alpha": [1.0, 0.5], "rho": 1.0}
    solution = Claim(
        key="C2.solution",
        statement="ℓ∞-SAM, L = 2: u_j = ρ + (α_j − ρ)e^(z_j τ) for α_j > ρ; for α_j < ρ, u_j hits 0 at "
                  "τ_j = ln(ρ/(ρ − α_j))/z_j and stays there (sliding)",
        inputs=_inputs(), check=_check_solution,
        pinned=[{"z": [1.0], "alpha": [1.0], "rho": 1.0},  # d = 1, α = ρ
                {"z": [1.0, 2.0, 2.0], "alpha": [2.0, 0.5, 1.5], "rho": 1.0}],
        prover=bc.prover(bc.c2_solution, [bc.input_box({"z": [1.0], "alpha": [1.0], "rho": 1.0}),
                                          bc.input_box({"z": [1.0, 2.0, 2.0], "alpha": [2.0, 0.5, 1.5], "rho": 1.0}),
                                          DOMAIN], ("C2",)),
        tolerance="relative 1e-8 on ln u_j and on τ_j; after τ_j, |β_j| < e^(−50)",
    )
    refined = Claim(
        key="C2.limit-refined",
        statement="(refined by theorycheck) ℓ∞-SAM, L = 2: the limit direction is ∝ ((α_j − ρ)²) over the maximisers "
                  "of z among {α_j > ρ}; if no α_j > ρ, ∝ 1[α_j = ρ]; 0 iff every α_j < ρ",
        inputs=_inputs(ties=True), check=_check_limit_refined, pinned=[tie, boundary],
        tolerance="‖direction(T) − prediction‖ ≤ 1e-6 at T = 20/gap",
    )
    limit = Claim(
        key="C2.limit",
        statement="ℓ∞-SAM, L = 2: the limit direction is e_(j°), j° = argmax{z_j : α_j > ρ}, or 0 when no α_j > ρ",
        inputs=_inputs(ties=True), check=_check_limit, pinned=[tie, boundary], refined=refined,
        prover=bc.prover(bc.c2_limit, [DOMAIN, bc.input_box(tie), bc.input_box(boundary)], ("C2",)),
        tolerance="‖direction(T) − e_(j°)‖ ≤ 1e-6 at T = 20/gap (gap: smallest difference of distinct z)",
    )
    return [solution, limit]


@functools.cache
def claims() -> tuple:
    """This module's claims, built once; the pack's manifest (``theorycheck.proofs.claims``) lists them."""
    return (*_c2_claims(),)

"""ℓ2-SAM regime thresholds at any depth L ≥ 2 (balanced layers u, one example z > 0, uniform
init u = α), derived with sympy from the symbolic layer (never by hand).

Derived here (and checked by ``theorycheck prove``, proofs/depth.py):

- Let r_j = ρ z_j u_j^{L−2}/N (so û_j = u_j (1 − r_j), from
  :func:`closed_forms.balanced_perturbed_point`). At u = α: N0 = √L ‖z‖₂ α^{L−1} and
  r_j(0) = ρ z_j / (α √L ‖z‖₂); the initial log-rate is
  dθ_j/dτ = z_j α^{L−2} (1 − r_j(0))^{L−1}.
- Odd L: L − 1 is even, so du_j/dτ = z_j û_j^{L−1} ≥ 0: no coordinate ever shrinks, no
  collapse is possible, and there is no collapse threshold.
- Even L: coordinate j shrinks at the start iff r_j(0) > 1; all shrink iff
  α < ρ z_min/(√L‖z‖₂); all grow iff α ≥ ρ z_max/(√L‖z‖₂).
- Both sets {r_j > 1 ∀j} ("every coordinate shrinks") and {r_j ≤ 1 ∀j} ("every coordinate
  grows") are forward invariant: d ln r_j/dτ = (L−2) θ_j' − d ln N/dτ with
  d ln N/dτ = (L−1) Σ_k p_k θ_k' (p_k = z_k² u_k^{2L−2}/Σ, weights summing to 1); where
  r_j = 1, θ_j' = 0 and the others' θ_k' all have one sign, so r_j moves back into the set.
  They are the persisting conditions behind the collapse threshold α_c(L) for even L (for L = 2 they are
  C5's N < ρ z_min and N ≥ ρ z_max).
- The interior equilibrium u* (û_j = 0 for all j): u*_j^{L−2} = N*/(ρ z_j), one point for
  L ≥ 3 (L = 2 has none: its boundary is the saddle at the z_min face, see predict/collapse.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp
from theorycheck.proofs.minor_first.predict.bisect import bisect_fate

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.solvers.persisting import step_to_condition
from theorycheck.status import Fate
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import theory_forms as MF
from theorycheck.symbolic.depth import initial_forms, zero_rate_alpha


def _z(z) -> np.ndarray:
    z = np.asarray(z, float)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)) or np.any(z <= 0):
        raise TheorycheckError("the depth-L ℓ2-SAM thresholds are derived for z > 0 (finite entries)")
    return z / z.max()  # every threshold in α is invariant under z → c z


def initial_rates(z, alpha: float, rho: float, L: int) -> np.ndarray:
    """dθ_j/dτ at τ = 0 for depth L (compiled from :func:`initial_forms`), in units of the
    normalised z (a positive factor per L; the order of the entries is what matters)."""
    u = _z(z)
    f = MF.depth_initial_rate(L)
    return np.asarray(f(u, float(alpha), float(np.linalg.norm(u)), float(rho)), dtype=float)


def initial_index(z, alpha: float, rho: float, L: int) -> int:
    """j†(0+) (1-based) at depth L: argmax of the initial rates; among equal z_j the smallest
    index (their β_j are equal for all τ)."""
    r = initial_rates(z, alpha, rho, L)
    top = np.flatnonzero(np.isclose(r, r.max(), rtol=1e-13, atol=1e-300))
    return int(top[0]) + 1


def major_fastest_alpha(z, rho: float, L: int) -> tuple[float | None, str]:
    """The smallest α* such that for every α ≥ α* the largest z_j has the largest initial rate:
    over j with z_j < z_max, the smallest positive root c of g(z_max; c) = g(z_j; c) (g from
    :func:`initial_forms`), α* = ρ/(c √L‖z‖₂). That root is c* = m/((z_max − z_j) + z_j m), m = 1 − w,
    w = (z_j/z_max)^(1/(L−1)) (:func:`theorycheck.symbolic.depth.major_fastest_c`; the other real root, for odd
    L, lies above 1/z_max), with m from expm1/log1p: accurate to float64 at every scale and near ties."""
    u = _z(z)
    f = MF.depth_major_fastest_c(L)
    top = float(u.max())
    nrm = float(np.linalg.norm(u))
    roots = []
    for v in np.unique(u[u < top]):
        v = float(v)
        ln_ratio = math.log(v / top) if v < 0.5 * top else math.log1p((v - top) / top)
        m = -math.expm1(ln_ratio / (L - 1))
        roots.append(float(f(top - v, v, m)))
    if not roots:
        return (0.0 if u.size > 1 else None), "the major coordinate's initial rate is the largest for every α"
    c = min(roots)
    return float(rho / (c * math.sqrt(L) * nrm)), ("smallest positive root c of g(z_max; c) = g(z_j; c), "
                                                   "g(x; c) = x (1 − c x)^(L−1), α* = ρ/(c √L ‖z‖₂)")


def equilibrium(z, rho: float, L: int) -> np.ndarray | None:
    """The interior equilibrium u* (û_j = 0 ∀j): u*_j = (κ/z_j)^{1/(L−2)} with the one κ for which
    N(u*) = ρ κ (None for L = 2, and for ρ = 0, where it is the origin). In the units of the given z.
    Computed in logarithms: N(u*) = sqrt(L Σ z_j² (κ/z_j)^{(2L−2)/(L−2)}) = κ^{(L−1)/(L−2)} K with
    K² = L Σ z_j^{−2/(L−2)}, so ln u*_j = ln ρ − ln K − ln z_j/(L−2), finite at every scale of z and ρ
    (an entry beyond float64 is inf or 0, never NaN)."""
    if L < 3 or rho == 0:
        return None
    lz = np.log(np.asarray(z, float))
    q = 1.0 / (L - 2)
    a = -2.0 * q * lz
    m = float(np.max(a))
    ln_k = 0.5 * (math.log(L) + m + math.log(float(np.sum(np.exp(a - m)))))
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(math.log(rho) - ln_k - q * lz)


@dataclass
class DepthFate:
    alpha: float
    kind: Fate  # collapse (all r_j > 1: all shrink, persists) | growth (all r_j ≤ 1: persists) | undecided
    time: float | None
    why: str
    steps: int = 0


def classify(z, alpha: float, rho: float, L: int, *, t_max: float = 1e4, max_steps: int = 20000) -> DepthFate:
    """Integrate the balanced depth-L ℓ2-SAM flow in θ = ln u (compiled from the symbolic layer), DOP853 stepped
    one step at a time, until a persisting condition: every r_j > 1 (all shrink from then on) or every r_j ≤ 1
    (all grow from then on), checked after every step; undecided when the horizon ``t_max`` or ``max_steps``
    steps run out (``why`` says which). Near α_c(L) (even L ≥ 4) the path passes the degenerate equilibrium u*
    and the steps needed grow like a power of 1/|α − α_c|: :mod:`theorycheck.proofs.minor_first.predict.blowup` decides those."""
    from scipy.integrate import DOP853

    from theorycheck.symbolic.forms import balanced_field

    u = _z(z)
    f = balanced_field(L, SAM_L2, log=True)
    lz = np.log(u) + math.log(rho)

    def lnN(th):
        return 0.5 * math.log(float(np.sum(f.summand(u, th))))

    def rhs(t, th):
        with np.errstate(all="ignore"):
            out = np.asarray(f.field(u, th, math.exp(lnN(th)), rho), dtype=float)
        if not np.all(np.isfinite(out)):  # scipy's step control loops for ever on a NaN field: stop here instead
            raise ArithmeticError(f"the field is not finite in float64 at τ = {t:g}")
        return out

    def lnr(th):
        return lz + (L - 2) * th - lnN(th)

    th0 = np.full(u.size, math.log(alpha))
    r0 = lnr(th0)
    if np.all(r0 > 0):
        return DepthFate(alpha, Fate.COLLAPSE, 0.0, "every r_j(0) > 1")
    if np.all(r0 <= 0):
        return DepthFate(alpha, Fate.GROWTH, 0.0, "every r_j(0) ≤ 1")
    try:
        return _classified(alpha, DOP853(rhs, 0.0, th0, t_max, rtol=1e-12, atol=1e-12), lnr, t_max, max_steps)
    except (ArithmeticError, ValueError) as e:  # the field left float64, or a log of 0 (math domain)
        return DepthFate(alpha, Fate.UNDECIDED, None, f"{e} (outside float64)", 0)


def _classified(alpha: float, sol, lnr, t_max: float, max_steps: int) -> DepthFate:
    """:func:`classify`'s loop: step ``sol`` until a persisting condition, the horizon or the step budget
    (:func:`theorycheck.solvers.persisting.step_to_condition`)."""

    def persisting(_t, y):
        r = lnr(y)
        if np.all(r > 0):
            return Fate.COLLAPSE, "every r_j > 1 from then on"
        if np.all(r <= 0):
            return Fate.GROWTH, "every r_j ≤ 1 from then on"
        return None

    run = step_to_condition(sol, persisting, max_steps=max_steps, clock="τ",
                            horizon_why=f"no persisting condition by the horizon τ = {t_max:g}")
    return DepthFate(alpha, run.outcome if run.outcome is not None else Fate.UNDECIDED, run.t, run.why, run.steps)


def _run_dict(alpha: float, c: float | None, fate: Fate, time: float | None, steps: int, why: str) -> dict:
    return {"alpha": alpha, "c": c, "outcome": str(fate), "condition": why, "time": time, "steps": steps}


def _check(lo: float, hi: float, runs: tuple[dict, dict], *, evaluations: int, method: str, arithmetic: str,
           stopped: str | None) -> tuple[float, str | None, dict]:
    from theorycheck.arith.decimals import common_digits

    digits, text = common_digits(lo, hi, 17)
    check = {"collapses": runs[0], "grows": runs[1], "arithmetic": arithmetic, "method": method,
             "evaluations": evaluations, "scaling": SCALING, "bracket": [repr(lo), repr(hi)],
             "relative_width": hi / lo - 1, "significant_digits": digits, "stopped": stopped}
    return math.sqrt(lo) * math.sqrt(hi), text, check  # no overflow of lo·hi at extreme scales


SCALING = ("α_c(z, ρ) = ρ · α_c(z · 2^k, 1) for z scaled by a power of two into [1/2, 1) (exact symmetries of the "
           "flow; exact in binary)")


def _unit_z(z) -> np.ndarray:
    z = np.asarray(z, float)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)) or np.any(z <= 0):
        raise TheorycheckError("the depth-L ℓ2-SAM thresholds are derived for z > 0 (finite entries)")
    return np.ldexp(z, -int(np.frexp(z.max())[1]))


def depth_collapse_threshold(z, rho: float, L: int, *, rel_tol: float = 1e-13, max_evaluations: int = 120,
                             max_steps: int = 20000, s_max: float = 400.0, max_total_steps: int = 200000) -> dict:
    """α_c(L) for even L: below it the path collapses (every r_j > 1 from a time on), above it grows. Odd L:
    None (no collapse is possible).

    Even L ≥ 4: bisection in c = ρ/(α√L‖z‖₂) on the ratio reduction blown up at r = 1
    (:func:`theorycheck.proofs.minor_first.predict.blowup.c_bracket`; at α_c the path runs into the degenerate equilibrium u*, which
    the blow-up makes a hyperbolic saddle) to relative width ``rel_tol`` (at best about 4e-14), each trial
    classified under ``max_steps`` DOP853 steps and the horizon ς = ``s_max``, the search under
    ``max_evaluations`` integrations and ``max_total_steps`` steps in all; ``check.stopped`` names the budget that ran out first, if one did.
    L = 2: the same bisection in ln α on the flow in θ = ln u (:func:`classify`; predict/collapse.py is the
    precise L = 2 answer). The bracket's ends are decided runs either way: a floating-point check."""
    from theorycheck.strength import float_check

    u = _unit_z(z)
    rho = float(rho)
    if L % 2 == 1:
        return {"value": None, "closed_form": False, "expression": None,
                "note": "odd L: du_j/dτ = z_j û_j^(L−1) ≥ 0 (an even power), so no coordinate ever shrinks and no "
                        "collapse threshold exists", "check": None, "strength": float_check().as_dict()}
    if rho == 0:
        from theorycheck.strength import proved

        return {"value": 0.0, "value_text": "0", "closed_form": True, "expression": "0",
                "note": "ρ = 0 is GD: every r_j = 0 ≤ 1, every coordinate grows for every α > 0 (no collapse)",
                "check": None, "strength": proved().as_dict()}
    za = zero_rate_alpha(L)
    fa = MF.depth_zero_rate_alpha(L)
    nrm = float(np.linalg.norm(u))
    if u.min() == u.max():
        return {"value": float(fa(u.min(), nrm, rho)), "closed_form": True,
                "expression": sp.sstr(za.subs(cf.z_j, cf.z_min)),
                "note": "all entries of z equal: collapse ⇔ r(0) > 1", "check": None,
                "strength": float_check().as_dict()}
    if L >= 4:
        from theorycheck.proofs.minor_first.predict import blowup as B

        ac = MF.depth_alpha_of_c(L)
        s = B.c_bracket(u, L, rel=rel_tol, max_evaluations=max_evaluations, max_steps=max_steps, s_max=s_max,
                        max_total_steps=max_total_steps)
        lo, hi = float(ac(s.collapses.c, nrm, rho)), float(ac(s.grows.c, nrm, rho))  # larger c: smaller α
        runs = tuple(_run_dict(float(ac(r.c, nrm, rho)), r.c, r.fate, r.varsigma, r.steps, r.why)
                     for r in (s.collapses, s.grows))
        value, text, check = _check(lo, hi, runs, evaluations=s.evaluations, method=B.METHOD,
                                    arithmetic=B.PRECISION, stopped=s.stopped)
        evals, stopped = s.evaluations, s.stopped
    else:
        lo_f = DepthFate(float(fa(u.min(), nrm, rho)), Fate.COLLAPSE, 0.0, "closed form: every r_j(0) ≥ 1")
        hi_f = DepthFate(float(fa(u.max(), nrm, rho)), Fate.GROWTH, 0.0, "closed form: every r_j(0) ≤ 1")
        lo_f, hi_f, evals, stopped = bisect_fate(
            lo_f, hi_f, lambda a: classify(u, a, rho, L, t_max=2000.0 * a ** (2 - L), max_steps=max_steps),
            at=lambda f: f.alpha, fate=lambda f: Fate(f.kind), upper=Fate.GROWTH, rel=max(rel_tol, 4e-14),
            max_evaluations=max_evaluations, what="α", steps=lambda f: f.steps, max_steps=max_total_steps)
        runs = tuple(_run_dict(f.alpha, None, f.kind, f.time, f.steps, f.why) for f in (lo_f, hi_f))
        value, text, check = _check(lo_f.alpha, hi_f.alpha, runs, evaluations=evals,
                                    method="bisection in ln α on the balanced flow in θ = ln u",
                                    arithmetic="float64 (DOP853, rtol 1e-12)", stopped=stopped)
        lo, hi = lo_f.alpha, hi_f.alpha
    digits = check["significant_digits"]
    if digits == 0:  # the bracket does not fix one digit: no value, and the answer says why
        from theorycheck.strength import not_decided

        return {"value": None, "value_text": None, "closed_form": False, "expression": None,
                "note": (f"not decided: the checked bracket [{lo!r}, {hi!r}] does not fix one significant digit; "
                         f"the search stopped after {evals} integrations: {stopped}"),
                "check": check, "strength": not_decided(stopped or "no significant digit").as_dict()}
    return {"value": value, "value_text": text, "closed_form": False, "expression": None,
            "note": (f"bracket [{lo!r}, {hi!r}] checked in float64: {digits} significant digits (value_text); "
                     "the lower end reached every r_j > 1 (every coordinate shrinks from then on: collapse), the "
                     "upper every r_j ≤ 1 (every coordinate grows: blow-up); a floating-point check, not a proof"
                     + (f"; stopped early ({evals} integrations): {stopped}" if stopped else "")),
            "check": check, "strength": float_check().as_dict()}


def _odd_evidence(u: np.ndarray, rho: float, L: int, a_grow: float) -> list[dict]:
    """The fate of the full balanced flow (solve.integrate) at α = a_grow/4 and a_grow/16."""
    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve
    from theorycheck.solvers.trajectory import Budget

    out = []
    for a in (a_grow / 4, a_grow / 16):
        tr = solve(Setting.from_z(u, depth=L, optimizer=SAM_L2, rho=rho, alpha=a), t_max=1e3 * a ** (2 - L),
                   budget=Budget(max_steps=50_000))
        out.append({"alpha": a, "stopped_because": tr.stopped_because,
                    "blowup_time": None if tr.blowup_time is None else float(tr.blowup_time),
                    "collapsed": bool(tr.collapse_time is not None)})
    return out


def depth_thresholds(z, rho: float, L: int) -> dict:
    """Everything ``theorycheck thresholds --depth L`` reports for ℓ2-SAM (JSON object)."""
    u = _z(z)
    forms = initial_forms(L)
    za = zero_rate_alpha(L)
    fa = MF.depth_zero_rate_alpha(L)
    nrm = float(np.linalg.norm(u))
    out: dict = {"initial_rate": {"expression": sp.sstr(forms["rate"]), "r_j0": sp.sstr(forms["r0"]),
                                  "N0": sp.sstr(forms["N0"])}}
    if L % 2 == 0:
        out["alpha_all_shrink"] = {"value": float(fa(u.min(), nrm, rho)), "closed_form": True,
                                   "expression": sp.sstr(za.subs(cf.z_j, cf.z_min)),
                                   "note": "even L: below it every r_j(0) > 1, every coordinate shrinks from the start "
                                           "and keeps shrinking (forward-invariant set): collapse", "check": None}
    else:
        out["alpha_all_shrink"] = {"value": None, "closed_form": True, "expression": sp.sstr(za.subs(cf.z_j, cf.z_min)),
                                   "note": "odd L: the rates z_j α^(L−2) (1 − r_j)^(L−1) are ≥ 0 for every α (even power): "
                                           "no coordinate ever shrinks", "check": None}
    out["alpha_all_grow"] = {"value": float(fa(u.max(), nrm, rho)), "closed_form": True,
                             "expression": sp.sstr(za.subs(cf.z_j, sp.Symbol("z_max", positive=True))),
                             "note": "from it on every r_j(0) ≤ 1: every coordinate grows from the start and keeps "
                                     "growing (forward-invariant set)", "check": None}
    a_star, how = major_fastest_alpha(u, rho, L)
    out["alpha_gd_like"] = {"value": a_star, "closed_form": L == 2, "expression": "rho/(c*sqrt(L)*||z||_2), c: " + how,
                            "note": "from it on the major coordinate has the largest initial rate", "check": None}
    out["alpha_collapse"] = depth_collapse_threshold(u, rho, L)
    ueq = equilibrium(u, rho, L)
    out["equilibrium"] = None if ueq is None else {
        "u_star_over_max_z_units": ueq.tolist(),
        "expression": "u*_j = (kappa/z_j)^(1/(L-2)), N(u*) = rho*kappa"}
    if L % 2 == 1:
        # ρ = 0 (GD): every threshold is 0 and there is no small α to integrate at
        ev = _odd_evidence(u, rho, L, out["alpha_all_grow"]["value"]) if rho > 0 else []
        out["small_alpha_evidence"] = ev
        fates = ", ".join(f"α = {e['alpha']:.4g}: {e['stopped_because']}"
                          + (f" at τ = {e['blowup_time']:.6g}" if e["blowup_time"] else "") for e in ev) or "none (ρ = 0)"
        out["small_alpha"] = ("odd L: u is nondecreasing for every α > 0 (du_j/dτ = z_j û_j^(L−1), an even power), so "
                              "there is no collapse and no collapse threshold; near u = 0 the speed "
                              "z_j (ρ z_j u_j^(L−1)/N)^(L−1) does not vanish (degree 0 in u), so even a tiny α leaves 0 at a "
                              "finite speed. A nondecreasing path either converges to an equilibrium — u* is the only one "
                              "with u > 0, and a path that crosses it in any coordinate cannot come back — or is unbounded; "
                              f"integrated here (z scaled to max 1): {fates}")
    else:
        out["small_alpha"] = ("even L: below alpha_collapse every coordinate ends up shrinking (a persisting, "
                              "forward-invariant condition) and u reaches 0 in finite time: near u = 0 the speed "
                              "z_j (−ρ z_j u_j^(L−1)/N)^(L−1) is of degree 0 in u (finite), not exponentially slow as for "
                              "L = 2; above it every coordinate grows and (L ≥ 4) blows up in finite time")
    return out

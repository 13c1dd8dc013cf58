"""The L = 2 run checker (:class:`theorycheck.proved.check.RunChecker` for C4's reduced ODE in the moving frame),
code that shares nothing with the integrator but the ball arithmetic.

It re-checks every inclusion of a run with its own evaluation of the sympy field (a tree walk,
:class:`theorycheck.proved.tape.TreeEval`, not :mod:`symbolic.forms`) at its own balls of the exact inputs, its own
Taylor coefficients, its own inclusion tests: the Picard test of each box, the Taylor polynomial over the start box
plus the remainder over the checker's *own* Picard image (the field's range is bounded once, by the checker:
nothing the integrator computed has to nest with it), the continuity from each step to the next (and across each
re-centring of the frame), the initial state w = 0 at τ = 0, and the lemma each run names at its end. A step is
checked at its order K, and again at K + 4 when that fails: any order gives an enclosure, and at K + 4 the
remainder (the checker bounds it by Picard sweeps over the wide Picard image, another method than the
integrator's Newton series) is negligible beside the propagated width.
"""

from __future__ import annotations

from functools import lru_cache

from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2

from theorycheck.proved.check import (
    EXTRA_ORDER,
    CertificateClaim,
    CertificateError,
    RunChecker,
    ball,
    exact_ball,
    items,
    order_of,
    serious,
)
from theorycheck.proved.tape import TreeEval

__all__ = ["ReducedL2Checker"]

#: the lemmas a run may end in, by fate (the names the L = 2 system writes)
LEMMA_NAMES = ReducedL2.LEMMA_NAMES


class ReducedL2Checker(RunChecker):
    """The checker of ``theorycheck-validated-certificate/2`` (L = 2)."""

    FORMAT = ReducedL2.FORMAT
    LEMMAS = ReducedL2.LEMMAS
    LEMMA_NAMES = ReducedL2.LEMMA_NAMES

    def depth_rule(self, L: int) -> str | None:
        return None if L == 2 else f"depth {L}: this format is for L = 2 (even L ≥ 4: the depth-L format)"

    def fields(self, L: int, d: int):
        from theorycheck.symbolic import validated_fields as S

        return S.reduced_l2_system(d, frame=True)[3]

    def check_run(self, claim: CertificateClaim, ri: int, run: dict, fails: list, stop: bool) -> int:
        return _check_run(_system(claim.d), claim, ri, run, fails, stop)


class _System:
    """C4's reduced ODE in the moving frame for dimension d, as the checker evaluates it: the field, the
    summands of N² and the lemmas' levels, each a tree walk over the symbolic layer's expressions."""

    def __init__(self, d: int):
        from theorycheck.symbolic import validated_fields as S

        self.d = d
        _t, _x, _p, fields = S.reduced_l2_system(d, frame=True)
        self.field = TreeEval(fields[0])
        _args, terms = S.reduced_l2_summands(d, frame=True)
        self.terms = [TreeEval(tm) for tm in terms]
        largs, levels = S.l2_persisting_levels()
        self.level_names = [str(a) for a in largs]
        self.levels = [TreeEval(e) for e in levels]


@lru_cache(maxsize=8)
def _system(d: int) -> _System:
    return _System(d)


def _check_run(system: _System, claim: CertificateClaim, ri: int, run: dict, fails: list, stop: bool) -> int:
    """Every step of run ``ri`` (α = the bracket's end, z and ρ the exact inputs, balls of the checker's own),
    then the lemma the run names at its end. Returns the steps checked."""
    fixed = {f"z{j + 1}": v for j, v in enumerate(claim.z_balls())}
    fixed.update(alpha=exact_ball(claim.alpha(ri)), rho=claim.rho_ball())
    prev, n = None, 0
    for si, seg in enumerate(items(run, "segments", f"run {ri + 1}")):
        kappa = ball(seg.get("kappa") if isinstance(seg, dict) else None, f"run {ri + 1}, segment {si + 1}: κ")
        if not kappa.rad().is_zero():
            fails.append(f"run {ri + 1}, segment {si + 1}: the frame κ is not an exact number")
            return n
        for ki, st in enumerate(items(seg, "steps", f"run {ri + 1}, segment {si + 1}")):
            if stop and serious(fails):
                return n
            n += 1
            where = f"run {ri + 1} (α = {run.get('alpha')}), segment {si + 1}, step {ki + 1}"
            prev = _check_step(system, dict(fixed, kappa=kappa), st, prev, where, fails)
    if prev is None:
        fails.append(f"run {ri + 1}: no steps")
    elif not (stop and serious(fails)):
        _check_lemma(system, claim, ri, run, dict(fixed), prev, fails)
    return n


def _state(st: dict, key: str, where: str):
    v = items(st, key, where)
    if len(v) != 1:
        raise CertificateError(f"{where}: {key} must hold one ball (the state w)")
    return ball(v[0], f"{where}: {key}")


def _check_step(system: _System, env: dict, st, prev, where: str, fails: list):
    """One step: its start (w = 0 at τ = 0, or the previous end moved to this segment's frame), the Picard test
    of its box, and its end box against the Taylor polynomial over the start box plus the remainder over the
    checker's own Picard image. Returns (end, t1, κ) for the next step."""
    from flint import arb

    if not isinstance(st, dict):
        raise CertificateError(f"{where}: a step is an object")
    t0, h, K = ball(st.get("t0"), f"{where}: t0"), ball(st.get("h"), f"{where}: h"), order_of(st, where)
    x0, box, end = (_state(st, k, where) for k in ("x0", "picard_box", "end"))
    if not h > 0:
        fails.append(f"{where}: the step size is not positive")
        return end, t0 + h, env["kappa"]
    if prev is None:
        if not (t0.contains(arb(0)) and x0.contains(arb(0))):
            fails.append(f"{where}: the first state is not w = 0 at τ = 0")
    else:
        p_end, p_t1, p_kappa = prev
        moved = p_end + (p_kappa - env["kappa"]) * p_t1
        if not (x0.contains(moved) and t0.contains(p_t1)):
            fails.append(f"{where}: the step does not start where the previous one ended")
    H = arb(h / 2, (h / 2).upper())  # [0, h]
    T = t0 + H
    P = x0 + H * system.field(dict(env, tau=T, w=box))
    if not box.contains_interior(P):
        fails.append(f"{where}: the Picard box fails the Picard test")
        return end, t0 + h, env["kappa"]
    if not any(end.contains(_enclosure(system, env, t0, x0, h, T, P, k)) for k in (K, K + EXTRA_ORDER)):
        fails.append(f"{where}: the end box does not contain the Taylor enclosure")
    return end, t0 + h, env["kappa"]


def _enclosure(system: _System, env: dict, t0, x0, h, T, P, K: int):
    """x(t0 + h) for every start in x0: the order-K Taylor polynomial over x0 plus the Lagrange remainder, the
    (K + 1)-th coefficient over the Picard image P (any order gives an enclosure)."""
    c = _taylor(system.field, t0, x0, env, K)
    r = _taylor(system.field, T, P, env, K + 1)[K + 1]
    acc = c[K]
    for k in range(K - 1, -1, -1):
        acc = acc * h + c[k]
    return acc + r * h ** (K + 1)


def _taylor(fw, t0, x0, env_fixed, K):
    """Own Taylor coefficients: Picard on series, the length set for each sweep (checker's copy, independent)."""
    from flint import arb, arb_series, ctx

    old = ctx.cap
    try:
        ctx.cap = K + 2
        W = arb_series([x0])
        for n in range(1, K + 1):
            ctx.cap = n + 1
            env = dict(env_fixed)
            env["tau"] = arb_series([t0, arb(1)])
            env["w"] = W
            W = fw(env).integral() + x0
        if W.prec < K + 1:
            raise ArithmeticError("series truncated")
        c = W.coeffs()
        return [c[k] if k < len(c) else arb(0) for k in range(K + 1)]
    finally:
        ctx.cap = old


def _check_lemma(system: _System, claim: CertificateClaim, ri: int, run: dict, env: dict, prev, fails: list) -> None:
    """The lemma run ``ri`` names holds for every point of its last enclosure (levels from the symbolic layer)."""
    end, t1, kappa = prev
    env.update(kappa=kappa, tau=t1, w=end)
    tv = [ev(env) for ev in system.terms]
    N2 = sum(tv[1:], tv[0])
    zmin, zmax = min(claim.z), max(claim.z)
    mins = [j for j in range(claim.d) if claim.z[j] == zmin]  # exact
    Nmin2 = sum((tv[j] for j in mins[1:]), tv[mins[0]])
    lenv = dict(zip(system.level_names, (exact_ball(zmin), exact_ball(zmax), claim.rho_ball())))
    collapse, grow, subset = (ev(lenv) for ev in system.levels)
    holds = {LEMMA_NAMES["collapse"][0]: lambda: N2 < collapse ** 2,
             LEMMA_NAMES["growth"][0]: lambda: Nmin2 > subset ** 2,
             LEMMA_NAMES["growth"][1]: lambda: N2 >= grow ** 2}
    lemma = run.get("lemma")
    if lemma in holds and not holds[lemma]():
        fails.append(f"run {ri + 1} (α = {run.get('alpha')}): {lemma} does not hold at the end")

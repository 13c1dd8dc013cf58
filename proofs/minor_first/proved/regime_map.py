"""Proved regime maps in α (ℓ2-SAM, L = 2, one example z > 0, uniform init; GD): a partition of
[A, B] into sub-intervals, each proved for EVERY α in it — its fate (collapse / growth) and the
exact sequence of j† — or listed as undecided with its width and the budget or limit that stopped it.

Method (THEORY.md C4/C5 and the lock-in lemma, proofs/minor_first/lockin.py): C4's reduced ODE dI/dτ = 1/N(τ, I)
is integrated in ball arithmetic with α an interval (proved/validated: the enclosure carries the whole
interval), at balls of the exact inputs (z and ρ as typed: 0.1 is 1/10). j† is a function of N̄ = τ/I alone —
the cell of N̄ between the switch levels ρ(v_i + v_{i+1}) of consecutive distinct z values — so on each step:

- N̄'s enclosure inside one cell: j† is constant on the step for every α;
- N̄'s enclosure meeting a level: a switch may happen; it is counted once only while its direction is certain
  over every step of the crossing, and it is done when N̄'s end enclosure is certainly beyond the level; its
  time is enclosed by the steps of the crossing. At N̄ = λ, dN̄/dτ = (N − N̄)/(N I) has the sign of N − N̄, so
  the direction is certain when N − λ has a certain sign over the step, or when N − N̄ has: N − N̄ > 0 holds on
  (t0, t1] when N ≥ N̄ at t0 and dN/dτ > 0 over the step (1/N̄ is the mean of 1/N over [0, τ]), and at τ = 0
  N = N̄ — so a rising N takes N̄ across levels upwards, however close N was to the level at the start;
- at a step end with N ≥ ρ z_max and N ≥ N̄ (growth, lock-in lemma) the rest of the sequence is
  determined — upwards through every larger distinct value — and the run continues only to enclose
  those switch times, until N̄ is beyond the last level; with N < ρ z_min and N ≤ N̄ (collapse) the
  rest is downwards to argmin z, then 0, within the lemma's collapse-time enclosure.

At τ = 0 N̄ = N0 = α√2‖z‖; a box whose N0 is certainly below ρ z_min or at/above ρ z_max needs no
integration. A box that cannot be decided (N0 or N̄ at a level, a crossing whose direction is not certain,
α_c inside, a budget) is split; what remains undecided is listed, never merged. The first cuts (a heuristic,
no proof rests on them) are the α where N0 meets a level (c = ρ/(α√2‖z‖) = 1/v, from the symbolic layer) and a
grading around the floating-point α_c, whose pieces shrink geometrically towards it.

Budgets are validated steps (in all, and per piece) and pieces tried, so that a map does not depend on the load
of the machine; a wall-clock limit is optional. Every piece says its strength: proved when every lemma it rests
on is proved for (L, d) (:func:`theorycheck.proofs.minor_first.lemmas.strength`), not decided otherwise, with the budget or
limit that stopped it.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from dataclasses import dataclass
from fractions import Fraction

from theorycheck.proofs.minor_first.proved.l2_forms import L2Forms, l2_forms, l2_forms_exact
from theorycheck.proofs.minor_first.proved.map_pieces import (
    GROWTH,
    MAP_BUDGET,
    PROVED,
    UNDECIDED,
    Piece,
    RegimeMap,
    merge_pieces,
    proved_piece,
    rescale_times,
    undecided_piece,
)
from theorycheck.proofs.minor_first.proved.piece_run import decide_piece

from theorycheck.arith.decimals import exact_decimal as _dec
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.optimizers import get as get_optimizer
from theorycheck.status import Budget

__all__ = ["L2Forms", "MAP_BUDGET", "Piece", "RegimeMap", "decide_piece", "l2_forms", "parse_alpha_range",
           "proved_regime_map", "PROVED", "UNDECIDED"]

#: the lemmas a piece rests on (names of :data:`theorycheck.proofs.minor_first.lemmas.LEMMAS`)
RESTS_L2 = ("C4", "P1", "LOCK")  # C4's reduction, the collapse lemma, the lock-in lemma (growth and after)
RESTS_GD = ("LOCK",)  # ρ = 0: j† = argmax z from the start and locked in (the lock-in lemma at ρ = 0)
#: the steps a map spends after a growth certificate enclosing the later switch times (the lemma gives the rest)
AFTER_GROWTH = 30
#: a map goes on after a collapse certificate until N < MAP_TIGHTEN·ρ z_min (its collapse times are hulls over its
#: pieces: a tighter enclosure per piece buys little)
MAP_TIGHTEN = 0.5
#: how far from α_c (relative) the first cuts are graded
GRADED = 2e-3


def parse_alpha_range(text) -> tuple[Fraction, Fraction]:
    """'A:B' (numbers read exactly, 0 < A < B) or a pair → exact fractions."""
    from theorycheck.arith.exact import exact_range

    a, b = exact_range(text, "alpha")
    return a.value, b.value


def _short(x: Fraction, digits: int = 12) -> Fraction:
    """x rounded to ``digits`` significant decimal digits (a readable cut point)."""
    if x == 0:
        return x
    e = math.floor(math.log10(abs(float(x)))) - digits + 1
    s = Fraction(10) ** (-e) if e < 0 else Fraction(1, 10**e)
    return Fraction(round(x * s)) / s


def _split(lo: Fraction, hi: Fraction) -> Fraction:
    """The decimal with the fewest digits in the middle third of [lo, hi] (a readable split point)."""
    w = hi - lo
    a, b = lo + w / 3, hi - w / 3
    k = 0
    while True:
        s = Fraction(10) ** k
        n = -((-a * s).__floor__())  # ceil(a·10^k)
        if Fraction(n) / s <= b:
            return Fraction(n) / s
        k += 1



@dataclass
class _Plan:
    """How a map is computed for one (optimizer, depth): ``decide(a, b, steps)`` → Piece, the critical α (first
    cuts), the floating-point α_c when known (graded cuts around it), the method's words and the lemmas."""

    decide: object
    crit: list
    alpha_c: float | None
    method: str
    rests: tuple


def _plan_l2(zq: tuple, rhoq: Fraction, s: Fraction, order: int, prec: int, graded: bool) -> _Plan:
    """ℓ2-SAM at L = 2 on z/s (s a power of two: exact): the pieces decided by :func:`decide_piece`, times scaled
    back; the first cuts where c = ρ/(α√2‖z‖) = 1/v (N0 = ρ v at a level), from the symbolic layer."""
    F = l2_forms_exact(tuple(v / s for v in zq), rhoq)
    d = len(zq)
    crit = _critical_alphas(2, zq, rhoq, [v * s for v in F.critical_values()])  # in z's units

    def decide(a, b, steps):
        p = decide_piece(F, a, b, max_steps=steps, order=order, prec=prec, clock=float(s), after_growth=AFTER_GROWTH,
                         tighten=MAP_TIGHTEN)
        rescale_times(p, float(s))
        return proved_piece(p, RESTS_L2, 2, d) if p.status == PROVED else p
    method = ("validated Taylor integration of C4's reduced ODE in ball arithmetic with interval α "
              "(proved/validated) at balls of the exact inputs, N̄'s cells between the switch levels, the lock-in lemma")
    return _Plan(decide, crit, _float_alpha_c(zq, rhoq) if graded else None, method, RESTS_L2)


def _plan_depth(L: int, zq: tuple, rhoq: Fraction, s: Fraction) -> _Plan:
    """ℓ2-SAM at L ≥ 3 (:func:`theorycheck.proved.path.decide_path`); first cuts where c z_j = 1 (an initial rate
    changes sign), c = ρ/(α√L‖z‖) from the symbolic layer."""
    from theorycheck.proved.path import decide_path, depth_forms

    F = depth_forms(int(L), tuple(float(v / s) for v in zq), float(rhoq))
    rests = ("LOCK", "P4") if L % 2 == 0 else ("LOCK",)
    crit = _critical_alphas(L, zq, rhoq, sorted(set(zq)))

    def decide(a, b, steps):
        r = decide_path(F, a, b, max_seconds=None, max_steps=steps, tighten=1e-4, after_steps=30, tol=1e-9,
                        clock=float(s))
        if r["status"] != PROVED:
            return undecided_piece(a, b, r["reason"], r["reason"].split(" (")[0][:120], r["steps"])
        p = Piece(a, b, PROVED, r["fate"], r["sequence"], r["switch_times"], r["collapse_time"], r["reason"],
                  r["steps"], r["blowup_time"], r["sequence_complete"])
        return proved_piece(p, ("LOCK",) if r["fate"] == GROWTH else rests, int(L), len(zq))
    method = ("validated Taylor integration (Lohner's method) of the balanced ℓ2-SAM flow in ball arithmetic with "
              "interval α (u = α w, s = α^(L−2) τ: one interval ρ/α), switches where the order of u_j changes "
              "transversally, the lock-in lemma (blow-up order) and the even-L collapse lemma")
    return _Plan(decide, crit, None, method, rests)


def _critical_alphas(L: int, zq: tuple, rhoq: Fraction, values: list) -> list[float]:
    """α at which c = ρ/(α√L‖z‖₂) = 1/v for each v (floats: first cuts only), by the symbolic layer's zero-rate α
    (:func:`theorycheck.symbolic.depth.zero_rate_alpha`, compiled), on z / max z (degree 0 in z: no overflow)."""
    from theorycheck.symbolic import theory_forms as MF

    f = MF.depth_zero_rate_alpha(int(L))
    top = max(zq)
    norm = math.sqrt(sum(float(v / top) ** 2 for v in zq))
    out = [float(f(float(v / top), norm, float(rhoq))) for v in values]
    return [x for x in out if math.isfinite(x) and x > 0]


def _float_alpha_c(zq: tuple, rhoq: Fraction) -> float | None:
    """The floating-point α_c (a heuristic: where the graded cuts go; no proof rests on it), or None."""
    from theorycheck.proofs.minor_first.predict.alpha_c import collapse_threshold

    try:
        r = collapse_threshold([float(v) for v in zq], float(rhoq), digits=10, max_seconds=30.0, progress=False)
    except (TheorycheckError, ArithmeticError, ValueError):
        return None
    return float(r.value) if r.value is not None else None


def _first_cuts(lo: Fraction, hi: Fraction, crit: list, alpha_c: float | None, min_width: float,
                ratios: tuple) -> tuple[list[Fraction], tuple | None]:
    """The first cut points (a heuristic, no proof rests on them): a sliver of relative width 2e-9 around each
    critical α, and around α_c a central piece narrower than ``min_width`` with pieces that grow geometrically
    from it, by ``ratios`` = (below α_c: the collapse side, above: the growth side), out to a distance of
    :data:`GRADED` α_c (a piece next to α_c is proved whole when its width is a fraction of its distance to α_c:
    the trajectories of its α leave the saddle over a short time); beyond, pieces are split where they fail.
    Returns the cuts and the central piece (or None)."""
    cuts = {_short(Fraction(x * (1 + e))) for x in crit for e in (-1e-9, 1e-9)} | {lo, hi}
    centre = None
    if alpha_c is not None and lo < Fraction(alpha_c) < hi:
        a = Fraction(alpha_c)
        w = Fraction(min_width) * max(a, Fraction(1)) * Fraction(2, 5)  # the central piece: 0.8 min_width wide
        centre = (_short(a - w, 15), _short(a + w, 15))
        cuts |= set(centre)
        near = min([abs(Fraction(x) - a) for x in crit] + [a - lo, hi - a, a * Fraction(GRADED)])
        for sign, ratio in zip((-1, 1), ratios):
            k = w * Fraction(ratio)
            while k < near:
                cuts.add(_short(a + sign * k, 15))
                k *= Fraction(ratio)
    return sorted(c for c in cuts if lo <= c <= hi), centre


def _inputs(z, rho, alpha, optimizer: str, depth: int):
    """The exact inputs (z, ρ as typed; a float is its binary value), the α range, validated once."""
    from theorycheck.arith.exact import ExactInputs, exact, exact_vector
    from theorycheck.setting import Setting

    lo, hi = parse_alpha_range(alpha)
    ez = exact_vector(z, "z") if not isinstance(z, (int, float, Fraction)) else (exact(z, "z"),)
    erho = exact(rho, "rho")
    Setting.from_z([e.text for e in ez], depth=depth, optimizer=optimizer, rho=erho.text, alpha=_dec(lo))  # validates
    zq = tuple(e.value for e in ez)
    if get_optimizer(optimizer).normalised and depth >= 2:
        if any(v <= 0 for v in zq):
            raise TheorycheckError("the proved regime map of ℓ2-SAM needs z > 0")
        if not erho.value > 0:
            raise TheorycheckError("ρ = 0 is GD: use optimizer 'gd'")
    elif get_optimizer(optimizer).perturbs:
        raise TheorycheckError("the proved regime map is implemented for ℓ2-SAM at depth ≥ 2 and for GD "
                               "(optimizer 'sam-l2' with depth ≥ 2, or 'gd')")
    inputs = ExactInputs(tuple(ez), erho, None, int(depth))
    return zq, erho.value, lo, hi, inputs


def proved_regime_map(z, rho, alpha, *, optimizer: str = SAM_L2.name, depth: int = 2, budget: Budget | None = None,
                      max_seconds: float | None = None, min_width: float = 1e-6, order: int = 10, prec: int = 96,
                      ratios: tuple = (2.0, 1.25)) -> RegimeMap:
    """The proved regime map of [A, B] = ``alpha`` ("A:B" or a pair, read exactly) for one example ``z`` with
    ``rho`` (read exactly: decimal strings, Fractions; a float is its binary value) — see the module docstring.
    ℓ2-SAM, L = 2 (z > 0): validated integration of C4's reduced ODE with interval α, each piece proved or
    undecided; ℓ2-SAM at L ≥ 3 (z > 0): the balanced flow with interval α (:mod:`theorycheck.proved.path`); GD
    (any depth): j† = argmax z for every α (C6, the static index). ``budget``: a :class:`~theorycheck.status.Budget` (validated steps
    in all, ``piece_steps`` per piece, ``max_pieces`` tried; :data:`MAP_BUDGET` when None; ``max_seconds`` sets its
    optional wall-clock limit); pieces narrower than
    ``min_width`` (relative) are not split further; ``ratios``: the growth of the graded pieces below and above
    α_c (:func:`_first_cuts`)."""
    budget = budget or MAP_BUDGET
    if max_seconds is not None:
        budget = dataclasses.replace(budget, max_seconds=max_seconds)
    zq, rhoq, lo, hi, inputs = _inputs(z, rho, alpha, optimizer, depth)
    t0 = time.perf_counter()
    head = {"optimizer": optimizer, "depth": depth, "z": [e.text for e in inputs.z], "rho": inputs.rho.text,
            "inputs": inputs.as_dict(), "alpha_range": [_dec(lo), _dec(hi)]}
    if not get_optimizer(optimizer).perturbs:
        return _gd_map(zq, lo, hi, depth, head, t0)
    s = Fraction(2) ** math.frexp(float(max(zq)))[1]  # z → z/s: the same map, times scaled by s
    plan = (_plan_l2(zq, rhoq, s, order, prec, graded=True) if depth == 2 else _plan_depth(int(depth), zq, rhoq, s))
    cuts, centre = _first_cuts(lo, hi, plan.crit, plan.alpha_c, min_width, ratios)
    done, stopped = _run_pieces(plan, cuts, centre, budget, min_width, t0)
    done.sort(key=lambda p: p.lower)
    return RegimeMap({**head, "seconds": time.perf_counter() - t0, "method": plan.method,
                      "rests_on": list(plan.rests), "stopped": stopped}, merge_pieces(done))


def _gd_map(zq: tuple, lo: Fraction, hi: Fraction, depth: int, head: dict, t0: float) -> RegimeMap:
    """GD: j† = argmax z for every α (C6; ties: the smallest index)."""
    j = zq.index(max(zq)) + 1
    p = Piece(lo, hi, PROVED, GROWTH if max(zq) > 0 else None, [j], [],
              reason="GD: u_j = α e^{z_j τ} (L = 2) or GD's blow-up solution (L ≥ 3): the order of u_j is the "
                     "order of z_j for every τ > 0 (C6; the lock-in lemma at ρ = 0); uniform α")
    p = proved_piece(p, RESTS_GD, int(depth), len(zq))
    return RegimeMap({**head, "seconds": time.perf_counter() - t0, "method": "closed form (C6, the lock-in lemma at ρ = 0)",
                      "rests_on": list(RESTS_GD), "stopped": None}, [p])


def _run_pieces(plan: _Plan, cuts: list, centre: tuple | None, budget: Budget, min_width: float,
                t0: float) -> tuple[list[Piece], str | None]:
    """Decide the pieces between the cuts, widest first, splitting what is not decided until it is narrower than
    ``min_width`` (relative), within the budgets. Returns the pieces and the budget that ran out (or None)."""
    queue = [(-(b - a), a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
    heapq.heapify(queue)
    done: list[Piece] = []
    steps = tried = 0
    while queue:
        _, a, b = heapq.heappop(queue)
        if (a, b) == centre:
            done.append(undecided_piece(a, b, "holds the floating-point α_c (a heuristic): no piece that holds α_c can "
                                   "be proved, and it is narrower than min_width: not tried", "min_width (holds α_c)"))
            continue
        stopped = _spent(budget, steps, tried, t0)
        if stopped:
            done.extend(undecided_piece(x, y, f"not tried: the budget {stopped} ran out", stopped)
                        for _, x, y in [(0, a, b)] + queue)
            return done, stopped
        tried += 1
        p = plan.decide(a, b, min(budget.piece_steps, budget.max_steps - steps))
        steps += p.steps
        if p.status == PROVED or (b - a) / max(abs(b), 1) <= min_width:
            done.append(p)
            continue
        m = _split(a, b)
        heapq.heappush(queue, (-(m - a), a, m))
        heapq.heappush(queue, (-(b - m), m, b))
    return done, None


def _spent(budget: Budget, steps: int, tried: int, t0: float) -> str | None:
    """The budget of the map that has run out, in words, or None."""
    if steps >= budget.max_steps:
        return f"max_steps = {budget.max_steps}"
    if tried >= budget.max_pieces:
        return f"max_pieces = {budget.max_pieces}"
    if budget.clock and time.perf_counter() - t0 > budget.max_seconds:
        return f"max_seconds = {budget.max_seconds:g} s"
    return None

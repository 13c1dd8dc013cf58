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
on is proved for (L, d) (:func:`theorycheck.symbolic.lemmas.strength`), not decided otherwise, with the budget or
limit that stopped it.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from theorycheck.arith.decimals import down as _down
from theorycheck.arith.decimals import exact_decimal as _dec
from theorycheck.arith.decimals import scaled as _scaled
from theorycheck.arith.decimals import up as _up
from theorycheck.arith.exact import INPUTS_KEYS
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.optimizers import get as get_optimizer
from theorycheck.record import Keys, ListOf
from theorycheck.status import Budget
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength, not_decided

__all__ = ["L2Forms", "MAP_BUDGET", "Piece", "RegimeMap", "decide_piece", "l2_forms", "parse_alpha_range",
           "proved_regime_map", "PROVED", "UNDECIDED"]

PROVED, UNDECIDED = "proved", "undecided"
COLLAPSE, GROWTH = "collapse", "growth"
#: the lemmas a piece rests on (names of :data:`theorycheck.symbolic.lemmas.LEMMAS`)
RESTS_L2 = ("C4", "P1", "LOCK")  # C4's reduction, the collapse lemma, the lock-in lemma (growth and after)
RESTS_GD = ("LOCK",)  # ρ = 0: j† = argmax z from the start and locked in (the lock-in lemma at ρ = 0)
#: the steps a map spends after a growth certificate enclosing the later switch times (the lemma gives the rest)
AFTER_GROWTH = 30
#: a map goes on after a collapse certificate until N < MAP_TIGHTEN·ρ z_min (its collapse times are hulls over its
#: pieces: a tighter enclosure per piece buys little)
MAP_TIGHTEN = 0.5
#: the widest enclosure of N (radius relative to its midpoint) a run goes on with before a certificate (a wider
#: one is a piece to split: a heuristic that saves work, never a proof)
WIDEST = 0.5
#: how far from α_c (relative) the first cuts are graded
GRADED = 2e-3
#: the smallest step cap the crossing hint asks for (the problem's clock, on z of order 1)
HINT_FLOOR = 1e-5


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
class Piece:
    """One sub-interval [lower, upper] of α: ``status`` proved | undecided; when proved its ``fate``,
    ``sequence`` (j† from the start, every value in order, 0 last for a collapse) and
    ``switch_times`` (one enclosure [lo, hi] per switch, decimal strings; hi None when only a lower
    bound is known), ``collapse_time`` (an enclosure), ``reason`` (how it was decided or why not), ``steps``
    (validated steps spent on it) and ``strength`` (proved only when the lemmas it rests on are; undecided
    pieces: not decided, because of the budget or limit that stopped them)."""

    lower: Fraction
    upper: Fraction
    status: str
    fate: str | None = None
    sequence: list = field(default_factory=list)
    switch_times: list = field(default_factory=list)
    collapse_time: list | None = None
    reason: str = ""
    steps: int = 0
    blowup_time: list | None = None
    sequence_complete: bool = True
    strength: Strength | None = None
    because: str | None = None

    def width(self) -> float:
        return float(self.upper - self.lower)

    def as_dict(self) -> dict:
        strength = self.strength or not_decided(self.because or self.reason or None)
        return {"lower": _dec(self.lower), "upper": _dec(self.upper), "status": self.status, "fate": self.fate,
                "sequence": list(self.sequence), "switch_times": [list(t) for t in self.switch_times],
                "collapse_time": self.collapse_time, "blowup_time": self.blowup_time,
                "sequence_complete": self.sequence_complete, "width": self.width(), "reason": self.reason,
                "steps": self.steps, "strength": strength.as_dict()}


def _undecided(lo, hi, reason: str, because: str, steps: int = 0) -> Piece:
    return Piece(lo, hi, UNDECIDED, reason=reason, steps=steps, because=because)


class RegimeMap:
    """The result of :func:`proved_regime_map`. ``as_dict()`` keys: optimizer, depth, z, rho (the exact inputs,
    decimal strings), inputs, alpha_range ([A, B] decimal strings), regime_map (the pieces, in α order: see
    :class:`Piece`), proved_width, undecided_width, steps, seconds, method, rests_on, stopped (the budget that
    ran out, or None), strength (the weakest of the pieces')."""

    KEYS = Keys("thresholds.regime_map", "optimizer", "depth", "z", "rho", "alpha_range", "proved_width",
                "undecided_width", "steps", "seconds", "method", "rests_on", "stopped", inputs=INPUTS_KEYS,
                strength=STRENGTH_KEYS,
                regime_map=ListOf(Keys("thresholds.piece", "lower", "upper", "status", "fate", "sequence",
                                       "switch_times", "collapse_time", "blowup_time", "sequence_complete",
                                       "width", "reason", "steps", strength=STRENGTH_KEYS)))

    def __init__(self, values: dict, pieces: list[Piece]):
        self.values = values
        self.pieces = pieces

    def __getitem__(self, key):
        return self.as_dict()[key]

    def as_dict(self) -> dict:
        out = dict(self.values)
        out["regime_map"] = [p.as_dict() for p in self.pieces]
        out["proved_width"] = sum(p.width() for p in self.pieces if p.status == PROVED)
        out["undecided_width"] = sum(p.width() for p in self.pieces if p.status != PROVED)
        out["steps"] = sum(p.steps for p in self.pieces)
        strengths = [p.strength or not_decided(p.because or p.reason or None) for p in self.pieces]
        out["strength"] = Strength.weakest(strengths).as_dict() if strengths else not_decided().as_dict()
        return out


#: a proved map's limits when none are given: validated steps in all and per piece, pieces tried, no clock (a map
#: then does not depend on the load of the machine)
MAP_BUDGET = Budget(max_steps=200_000, piece_steps=20_000, max_pieces=400, max_seconds=math.inf)


# ---------------------------------------------------------------- the compiled forms (ball arithmetic)
def _arb(args, exprs):
    """forms.arb_function with the arguments renamed to plain identifiers (``||z||_2`` is not one)."""
    from theorycheck.symbolic import forms as C

    plain = [sp.Symbol(f"_x{i}", **a.assumptions0) for i, a in enumerate(args)]
    rename = dict(zip(args, plain))
    return C.arb_function(plain, [sp.sympify(e).xreplace(rename) for e in exprs])


def _exact_ball(q: Fraction):
    from theorycheck.arith.exact import Exact

    return Exact(q).ball()


class L2Forms:
    """C4's reduced ODE and the forms the map evaluates, compiled for ball arithmetic, for one exact z, ρ
    (rationals: the balls contain them exactly)."""

    def __init__(self, z: tuple, rho: Fraction):
        from theorycheck.symbolic import closed_forms as cf
        from theorycheck.symbolic import forms as C
        from theorycheck.symbolic import model as sy
        from theorycheck.symbolic import systems as S

        d = len(z)
        t, x, p, f = S.reduced_l2_system(d)
        self.system = C.arb_system(f"reduced-l2-{d}", t, x, p, f)
        args, N, _theta = S.reduced_l2_norm(d)
        self.N = C.arb_function(args, [N])
        # dN/dτ along the flow: ∂N/∂τ + ∂N/∂I · dI/dτ (C4's reduced rate)
        rate = cf.l2_reduced_rate().subs(cf.N, N)
        dN = sp.diff(N, sy.tau) + sp.diff(N, cf.I) * rate
        self.dN = C.arb_function(args, [dN])
        # d²N/dτ² along the flow: the mean-value form of dN/dτ over a step from its value at the step's start
        self.ddN = C.arb_function(args, [sp.diff(dN, sy.tau) + sp.diff(dN, cf.I) * rate])
        # ∂N/∂I and ∂N/∂α: the mean-value form of N on a Lohner set c + A r keeps I and α correlated
        self.gradN = C.arb_function(args, [sp.diff(N, cf.I), sp.diff(N, cf.alpha)])
        self.N0 = _arb((cf.alpha, cf.z_norm), [cf.initial_norm()])
        self.level = _arb((cf.z_j, cf.z_k, sy.rho), [cf.l2_switch_level()])
        self.collapse_level = _arb((cf.z_min, sy.rho), [cf.l2_collapse_certificate()])
        self.growth_level = _arb((cf.z_1st, sy.rho), [cf.l2_no_collapse_certificate()])
        c, n0 = sp.Symbol("c", positive=True), sp.Symbol("N0", positive=True)
        self.zero_time = _arb((c, n0, sy.rho), [cf.l2_collapse_time_bound().subs({cf.z_min: c, cf.N: n0})])
        self.zq, self.rhoq = tuple(Fraction(v) for v in z), Fraction(rho)
        self.z = [float(v) for v in self.zq]  # heuristics only (cuts, messages)
        self.rho = float(self.rhoq)
        self.values = sorted(set(self.zq))
        #: cell i (0-based, values[i]) -> the 1-based index j† takes there (the smallest index among ties)
        self.index_of_cell = [self.zq.index(v) + 1 for v in self.values]

    def critical_values(self) -> list[Fraction]:
        """v with N0 = ρ v where the answer may change: z_min, z_max and v_i + v_{i+1} (the switch levels)."""
        v = self.values
        return [v[0], v[-1]] + [a + b for a, b in zip(v, v[1:])]

    def balls(self):
        """(z, ρ, switch levels) as balls of the exact inputs at the current precision."""
        zb = [_exact_ball(v) for v in self.zq]
        rb = _exact_ball(self.rhoq)
        levels = [self.level(_exact_ball(a), _exact_ball(b), rb)[0] for a, b in zip(self.values, self.values[1:])]
        return zb, rb, levels

    def cells(self, x, levels) -> list[int]:
        """The cells (0-based) a ball of N̄ meets."""
        lo = 0
        while lo < len(levels) and x > levels[lo]:
            lo += 1
        hi = lo
        while hi < len(levels) and not (x < levels[hi]):
            hi += 1
        return list(range(lo, hi + 1))


@lru_cache(maxsize=16)
def _l2_forms(z: tuple, rho: Fraction) -> L2Forms:
    return L2Forms(z, rho)


def l2_forms(z, rho) -> L2Forms:
    """The compiled forms of one example (z, ρ read exactly by :mod:`theorycheck.arith.exact`: a float is its binary
    value), cached."""
    from theorycheck.arith.exact import exact, exact_vector

    zs = exact_vector(z, "z") if not isinstance(z, (int, float, Fraction)) else (exact(z, "z"),)
    return _l2_forms(tuple(e.value for e in zs), exact(rho, "rho").value)


def _meet(a, b):
    """A ball containing the intersection of two balls that both contain the same set (python-flint's
    ``intersection`` is far from tight); the narrower one when they do not overlap (rounding)."""
    from theorycheck.arith.balls import interval

    lo, hi = max(a.lower(), b.lower()), min(a.upper(), b.upper())
    if not lo <= hi:
        return a if a.rad() < b.rad() else b
    return interval(lo, hi)


def _norm_on_set(F: L2Forms, t1, step, zb, a_end, rb):
    """N at the step's end: the narrower of N(box) and the mean-value form N(c) + ∇N(box)·A·R on the
    Lohner set {c + A r : r ∈ R} of (I, α) (the box loses how I depends on α)."""
    box = F.N(t1, step.end[0], *zb, a_end, rb)[0]
    S = step.set_end
    if len(S.c) != 2:
        return box
    n_c = F.N(t1, S.c[0], *zb, S.c[1], rb)[0]
    g = F.gradN(t1, step.end[0], *zb, a_end, rb)
    mv = n_c + sum(((g[0] * S.A[0, j] + g[1] * S.A[1, j]) * S.R[j] for j in range(2)), 0 * n_c)
    return mv if mv.rad() < box.rad() else box


def _gap_on_set(F: L2Forms, t1, step, zb, a_end, rb, n_end):
    """N − N̄ = N − τ/I at the step's end, by the mean-value form on the Lohner set of (I, α) (for every α of the
    piece the gap has its sign even when the enclosures of N and of N̄ overlap), or from the two enclosures."""
    box = n_end - t1 / step.end[0]
    S = step.set_end
    if len(S.c) != 2:
        return box
    gap_c = F.N(t1, S.c[0], *zb, S.c[1], rb)[0] - t1 / S.c[0]
    g = F.gradN(t1, step.end[0], *zb, a_end, rb)
    gI = g[0] + t1 / (step.end[0] * step.end[0])  # ∂(N − τ/I)/∂I
    mv = gap_c + sum(((gI * S.A[0, j] + g[1] * S.A[1, j]) * S.R[j] for j in range(2)), 0 * gap_c)
    return _meet(mv, box)


@lru_cache(maxsize=64)
def _resting(rests: tuple, depth: int, d: int) -> Strength:
    """The strength of a piece whose computation is proved, resting on ``rests`` at (depth, d)."""
    from theorycheck.proved.bracket import lemma_strengths, resting_strength

    return resting_strength(lemma_strengths(rests, depth=depth, dim=d))


def _proved(p: Piece, rests: tuple, depth: int, d: int) -> Piece:
    """``p`` (computed as proved) with its strength; a piece whose lemmas are not all proved for (depth, d) is
    not called proved: it is undecided, and says what it would have been and what it rests on."""
    s = _resting(rests, depth, d)
    if s.proved:
        p.strength = s
        return p
    what = f"{p.fate}, j† sequence {p.sequence}" if p.fate else f"j† sequence {p.sequence}"
    return Piece(p.lower, p.upper, UNDECIDED, reason=f"computed {what}, but it {s.because}", steps=p.steps,
                 strength=s, because=s.because)


class _PieceRun:
    """One piece's validated run (:func:`decide_piece`): the state its stop test carries from step to step —
    the cell of N̄ (``cur``), a crossing in progress (``pending``: origin cell, start time, direction), the
    growth and collapse certificates, the enclosures at the last step end, the known relation of N and N̄ there
    (``rel``: "eq" at τ = 0, "ge", "le" or None), and the j† sequence with its switch times so far."""

    def __init__(self, F: L2Forms, lo: Fraction, hi: Fraction, clock: float, tighten: float, ends: list | None,
                 after_growth: int | None = None):
        from flint import arb

        from theorycheck.arith.balls import interval

        self.F, self.lo, self.hi, self.clock, self.tighten, self.ends = F, lo, hi, clock, tighten, ends
        self.zb, self.rb, self.levels = F.balls()
        self.alpha = interval(_exact_ball(lo), _exact_ball(hi))
        self.N0 = F.N0(self.alpha, sum((v * v for v in self.zb), arb(0)).sqrt())[0]
        self.zmin_b, self.zmax_b = (self.zb[F.zq.index(F.values[k])] for k in (0, -1))
        self.low = F.collapse_level(self.zmin_b, self.rb)[0]
        self.high = F.growth_level(self.zmax_b, self.rb)[0]
        self.top = len(F.values) - 1
        self.cur, self.pending, self.fail, self.col, self.rel = None, None, None, None, "eq"
        self.hint = None
        self.after_growth = after_growth
        self.cert_t = arb(0) if self.N0 >= self.high else None
        self.I_prev, self.N_prev, self.Nbar_prev = arb(0), self.N0, self.N0
        self.seq: list = []
        self.times: list = []

    # -- text of enclosures, in z's units (the problem may be on z/s: τ/s, N·s)
    def tau_text(self, x) -> list:
        return [_scaled(_down(x), self.clock, False), _scaled(_up(x), self.clock, True)]

    def norm_text(self, x) -> list:
        return [_scaled(_down(x), 1 / self.clock, False), _scaled(_up(x), 1 / self.clock, True)]

    def indices(self) -> list[int]:
        return [self.F.index_of_cell[c] for c in self.seq]

    def at_start(self) -> Piece | None:
        """The piece decided at τ = 0 (or undecided: N0 at a level), else None (integrate)."""
        from flint import arb

        cells0 = self.F.cells(self.N0, self.levels)
        if len(cells0) != 1:
            return _undecided(self.lo, self.hi, "N0 = α√2‖z‖ meets a switch level: j†(0+) is not certain",
                              "j†(0+) is not certain (N0 at a switch level)")
        self.cur = cells0[0]
        self.seq = [self.cur]
        if self.N0 < self.low and self.tighten >= 1 / 16:  # collapse from the start (C5; N = N̄ at τ = 0)
            return self.collapse_piece(arb(0), self.N0, "N0 < ρ z_min: collapse from the start (C5); the rest of j† "
                                                         "and the collapse time from the lock-in lemma")
        if self.N0 >= self.high and self.cur == self.top:
            return Piece(self.lo, self.hi, PROVED, GROWTH, self.indices(), [],
                         reason="N0 ≥ ρ(z_(d) + z_next): j† = argmax z from the start and locked in (C5, lock-in)")
        return None

    def collapse_piece(self, t1, n1, how: str) -> Piece:
        """The lemma from a state at t1 with norm n1 < ρ z_min, N ≤ N̄: the rest of j† (downwards to argmin z,
        then 0) and τ_c."""
        lo_t = t1 + self.F.zero_time(self.zmax_b, n1, self.rb)[0]
        hi_t = _up(t1 + self.F.zero_time(self.zmin_b, n1, self.rb)[0])
        for k in range(self.cur - 1, -1, -1):
            self.seq.append(k)
            self.times.append([_down(t1), hi_t])
        ct = [_down(lo_t), hi_t]
        return Piece(self.lo, self.hi, PROVED, COLLAPSE, self.indices() + [0], self.times + [ct], ct, how)

    def _enclose(self, step):
        """(N at t1, N̄ at t1, N over the step, N̄ over the step, dN/dτ over the step)."""
        from theorycheck.arith.balls import interval

        F, zb, rb, alpha = self.F, self.zb, self.rb, self.alpha
        t0, t1, I0, I1 = step.t0, step.t1, self.I_prev, step.end[0]
        a_end = step.end[1] if len(step.end) > 1 else alpha
        n_end = _norm_on_set(F, t1, step, zb, a_end, rb)
        nbar_end = t1 / I1
        self.gap = _gap_on_set(F, t1, step, zb, a_end, rb, n_end)
        # N over the step by the mean-value form from both ends (I is increasing: I ∈ [I(t0), I(t1)])
        h = interval(0, (t1 - t0).upper())
        T, I = interval(t0, t1), interval(I0.lower(), I1.upper())
        # dN/dτ over the step: over the box (τ and I independent: wide), and from its value at the start plus
        # [0, h]·d²N/dτ² (the box's width only multiplied by h); both hold, so their intersection does
        dn = _meet(F.dN(T, I, *zb, alpha, rb)[0], F.dN(t0, I0, *zb, alpha, rb)[0] + h * F.ddN(T, I, *zb, alpha, rb)[0])
        n_a, n_b = self.N_prev + h * dn, n_end - h * dn
        n_over = n_a if n_a.rad() < n_b.rad() else n_b
        # N̄ over the step: 1/N̄(τ) is a convex combination of 1/N̄(t0) and of the harmonic mean of N on [t0, τ], so
        # N̄(τ) ∈ hull(N̄(t0), N over the step); and by the mean-value form of dN̄/dτ = (N − N̄)/(N I)
        nbar_over = interval(min(self.Nbar_prev.lower(), n_over.lower()), max(self.Nbar_prev.upper(), n_over.upper()))
        if t0 > 0:
            mv = self.Nbar_prev + h * (n_over - nbar_over) / (n_over * interval(I0.lower(), I1.upper()))
            if mv.rad() < nbar_over.rad():
                nbar_over = mv
        self.N_prev, self.Nbar_prev = n_end, nbar_end
        self._hint(F.dN(t1, I1, *zb, alpha, rb)[0], F.ddN(T, I, *zb, alpha, rb)[0], n_end, nbar_end)
        return n_end, nbar_end, n_over, nbar_over, dn

    def _hint(self, dn_end, ddn, n_end, nbar_end) -> None:
        """A step cap for the next step while N̄ and N are both near a level (within 10 %: the sign of N − λ may
        not be certain, so that of dN/dτ may be needed): h·|d²N/dτ²| at most half of |dN/dτ|, so that the
        mean-value form keeps the sign certain (a hint only: it never changes what is enclosed). Not after the growth
        certificate: from then on every crossing is upwards (lock-in lemma)."""
        x, n = float(nbar_end.mid()), float(n_end.mid())
        near = self.cert_t is None and any(abs(x - lev) < 0.1 * lev and abs(n - lev) < 0.1 * lev for lev in (float(v.mid()) for v in self.levels))
        dd, lower = float(abs(ddn).upper()), float(abs(dn_end).lower())  # lower 0: no sign to keep
        self.hint = max(HINT_FLOOR, 0.5 * lower / dd) if near and dd > 0 and lower > 0 else None

    def h_max(self, _t: float) -> float | None:
        """The integrator's step cap (:meth:`_hint`)."""
        return self.hint

    def _direction(self, dn, n_end, nbar_end) -> int:
        """+1 (−1) when N − N̄ > 0 (< 0) holds on the whole step (module docstring), else 0; updates ``rel``."""
        d = 1 if dn > 0 and self.rel in ("eq", "ge") else -1 if dn < 0 and self.rel in ("eq", "le") else 0
        self.rel = "ge" if d == 1 or self.gap > 0 else "le" if d == -1 or self.gap < 0 else None
        return d

    def _signs(self, met: list, n_over, nbar_over, direction: int, step) -> dict | None:
        """The direction in which N̄ can cross each level it may reach in the step (None: one is not certain)."""
        from theorycheck.arith.balls import interval

        grown = self.cert_t is not None  # N̄ is nondecreasing from the growth certificate on (lemma)
        signs = {}
        for i in range(min(met), max(met)):
            lev = self.levels[i]
            sgn = 1 if grown or direction == 1 else -1 if direction == -1 else (
                1 if n_over > lev else -1 if n_over < lev else 0)
            if sgn == 0:
                self.fail = ("N̄ may reach a switch level while N − N̄ has no certain sign there (a tangency of N̄ with "
                             f"the level is not excluded): τ ∈ {self.tau_text(interval(step.t0, step.t1))}, N ∈ "
                             f"{self.norm_text(n_over)}, N̄ ∈ {self.norm_text(nbar_over)}, level {self.norm_text(lev)}")
                return None
            signs[i] = sgn
        return signs

    def _advance(self, end: list, signs: dict, t0, t1) -> str | None:
        """Move j† by the crossings of the step: "fail", "pending" (a crossing not finished) or None."""
        origin = self.cur if self.pending is None else self.pending[0]
        if self.pending is not None and any(v != self.pending[2] for v in signs.values()):
            self.fail = "the direction of N̄ changed during a crossing that spans several steps"
            return "fail"
        if len(end) > 1:
            if len(end) > 2 or origin not in end:
                self.fail = "N̄'s enclosure spans more than one switch level"
                return "fail"
            if self.pending is None:
                direction = 1 if max(end) > origin else -1
                if any(v != direction for v in signs.values()):
                    self.fail = "N̄ meets a level against the direction of its crossing"
                    return "fail"
                self.pending = (origin, t0, direction)
            return "pending"
        e = end[0]
        if e != origin:
            step_dir = 1 if e > origin else -1
            if any(signs.get(i, step_dir) != step_dir for i in range(min(origin, e), max(origin, e))):
                self.fail = "N̄ crossed a level against the direction of its crossing"
                return "fail"
            start = self.pending[1] if self.pending is not None else t0
            for k in (range(origin + 1, e + 1) if e > origin else range(origin - 1, e - 1, -1)):
                self.seq.append(k)
                self.times.append([_down(start), _up(t1)])
        self.cur, self.pending = e, None
        return None

    def stop(self, step) -> str | None:
        """The integrator's stop test: "locked" (growth, j† = argmax z), "collapse", "fail" or None (go on)."""
        n_end, nbar_end, n_over, nbar_over, dn = self._enclose(step)
        if not n_end.rad() < (WIDEST if self.cert_t is None and self.col is None else 2.0) * abs(n_end.mid()):
            self.fail = (f"the enclosure of N grew too wide by τ ≈ {float(step.t1.mid()) / self.clock:.4g} (split the "
                         "α interval)")
            return "fail"
        self.I_prev = step.end[0]
        if self.ends is not None:
            self.ends.append((step.t1, step.end[0]))
        direction = self._direction(dn, n_end, nbar_end)
        signs = self._signs(self.F.cells(nbar_over, self.levels), n_over, nbar_over, direction, step)
        if signs is None:
            return "fail"
        moved = self._advance(self.F.cells(nbar_end, self.levels), signs, step.t0, step.t1)
        if moved is not None:
            return "fail" if moved == "fail" else None
        if self.cert_t is not None and self.after_growth is not None:
            self.after_growth -= 1
            if self.after_growth < 0:  # enough: the lemma gives the rest of j† (lower ends of its switch times)
                return "grown"
        if n_end >= self.high and n_end >= nbar_end:
            if self.cert_t is None:
                self.cert_t = step.t1
            if self.cur == self.top:
                return "locked"
        elif n_end < self.low and n_end <= nbar_end:
            # collapse proved (lemma); go on while it is cheap, to tighten the collapse time
            self.col = (step.t1, n_end, self.cur, len(self.seq), len(self.times))
            if n_end < self.low * self.tighten:
                return "collapse"
        return None

    def result(self, fp) -> Piece:
        """The piece from the run's end (``fp``: the integrator's Flowpipe)."""
        lo, hi, steps = self.lo, self.hi, fp.n_steps
        if fp.event == "locked":
            return Piece(lo, hi, PROVED, GROWTH, self.indices(), self.times, None,
                         f"growth: N ≥ ρ z_max and N ≥ N̄ from τ ∈ {self.tau_text(self.cert_t)}; j† = argmax z locked "
                         "in (lock-in lemma)", steps)
        if self.col is not None:  # collapse proved (the run may have gone on, and stopped for any reason)
            t1, n1, self.cur, ns, nt = self.col
            del self.seq[ns:], self.times[nt:]  # what happened after that state is the lemma's business
            p = self.collapse_piece(t1, n1, f"collapse: N < ρ z_min and N ≤ N̄ at τ ∈ {self.tau_text(t1)}; the rest "
                                            "of j† and the collapse time from the lock-in lemma")
            p.steps = steps
            return p
        if self.cert_t is not None:  # growth proved; the budget (or an enclosure) ended before the lock
            start = self.pending[1] if self.pending is not None else fp.t_end
            for k in range(self.cur + 1, self.top + 1):  # the lemma: upwards through every larger value
                self.seq.append(k)
                self.times.append([_down(start), None])
            return Piece(lo, hi, PROVED, GROWTH, self.indices(), self.times, None,
                         f"growth: N ≥ max(ρ z_max, N̄) from τ ∈ {self.tau_text(self.cert_t)}; the later switches from "
                         "the lock-in lemma (only their lower ends are enclosed)", steps)
        if self.fail:
            return _undecided(lo, hi, self.fail, self.fail.split(":")[0].split(" (")[0], steps)
        where = f"by τ = {float(fp.t_end.mid()) / self.clock:.6g}"
        return _undecided(lo, hi, f"no certificate {where} ({fp.status}: {fp.message})",
                          f"{fp.status} ({fp.message})", steps)


def decide_piece(F: L2Forms, lo: Fraction, hi: Fraction, *, max_steps: int = 20_000, max_seconds: float | None = None,
                 order: int = 10, prec: int = 96, tol: float = 1e-9, tighten: float = 1 / 16, ends: list | None = None,
                 clock: float = 1.0, after_growth: int | None = None) -> Piece:
    """Prove fate and sequence for every α in [lo, hi], or say why not (status undecided), within ``max_steps``
    validated steps (and ``max_seconds`` when given). After a collapse certificate the run goes on until
    N < ``tighten``·ρ z_min, to tighten the collapse time (a point α: a trajectory); a map (``tighten`` ≥ 1/16)
    takes N0 < ρ z_min as decided at τ = 0. ``ends``: a list that receives (τ, I) at every step end (balls), for
    refining the switch enclosures. ``clock``: the power of two s when F is the problem on z/s: the times and
    norms in the reasons are given in z's units (τ/s, N·s), as the piece's switch times are after
    :func:`rescale_times`. ``after_growth``: the steps spent after the growth certificate on enclosing the later
    switch times (None: until j† = argmax z; a map passes a few: the lemma gives the rest, with the lower ends of
    their times). The piece's strength is set by the caller (:func:`proved_regime_map`)."""
    from theorycheck.arith.balls import arb_context
    from theorycheck.proved.validated import integrate

    with arb_context(prec=prec):
        run = _PieceRun(F, Fraction(lo), Fraction(hi), clock, tighten, ends, after_growth)
        early = run.at_start()
        if early is not None:
            return early
        budget = Budget(max_steps=int(max_steps), max_seconds=math.inf if max_seconds is None else max_seconds)
        try:
            fp = integrate(F.system, [0], params=[*run.zb, run.alpha, run.rb], t_end=None, order=order, prec=prec,
                           tol=tol, h_max=run.h_max, budget=budget, stop=run.stop, record=False,
                           slack=False)  # no certificate re-evaluates these steps: no slack for it
        except (ValueError, ZeroDivisionError, ArithmeticError) as exc:  # the enclosure lost its meaning
            return _undecided(lo, hi, f"validated integration failed ({exc})", "validated integration failed")
        return run.result(fp)


def rescale_times(p: Piece, s: float) -> None:
    """Times of a piece computed on z/s back to z's clock (τ_z = τ_{z/s} / s)."""
    if s == 1.0:
        return
    p.switch_times = [[_scaled(a, s, False), _scaled(b, s, True)] for a, b in p.switch_times]
    if p.collapse_time:
        p.collapse_time = [_scaled(p.collapse_time[0], s, False), _scaled(p.collapse_time[1], s, True)]


def _merge(pieces: list[Piece]) -> list[Piece]:
    """Join neighbouring proved pieces with the same fate and sequence (switch enclosures: hulls);
    undecided pieces are kept apart, never merged."""
    out: list[Piece] = []
    for p in pieces:
        q = out[-1] if out else None
        if (q is not None and p.status == PROVED and q.status == PROVED and p.fate == q.fate
                and p.sequence == q.sequence and p.sequence_complete == q.sequence_complete
                and q.upper == p.lower and q.strength == p.strength):
            q.upper = p.upper
            q.steps += p.steps
            q.switch_times = [_hull_text(a, b) for a, b in zip(q.switch_times, p.switch_times)]
            if q.collapse_time and p.collapse_time:
                q.collapse_time = _hull_text(q.collapse_time, p.collapse_time)
            if q.blowup_time and p.blowup_time:
                q.blowup_time = _hull_text(q.blowup_time, p.blowup_time)
            if p.reason != q.reason:
                q.reason = q.reason.split(";")[0] + "; (joined with neighbouring proved pieces)"
            continue
        out.append(p)  # two undecided pieces stay two pieces (each with its width)
    return out


def _hull_text(a, b) -> list:
    """The hull of two enclosures [lo, hi] (decimal strings; hi None: only a lower bound), exactly."""
    lo = min(a[0], b[0], key=Fraction)
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1], key=Fraction)
    return [lo, hi]


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
    F = _l2_forms(tuple(v / s for v in zq), rhoq)
    d = len(zq)
    crit = _critical_alphas(2, zq, rhoq, [v * s for v in F.critical_values()])  # in z's units

    def decide(a, b, steps):
        p = decide_piece(F, a, b, max_steps=steps, order=order, prec=prec, clock=float(s), after_growth=AFTER_GROWTH,
                         tighten=MAP_TIGHTEN)
        rescale_times(p, float(s))
        return _proved(p, RESTS_L2, 2, d) if p.status == PROVED else p
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
            return _undecided(a, b, r["reason"], r["reason"].split(" (")[0][:120], r["steps"])
        p = Piece(a, b, PROVED, r["fate"], r["sequence"], r["switch_times"], r["collapse_time"], r["reason"],
                  r["steps"], r["blowup_time"], r["sequence_complete"])
        return _proved(p, ("LOCK",) if r["fate"] == GROWTH else rests, int(L), len(zq))
    method = ("validated Taylor integration (Lohner's method) of the balanced ℓ2-SAM flow in ball arithmetic with "
              "interval α (u = α w, s = α^(L−2) τ: one interval ρ/α), switches where the order of u_j changes "
              "transversally, the lock-in lemma (blow-up order) and the even-L collapse lemma")
    return _Plan(decide, crit, None, method, rests)


def _critical_alphas(L: int, zq: tuple, rhoq: Fraction, values: list) -> list[float]:
    """α at which c = ρ/(α√L‖z‖₂) = 1/v for each v (floats: first cuts only), by the symbolic layer's zero-rate α
    (:func:`theorycheck.symbolic.depth.zero_rate_alpha`, compiled), on z / max z (degree 0 in z: no overflow)."""
    from theorycheck.symbolic import forms as C

    f = C.depth_zero_rate_alpha(int(L))
    top = max(zq)
    norm = math.sqrt(sum(float(v / top) ** 2 for v in zq))
    out = [float(f(float(v / top), norm, float(rhoq))) for v in values]
    return [x for x in out if math.isfinite(x) and x > 0]


def _float_alpha_c(zq: tuple, rhoq: Fraction) -> float | None:
    """The floating-point α_c (a heuristic: where the graded cuts go; no proof rests on it), or None."""
    from theorycheck.predict.thresholds import collapse_threshold

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
                      "rests_on": list(plan.rests), "stopped": stopped}, _merge(done))


def _gd_map(zq: tuple, lo: Fraction, hi: Fraction, depth: int, head: dict, t0: float) -> RegimeMap:
    """GD: j† = argmax z for every α (C6; ties: the smallest index)."""
    j = zq.index(max(zq)) + 1
    p = Piece(lo, hi, PROVED, GROWTH if max(zq) > 0 else None, [j], [],
              reason="GD: u_j = α e^{z_j τ} (L = 2) or GD's blow-up solution (L ≥ 3): the order of u_j is the "
                     "order of z_j for every τ > 0 (C6; the lock-in lemma at ρ = 0); uniform α")
    p = _proved(p, RESTS_GD, int(depth), len(zq))
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
            done.append(_undecided(a, b, "holds the floating-point α_c (a heuristic): no piece that holds α_c can "
                                   "be proved, and it is narrower than min_width: not tried", "min_width (holds α_c)"))
            continue
        stopped = _spent(budget, steps, tried, t0)
        if stopped:
            done.extend(_undecided(x, y, f"not tried: the budget {stopped} ran out", stopped)
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

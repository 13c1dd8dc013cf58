"""The proved regime map as it was before step budgets, exact inputs, the crossing direction from N − N̄ and
the graded cuts around α_c (theorycheck/proved/regime_map.py at commit dd7bf7c; only its imports of the decimal
helpers follow their new public names): the baseline that benchmarks/bench_regime_map.py runs in the same process.

Proved regime maps in α (ℓ2-SAM, L = 2, one example z > 0, uniform init; GD): a partition of
[A, B] into sub-intervals, each proved for EVERY α in it — its fate (collapse / growth) and the
exact sequence of j† — or listed as undecided with its width.

Method (THEORY.md C4/C5 and the lock-in lemma, proofs/minor_first/lockin.py): C4's reduced ODE dI/dτ = 1/N(τ, I)
is integrated in ball arithmetic with α an interval (proved/validated: the enclosure carries the whole
interval). j† is a function of N̄ = τ/I alone — the cell of N̄ between the switch levels
ρ(v_i + v_{i+1}) of consecutive distinct z values — so on each step:

- N̄'s enclosure inside one cell: j† is constant on the step for every α;
- N̄'s enclosure meeting a level: a switch may happen; it is counted once only while the sign of
  N − N̄ (the sign of dN̄/dτ) is certain over every step of the crossing, and it is done when N̄'s
  end enclosure is certainly beyond the level; its time is enclosed by the steps of the crossing;
- at a step end with N ≥ ρ z_max and N ≥ N̄ (growth, lock-in lemma) the rest of the sequence is
  determined — upwards through every larger distinct value — and the run continues only to enclose
  those switch times, until N̄ is beyond the last level; with N < ρ z_min and N ≤ N̄ (collapse) the
  rest is downwards to argmin z, then 0, within the lemma's collapse-time enclosure.

At τ = 0 N̄ = N0 = α√2‖z‖; a box whose N0 is certainly below ρ z_min or at/above ρ z_max needs no
integration. A box that cannot be decided (N0 or N̄ at a level, a crossing whose monotonicity is
not certain, α_c inside, a budget) is split; what remains undecided is listed, never merged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp

from theorycheck.arith.decimals import down as _down
from theorycheck.arith.decimals import exact_decimal as _dec
from theorycheck.arith.decimals import scaled as _scaled
from theorycheck.arith.decimals import up as _up
from theorycheck.errors import TheorycheckError
from theorycheck.status import Budget

__all__ = ["Piece", "RegimeMap", "regime_map", "parse_alpha_range"]

PROVED, UNDECIDED = "proved", "undecided"
COLLAPSE, GROWTH = "collapse", "growth"


def parse_alpha_range(text) -> tuple[Fraction, Fraction]:
    """'A:B' (decimals, 0 < A < B) → exact fractions."""
    try:
        a, b = (Fraction(s.strip()) for s in str(text).split(":"))
    except (ValueError, ZeroDivisionError):
        raise TheorycheckError(f"alpha range {text!r}: give A:B with decimal numbers 0 < A < B") from None
    if not 0 < a < b:
        raise TheorycheckError(f"alpha range {text!r}: give A:B with 0 < A < B")
    return a, b


def _short(x: Fraction, digits: int = 12) -> Fraction:
    """x rounded to ``digits`` significant decimal digits (a readable cut point)."""
    if x == 0:
        return x
    import math

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
    bound is known), ``collapse_time`` (an enclosure) and ``reason`` (how it was decided or why not)."""

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

    def width(self) -> float:
        return float(self.upper - self.lower)

    def as_dict(self) -> dict:
        return {"lower": _dec(self.lower), "upper": _dec(self.upper), "status": self.status, "fate": self.fate,
                "sequence": list(self.sequence), "switch_times": [list(t) for t in self.switch_times],
                "collapse_time": self.collapse_time, "blowup_time": self.blowup_time,
                "sequence_complete": self.sequence_complete, "width": self.width(), "reason": self.reason}


class RegimeMap:
    """The result of :func:`regime_map`. ``as_dict()`` keys: optimizer, depth, z, rho, alpha_range
    ([A, B] decimal strings), regime_map (the pieces, in α order: see :class:`Piece`),
    proved_width, undecided_width, seconds, method, rests_on, stopped (the budget that ran out, or
    None)."""

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
        return out


# ---------------------------------------------------------------- the compiled forms (ball arithmetic)
def _arb(args, exprs):
    """compile.arb_function with the arguments renamed to plain identifiers (``||z||_2`` is not one)."""
    from theorycheck.symbolic import forms as C

    plain = [sp.Symbol(f"_x{i}", **a.assumptions0) for i, a in enumerate(args)]
    rename = dict(zip(args, plain))
    return C.arb_function(plain, [sp.sympify(e).xreplace(rename) for e in exprs])


class _Forms:
    """C4's reduced ODE and the forms the map evaluates, compiled for ball arithmetic, for one z, ρ."""

    def __init__(self, z: np.ndarray, rho: float):
        from theorycheck.symbolic import closed_forms as cf
        from theorycheck.symbolic import forms as C
        from theorycheck.symbolic import model as sy
        from theorycheck.symbolic import theory_exprs as TE
        from theorycheck.symbolic import validated_fields as S

        d = z.size
        t, x, p, f = S.reduced_l2_system(d)
        self.system = C.arb_system(f"reduced-l2-{d}", t, x, p, f)
        args, N, _theta = S.reduced_l2_norm(d)
        self.N = C.arb_function(args, [N])
        # dN/dτ along the flow: ∂N/∂τ + ∂N/∂I · dI/dτ (C4's reduced rate)
        rate = TE.l2_reduced_rate().subs(cf.N, N)
        self.dN = C.arb_function(args, [sp.diff(N, sy.tau) + sp.diff(N, cf.I) * rate])
        # ∂N/∂I and ∂N/∂α: the mean-value form of N on a Lohner set c + A r keeps I and α correlated
        self.gradN = C.arb_function(args, [sp.diff(N, cf.I), sp.diff(N, cf.alpha)])
        self.N0 = _arb((cf.alpha, cf.z_norm), [TE.initial_norm()])
        self.level = _arb((cf.z_j, cf.z_k, sy.rho), [TE.l2_switch_level()])
        self.collapse_level = _arb((cf.z_min, sy.rho), [TE.l2_collapse_certificate()])
        self.growth_level = _arb((cf.z_1st, sy.rho), [TE.l2_no_collapse_certificate()])
        c, n0 = sp.Symbol("c", positive=True), sp.Symbol("N0", positive=True)
        self.zero_time = _arb((c, n0, sy.rho), [TE.l2_collapse_time_bound().subs({cf.z_min: c,
                                                                                           cf.N: n0})])
        self.z = [float(v) for v in z]
        self.rho = float(rho)
        vals = sorted(set(self.z))
        self.values = vals
        #: cell i (0-based, values[i]) -> the 1-based index j† takes there (the smallest index among ties)
        self.index_of_cell = [self.z.index(v) + 1 for v in vals]

    def critical_norms(self) -> list[float]:
        """ρ z_min, ρ z_max and the switch levels ρ(v_i + v_{i+1}) (floats: where N0 changes the answer)."""
        v = self.values
        return [self.rho * v[0], self.rho * v[-1]] + [self.rho * (a + b) for a, b in zip(v, v[1:])]

    def balls(self):
        from theorycheck.arith.balls import to_ball

        zb = [to_ball(v) for v in self.z]
        rb = to_ball(self.rho)
        levels = [self.level(to_ball(a), to_ball(b), rb)[0] for a, b in zip(self.values, self.values[1:])]
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
def _forms(z: tuple, rho: float) -> _Forms:
    return _Forms(np.asarray(z, float), rho)


def _norm_on_set(F: _Forms, t1, step, zb, a_end, rb):
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


def _decide(F: _Forms, lo: Fraction, hi: Fraction, max_seconds: float, order: int, prec: int, *,
            tighten: float = 1 / 16, ends: list | None = None, clock: float = 1.0) -> Piece:
    """Prove fate and sequence for every α in [lo, hi], or say why not (status undecided). After a collapse
    certificate the run goes on until N < ``tighten``·ρ z_min, to tighten the collapse time (a point
    α: a trajectory); a map (``tighten`` ≥ 1/16) takes N0 < ρ z_min as decided at τ = 0. ``ends``: a
    list that receives (τ, I) at every step end (balls), for refining the switch enclosures. ``clock``: the
    power of two s when F is the problem on z/s: the times and norms in the reasons are given in z's units
    (τ/s, N·s), as the piece's switch times are after :func:`_rescale_times`."""
    from flint import arb

    from theorycheck.arith.balls import arb_context, interval
    from theorycheck.proved.validated import integrate

    with arb_context(prec=prec):
        zb, rb, levels = F.balls()

        def tau_text(x) -> list:  # an enclosure of a time, in z's clock
            return [_scaled(_down(x), clock, False), _scaled(_up(x), clock, True)]

        def norm_text(x) -> list:  # an enclosure of a norm, in z's units
            return [_scaled(_down(x), 1 / clock, False), _scaled(_up(x), 1 / clock, True)]

        alpha = interval(arb(lo.numerator) / lo.denominator, arb(hi.numerator) / hi.denominator)
        znorm = sum((v * v for v in zb), arb(0)).sqrt()
        N0 = F.N0(alpha, znorm)[0]
        low = F.collapse_level(zb[F.z.index(F.values[0])], rb)[0]
        high = F.growth_level(zb[F.z.index(F.values[-1])], rb)[0]
        top = len(F.values) - 1
        cells0 = F.cells(N0, levels)
        if len(cells0) != 1:
            return Piece(lo, hi, UNDECIDED, reason="N0 = α√2‖z‖ meets a switch level: j†(0+) is not certain")
        cur = cells0[0]
        seq = [cur]
        times: list = []

        def after_growth(c: int, t_lo) -> None:  # the lemma: upwards through every larger value
            for k in range(c + 1, top + 1):
                seq.append(k)
                times.append([_down(t_lo), None])

        def after_collapse(c: int, t_lo, t_hi) -> None:  # the lemma: downwards to argmin z, then 0
            for k in range(c - 1, -1, -1):
                seq.append(k)
                times.append([_down(t_lo), t_hi])

        def indices() -> list[int]:
            return [F.index_of_cell[c] for c in seq]

        zmin_b, zmax_b = zb[F.z.index(F.values[0])], zb[F.z.index(F.values[-1])]

        def collapse_piece(t1, n1, how: str) -> Piece:
            """The lemma from a state at t1 with norm n1 < ρ z_min, N ≤ N̄: the rest of j† and τ_c."""
            lo_t = t1 + F.zero_time(zmax_b, n1, rb)[0]
            hi_t = _up(t1 + F.zero_time(zmin_b, n1, rb)[0])
            after_collapse(st["cur"], t1, hi_t)
            ct = [_down(lo_t), hi_t]
            return Piece(lo, hi, PROVED, COLLAPSE, indices() + [0], times + [ct], ct, how)

        # N0 ≥ ρ z_max: growth certified at τ = 0 (N = N̄ there), N̄ nondecreasing from the start (lemma)
        st = {"cur": cur, "pending": None, "fail": None, "cert_t": arb(0) if N0 >= high else None, "I_prev": arb(0),
              "N_prev": N0, "Nbar_prev": N0, "col": None}
        if N0 < low and tighten >= 1 / 16:  # collapse from the start (C5; N = N̄ at τ = 0)
            return collapse_piece(arb(0), N0, "N0 < ρ z_min: collapse from the start (C5); the rest of j† and the "
                                              "collapse time from the lock-in lemma")
        if N0 >= high and cur == top:
            return Piece(lo, hi, PROVED, GROWTH, indices(), [],
                         reason="N0 ≥ ρ(z_(d) + z_next): j† = argmax z from the start and locked in (C5, lock-in)")

        def stop(step):
            t0, t1 = step.t0, step.t1
            I0, I1 = st["I_prev"], step.end[0]
            a_end = step.end[1] if len(step.end) > 1 else alpha
            n_end = _norm_on_set(F, t1, step, zb, a_end, rb)
            nbar_end = t1 / I1
            # N over the step by the mean-value form from both ends (I is increasing: I ∈ [I(t0), I(t1)])
            h = t1 - t0
            dn = F.dN(interval(t0, t1), interval(I0.lower(), I1.upper()), *zb, alpha, rb)[0]
            n_a = st["N_prev"] + interval(0, h.upper()) * dn
            n_b = n_end - interval(0, h.upper()) * dn
            n_over = n_a if n_a.rad() < n_b.rad() else n_b
            # N̄ over the step: 1/N̄(τ) is a convex combination of 1/N̄(t0) and of the harmonic mean of N on
            # [t0, τ], so N̄(τ) ∈ hull(N̄(t0), N over the step)
            crude = interval(min(st["Nbar_prev"].lower(), n_over.lower()),
                             max(st["Nbar_prev"].upper(), n_over.upper()))
            nbar_over = crude
            if t0 > 0:  # and by the mean-value form of dN̄/dτ = (N − N̄)/(N I) over the step
                slope = (n_over - crude) / (n_over * interval(I0.lower(), I1.upper()))
                mv = st["Nbar_prev"] + interval(0, h.upper()) * slope
                if mv.rad() < crude.rad():
                    nbar_over = mv
            st["N_prev"], st["Nbar_prev"] = n_end, nbar_end
            if not n_end.rad() < (0.5 if st["cert_t"] is None and st["col"] is None else 2.0) * abs(n_end.mid()):
                st["fail"] = f"the enclosure of N grew too wide by τ ≈ {float(t1.mid()) / clock:.4g} (split the α interval)"
                return "fail"
            st["I_prev"] = I1
            if ends is not None:
                ends.append((t1, I1))
            met = F.cells(nbar_over, levels)
            end = F.cells(nbar_end, levels)
            c = st["cur"]
            grown = st["cert_t"] is not None  # N̄ is nondecreasing from the growth certificate on (lemma)
            # every level N̄ may reach in the step must be crossed transversally: at N̄ = λ, dN̄/dτ has the
            # sign of N − λ; a certain sign of N − λ over the step allows crossings in one direction only
            signs = {}
            for i in range(min(met), max(met)):
                sgn = 1 if (grown or n_over > levels[i]) else (-1 if n_over < levels[i] else 0)
                if sgn == 0:
                    st["fail"] = ("N̄ may reach a switch level while N − N̄ has no certain sign there (a tangency of "
                                  f"N̄ with the level is not excluded): τ ∈ {tau_text(interval(t0, t1))}, N ∈ "
                                  f"{norm_text(n_over)}, N̄ ∈ {norm_text(nbar_over)}, level {norm_text(levels[i])}")
                    return "fail"
                signs[i] = sgn
            origin = c if st["pending"] is None else st["pending"][0]
            if st["pending"] is not None and any(v != st["pending"][2] for v in signs.values()):
                # a crossing spread over several steps must keep one direction in every one of them
                st["fail"] = "the sign of N − λ changed during a crossing that spans several steps"
                return "fail"
            if len(end) == 1:
                e = end[0]
                if e != origin:
                    step_dir = 1 if e > origin else -1
                    for i in range(min(origin, e), max(origin, e)):
                        if signs.get(i, step_dir) != step_dir:
                            st["fail"] = "N̄ crossed a level against the sign of N − λ"
                            return "fail"
                    start = st["pending"][1] if st["pending"] is not None else t0
                    for k in (range(origin + 1, e + 1) if e > origin else range(origin - 1, e - 1, -1)):
                        seq.append(k)
                        times.append([_down(start), _up(t1)])
                st["cur"], st["pending"] = e, None
            else:
                if len(end) > 2 or origin not in end:
                    st["fail"] = "N̄'s enclosure spans more than one switch level"
                    return "fail"
                if st["pending"] is None:
                    other = end[0] if end[1] == origin else end[1]
                    direction = 1 if other > origin else -1
                    if any(v != direction for v in signs.values()):
                        st["fail"] = "N̄ meets a level against the sign of N − λ"
                        return "fail"
                    st["pending"] = (origin, t0, direction)
                return None
            c = st["cur"]
            if n_end >= high and n_end >= nbar_end:
                if st["cert_t"] is None:
                    st["cert_t"] = t1
                if c == top:
                    return "locked"
            elif n_end < low and n_end <= nbar_end:
                # collapse certified (lemma); go on while it is cheap, to tighten the collapse time
                st["col"] = (t1, n_end, c, len(seq), len(times))
                if n_end < low * tighten:
                    return "collapse"
            return None

        try:
            fp = integrate(F.system, [0], params=[*zb, alpha, rb], t_end=None, order=order, prec=prec, tol=1e-9,
                           budget=Budget(max_seconds=max_seconds, max_steps=20000), stop=stop, record=False,
                           slack=False)  # no certificate re-evaluates these steps: no slack for it
        except (ValueError, ZeroDivisionError, ArithmeticError) as exc:  # the enclosure lost its meaning
            return Piece(lo, hi, UNDECIDED, reason=f"validated integration failed ({exc})")
        if fp.event == "locked":
            return Piece(lo, hi, PROVED, GROWTH, indices(), times, None,
                         f"growth: N ≥ ρ z_max and N ≥ N̄ from τ ∈ {tau_text(st['cert_t'])}; j† = argmax z locked in "
                         "(lock-in lemma)")
        if st["col"] is not None:  # collapse certified (the run may have gone on, and stopped for any reason)
            t1, n1, st["cur"], ns, nt = st["col"]
            del seq[ns:], times[nt:]  # what happened after that state is the lemma's business
            return collapse_piece(t1, n1, f"collapse: N < ρ z_min and N ≤ N̄ at τ ∈ {tau_text(t1)}; the rest of j† and "
                                          "the collapse time from the lock-in lemma")
        if st["cert_t"] is not None:  # growth certified; the budget (or an enclosure) ended before the lock
            start = st["pending"][1] if st["pending"] is not None else fp.t_end
            after_growth(st["cur"], start)
            return Piece(lo, hi, PROVED, GROWTH, indices(), times, None,
                         f"growth: N ≥ max(ρ z_max, N̄) from τ ∈ {tau_text(st['cert_t'])}; the later switches from the "
                         "lock-in lemma (only their lower ends are enclosed)")
        why = st["fail"] or f"no certificate by τ = {float(fp.t_end.mid()) / clock:.6g} ({fp.status}: {fp.message})"
        return Piece(lo, hi, UNDECIDED, reason=why)


def _rescale_times(p: Piece, s: float) -> None:
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
                and q.upper == p.lower):
            q.upper = p.upper
            q.switch_times = [_hull_text(a, b) for a, b in zip(q.switch_times, p.switch_times)]
            if q.collapse_time and p.collapse_time:
                q.collapse_time = _hull_text(q.collapse_time, p.collapse_time)
            if q.blowup_time and p.blowup_time:
                q.blowup_time = _hull_text(q.blowup_time, p.blowup_time)
            if p.reason != q.reason:
                q.reason = q.reason.split(";")[0] + "; (joined with neighbouring proved pieces)"
            continue
        if q is not None and p.status != PROVED and q.status != PROVED:
            pass  # two undecided pieces stay two pieces (each with its width)
        out.append(p)
    return out


def _hull_text(a, b) -> list:
    def f(x):
        return None if x is None else float(x)

    lo = min(f(a[0]), f(b[0]))
    his = [f(a[1]), f(b[1])]
    hi = None if None in his else max(his)
    pick = lambda v, cands: next(c for c in cands if c is not None and float(c) == v)  # noqa: E731
    return [pick(lo, [a[0], b[0]]), None if hi is None else pick(hi, [a[1], b[1]])]


def regime_map(z, rho: float, alpha, *, optimizer: str = "sam-l2", depth: int = 2, max_seconds: float = 60.0,
               box_seconds: float = 10.0, min_width: float = 1e-6, order: int = 10, prec: int = 96,
               max_pieces: int = 400) -> RegimeMap:
    """The proved regime map of [A, B] = ``alpha`` ("A:B" or a pair) for one example ``z`` (see the module
    docstring). ℓ2-SAM, L = 2 (z > 0): validated integration of C4's reduced ODE with interval α, each
    piece proved or undecided; ℓ2-SAM at L ≥ 3 (z > 0): the balanced flow with interval α
    (:mod:`theorycheck.proved.path`); GD (any depth): j† = argmax z for every α (C6, the static index). Budgets:
    ``max_seconds`` in all, ``box_seconds`` per sub-interval, ``max_pieces`` attempts; pieces narrower than
    ``min_width`` (relative) are not split further."""
    from theorycheck.setting import Setting

    lo, hi = parse_alpha_range(alpha) if isinstance(alpha, str) else (Fraction(alpha[0]), Fraction(alpha[1]))
    if not 0 < lo < hi:
        raise TheorycheckError("alpha range: give 0 < A < B")
    z = np.asarray(z, float).reshape(-1)
    Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho, alpha=float(lo))  # validates
    t0 = time.perf_counter()
    head = {"optimizer": optimizer, "depth": depth, "z": z.tolist(), "rho": float(rho),
            "alpha_range": [_dec(lo), _dec(hi)]}
    if optimizer == "gd":
        j = int(np.argmax(z)) + 1
        p = Piece(lo, hi, PROVED, GROWTH if z.max() > 0 else None, [j], [],
                  reason="GD: u_j = α e^{z_j τ} (L = 2) or GD's blow-up solution (L ≥ 3): the order of u_j is the "
                         "order of z_j for every τ > 0 (C6); uniform α")
        return RegimeMap({**head, "seconds": time.perf_counter() - t0, "method": "closed form (C6)",
                          "rests_on": ["C6"], "stopped": None}, [p])
    if optimizer != "sam-l2" or depth < 2:
        raise TheorycheckError("the proved regime map is implemented for ℓ2-SAM at depth ≥ 2 and for GD "
                               "(optimizer 'sam-l2' with depth ≥ 2, or 'gd')")
    if np.any(z <= 0):
        raise TheorycheckError("the proved regime map of ℓ2-SAM needs z > 0")
    if not rho > 0:
        raise TheorycheckError("ρ = 0 is GD: use optimizer 'gd'")
    # z → z/s (s a power of two: exact) leaves the fate and the j† sequence unchanged and scales every time
    # by s (dθ/dτ = z(1 − ρz/N) with N ∝ z): the work is done on z/s of order 1, the times scaled back
    s_pow = 2.0 ** int(np.frexp(float(np.max(z)))[1])
    import heapq

    if depth >= 3:
        from theorycheck.proved.path import decide_path, depth_forms

        F = depth_forms(int(depth), tuple(float(v) / s_pow for v in z), float(rho))
        # first cuts (heuristic): where r_j(0) = c z_j = 1, c = ρ/(α√L‖z‖) (an initial rate changes sign)
        crit = [float(rho) * (v / float(np.max(z))) / (np.sqrt(depth) * np.linalg.norm(z / np.max(z)))
                for v in sorted(set(z.tolist()))]

        def decide(a, b, seconds):
            r = decide_path(F, a, b, max_seconds=seconds, tighten=1e-4, after_steps=30, tol=1e-9, clock=s_pow)
            if r["status"] != PROVED:
                return Piece(a, b, UNDECIDED, reason=r["reason"])
            return Piece(a, b, PROVED, r["fate"], r["sequence"], r["switch_times"], r["collapse_time"], r["reason"],
                         r["steps"], r["blowup_time"], r["sequence_complete"])
        method = ("validated Taylor integration (Lohner's method) of the balanced ℓ2-SAM flow in ball arithmetic with "
                  "interval α (u = α w, s = α^(L−2) τ: one interval ρ/α), switches where the order of u_j changes "
                  "transversally, the lock-in lemma (blow-up order) and the even-L collapse lemma")
        rests = ["LOCK", "P4"] if depth % 2 == 0 else ["LOCK"]
    else:
        F = _forms(tuple(float(v) / s_pow for v in z), float(rho))
        s_z = float(np.max(z))  # the critical α are homogeneous of degree 0 in z: on z/max z, nothing overflows
        crit = [float(v) / s_z / (np.sqrt(2) * np.linalg.norm(z / s_z)) for v in F.critical_norms()]

        def decide(a, b, seconds):
            p = _decide(F, a, b, seconds, order, prec, clock=s_pow)
            _rescale_times(p, s_pow)
            return p
        method = ("validated Taylor integration of C4's reduced ODE in ball arithmetic with interval α "
                  "(proved/validated), N̄'s cells between the switch levels, the lock-in lemma")
        rests = ["C4", "C5", "LOCK"]

    # first cuts (a heuristic, not part of any proof): a sliver of relative width 2e-9 around each α where
    # N0 = α√2‖z‖ meets a certificate or switch level (there j†(0+) or the fate changes), so that the pieces
    # between them can be decided whole
    crit = [x for x in crit if np.isfinite(x) and x > 0]
    cuts = sorted({_short(Fraction(x * (1 + e))) for x in crit for e in (-1e-9, 1e-9)} | {lo, hi})
    cuts = [c for c in cuts if lo <= c <= hi]
    queue = [(-(b - a), a, b) for a, b in zip(cuts, cuts[1:]) if b > a]  # widest first
    heapq.heapify(queue)
    done: list[Piece] = []
    stopped = None
    tried = 0
    while queue:
        left = max_seconds - (time.perf_counter() - t0)
        if left <= 0:
            stopped = f"max_seconds = {max_seconds:g} s"
            done.extend(Piece(x, y, UNDECIDED, reason="not tried: the time budget ran out") for _, x, y in queue)
            break
        _, a, b = heapq.heappop(queue)
        tried += 1
        if tried > max_pieces:
            stopped = f"max_pieces = {max_pieces}"
            done.extend(Piece(x, y, UNDECIDED, reason="not tried: the piece budget ran out")
                        for _, x, y in [(0, a, b)] + queue)
            break
        p = decide(a, b, min(box_seconds, left))
        if p.status == PROVED or (b - a) / max(abs(b), 1) <= min_width:
            done.append(p)
            continue
        m = _split(a, b)
        heapq.heappush(queue, (-(m - a), a, m))
        heapq.heappush(queue, (-(b - m), m, b))
    done.sort(key=lambda p: p.lower)
    pieces = _merge(done)
    return RegimeMap({**head, "seconds": time.perf_counter() - t0, "method": method, "rests_on": rests,
                      "stopped": stopped}, pieces)

"""One piece of a proved regime map decided: the validated run of C4's reduced ODE with α an interval, and
the stop test that follows N̄ from cell to cell of the switch levels until a growth or collapse certificate
(:func:`decide_piece`; the method is described in :mod:`theorycheck.proofs.minor_first.proved.regime_map`)."""


from __future__ import annotations

import math
from fractions import Fraction

from theorycheck.proofs.minor_first.proved.l2_forms import L2Forms, exact_ball, gap_on_set, meet, norm_on_set
from theorycheck.proofs.minor_first.proved.map_pieces import COLLAPSE, GROWTH, PROVED, Piece, undecided_piece

from theorycheck.arith.decimals import down as _down
from theorycheck.arith.decimals import scaled as _scaled
from theorycheck.arith.decimals import up as _up
from theorycheck.status import Budget

__all__ = ["decide_piece"]

#: the widest enclosure of N (radius relative to its midpoint) a run goes on with before a certificate (a wider
#: one is a piece to split: a heuristic that saves work, never a proof)
WIDEST = 0.5
#: the smallest step cap the crossing hint asks for (the problem's clock, on z of order 1)
HINT_FLOOR = 1e-5


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
        self.alpha = interval(exact_ball(lo), exact_ball(hi))
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
            return undecided_piece(self.lo, self.hi, "N0 = α√2‖z‖ meets a switch level: j†(0+) is not certain",
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
        n_end = norm_on_set(F, t1, step, zb, a_end, rb)
        nbar_end = t1 / I1
        self.gap = gap_on_set(F, t1, step, zb, a_end, rb, n_end)
        # N over the step by the mean-value form from both ends (I is increasing: I ∈ [I(t0), I(t1)])
        h = interval(0, (t1 - t0).upper())
        T, I = interval(t0, t1), interval(I0.lower(), I1.upper())
        # dN/dτ over the step: over the box (τ and I independent: wide), and from its value at the start plus
        # [0, h]·d²N/dτ² (the box's width only multiplied by h); both hold, so their intersection does
        dn = meet(F.dN(T, I, *zb, alpha, rb)[0], F.dN(t0, I0, *zb, alpha, rb)[0] + h * F.ddN(T, I, *zb, alpha, rb)[0])
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
            return undecided_piece(lo, hi, self.fail, self.fail.split(":")[0].split(" (")[0], steps)
        where = f"by τ = {float(fp.t_end.mid()) / self.clock:.6g}"
        return undecided_piece(lo, hi, f"no certificate {where} ({fp.status}: {fp.message})",
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
            return undecided_piece(lo, hi, f"validated integration failed ({exc})", "validated integration failed")
        return run.result(fp)


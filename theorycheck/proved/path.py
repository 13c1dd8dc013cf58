"""Proved paths of balanced ℓ2-SAM at depth L ≥ 3 (one example z > 0, uniform init α·1, α a point or an interval):
the sequence of j† with every switch time enclosed, the fate, and the final index from a lock-in certificate.

The balanced flow du_j/dτ = z_j û_j^{L−1} is integrated in ball arithmetic (:mod:`theorycheck.proved.validated`,
Lohner's method) in v_j = u_j − α (:func:`symbolic.validated_fields.balanced_shifted_system`: v(0) = 0 exactly, α a parameter
carried by the enclosure). Coordinates with equal z_j are equal for every τ (the flow is symmetric under their
exchange, and solutions are unique), so j† is decided among one representative per distinct value (the smallest
index). On each step, a rival m is *below* the leader k when the enclosures over the step are ordered, or when
u_k − u_m > 0 is known at the step's start and d(u_k − u_m)/dτ > 0 over the a-priori box. A switch k → m is
counted only when m is the one rival not below k, d(u_m − u_k)/dτ > 0 over every step of the window (one crossing
at most) and u_m − u_k > 0 is certain at the window's end (Lohner form of the difference); j†(0+) is the k whose
rate exceeds every other one over the first step (all u_j equal at τ = 0). The run ends with:

- growth, locked (proofs/minor_first/lockin.py, LOCK, L ≥ 3): u_k ≥ ρ√L, j† = k and every rival with z_j > z_k scores below k
  (the blow-up race): j† = k until the blow-up, which comes within τ + t*·[1, 1/c] — the run goes on a little to
  tighten that enclosure (every lock gives one; they are intersected);
- collapse (even L, proofs/minor_first/persisting.py, P4): every r_j > 1, a forward-invariant set in which every coordinate
  shrinks: the fate and the final index 0 are proved; no lemma fixes the order of the remaining switches, so the
  sequence is proved only up to the last step enclosed (``sequence_complete`` false) and the collapse time has
  only a lower bound;
- otherwise a budget, a crossing that is not certainly transversal, or an enclosure grown too wide: not decided.
"""

from __future__ import annotations

import time
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp

from theorycheck.arith.decimals import down as _down
from theorycheck.arith.decimals import scaled as _scaled
from theorycheck.arith.decimals import up as _up

__all__ = ["DepthForms", "depth_forms", "decide_path"]


class DepthForms:
    """The balanced ℓ2-SAM system in v = u − α and the forms a path proof evaluates, compiled for ball arithmetic,
    for one depth L ≥ 3, one z (scaled: max z in [1/2, 1)) and ρ."""

    def __init__(self, L: int, z: tuple, rho: float):
        from theorycheck.symbolic import closed_forms as cf
        from theorycheck.symbolic import forms as C
        from theorycheck.symbolic import model as sy
        from theorycheck.symbolic import theory_exprs as TE
        from theorycheck.symbolic import validated_fields as S

        self.L, self.d = int(L), len(z)
        t, v, p, f = S.balanced_shifted_system(self.L, self.d)
        self.system = C.arb_system(f"balanced-shifted-l2-L{self.L}-d{self.d}", t, v, p, f)
        u, pr, r = S.balanced_forms(self.L, self.d)
        self.ratios = C.arb_function(u, r, pr)
        L = self.L
        self.floor = C.arb_function((), [TE.depth_lockin_floor(L)], (sy.rho,))
        self.rival_floor = C.arb_function((), [TE.depth_lockin_rival_floor(L)], (sy.rho,))
        theta_m = sp.Symbol("theta_m", real=True)
        rival = TE.depth_lockin_rival_log_score(L).replace(sp.Max, lambda *a: theta_m)
        self.rival = C.arb_function((theta_m,), [rival], (cf.z_j,))
        self.winner = C.arb_function((cf.theta_j,), [TE.depth_lockin_winner_log_score(L)], (cf.z_j, sy.rho))
        self.bounds = C.arb_function((cf.u_j,), list(TE.depth_lockin_blowup_bounds(L)), (cf.z_j, sy.rho))
        self.z = [float(x) for x in z]
        self.rho = float(rho)
        vals = sorted(set(self.z))
        #: one state index per distinct value of z (the smallest index), in increasing z
        self.reps = [self.z.index(x) for x in vals]


@lru_cache(maxsize=16)
def depth_forms(L: int, z: tuple, rho: float) -> DepthForms:
    return DepthForms(L, z, rho)


def _ball_max(a, b):
    from theorycheck.arith.balls import interval

    if a > b:
        return a
    if b > a:
        return b
    return interval(max(a.lower(), b.lower()), max(a.upper(), b.upper()))


def decide_path(F: DepthForms, lo: Fraction, hi: Fraction, *, max_seconds: float | None = 60.0,
                max_steps: int = 20000, order: int = 12,
                prec: int = 128, tol: float = 1e-12, tighten: float = 1e-7, after_steps: int = 400,
                clock: float = 1.0, first_step: float = 1e-3) -> dict:
    """Prove the path for every α in [lo, hi] (see the module docstring), within ``max_steps`` validated steps and
    ``max_seconds`` (None: no wall-clock limit, so that the answer does not depend on the load). ``tighten``: the
    target width (relative to the time) of the blow-up enclosure and the smallest step hint near a crossing;
    ``after_steps``: steps spent after a lock or a collapse certificate (tightening, following switches);
    ``clock``: the power of two s when F is the problem on z/s (times are returned in z's clock, τ/s).
    Returns a dict: status ("proved" | "undecided"), fate, sequence (1-based, 0 last for a collapse),
    switch_times ([lo, hi] decimal strings), sequence_complete, proved_until ([lo, hi] or None),
    collapse_time, blowup_time ([lo, hi], hi None when only a lower bound is proved), final_index, reason,
    steps, seconds."""
    from theorycheck.arith.balls import arb_context

    t_start = time.perf_counter()
    with arb_context(prec=prec):
        run = _PathRun(F, lo, hi, tighten=tighten, after_steps=after_steps, clock=clock, first_step=first_step)
        fp = run.integrate(order=order, prec=prec, tol=tol, max_seconds=max_seconds, max_steps=max_steps)
        out = run.result(fp)
    out["seconds"] = time.perf_counter() - t_start
    return out


class _PathRun:
    """One validated run of :func:`decide_path`: the enclosure's parameters, the state of the j† bookkeeping
    (``st``), and the stop rule the integrator calls after every step."""

    def __init__(self, F: DepthForms, lo: Fraction, hi: Fraction, *, tighten: float, after_steps: int, clock: float,
                 first_step: float):
        from flint import arb

        from theorycheck.arith.balls import interval

        self.F, self.L, self.d = F, F.L, F.d
        self.even = F.L % 2 == 0
        self.tighten, self.after_steps, self.clock = tighten, after_steps, clock
        self.zb = [arb(v) for v in F.z]
        rb = arb(F.rho)
        a_lo, a_hi = arb(lo.numerator) / lo.denominator, arb(hi.numerator) / hi.denominator
        if lo == hi:  # a binary point α is exact: nothing is carried
            self.alpha, self.rb_run, self.tf_lo, self.tf_hi = a_lo, rb, arb(1), arb(1)
        else:  # u = α w, s = α^{L−2} τ: the same flow from w = 1 with ρ/α (one interval, where α occurs once)
            self.alpha = arb(1)
            self.rb_run = interval((rb / a_hi).lower(), (rb / a_lo).upper())
            self.tf_lo, self.tf_hi = a_hi ** (F.L - 2), a_lo ** (F.L - 2)
        self.field = F.system.field.bind(*self.zb, self.alpha, self.rb_run)
        self.field_mid = F.system.field.bind(*self.zb, self.alpha, arb(self.rb_run.mid()))  # for step hints only
        self.reps = F.reps
        self.index = {k: k + 1 for k in self.reps}
        self.st = {"leader": self.reps[0] if len(self.reps) == 1 else None, "known": {}, "pending": None,
                   "fail": None, "fate": None, "fate_t": None, "lock": None, "blow": None, "after": 0,
                   "hint": first_step, "t_ok": arb(0), "steps": 0, "col_lo": None, "dprev": {}, "rates": {}}
        self.seq = [self.st["leader"]] if self.st["leader"] is not None else []
        self.times: list = []

    # ------------------------------------------------------------------ times in z's clock
    def tx(self, x, up: bool):
        """An end of the enclosure of a time, in τ of z's clock (s = α^{L−2} τ for an interval α)."""
        x = (x.upper() / self.tf_hi).upper() if up else (x.lower() / self.tf_lo).lower()
        return _scaled(_up(x) if up else _down(x), self.clock, up)

    def tmid(self, x) -> float:
        return float((x / self.tf_hi).mid()) / self.clock

    def span(self, t0, t1) -> list:
        return [self.tx(t0, False), self.tx(t1, True)]

    def fail(self, msg):
        self.st["fail"] = msg
        return "fail"

    # ------------------------------------------------------------------ the order of the coordinates on a step
    def _step_view(self, step):
        """The field over the step's a-priori box, the enclosure over the step, and u_k − u_m at its end."""
        from theorycheck.arith.balls import interval

        t0, t1, d = step.t0, step.t1, self.d
        B = step.apriori
        p_box = B[d] if len(B) > d else self.rb_run  # ρ (or ρ/α, carried as a state) over the step
        fv = self.field(interval(t0, t1), *B[:d]) if p_box is self.rb_run else \
            self.F.system.field.bind(*self.zb, self.alpha, p_box)(interval(t0, t1), *B[:d])
        S = step.set_end
        n = len(S.c)

        def diff_end(k, m):  # u_k − u_m at t1, by the Lohner form (keeps the correlation of the coordinates)
            acc = S.c[k] - S.c[m]
            for j in range(n):
                acc += (S.A[k, j] - S.A[m, j]) * S.R[j]
            return acc

        H = interval(0, (t1 - t0).upper())
        over = step.over_step

        def below(k, m) -> bool:  # u_m < u_k on the whole step
            if over[m].upper() < over[k].lower():
                return True
            d0 = self.st["dprev"].get((k, m))  # u_k − u_m at t0 (Lohner form), mean value over the step
            if d0 is not None and (d0 + H * (fv[k] - fv[m])) > 0:
                return True
            return bool(self.st["known"].get((k, m)) and (fv[k] - fv[m]) > 0)

        return fv, over, diff_end, below

    def stop(self, step):
        """The integrator's stop rule: follow j† over the step, then the lemmas (:meth:`_checks`)."""
        st, reps = self.st, self.reps
        st["steps"] += 1
        fv, over, diff_end, below = self._step_view(step)
        k = st["leader"]
        if k is None:
            r = self._first_leader(fv)
            if r is not None:
                return r
            k = st["leader"]
        elif st["pending"] is None:
            r = self._open_crossing(step, k, fv, below)
            if r is not None:
                return r
        if st["pending"] is not None:
            r = self._follow_crossing(step, k, fv, over, diff_end, below)
            if r != "switched":
                return r
            k = st["leader"]
        else:
            st["known"] = {(k, o): True for o in reps if o != k}  # every rival was below on the whole step
        st["t_ok"] = step.t1
        st["dprev"] = {(a, b): diff_end(a, b) for a in reps for b in reps if a != b}
        return self._checks(step, k)

    def _first_leader(self, fv):
        """τ = 0: every u_j = α; the leader at 0+ is the coordinate whose rate beats every other."""
        reps = self.reps
        cand = [c for c in reps if all((fv[c] - fv[m]) > 0 for m in reps if m != c)]
        if not cand:
            return self.fail("j†(0+) is not decided on the first step (the initial rates of two distinct z_j are "
                             "not certainly ordered over it)")
        k = self.st["leader"] = cand[0]
        self.seq.append(k)
        self.st["known"] = {(k, m): True for m in reps if m != k}
        return None

    def _open_crossing(self, step, k, fv, below):
        """A rival not certainly below the leader starts a crossing (one rival, known order, transversal)."""
        index = self.index
        rivals = [m for m in self.reps if m != k and not below(k, m)]
        if not rivals:
            return None
        m = rivals[0]
        if len(rivals) > 1:
            return self.fail(f"two rivals of j† = {index[k]} at τ ∈ {self.span(step.t0, step.t1)}")
        if not self.st["known"].get((k, m)):
            return self.fail(f"the order of u_{index[k]} and u_{index[m]} is not known at τ ≈ {self.tmid(step.t0):.6g}")
        if not (fv[m] - fv[k]) > 0:
            return self.fail(f"a crossing of u_{index[m]} over u_{index[k]} is not certainly transversal at "
                             f"τ ∈ {self.span(step.t0, step.t1)}")
        self.st["pending"] = (m, step.t0)
        return None

    def _follow_crossing(self, step, k, fv, over, diff_end, below):
        """A crossing of m over the leader k: "switched" when m leads at the step's end, None while it goes on."""
        st, reps, index = self.st, self.reps, self.index
        m, ts = st["pending"]
        if not (fv[m] - fv[k]) > 0:
            return self.fail(f"the sign of d(u_{index[m]} − u_{index[k]})/dτ changed during a crossing")
        for o in reps:
            if o not in (k, m) and not (below(k, o) or over[o].upper() < over[m].lower()):
                return self.fail(f"a third coordinate (u_{index[o]}) may lead during the crossing of u_{index[m]} "
                                 f"over u_{index[k]}")
        if diff_end(m, k) > 0:
            self.seq.append(m)
            self.times.append([self.tx(ts, False), self.tx(step.t1, True)])
            st["leader"], st["pending"] = m, None
            st["known"] = {(m, o): bool(diff_end(m, o) > 0) for o in reps if o != m}
            for o in reps:
                if o != m and not st["known"][(m, o)] and over[o].upper() < over[m].lower():
                    st["known"][(m, o)] = True
            return "switched"
        # still crossing: keep what this step showed about the others
        st["known"] = {(k, o): True for o in reps if o not in (k, m) and below(k, o)}
        st["dprev"] = {(a, b): diff_end(a, b) for a in reps for b in reps if a != b}
        st["hint"] = self.tighten * max(1.0, float(step.t1.mid()))
        return None

    # ------------------------------------------------------------------ step hints and the lemmas
    def _hint(self, step, k, u):
        """A step hint (heuristic only, nothing proved rests on it): smaller steps as a rival approaches the leader."""
        from flint import arb

        t1, d, st = step.t1, self.d, self.st
        hint = None
        fe = self.field_mid(t1, *[arb(x.mid()) for x in step.end[:d]])

        def cap_at(c):
            nonlocal hint
            hint = c if hint is None else min(hint, c)

        for j in range(d):  # no displacement u_j − α changing by more than a fifth of itself in one step
            sp_j = abs(float(fe[j].mid()))
            if sp_j > 0:
                cap_at(0.2 * abs(float(step.end[j].mid())) / sp_j)
        for m in self.reps:
            if m == k:
                continue
            gap = float((u[k] - u[m]).mid())
            rate = float((fe[m] - fe[k]).mid())
            if gap > 0 and rate != 0:  # the gap to the leader changes by at most 30 % in a step
                cap_at(gap / abs(rate) * 0.3)
            prev = st["rates"].get(m)
            if gap > 0 and prev is not None and prev[0] < float(t1.mid()):  # ... also at second order
                curv = abs(rate - prev[1]) / (float(t1.mid()) - prev[0])
                if curv > 0:
                    cap_at((0.6 * gap / curv) ** 0.5)
            st["rates"][m] = (float(t1.mid()), rate)
            motion = max(abs(float(fe[m].mid())), abs(float(fe[k].mid())))
            if gap > 0 and motion > 0:  # each coordinate moves by at most the gap in a step (box widths)
                cap_at(gap / motion)
        st["hint"] = None if hint is None else max(hint, self.tighten * max(1.0, float(t1.mid())))

    def _checks(self, step, k):
        """After a step with leader k: the persisting lemma's fate (even L, P4) and the lock-in (LOCK)."""
        t1, d, st, F = step.t1, self.d, self.st, self.F
        p_end = step.end[d] if len(step.end) > d else self.rb_run
        u = [self.alpha + step.end[j] for j in range(d)]
        if not all(x > 0 for x in u):
            return self.fail(f"an enclosure of u reaches 0 by τ ≈ {self.tmid(t1):.6g}")
        self._hint(step, k, u)
        r = F.ratios.bind(*self.zb, p_end)(*u)
        if self.even and st["fate"] is None:
            if all(x > 1 for x in r):
                st["fate"], st["fate_t"] = "collapse", t1
            elif all(x <= 1 for x in r):
                st["fate"], st["fate_t"] = "growth", t1
        if st["fate"] == "collapse":
            st["col_lo"] = t1
            st["after"] += 1
            return "collapse" if st["after"] >= self.after_steps else None
        return self._lock(t1, k, u, p_end)

    def _lock(self, t1, k, u, p_end):
        """The lock-in of the blow-up order (LOCK, L ≥ 3): u_k ≥ ρ√L and k wins the race against every larger z_j."""
        st, F, zb = self.st, self.F, self.zb
        floor = F.floor.bind(p_end)()[0]
        rfloor = F.rival_floor.bind(p_end)()[0]
        uk = u[k]
        if uk >= floor:
            wk = F.winner.bind(zb[k], p_end)(uk.log())[0]
            if all(F.rival.bind(zb[m])(_ball_max(u[m], rfloor).log())[0] < wk for m in self.reps if F.z[m] > F.z[k]):
                b_lo, b_hi = F.bounds.bind(zb[k], p_end)(uk)
                lo_t, hi_t = t1 + b_lo, t1 + b_hi
                if st["lock"] is None:
                    st["lock"] = t1
                    st["blow"] = [lo_t.lower(), hi_t.upper()]
                else:
                    st["blow"] = [max(st["blow"][0], lo_t.lower()), min(st["blow"][1], hi_t.upper())]
                st["after"] += 1
                w = float((st["blow"][1] - st["blow"][0]).mid())
                if w <= self.tighten * float(st["blow"][1].mid()) or st["after"] >= self.after_steps:
                    return "locked"
                st["hint"] = None
                return None
        if st["lock"] is not None:  # locked earlier: the lemma holds from then on
            return "locked"
        return None

    # ------------------------------------------------------------------ the run and its answer
    def integrate(self, *, order: int, prec: int, tol: float, max_seconds: float | None, max_steps: int):
        from theorycheck.proved.validated import integrate
        from theorycheck.status import Budget

        F = self.F
        try:
            return integrate(F.system, [0] * self.d, params=[*self.zb, self.alpha, self.rb_run], order=order, prec=prec,
                             tol=tol, h_max=lambda _t: self.st["hint"], stop=self.stop, record=False, slack=False,
                             budget=Budget(max_seconds=float("inf") if max_seconds is None else max(0.1, max_seconds),
                                           max_steps=int(max_steps), max_width=0.5))
        except (ValueError, ZeroDivisionError, ArithmeticError) as exc:
            self.st["fail"] = self.st["fail"] or f"validated integration failed ({exc})"
            return None

    def result(self, fp) -> dict:
        st, tx = self.st, self.tx
        idx = [self.index[k] for k in self.seq]
        out = {"steps": st["steps"], "switch_times": self.times, "collapse_time": None, "blowup_time": None,
               "proved_until": None, "sequence_complete": False}
        if st["fail"]:
            ended = st["fail"]
        elif fp is not None and fp.event == "collapse":
            ended = f"the {self.after_steps} steps allowed after the certificate were spent"
        else:
            ended = f"{fp.status}: {fp.message}" if fp is not None else ""
        if st["lock"] is not None:
            out.update(status="proved", fate="growth", sequence=idx, sequence_complete=True, final_index=idx[-1],
                       blowup_time=[tx(st["blow"][0], False), tx(st["blow"][1], True)],
                       reason=f"growth, locked: u_j† ≥ ρ√L and j† = {idx[-1]} wins the blow-up race against every larger "
                              f"z_j from τ ∈ {[tx(st['lock'], False), tx(st['lock'], True)]} (lock-in lemma, LOCK); "
                              "j† never changes before the blow-up")
        elif st["fate"] == "collapse":
            t_ok = st["col_lo"]
            out.update(status="proved", fate="collapse", sequence=idx + [0], final_index=0,
                       proved_until=[tx(st["t_ok"], False), tx(st["t_ok"], True)],
                       collapse_time=[tx(t_ok, False), None],
                       reason=f"collapse: every r_j > 1 from τ ∈ {[tx(st['fate_t'], False), tx(st['fate_t'], True)]} "
                              "(even L: a forward-invariant set in which every coordinate shrinks, P4); no lemma fixes the "
                              "order of the switches after it: the sequence is proved up to τ = "
                              f"{tx(st['t_ok'], True)} ({ended})")
        else:
            why = st["fail"] or (f"no lock-in by τ = {self.tmid(fp.t_end):.6g} ({fp.status}: {fp.message})"
                                 if fp is not None else "")
            out.update(status="undecided", fate=st["fate"], sequence=idx, final_index=None,
                       proved_until=[tx(st["t_ok"], False), tx(st["t_ok"], True)] if self.seq else None, reason=why)
        return out


def scale_of(z) -> float:
    """The power of two s with max z / s in [1/2, 1): the path of z/s is the path of z with τ multiplied by s."""
    return 2.0 ** int(np.frexp(float(np.max(z)))[1])

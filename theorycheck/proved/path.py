"""Proved paths of balanced ℓ2-SAM at depth L ≥ 3 (one example z > 0, uniform init α·1, α a point or an interval):
the sequence of j† with every switch time enclosed, the fate, and the final index from a lock-in certificate.

The balanced flow du_j/dτ = z_j û_j^{L−1} is integrated in ball arithmetic (:mod:`theorycheck.proved.validated`,
Lohner's method) in v_j = u_j − α (:func:`symbolic.systems.balanced_shifted_system`: v(0) = 0 exactly, α a parameter
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

from theorycheck.proved.decimals import down as _down
from theorycheck.proved.decimals import scaled as _scaled
from theorycheck.proved.decimals import up as _up

__all__ = ["DepthForms", "depth_forms", "decide_path"]


class DepthForms:
    """The balanced ℓ2-SAM system in v = u − α and the forms a path proof evaluates, compiled for ball arithmetic,
    for one depth L ≥ 3, one z (scaled: max z in [1/2, 1)) and ρ."""

    def __init__(self, L: int, z: tuple, rho: float):
        from theorycheck.symbolic import closed_forms as cf
        from theorycheck.symbolic import forms as C
        from theorycheck.symbolic import model as sy
        from theorycheck.symbolic import systems as S

        self.L, self.d = int(L), len(z)
        t, v, p, f = S.balanced_shifted_system(self.L, self.d)
        self.system = C.arb_system(f"balanced-shifted-l2-L{self.L}-d{self.d}", t, v, p, f)
        u, pr, r = S.balanced_forms(self.L, self.d)
        self.ratios = C.arb_function(u, r, pr)
        L = self.L
        self.floor = C.arb_function((), [cf.depth_lockin_floor(L)], (sy.rho,))
        self.rival_floor = C.arb_function((), [cf.depth_lockin_rival_floor(L)], (sy.rho,))
        theta_m = sp.Symbol("theta_m", real=True)
        rival = cf.depth_lockin_rival_log_score(L).replace(sp.Max, lambda *a: theta_m)
        self.rival = C.arb_function((theta_m,), [rival], (cf.z_j,))
        self.winner = C.arb_function((cf.theta_j,), [cf.depth_lockin_winner_log_score(L)], (cf.z_j, sy.rho))
        self.bounds = C.arb_function((cf.u_j,), list(cf.depth_lockin_blowup_bounds(L)), (cf.z_j, sy.rho))
        self.z = [float(x) for x in z]
        self.rho = float(rho)
        vals = sorted(set(self.z))
        #: one state index per distinct value of z (the smallest index), in increasing z
        self.reps = [self.z.index(x) for x in vals]


@lru_cache(maxsize=16)
def depth_forms(L: int, z: tuple, rho: float) -> DepthForms:
    return DepthForms(L, z, rho)


def _ball_max(a, b):
    from theorycheck.proved.validated import interval

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
    from flint import arb

    from theorycheck.proved.validated import arb_context, integrate, interval
    from theorycheck.status import Budget

    t_start = time.perf_counter()
    L, d = F.L, F.d
    even = L % 2 == 0

    def tx(x, up: bool):  # an end of the enclosure of a time, in τ of z's clock (s = α^{L−2} τ for an interval α)
        x = (x.upper() / tf_hi).upper() if up else (x.lower() / tf_lo).lower()
        return _scaled(_up(x) if up else _down(x), clock, up)

    def tmid(x) -> float:
        return float((x / tf_hi).mid()) / clock

    with arb_context(prec=prec):
        zb = [arb(v) for v in F.z]
        rb = arb(F.rho)
        a_lo, a_hi = arb(lo.numerator) / lo.denominator, arb(hi.numerator) / hi.denominator
        if lo == hi:  # a binary point α is exact: nothing is carried
            alpha, rb_run, tf_lo, tf_hi = a_lo, rb, arb(1), arb(1)
        else:  # u = α w, s = α^{L−2} τ: the same flow from w = 1 with ρ/α (one interval, where α occurs once)
            alpha = arb(1)
            rb_run = interval((rb / a_hi).lower(), (rb / a_lo).upper())
            tf_lo, tf_hi = a_hi ** (L - 2), a_lo ** (L - 2)
        rb_mid = arb(rb_run.mid())
        field = F.system.field.bind(*zb, alpha, rb_run)
        field_mid = F.system.field.bind(*zb, alpha, rb_mid)  # for step hints only
        reps = F.reps
        index = {k: k + 1 for k in reps}
        st = {"leader": reps[0] if len(reps) == 1 else None, "known": {}, "pending": None, "fail": None,
              "fate": None, "fate_t": None, "lock": None, "blow": None, "after": 0, "hint": first_step,
              "t_ok": arb(0), "steps": 0, "col_lo": None,
              "dprev": {}, "rates": {}}
        seq = [st["leader"]] if st["leader"] is not None else []
        times: list = []

        def fail(msg):
            st["fail"] = msg
            return "fail"

        def stop(step):
            st["steps"] += 1
            t0, t1 = step.t0, step.t1
            B = step.apriori
            p_box = B[d] if len(B) > d else rb_run  # ρ (or ρ/α, carried as a state) over the step
            fv = field(interval(t0, t1), *B[:d]) if p_box is rb_run else \
                F.system.field.bind(*zb, alpha, p_box)(interval(t0, t1), *B[:d])
            over = step.over_step
            S = step.set_end
            n = len(S.c)

            def diff_end(k, m):  # u_k − u_m at t1, by the Lohner form (keeps the correlation of the coordinates)
                acc = S.c[k] - S.c[m]
                for j in range(n):
                    acc += (S.A[k, j] - S.A[m, j]) * S.R[j]
                return acc

            H = interval(0, (t1 - t0).upper())

            def below(k, m) -> bool:  # u_m < u_k on the whole step
                if over[m].upper() < over[k].lower():
                    return True
                d0 = st["dprev"].get((k, m))  # u_k − u_m at t0 (Lohner form), mean value over the step
                if d0 is not None and (d0 + H * (fv[k] - fv[m])) > 0:
                    return True
                return bool(st["known"].get((k, m)) and (fv[k] - fv[m]) > 0)

            k = st["leader"]
            if k is None:  # τ = 0: every u_j = α; the leader at 0+ is the coordinate whose rate beats every other
                cand = [c for c in reps if all((fv[c] - fv[m]) > 0 for m in reps if m != c)]
                if not cand:
                    return fail("j†(0+) is not decided on the first step (the initial rates of two distinct z_j are "
                                "not certainly ordered over it)")
                k = st["leader"] = cand[0]
                seq.append(k)
                st["known"] = {(k, m): True for m in reps if m != k}
            elif st["pending"] is None:
                rivals = [m for m in reps if m != k and not below(k, m)]
                if rivals:
                    m = rivals[0]
                    if len(rivals) > 1:
                        return fail(f"two rivals of j† = {index[k]} at τ ∈ {[tx(t0, False), tx(t1, True)]}")
                    if not st["known"].get((k, m)):
                        return fail(f"the order of u_{index[k]} and u_{index[m]} is not known at τ ≈ "
                                    f"{tmid(t0):.6g}")
                    if not (fv[m] - fv[k]) > 0:
                        return fail(f"a crossing of u_{index[m]} over u_{index[k]} is not certainly transversal at "
                                    f"τ ∈ {[tx(t0, False), tx(t1, True)]}")
                    st["pending"] = (m, t0)
            if st["pending"] is not None:
                m, ts = st["pending"]
                if not (fv[m] - fv[k]) > 0:
                    return fail(f"the sign of d(u_{index[m]} − u_{index[k]})/dτ changed during a crossing")
                for o in reps:
                    if o not in (k, m) and not (below(k, o) or over[o].upper() < over[m].lower()):
                        return fail(f"a third coordinate (u_{index[o]}) may lead during the crossing of u_{index[m]} "
                                    f"over u_{index[k]}")
                if diff_end(m, k) > 0:
                    seq.append(m)
                    times.append([tx(ts, False), tx(t1, True)])
                    st["leader"], st["pending"] = m, None
                    k = m
                    st["known"] = {(k, o): bool(diff_end(k, o) > 0) for o in reps if o != k}
                    for o in reps:
                        if o != k and not st["known"][(k, o)] and over[o].upper() < over[k].lower():
                            st["known"][(k, o)] = True
                else:  # still crossing: keep what this step showed about the others
                    st["known"] = {(k, o): True for o in reps if o not in (k, m) and below(k, o)}
                    st["dprev"] = {(a, b): diff_end(a, b) for a in reps for b in reps if a != b}
                    st["hint"] = tighten * max(1.0, float(t1.mid()))
                    return None
            else:
                st["known"] = {(k, o): True for o in reps if o != k}  # every rival was below on the whole step
            st["t_ok"] = t1
            st["dprev"] = {(a, b): diff_end(a, b) for a in reps for b in reps if a != b}
            return _checks(step, k)

        def _checks(step, k):
            t1 = step.t1
            p_end = step.end[d] if len(step.end) > d else rb_run
            u = [alpha + step.end[j] for j in range(d)]
            if not all(x > 0 for x in u):
                return fail(f"an enclosure of u reaches 0 by τ ≈ {tmid(t1):.6g}")
            # a step hint (heuristic only): smaller steps as a rival approaches the leader
            hint = None
            fe = field_mid(t1, *[arb(x.mid()) for x in step.end[:d]])
            for j in range(d):  # and no displacement u_j − α changing by more than a fifth of itself in one step
                sp_j = abs(float(fe[j].mid()))
                if sp_j > 0:
                    cap = 0.2 * abs(float(step.end[j].mid())) / sp_j
                    hint = cap if hint is None else min(hint, cap)
            for m in reps:
                if m == k:
                    continue
                gap = float((u[k] - u[m]).mid())
                rate = float((fe[m] - fe[k]).mid())
                if gap > 0 and rate != 0:  # the gap to the leader changes by at most 30 % in a step
                    tc = gap / abs(rate)
                    hint = tc * 0.3 if hint is None else min(hint, tc * 0.3)
                prev = st["rates"].get(m)
                if gap > 0 and prev is not None and prev[0] < float(t1.mid()):  # ... also at second order
                    curv = abs(rate - prev[1]) / (float(t1.mid()) - prev[0])
                    if curv > 0:
                        cap = (0.6 * gap / curv) ** 0.5
                        hint = cap if hint is None else min(hint, cap)
                st["rates"][m] = (float(t1.mid()), rate)
                motion = max(abs(float(fe[m].mid())), abs(float(fe[k].mid())))
                if gap > 0 and motion > 0:  # each coordinate moves by at most the gap in a step (box widths)
                    cap = gap / motion
                    hint = cap if hint is None else min(hint, cap)
            st["hint"] = None if hint is None else max(hint, tighten * max(1.0, float(t1.mid())))
            r = F.ratios.bind(*zb, p_end)(*u)
            floor = F.floor.bind(p_end)()[0]
            rfloor = F.rival_floor.bind(p_end)()[0]
            if even and st["fate"] is None:
                if all(x > 1 for x in r):
                    st["fate"], st["fate_t"] = "collapse", t1
                elif all(x <= 1 for x in r):
                    st["fate"], st["fate_t"] = "growth", t1
            if st["fate"] == "collapse":
                st["col_lo"] = t1
                st["after"] += 1
                return "collapse" if st["after"] >= after_steps else None
            # the lock-in of the blow-up order (LOCK, L ≥ 3)
            uk = u[k]
            if uk >= floor:
                wk = F.winner.bind(zb[k], p_end)(uk.log())[0]
                ok = True
                for m in reps:
                    if F.z[m] > F.z[k]:
                        sm = F.rival.bind(zb[m])(_ball_max(u[m], rfloor).log())[0]
                        if not sm < wk:
                            ok = False
                            break
                if ok:
                    b_lo, b_hi = F.bounds.bind(zb[k], p_end)(uk)
                    lo_t, hi_t = t1 + b_lo, t1 + b_hi
                    if st["lock"] is None:
                        st["lock"] = t1
                        st["blow"] = [lo_t.lower(), hi_t.upper()]
                    else:
                        st["blow"] = [max(st["blow"][0], lo_t.lower()), min(st["blow"][1], hi_t.upper())]
                    st["after"] += 1
                    w = float((st["blow"][1] - st["blow"][0]).mid())
                    if w <= tighten * float(st["blow"][1].mid()) or st["after"] >= after_steps:
                        return "locked"
                    st["hint"] = None
                    return None
            if st["lock"] is not None:  # locked earlier: the lemma holds from then on
                return "locked"
            return None

        def h_cap(_t):
            return st["hint"]

        try:
            fp = integrate(F.system, [0] * d, params=[*zb, alpha, rb_run], order=order, prec=prec, tol=tol, h_max=h_cap,
                           stop=stop, record=False, slack=False,
                           budget=Budget(max_seconds=float("inf") if max_seconds is None else max(0.1, max_seconds),
                                         max_steps=int(max_steps), max_width=0.5))
        except (ValueError, ZeroDivisionError, ArithmeticError) as exc:
            fp = None
            st["fail"] = st["fail"] or f"validated integration failed ({exc})"
        idx = [index[k] for k in seq]
        out = {"steps": st["steps"], "switch_times": times, "collapse_time": None, "blowup_time": None,
               "proved_until": None, "sequence_complete": False}
        if st["fail"]:
            ended = st["fail"]
        elif fp is not None and fp.event == "collapse":
            ended = f"the {after_steps} steps allowed after the certificate were spent"
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
            why = st["fail"] or (f"no lock-in by τ = {tmid(fp.t_end):.6g} ({fp.status}: {fp.message})"
                                 if fp is not None else "")
            out.update(status="undecided", fate=st["fate"], sequence=idx, final_index=None,
                       proved_until=[tx(st["t_ok"], False), tx(st["t_ok"], True)] if seq else None, reason=why)
        out["seconds"] = time.perf_counter() - t_start
        return out


def scale_of(z) -> float:
    """The power of two s with max z / s in [1/2, 1): the path of z/s is the path of z with τ multiplied by s."""
    return 2.0 ** int(np.frexp(float(np.max(z)))[1])

"""α_c, the collapse threshold of ℓ2-SAM (L = 2, one example, uniform init α), to any precision.

The method (THEORY.md C4/C5):

- C4 reduces the flow to one scalar ODE dI/dτ = 1/N(τ, I) with
  N² = Σ_j exp(c_j + p_j τ + q_j I) (the log-summands of :func:`theory_exprs.l2_reduced_log_summand`,
  linear in τ and I; their coefficients are read off the symbolic form, never re-typed). It is
  integrated by a Taylor series method of any order, in float64 or in mpmath at any number of
  digits (exp/power series recurrences, so one step costs O(d K²) operations).
- The boundary between collapse and growth is the stable manifold of the saddle at
  u = (ρ/√(2k)) e_min (the k coordinates of the smallest positive z_j), N = ρ z_min: its only
  unstable direction is N, with eigenvalue z_min; the other coordinates decay at
  z_j (1 − z_j / z_min) < 0. On the unstable manifold x = N_min/(ρ z_min) − 1 (N_min the part of
  N carried by the z_min coordinates) obeys dx/dτ = z_min x exactly, so
  q_T(α) = x(T) e^{−z_min T} is a smooth function of α whose root tends to α_c as T grows.
  Its roots are found by safeguarded false position (Illinois) on a ladder of horizons T.
- The proposed value is then *checked* on both sides: α(1 − w) is integrated until
  N < ρ z_+ (every rate is negative from then on: collapse) and α(1 + w) until N ≥ ρ z_max
  (every rate is nonnegative from then on: growth), at the working precision (float64 or
  mpmath digits: a floating-point check, not a proof — :mod:`theorycheck.proofs.minor_first.proved.alpha_c` proves).
  Only a checked bracket yields a value; otherwise the answer is inconclusive (value None).

α_c is exactly proportional to ρ and invariant under z → c z (c > 0), so the work is done
for ρ = 1 and z scaled by a power of two (exact in binary) into [1/2, 1), and scaled back.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import mpmath as mp
import numpy as np
from theorycheck.proofs.minor_first.predict.reduced_taylor import ReducedFlow, TaylorRun

from theorycheck.arith.decimals import common_digits
from theorycheck.status import BudgetExhausted, Fate, Status
from theorycheck.symbolic import theory_forms as MF

__all__ = ["AlphaC", "ReducedFlow", "TaylorRun", "alpha_c_unit"]


# ------------------------------------------------------------------ the root search
@dataclass
class AlphaC:
    """α_c for ρ = 1: ``lo`` (checked to collapse), ``hi`` (checked to grow), ``value``, ``digits``
    (significant digits every point of [lo, hi] shares with ``value``), the ``text`` of those digits, the
    ``checks`` of both sides (the persisting condition each run reached), and ``stopped`` (why the answer
    is inconclusive, None when both sides were checked)."""

    lo: object
    hi: object
    value: object
    digits: int
    text: str | None
    checks: dict
    stopped: str | None
    method: str
    evaluations: int
    seconds: float


METHOD = ("Taylor series integration of C4's reduced ODE; false position on the saddle's unstable coordinate "
          "over a ladder of horizons; both sides checked by a persisting condition at the working precision")


class _Search:
    """The state of one α_c search on z scaled into [1/2, 1) with ρ = 1: the bracket of α checked so far
    (``lo`` collapses, ``hi`` grows), the evaluations, the deadline and the progress callback."""

    def __init__(self, z: np.ndarray, deadline: float, report):
        self.z, self.deadline, self.report = z, deadline, report
        self.zm = float(z[z > 0].min())
        norm = float(np.sqrt(np.sum(z**2)))
        top = z.max()
        self.lo0 = float(MF.alpha_all_shrink()(self.zm, norm, 1.0))  # collapses (C5)
        self.hi0 = float(MF.alpha_gd_like()(top, z[z < top].max(), norm, 1.0))  # grows (C5)
        self.lo, self.hi = self.lo0, self.hi0
        self.evals = 0

    def q(self, flow, a, T):
        """q_T(α): −∞ (collapsed), +∞ (grew), or the saddle's unstable coordinate at the horizon T."""
        fate = flow.run(a, T, deadline=self.deadline, lower=0.2)
        self.evals += 1
        if fate.fate == Fate.COLLAPSE:
            self.lo = max(self.lo, a)
            return -math.inf
        if fate.fate == Fate.GROWTH:
            self.hi = min(self.hi, a)
            return math.inf
        if fate.at_horizon:
            return fate.q
        raise BudgetExhausted(fate.status or Status.MAX_STEPS, f"at α = {a}: {fate.why}")

    def rung(self, flow, T, guess, span, rtol):
        """The root of q_T near ``guess``: secant steps (q_T is close to linear in α there), and false
        position (Illinois) on the checked bracket when a step leaves it."""
        a1, a2 = max(self.lo, guess * (1 - span)), min(self.hi, guess * (1 + span))
        f1, f2 = self.q(flow, a1, T), self.q(flow, a2, T)
        for _ in range(12):
            if not (math.isfinite(float(f1)) and math.isfinite(float(f2))) or f1 == f2:
                break
            a3 = a2 - f2 * (a2 - a1) / (f2 - f1)
            if not (self.lo < a3 < self.hi):
                break
            f3 = self.q(flow, a3, T)
            a1, f1, a2, f2 = a2, f2, a3, f3
            if abs(a2 - a1) <= rtol * abs(a2) or f3 == 0:
                return a3
        if f1 < 0 < f2 or f2 < 0 < f1:
            (a1, f1), (a2, f2) = sorted([(a1, f1), (a2, f2)], key=lambda t: t[0])
        else:
            a1, f1, a2, f2 = self.lo, -math.inf, self.hi, math.inf
        if not f1 < 0 < f2:
            a1, f1, a2, f2 = self.lo, -math.inf, self.hi, math.inf
        return self.illinois(flow, T, a1, f1, a2, f2, rtol)

    def illinois(self, flow, T, a1, f1, a2, f2, rtol):
        """False position with the Illinois modification on [a1, a2] (f1 < 0 < f2), bisection where a
        side is infinite (a fate rather than a q_T)."""
        side, prev = 0, None
        for _ in range(300):
            fin = math.isfinite(float(f1)) and math.isfinite(float(f2))
            a = (a1 * f2 - a2 * f1) / (f2 - f1) if fin else (a1 + a2) / 2
            if not (a1 < a < a2):
                a = (a1 + a2) / 2
            if a in (a1, a2):
                return a
            f = self.q(flow, a, T)
            if f < 0:
                a1, f1 = a, f
                if side == -1 and fin:
                    f2 = f2 / 2
                side = -1
            elif f > 0:
                a2, f2 = a, f
                if side == 1 and fin:
                    f1 = f1 / 2
                side = 1
            else:
                return a
            if prev is not None and abs(a - prev) <= rtol * a:
                return a
            if a2 / a1 - 1 <= rtol:
                return (a1 + a2) / 2
            prev = a
        return (a1 + a2) / 2

    def ladder(self, flow, guess, unc, target, n_min):
        """Roots of q_T on growing horizons T (each at least 1.6 times the last, and long enough for the
        current uncertainty to grow to 1e-3), until two in a row agree to ``target``."""
        zm = self.zm
        prev, root, T = None, guess, None
        for i in range(40):
            T_want = math.log(1e-3 / max(float(unc), 1e-300)) / zm
            T = min(max(3.0 / zm, T_want, 1.6 * T if T else 0.0), 5000.0 / zm)
            # the starting span: the uncertainty, but no wider than what stays linear up to T (a perturbation
            # of the saddle's unstable coordinate grows like e^{z_min T}: past ~1e-3 the run leaves the saddle
            # before T and gives a fate, not a q_T)
            span = min(float(unc) * 10, 1e-3 * math.exp(-zm * T)) if T * zm < 690 else float(unc) * 10
            span = max(span, float(target))
            if isinstance(target, mp.mpf):
                span = mp.mpf(span)  # 1 ± span at the working precision, not in float64
            root = self.rung(flow, T, root, span, float(target) / 100)
            if prev is not None:
                unc = max(abs(root - prev) / root, float(target) / 1e3)
                if i + 1 >= n_min and abs(root - prev) <= target * root:
                    return root, unc
            else:
                unc = min(float(unc), 1e-2)
            self.report(min(0.9, 0.9 * math.log10(1 / float(unc)) / max(-math.log10(float(target)), 1)))
            prev = root
        return root, unc

    def sides(self, flow, root, w):
        """Run root·(1 ∓ w) to their persisting conditions: (collapse run, growth run)."""
        fl = flow.run(root * (1 - w), None, deadline=self.deadline)
        fh = flow.run(root * (1 + w), None, deadline=self.deadline)
        self.evals += 2
        return fl, fh


def _refined_root(search: _Search, digits: int, dps: int):
    """The root of q_T in float64, then (digits > 11) at ``dps`` mpmath digits; and the flow to check it with."""
    root, unc = search.ladder(ReducedFlow(search.z, None), math.sqrt(search.lo0 * search.hi0), 0.3, 1e-12, 3)
    if digits <= 11:
        return ReducedFlow(search.z, None), root
    flow = ReducedFlow(search.z, dps)
    search.lo, search.hi = mp.mpf(search.lo), mp.mpf(search.hi)
    root = mp.mpf(root)
    w = mp.mpf(10) ** (-(digits + 2))
    if digits > 13 or not all(f.fate == g for f, g in zip(search.sides(flow, root, w), (Fate.COLLAPSE, Fate.GROWTH))):
        root, _ = search.ladder(flow, root, max(float(unc), 1e-13), mp.mpf(10) ** (-(digits + 3)), 2)
    return flow, root


def _checked_bracket(search: _Search, flow, root, digits: int, dps: int) -> dict:
    """Check root·(1 ∓ w) on both sides, narrowing w while the ends straddle a rounding boundary and widening
    it while a side fails: the bracket, its common digits and both runs (``stopped`` when a budget ran out)."""
    out = {"value": None, "lo": search.lo0, "hi": search.hi0, "D": 0, "text": None, "checks": {}, "stopped": None}
    w = (mp.mpf(10) if flow.dps else 10.0) ** (-(digits + 2))
    for _attempt in range(4):
        a_lo, a_hi = root * (1 - w), root * (1 + w)
        fl, fh = search.sides(flow, root, w)
        out["checks"] = {"collapses": _check_dict(a_lo, fl), "grows": _check_dict(a_hi, fh),
                         "arithmetic": f"{dps} digits (fixed point)" if flow.dps else "float64"}
        if fl.fate == Fate.COLLAPSE and fh.fate == Fate.GROWTH:
            D, text = common_digits(a_lo, a_hi, dps)
            out.update(lo=a_lo, hi=a_hi, value=root, D=D, text=text)
            if D >= digits:
                break
            w = w / 10  # lo and hi straddle a rounding boundary: a narrower checked bracket
            continue
        if any(r.fate == Fate.UNDECIDED and not r.at_horizon for r in (fl, fh)):  # a budget ran out
            out["stopped"] = f"checking budget: {fl.why or fh.why}"
            break
        if out["value"] is not None:  # a narrower bracket failed: keep the checked wider one
            break
        w = w * 100
    if out["value"] is None and out["stopped"] is None:
        out["stopped"] = "no checked bracket around the computed root"
    return out


def alpha_c_unit(z, digits: int = 12, *, max_seconds: float = 600.0, progress=None) -> AlphaC:
    """α_c for ρ = 1 and z scaled by a power of two into [1/2, 1) (see the module docstring), with at least
    ``digits`` checked significant digits or an inconclusive answer (``stopped``).
    Checks are made in float64 for digits ≤ 11, else at digits + 12 mpmath digits."""
    t0 = time.perf_counter()
    z = np.asarray(z, float)
    # α_c is invariant under z → c z; scale by a power of two only, which is exact in binary
    # (z / max z would round the entries, and change α_c in the 17th digit)
    z = np.ldexp(z, -int(np.frexp(z.max())[1]))
    search = _Search(z, t0 + max_seconds, progress or (lambda f: None))
    dps = max(digits, 12) + 12
    try:
        with mp.workdps(dps):
            flow, root = _refined_root(search, digits, dps)
            r = _checked_bracket(search, flow, root, digits, dps)
    except BudgetExhausted as e:
        spent = f"time budget of {max_seconds:g} s ran out" if e.status == Status.MAX_SECONDS else e.status.message
        r = {"value": None, "lo": search.lo0, "hi": search.hi0, "checks": {}, "stopped": f"{spent} ({e})"}
    search.report(1.0)
    if r["stopped"] is not None:
        return AlphaC(r["lo"], r["hi"], None, 0, None, r["checks"], r["stopped"], METHOD, search.evals,
                      time.perf_counter() - t0)
    return AlphaC(r["lo"], r["hi"], r["value"], r["D"], r["text"], r["checks"], None, METHOD, search.evals,
                  time.perf_counter() - t0)


def _check_dict(alpha, run: TaylorRun) -> dict:
    what = {Fate.COLLAPSE: "N < ρ z_min: every coordinate shrinks from then on",
            Fate.GROWTH: "N ≥ ρ z_max: every coordinate grows from then on"}.get(run.fate, run.why)
    return {"alpha_unit": mp.nstr(mp.mpf(alpha), 40), "outcome": run.fate, "condition": what,
            "time": float(run.tau), "N_scaled": float(run.N), "taylor_steps": run.steps}

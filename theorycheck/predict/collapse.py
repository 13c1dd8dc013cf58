"""α_c, the collapse threshold of ℓ2-SAM (L = 2, one example, uniform init α), to any precision.

The method (THEORY.md C4/C5):

- C4 reduces the flow to one scalar ODE dI/dτ = 1/N(τ, I) with
  N² = Σ_j exp(c_j + p_j τ + q_j I) (the log-summands of :func:`closed_forms.l2_reduced_log_summand`,
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
- The proposed value is then *certified* on both sides: α(1 − w) is integrated until
  N < ρ z_+ (every rate is negative from then on: collapse) and α(1 + w) until N ≥ ρ z_max
  (every rate is nonnegative from then on: growth), at the working precision. Only a
  certified bracket yields a value; otherwise the answer is inconclusive (value None).

α_c is exactly proportional to ρ and invariant under z → c z (c > 0), so the work is done
for ρ = 1 and z scaled by a power of two (exact in binary) into [1/2, 1), and scaled back.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import mpmath as mp
import numpy as np

from theorycheck.solvers.taylor import ReducedFlow, TaylorRun
from theorycheck.status import BudgetExhausted, Fate, Status
from theorycheck.symbolic import forms as C

__all__ = ["AlphaC", "ReducedFlow", "TaylorRun", "alpha_c_unit"]


# ------------------------------------------------------------------ the root search
@dataclass
class AlphaC:
    """α_c for ρ = 1: ``lo`` (certified to collapse), ``hi`` (certified to grow),
    ``value``, ``digits`` (significant digits every point of [lo, hi] shares with ``value``), the
    ``text`` of those digits, the ``certificates`` of both sides, and ``stopped`` (why the
    answer is inconclusive, None when certified)."""

    lo: object
    hi: object
    value: object
    digits: int
    text: str | None
    certificates: dict
    stopped: str | None
    method: str
    evaluations: int
    seconds: float


def _certified_digits(lo, hi, dps: int) -> tuple[int, str | None]:
    """The most significant digits D such that lo and hi round to the same D-digit decimal;
    (0, None) when none."""
    best = (0, None)
    with mp.workdps(dps + 10):
        for D in range(1, dps + 1):
            a = mp.nstr(mp.mpf(lo), D, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)
            b = mp.nstr(mp.mpf(hi), D, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)
            if a != b:
                break
            best = (D, a)
    return best


def alpha_c_unit(z, digits: int = 12, *, max_seconds: float = 600.0, progress=None) -> AlphaC:
    """α_c for ρ = 1 and z scaled by a power of two into [1/2, 1) (see the module docstring), with at least
    ``digits`` certified significant digits or an inconclusive answer (``stopped``).
    Certificates are made at float64 for digits ≤ 11, else at digits + 12 mpmath digits."""
    t0 = time.perf_counter()
    deadline = t0 + max_seconds
    z = np.asarray(z, float)
    # α_c is invariant under z → c z; scale by a power of two only, which is exact in binary
    # (z / max z would round the entries, and change α_c in the 17th digit)
    z = np.ldexp(z, -int(np.frexp(z.max())[1]))
    zpos = z[z > 0]
    zm = float(zpos.min())
    norm = float(np.sqrt(np.sum(z**2)))
    lo0 = float(C.alpha_all_shrink()(zm, norm, 1.0))  # proved to collapse (C5)
    top = z.max()
    hi0 = float(C.alpha_gd_like()(top, z[z < top].max(), norm, 1.0))  # proved to grow (C5)
    evals = [0]
    report = progress or (lambda f: None)
    state = {"lo": lo0, "hi": hi0}

    def f_of(flow, a, T):
        fate = flow.run(a, T, deadline=deadline, lower=0.2)
        evals[0] += 1
        if fate.fate == Fate.COLLAPSE:
            state["lo"] = max(state["lo"], a)
            return -math.inf
        if fate.fate == Fate.GROWTH:
            state["hi"] = min(state["hi"], a)
            return math.inf
        if fate.at_horizon:
            return fate.q
        raise BudgetExhausted(fate.status or Status.MAX_STEPS, f"at α = {a}: {fate.why}")

    def rung(flow, T, guess, span, rtol):
        """The root of q_T near ``guess``: secant steps (q_T is close to linear in α there), and
        false position (Illinois) on the certified bracket when a step leaves it."""
        lo, hi = state["lo"], state["hi"]
        a1, a2 = max(lo, guess * (1 - span)), min(hi, guess * (1 + span))
        f1, f2 = f_of(flow, a1, T), f_of(flow, a2, T)
        for _ in range(12):
            if not (math.isfinite(float(f1)) and math.isfinite(float(f2))) or f1 == f2:
                break
            a3 = a2 - f2 * (a2 - a1) / (f2 - f1)
            if not (state["lo"] < a3 < state["hi"]):
                break
            f3 = f_of(flow, a3, T)
            a1, f1, a2, f2 = a2, f2, a3, f3
            if abs(a2 - a1) <= rtol * abs(a2) or f3 == 0:
                return a3
        # bracketed fallback
        if f1 < 0 < f2 or f2 < 0 < f1:
            (a1, f1), (a2, f2) = sorted([(a1, f1), (a2, f2)], key=lambda t: t[0])
        else:
            a1, f1, a2, f2 = state["lo"], -math.inf, state["hi"], math.inf
        if not f1 < 0 < f2:
            a1, f1, a2, f2 = state["lo"], -math.inf, state["hi"], math.inf
        side, prev = 0, None
        for _ in range(300):
            fin = math.isfinite(float(f1)) and math.isfinite(float(f2))
            a = (a1 * f2 - a2 * f1) / (f2 - f1) if fin else (a1 + a2) / 2
            if not (a1 < a < a2):
                a = (a1 + a2) / 2
            if a in (a1, a2):
                return a
            f = f_of(flow, a, T)
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

    def ladder(flow, guess, unc, target, n_min):
        """Roots of q_T on growing horizons T (each at least 1.6 times the last, and long enough
        for the current uncertainty to grow to 1e-3), until two in a row agree to ``target``."""
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
            root = rung(flow, T, root, span, float(target) / 100)
            if prev is not None:
                unc = max(abs(root - prev) / root, float(target) / 1e3)
                if i + 1 >= n_min and abs(root - prev) <= target * root:
                    return root, unc
            else:
                unc = min(float(unc), 1e-2)
            report(min(0.9, 0.9 * math.log10(1 / float(unc)) / max(-math.log10(float(target)), 1)))
            prev = root
        return root, unc

    stopped, certs, value, lo_c, hi_c = None, {}, None, lo0, hi0
    D, text = 0, None
    dps = max(digits, 12) + 12
    try:
        root, unc = ladder(ReducedFlow(z, None), math.sqrt(lo0 * hi0), 0.3, 1e-12, 3)
        with mp.workdps(dps):
            if digits > 11:
                flow = ReducedFlow(z, dps)
                state["lo"], state["hi"] = mp.mpf(state["lo"]), mp.mpf(state["hi"])
                root = mp.mpf(root)
                if digits > 13 or not _certifies(flow, root, mp.mpf(10) ** (-(digits + 2)), deadline, evals):
                    root, unc = ladder(flow, root, max(float(unc), 1e-13), mp.mpf(10) ** (-(digits + 3)), 2)
            else:
                flow = ReducedFlow(z, None)
            w = (mp.mpf(10) if flow.dps else 10.0) ** (-(digits + 2))
            for _attempt in range(4):
                a_lo, a_hi = root * (1 - w), root * (1 + w)
                fl = flow.run(a_lo, None, deadline=deadline)
                fh = flow.run(a_hi, None, deadline=deadline)
                evals[0] += 2
                certs = {"collapses": _cert_dict(a_lo, fl), "grows": _cert_dict(a_hi, fh),
                         "precision": f"{dps} digits (fixed point)" if flow.dps else "float64"}
                if fl.fate == Fate.COLLAPSE and fh.fate == Fate.GROWTH:
                    D, text = _certified_digits(a_lo, a_hi, dps)
                    lo_c, hi_c, value = a_lo, a_hi, root
                    if D >= digits:
                        break
                    w = w / 10  # lo and hi straddle a rounding boundary: a narrower certified bracket
                    continue
                if any(r.fate == Fate.UNDECIDED and not r.at_horizon for r in (fl, fh)):  # a budget ran out
                    stopped = f"certificate budget: {fl.why or fh.why}"
                    break
                if value is not None:  # a narrower bracket failed: keep the certified wider one
                    break
                w = w * 100
            if value is None and stopped is None:
                stopped = "no certified bracket around the computed root"
    except BudgetExhausted as e:
        stopped = f"time budget of {max_seconds:g} s ran out ({e})"
    if stopped is not None:
        value, D, text = None, 0, None
    report(1.0)
    return AlphaC(lo_c, hi_c, value, D, text, certs, stopped,
                  "Taylor series integration of C4's reduced ODE; false position on the saddle's unstable "
                  "coordinate over a ladder of horizons; both sides certified", evals[0], time.perf_counter() - t0)


def _certifies(flow, root, w, deadline, evals) -> bool:
    """Whether root (1 ∓ w) collapse / grow (a quick check before a longer search)."""
    evals[0] += 2
    return (flow.run(root * (1 - w), None, deadline=deadline).fate == Fate.COLLAPSE
            and flow.run(root * (1 + w), None, deadline=deadline).fate == Fate.GROWTH)


def _cert_dict(alpha, run: TaylorRun) -> dict:
    what = {Fate.COLLAPSE: "N < ρ z_min: every coordinate shrinks from then on",
            Fate.GROWTH: "N ≥ ρ z_max: every coordinate grows from then on"}.get(run.fate, run.why)
    return {"alpha_unit": mp.nstr(mp.mpf(alpha), 40), "outcome": run.fate, "certificate": what,
            "time": float(run.tau), "N_scaled": float(run.N), "taylor_steps": run.steps}

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
from dataclasses import dataclass, field

import mpmath as mp
import numpy as np
import sympy as sp

from theorycheck.errors import TheorycheckError


class BudgetExceeded(TheorycheckError):
    """A time budget of the α_c computation ran out (the answer is then inconclusive)."""


# ------------------------------------------------------------------ the ODE, from the symbolic layer
def _log_summand_coefficients():
    """(c, p, q) as functions of (z_j, α, ρ): ln(term j of N²) = c + p τ + q I (C4)."""
    from theorycheck.symbolic import closed_forms as cf
    from theorycheck.symbolic.model import rho, tau

    e = cf.l2_reduced_log_summand()
    p = sp.diff(e, tau)
    q = sp.diff(e, cf.I)
    c = sp.simplify(e - p * tau - q * cf.I)
    if sp.diff(p, tau) != 0 or sp.diff(q, cf.I) != 0 or sp.diff(p, cf.I) != 0 or c.has(tau) or c.has(cf.I):
        raise TheorycheckError("C4's log-summand is not linear in (τ, I): the Taylor integrator does not apply")
    args = (cf.z_j, cf.alpha, rho)
    return (sp.lambdify(args, c, "mpmath"), sp.lambdify(args, p, "mpmath"), sp.lambdify(args, q, "mpmath"))


_COEFFS = None


def coefficients():
    global _COEFFS
    if _COEFFS is None:
        _COEFFS = _log_summand_coefficients()
    return _COEFFS


@dataclass
class Fate:
    """One trajectory's outcome: ``kind`` "collapse" (N < ρ z_+ reached: proved to collapse),
    "grow" (N ≥ ρ z_max reached: proved not to collapse), "horizon" (reached τ = T first; then
    ``q`` = x(T) e^{−z_min T}), or "budget" (a budget ran out: ``why``)."""

    kind: str
    tau: object
    N: object
    q: object = None
    steps: int = 0
    why: str = ""


@dataclass
class ReducedFlow:
    """C4's scalar ODE for one (z, α) with ρ = 1 (z of order 1), in float64
    (``dps`` None) or mpmath at ``dps`` digits. Integrated by a Taylor series method."""

    z: np.ndarray
    dps: int | None = None
    order: int = field(default=0)

    def __post_init__(self):
        z = np.asarray(self.z, float)
        self.zpos_min = float(z[z > 0].min())
        self.zmax = float(z.max())
        self.k_min = int(np.sum(z == self.zpos_min))
        self.active = [float(v) for v in z if v != 0]  # z_j = 0 carries nothing in N
        if self.dps is None:
            self.num = float
            self.exp, self.sqrt, self.log = math.exp, math.sqrt, math.log
            self.tol = 2.0 ** -52
            self.order = self.order or 22
        else:
            self.num = mp.mpf
            self.exp, self.sqrt, self.log = mp.exp, mp.sqrt, mp.log
            self.tol = mp.mpf(10) ** (-(self.dps + 3))
            self.order = self.order or max(24, int(0.9 * self.dps) + 12)

    # the coefficients of one α
    def _setup(self, alpha):
        c_f, p_f, q_f = coefficients()
        with mp.workdps((self.dps or 15) + 10):
            a = mp.mpf(alpha)
            c = [c_f(mp.mpf(v), a, 1) for v in self.active]
            p = [p_f(mp.mpf(v), a, 1) for v in self.active]
            q = [q_f(mp.mpf(v), a, 1) for v in self.active]
        n = self.num
        return [n(x) for x in c], [n(x) for x in p], [n(x) for x in q]

    def run(self, alpha, T=None, *, deadline: float | None = None, max_steps: int = 200000,
            tau_cap: float | None = None, lower: float = 1.0) -> Fate:
        """Integrate from τ = 0 (I = 0) until a certificate — N < ``lower``·ρ z_min (collapse;
        any lower ≤ 1 is a certificate) or N ≥ ρ z_max (growth) — or τ = T (then the saddle's
        unstable coordinate q), or a budget (``max_steps``, ``tau_cap``, ``deadline``)."""
        if self.dps is not None:
            return self._run_fixed(alpha, T, deadline, max_steps, tau_cap, lower)
        c, p, q = self._setup(alpha)
        zmin, zmax = self.zpos_min, self.zmax
        m = self.active.index(self.zpos_min)
        lnk = math.log(self.k_min)
        d, K = len(c), self.order
        tau_cap = tau_cap if tau_cap is not None else 1e4 / zmin
        tau, I, steps, h0 = 0.0, 0.0, 0, 0.5 / zmax
        lo_level = lower * zmin
        exp, sqrt = math.exp, math.sqrt
        while True:
            a = [c[k] + p[k] * tau + q[k] * I for k in range(d)]
            M = max(a)
            w = [exp(ak - M) for ak in a]
            S0 = sum(w)
            N = exp((M + math.log(S0)) / 2)
            stop = self._check(tau, N, T, a[m], lnk, steps, max_steps, tau_cap, deadline, lo_level)
            if stop is not None:
                return stop
            scale = exp(-M / 2)
            Ic = [I, scale / sqrt(S0)]
            E = [[wk] for wk in w]
            S = [S0]
            P = [1.0 / sqrt(S0)]
            for nn in range(1, K):
                Sn = 0.0
                for k in range(d):
                    Ek, qk = E[k], q[k]
                    acc = (p[k] + qk * Ic[1]) * Ek[nn - 1]
                    for j in range(2, nn + 1):
                        acc += j * qk * Ic[j] * Ek[nn - j]
                    Ek.append(acc / nn)
                    Sn += acc / nn
                S.append(Sn)
                acc = 0.0
                for j in range(1, nn + 1):
                    acc += (j / 2 - nn) * S[j] * P[nn - j]
                P.append(acc / (nn * S0))
                Ic.append(scale * P[nn] / (nn + 1))
            h = self._step(Ic, K, h0, 1.0, 1.0)
            if T is not None and tau < T < tau + h:
                h = T - tau
            acc = Ic[K]
            for j in range(K - 1, 0, -1):
                acc = acc * h + Ic[j]
            I += acc * h
            tau += h
            h0 = h
            steps += 1

    def _step(self, coef, K, h0, one, safety):
        """A step from the last two Taylor coefficients (relative tolerance ``tol`` on the first)."""
        h = None
        ref = abs(coef[1])
        for j in (K - 1, K):
            cj = abs(coef[j])
            if cj > 0:
                hj = float((self.tol * ref / cj) ** (one / (j - 1)))
                h = hj if h is None else min(h, hj)
        return 0.7 * (h if h is not None else 4 * h0)

    def _check(self, tau, N, T, am, lnk, steps, max_steps, tau_cap, deadline, lo_level):
        if N < lo_level:
            return Fate("collapse", tau, N, steps=steps)
        if N >= self.zmax:
            return Fate("grow", tau, N, steps=steps)
        if T is not None and tau >= T:
            e = mp if self.dps is not None else math
            x = e.exp((am + lnk) / 2) / self.zpos_min - 1
            return Fate("horizon", tau, N, q=x * e.exp(-self.zpos_min * tau), steps=steps)
        if steps >= max_steps:
            return Fate("budget", tau, N, steps=steps, why=f"{max_steps} Taylor steps")
        if tau >= tau_cap:
            return Fate("budget", tau, N, steps=steps, why=f"τ reached {float(tau_cap):g} without a certificate")
        if deadline is not None and (steps & 7) == 0 and time.perf_counter() > deadline:
            raise BudgetExceeded("time budget")
        return None

    def _run_fixed(self, alpha, T, deadline, max_steps, tau_cap, lower) -> Fate:
        """The same Taylor method at ``dps`` digits, in fixed point (Python integers scaled by
        2^B) for the series recurrences, mpmath for the d exponentials of each step; the series
        is taken in σ = s/h0 (h0 the previous step) so that its coefficients stay O(1)."""
        B = int((self.dps + 12) * 3.33) + 8
        ONE = 1 << B
        c, p, q = self._setup(alpha)
        zmin = mp.mpf(self.zpos_min)
        m = self.active.index(self.zpos_min)
        lnk = mp.log(self.k_min)
        d, K = len(c), self.order
        tau_cap = mp.mpf(tau_cap if tau_cap is not None else 1e4 / self.zpos_min)
        Tm = None if T is None else mp.mpf(T)
        lo_level = mp.mpf(lower) * zmin
        pf = [int(mp.floor(x * ONE)) for x in p]
        qf = [int(mp.floor(x * ONE)) for x in q]
        tau, I = mp.mpf(0), mp.mpf(0)
        h0 = mp.mpf(0.5) / mp.mpf(self.zmax)
        steps = 0

        def fix(x):
            return int(mp.floor(mp.ldexp(x, B)))

        while True:
            a = [c[k] + p[k] * tau + q[k] * I for k in range(d)]
            M = max(a)
            wm = [mp.exp(ak - M) for ak in a]
            S0m = mp.fsum(wm)
            N = mp.exp((M + mp.log(S0m)) / 2)
            stop = self._check(tau, N, Tm, a[m], lnk, steps, max_steps, tau_cap, deadline, lo_level)
            if stop is not None:
                return stop
            hf = fix(h0)
            scale = mp.exp(-M / 2)
            # scaled coefficients: I_j h0^j (fixed), E_k,n h0^n, S_n h0^n, P_n h0^n
            w = [fix(x) for x in wm]
            S0 = sum(w)
            P0 = fix(1 / mp.sqrt(S0m))
            invS0 = fix(1 / S0m)
            sc = fix(scale)
            I1 = (sc * P0 >> B) * hf >> B  # I_1 h0
            Ic = [0, I1]
            E = [[wk] for wk in w]
            S = [S0]
            P = [P0]
            g1 = [((pf[k] * hf >> B) + (qf[k] * I1 >> B)) for k in range(d)]
            jg = [[0, g1[k]] for k in range(d)]
            for nn in range(1, K):
                Sn = 0
                for k in range(d):
                    Ek, jgk = E[k], jg[k]
                    acc = 0
                    for j in range(1, nn + 1):
                        acc += jgk[j] * Ek[nn - j]
                    v = (acc >> B) // nn
                    Ek.append(v)
                    Sn += v
                S.append(Sn)
                acc = 0
                for j in range(1, nn + 1):
                    acc += (j - 2 * nn) * S[j] * P[nn - j]
                Pn = ((acc >> B) * invS0 >> B) // (2 * nn)
                P.append(Pn)
                In1 = ((sc * Pn >> B) * hf >> B) // (nn + 1)  # I_{nn+1} h0^{nn+1}
                Ic.append(In1)
                for k in range(d):
                    jg[k].append((nn + 1) * (qf[k] * In1 >> B))
            coef = [mp.ldexp(x, -B) for x in Ic]
            sig = self._step(coef, K, 1.0, mp.mpf(1), 1.0)
            h = h0 * mp.mpf(sig)
            if Tm is not None and tau < Tm < tau + h:
                h = Tm - tau
            s = fix(h / h0)
            acc = Ic[K]
            for j in range(K - 1, 0, -1):
                acc = (acc * s >> B) + Ic[j]
            I = I + mp.ldexp(acc * s >> B, -B)
            tau = tau + h
            h0 = h
            steps += 1


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
    lo0 = zm / (math.sqrt(2) * norm)  # alpha_all_shrink: proved to collapse (C5)
    top = z.max()
    hi0 = (top + z[z < top].max()) / (math.sqrt(2) * norm)  # alpha_gd_like: proved to grow (C5)
    evals = [0]
    report = progress or (lambda f: None)
    state = {"lo": lo0, "hi": hi0}

    def f_of(flow, a, T):
        fate = flow.run(a, T, deadline=deadline, lower=0.2)
        evals[0] += 1
        if fate.kind == "collapse":
            state["lo"] = max(state["lo"], a)
            return -math.inf
        if fate.kind == "grow":
            state["hi"] = min(state["hi"], a)
            return math.inf
        if fate.kind == "horizon":
            return fate.q
        raise BudgetExceeded(f"at α = {a}: {fate.why}")

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
            root = rung(flow, T, root, max(float(unc) * 10, float(target)), float(target) / 100)
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
                if fl.kind == "collapse" and fh.kind == "grow":
                    D, text = _certified_digits(a_lo, a_hi, dps)
                    lo_c, hi_c, value = a_lo, a_hi, root
                    if D >= digits:
                        break
                    w = w / 10  # lo and hi straddle a rounding boundary: a narrower certified bracket
                    continue
                if "budget" in (fl.kind, fh.kind):
                    stopped = f"certificate budget: {fl.why or fh.why}"
                    break
                if value is not None:  # a narrower bracket failed: keep the certified wider one
                    break
                w = w * 100
            if value is None and stopped is None:
                stopped = "no certified bracket around the computed root"
    except BudgetExceeded as e:
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
    return (flow.run(root * (1 - w), None, deadline=deadline).kind == "collapse"
            and flow.run(root * (1 + w), None, deadline=deadline).kind == "grow")


def _cert_dict(alpha, fate: Fate) -> dict:
    what = {"collapse": "N < ρ z_min: every coordinate shrinks from then on",
            "grow": "N ≥ ρ z_max: every coordinate grows from then on"}.get(fate.kind, fate.why)
    return {"alpha_unit": mp.nstr(mp.mpf(alpha), 40), "outcome": fate.kind, "certificate": what,
            "time": float(fate.tau), "N_scaled": float(fate.N), "taylor_steps": fate.steps}

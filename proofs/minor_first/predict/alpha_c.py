"""α_c, the collapse threshold of ℓ2-SAM (L = 2, one example, balanced init), in floating point (C5): trajectories
collapse for α < α_c and do not for α > α_c.

- :func:`collapse_threshold`: α_c(z, ρ) = ρ·α_c(z/max z, 1) to any number of checked digits, from the α_c search at
  ρ = 1 (:mod:`theorycheck.proofs.minor_first.predict.collapse`: Taylor integration of C4's reduced ODE, both sides
  checked by a persisting condition), for the numbers typed where the scalings are exact (:func:`exact_scale_floats`);
- :func:`classify_collapse`: one α classified by C4's reduced ODE (the engine's integrator, the pack's reduction)
  until N < ρ z_min (collapse) or N ≥ ρ z_max (growth), both persisting;
- :func:`collapse_threshold_bisection`: α_c by bisection of those classifications, an independent check.

A floating-point check, not a proof: :mod:`theorycheck.proofs.minor_first.proved.alpha_c` proves a bracket. The
closed-form thresholds beside α_c (α_all-shrink, α_GD-like) are :mod:`theorycheck.proofs.minor_first.predict.thresholds`.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from theorycheck.proofs.minor_first.predict.thresholds import Threshold, alpha_all_shrink, alpha_gd_like, positive_z

from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.optimizers import SAM_L2
from theorycheck.status import Fate
from theorycheck.strength import float_check, not_decided, proved
from theorycheck.symbolic import theory_forms as MF

__all__ = ["Classification", "classify_collapse", "exact_scale_floats", "collapse_threshold", "collapse_threshold_bisection"]


@dataclass
class Classification:
    """One trajectory's :class:`~theorycheck.status.Fate` with the persisting condition it reached in floating
    point (``condition``): collapse (N fell below ρ z_min: every rate is negative from then on), growth (N
    reached ρ z_max: every rate is ≥ 0 from then on), or undecided (no condition within the budget:
    inconclusive); ``collapses`` is True, False or None accordingly (the JSON key)."""

    alpha: float
    fate: Fate
    condition: str
    time: float | None
    N: float | None
    method: str

    @property
    def collapses(self) -> bool | None:
        return self.fate.collapses

    def as_dict(self) -> dict:
        return {"alpha": self.alpha, "collapses": self.collapses, "condition": self.condition,
                "time": self.time, "N": self.N, "method": self.method}


def _norm_path(tr, z: np.ndarray) -> np.ndarray:
    """N(τ) at the stored steps of an ℓ2, L = 2 trajectory: N² = Σ_j summand(z_j, u_j), u = |β|^{1/2}."""
    from theorycheck.symbolic.forms import balanced_field

    f = balanced_field(2, SAM_L2)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        u = np.exp(0.5 * np.asarray(tr.log_abs_beta, dtype=float))
        return np.sqrt(np.nansum(f.summand(z[None, :], u), axis=1))


def classify_collapse(z, alpha: float, rho: float, *, digits: int | None = None,
                      t_max: float | None = None, max_seconds: float = 60.0) -> Classification:
    """Integrate C4's reduced ODE for (z, α, ρ) until a persisting condition of collapse or of growth
    (ℓ2-SAM, L = 2, one example, z > 0; a floating-point check). The horizon doubles from ``t_max``
    (default 10/z_min) until a condition is reached or until ``max_seconds`` is spent."""
    from theorycheck.proofs.minor_first.reduced import REDUCTIONS

    from theorycheck.setting import Setting
    from theorycheck.solvers.integrate import solve
    from theorycheck.solvers.trajectory import Budget

    z = np.asarray(z, float)
    if np.any(z <= 0):
        raise TheorycheckError("the collapse threshold is computed for z > 0 (see alpha_all_shrink for other signs)")
    s = Setting.from_z(z, depth=2, optimizer=SAM_L2, rho=rho, alpha=alpha)
    levels = MF.l2_certificate_levels(z, rho)  # C5's persisting levels, from the symbolic layer
    lo_level, hi_level = float(levels["collapse"]), float(levels["no_collapse"])
    T = float(t_max or 10.0 / z.min())
    import time as _time

    t0 = _time.perf_counter()
    method = f"reduced C4 ODE, {'mpmath ' + str(digits) + ' digits' if digits else 'float64'}"
    while True:
        left = max_seconds - (_time.perf_counter() - t0)
        if left <= 0:
            return Classification(alpha, Fate.UNDECIDED, f"no persisting condition by τ = {T / 2:g} within {max_seconds:g} s",
                                  None, None, method)
        tr = solve(s, t_max=T, method="reduced", digits=digits, budget=Budget(max_seconds=left), reductions=REDUCTIONS)
        N = _norm_path(tr, z)
        below = np.flatnonzero(N < lo_level)
        above = np.flatnonzero(N >= hi_level)
        first_below = below[0] if below.size else None
        first_above = above[0] if above.size else None
        if tr.collapse_time is not None and first_below is None:
            return Classification(alpha, Fate.COLLAPSE, "the integrator's collapse event (N → 0)", float(tr.collapse_time),
                                  0.0, method)
        if first_below is not None and (first_above is None or first_below < first_above):
            return Classification(alpha, Fate.COLLAPSE, "N < ρ z_min: every coordinate shrinks from then on",
                                  float(tr.t[first_below]), float(N[first_below]), method)
        if first_above is not None:
            return Classification(alpha, Fate.GROWTH, "N ≥ ρ z_max: every coordinate grows from then on",
                                  float(tr.t[first_above]), float(N[first_above]), method)
        if not tr.successful:
            return Classification(alpha, Fate.UNDECIDED, f"integration stopped: {tr.stopped_because} ({tr.message})",
                                  None, None, method)
        T *= 2


def exact_scale_floats(z) -> tuple[np.ndarray, bool]:
    """Floats with the α_c of the exact ``z`` (numbers :func:`theorycheck.arith.exact.exact` reads): z itself when
    its entries are binary numbers, else the primitive integer vector of z (α_c(c z) = α_c(z), so a decimal
    z = (0.52, 0.91, 1.77) is computed exactly as (52, 91, 177)); the flag says whether the floats are
    exact (False: no integer vector fits in 53 bits, and the floats are z rounded)."""
    import math
    from functools import reduce

    from theorycheck.arith.exact import exact_vector

    zq = [e.value for e in exact_vector(z, "z")]
    if all(Fraction(float(v)) == v for v in zq):
        return np.array([float(v) for v in zq]), True
    den = reduce(lambda a, b: a * b // math.gcd(a, b), (v.denominator for v in zq), 1)
    ints = [int(v * den) for v in zq]
    g = reduce(math.gcd, (abs(n) for n in ints), 0) or 1
    ints = [n // g for n in ints]
    if max(abs(n) for n in ints) <= 2**53:
        return np.array([float(n) for n in ints]), True
    return np.array([float(v) for v in zq]), False


def _mp_rho(rho):
    """ρ (a float, Fraction, Exact or decimal string) as an mpf at the current mpmath precision."""
    import mpmath as mp

    from theorycheck.arith.exact import exact

    q = exact(rho, "rho").value
    return mp.mpf(q.numerator) / q.denominator


def collapse_threshold(z, rho, *, digits: int = 12, max_seconds: float = 600.0,
                       progress: bool | None = None) -> Threshold:
    """α_c: trajectories collapse for α < α_c and do not for α > α_c (ℓ2-SAM, L = 2, one
    example, z > 0), with ``digits`` checked significant digits (:mod:`theorycheck.proofs.minor_first.predict.collapse`:
    Taylor integration of C4's reduced ODE, root of the saddle's unstable coordinate, both sides
    checked by a persisting condition in floating point: a floating-point check, its ``strength``).
    ``z``, ``rho``: floats, or exact numbers (decimal strings, Fractions, Exact): α_c is computed for
    them exactly where the scalings allow (:func:`exact_scale_floats`; ρ enters as a factor).
    ``value`` is None (inconclusive, with ``note`` saying why) when a check could not be completed;
    a budget never changes a checked value. ``value_text`` carries every checked digit. All entries
    of z equal: α_c = alpha_all_shrink exactly (closed form)."""
    from theorycheck.proofs.minor_first.predict import collapse as col

    from theorycheck.progress import Progress

    zs, exact_floats = exact_scale_floats(z)
    z = positive_z(zs)
    rho_f = float(rho)
    if np.any(z <= 0):
        raise TheorycheckError("the collapse threshold is computed for z > 0 (with a zero or negative entry the "
                               "growth condition N ≥ ρ z_max does not persist)")
    if not (np.isfinite(rho_f) and rho_f >= 0):
        raise TheorycheckError("ρ must be a finite number ≥ 0")
    if not 1 <= int(digits) <= 200:
        raise ArgumentError(f"digits={digits!r}: give a whole number from 1 to 200", "digits")
    if rho_f == 0:
        return Threshold("alpha_collapse", 0.0, True, "0", "ρ = 0 is GD: no collapse for any α > 0",
                         value_text="0", strength=proved())
    lo_t = alpha_all_shrink(z, rho_f)
    if np.all(z == z[0]):
        return Threshold("alpha_collapse", lo_t.value, True, lo_t.expression,
                         "all entries of z equal: every coordinate has the same rate, so collapse ⇔ N0 < ρ z_min",
                         value_text=repr(lo_t.value))
    bar = Progress(f"alpha_c ({digits} digits)", progress)
    t0 = _time.perf_counter()

    def report(f):  # shown only for work that takes more than 2 s
        if _time.perf_counter() - t0 > 2.0:
            bar.update(f)

    try:
        r = col.alpha_c_unit(z, int(digits), max_seconds=max_seconds, progress=report)
    finally:
        if _time.perf_counter() - t0 > 2.0:
            bar.close()
    return _scaled_threshold(r, rho, int(digits), exact_floats)


def _scaled_threshold(r, rho, digits: int, exact_floats: bool) -> Threshold:
    """The Threshold of α_c(z, ρ) = ρ·α_c(z, 1) from the unit search ``r`` (:class:`collapse.AlphaC`)."""
    import mpmath as mp

    from theorycheck.arith.decimals import common_digits, outward

    check = {"collapses": r.checks.get("collapses"), "grows": r.checks.get("grows"),
             "arithmetic": r.checks.get("arithmetic"), "method": r.method, "evaluations": r.evaluations,
             "scaling": "α_c(z, ρ) = ρ · α_c(z / max z, 1) (exact symmetries of the flow)"}
    if not exact_floats:
        check["scaling"] += ("; z has no integer multiple within 53 bits: the float α_c is about z rounded to "
                             "float64")
    if r.value is None:
        return Threshold("alpha_collapse", None, False, None, f"inconclusive: {r.stopped}", check,
                         strength=not_decided(r.stopped))
    with mp.workdps(max(digits, 15) + 15):
        rho_m = _mp_rho(rho)
        lo, hi, val = (mp.mpf(r.lo) * rho_m, mp.mpf(r.hi) * rho_m, mp.mpf(r.value) * rho_m)
        D, text = common_digits(lo, hi, max(digits, 15) + 10)
        width = float((hi - lo) / val)
        check.update(bracket=[outward(lo, D + 5, "down"), outward(hi, D + 5, "up")], relative_width=width,
                     significant_digits=D)
    prec = check["arithmetic"] or "float64"
    note = (f"bracket [{check['bracket'][0]}, {check['bracket'][1]}] checked in floating point, {prec}: {D} "
            "significant digits (value_text); the lower end reached N < ρ z_min (collapse persists), the upper "
            "N ≥ ρ z_max (growth persists); a floating-point check, not a proof")
    digits_of = None if prec == "float64" else int(prec.split()[0])
    return Threshold("alpha_collapse", float(val), False, None, note, check, value_text=text,
                     strength=float_check(digits_of))


def _bisect(z, rho, lo_c: Classification, hi_c: Classification, digits: int | None, rel_tol: float,
            deadline: float) -> tuple:
    """Bisection in log α between a collapsing and a growing classification, to ``rel_tol``, at
    ``digits`` (None: float64): (lo, hi, why it stopped early or None)."""
    while hi_c.alpha / lo_c.alpha - 1 > rel_tol:
        left = deadline - _time.perf_counter()
        if left <= 0:
            return lo_c, hi_c, "max_seconds"
        mid = float(np.sqrt(lo_c.alpha * hi_c.alpha))
        if mid in (lo_c.alpha, hi_c.alpha):
            break
        c = classify_collapse(z, mid, rho, digits=digits, max_seconds=max(1.0, left))
        if c.collapses is None:
            return lo_c, hi_c, f"inconclusive at α = {mid!r}: {c.condition}"
        if c.collapses:
            lo_c = c
        else:
            hi_c = c
    return lo_c, hi_c, None


def _recheck(z, rho, lo_c, hi_c, digits: int, rel_tol: float, deadline: float) -> tuple:
    """Re-classify the float64 bracket at ``digits`` digits; where float64 misjudged an end, widen to a
    consistent bracket and bisect at that precision: (lo, hi, why it stopped early or None)."""
    def left() -> float:
        return max(1.0, deadline - _time.perf_counter())

    for _ in range(8):
        lo_m, hi_m = (c if c.method == "closed form" else
                      classify_collapse(z, c.alpha, rho, digits=digits, max_seconds=left())
                      for c in (lo_c, hi_c))
        if lo_m.collapses is None or hi_m.collapses is None:
            return lo_c, hi_c, "high-precision check inconclusive"
        if lo_m.collapses and not hi_m.collapses:
            return lo_m, hi_m, None
        w = hi_c.alpha / lo_c.alpha  # float64 was wrong at one end: widen, then bisect at high precision
        if not lo_m.collapses:
            hi_c = lo_m
            lo_c = classify_collapse(z, lo_c.alpha / w**4, rho, digits=digits, max_seconds=left())
        else:
            lo_c = hi_m
            hi_c = classify_collapse(z, hi_c.alpha * w**4, rho, digits=digits, max_seconds=left())
        if lo_c.collapses is not True or hi_c.collapses is not False:
            return lo_c, hi_c, "could not re-bracket at high precision"
        lo_c, hi_c, stop = _bisect(z, rho, lo_c, hi_c, digits, rel_tol, deadline)
        if stop:
            return lo_c, hi_c, stop
    return lo_c, hi_c, None


def collapse_threshold_bisection(z, rho: float, *, rel_tol: float = 1e-12, digits: int = 30,
                                 max_seconds: float = 300.0) -> Threshold:
    """The previous method, kept for ``benchmarks/bench_alpha_c.py``: bisection in log α between
    alpha_all_shrink (collapses) and alpha_gd_like (grows) with float64 classifications, then the two
    bracketing α are re-classified at ``digits`` digits (mpmath) and the bisection continues there if
    float64 was wrong. The check is the pair of bracketing classifications (a floating-point check).
    For z with all entries equal, α_c = alpha_all_shrink exactly (closed form)."""
    z = np.asarray(z, float)
    if np.any(z <= 0):
        raise TheorycheckError("the collapse threshold is computed for z > 0")
    if rho == 0:
        return Threshold("alpha_collapse", 0.0, True, "0", "ρ = 0 is GD: no collapse for any α > 0",
                         strength=proved())
    lo_t = alpha_all_shrink(z, rho)
    if np.all(z == z[0]):
        return Threshold("alpha_collapse", lo_t.value, True, lo_t.expression,
                         "all entries of z equal: every coordinate has the same rate, so collapse ⇔ N0 < ρ z_min")
    deadline = _time.perf_counter() + max_seconds
    lo_c = Classification(lo_t.value, Fate.COLLAPSE, "α ≤ alpha_all_shrink: every coordinate shrinks from the "
                          "start (C5, proved)", 0.0, None, "closed form")
    hi_c = Classification(alpha_gd_like(z, rho).value, Fate.GROWTH, "α ≥ alpha_gd_like: every coordinate grows "
                          "from the start (C5, proved)", 0.0, None, "closed form")
    lo_c, hi_c, stop = _bisect(z, rho, lo_c, hi_c, None, rel_tol, deadline)
    if not stop:
        lo_c, hi_c, stop = _recheck(z, rho, lo_c, hi_c, digits, rel_tol, deadline)
    value = float(np.sqrt(lo_c.alpha * hi_c.alpha))
    width = hi_c.alpha / lo_c.alpha - 1
    sig = float(-np.log10(width / 2)) if width > 0 else 16.0
    note = (f"bisection bracket [{lo_c.alpha!r}, {hi_c.alpha!r}] (relative width {width:.2e}, "
            f"≈ {sig:.1f} significant digits)")
    if stop:
        note += f"; stopped early: {stop}"
    return Threshold("alpha_collapse", value, False, None, note,
                     {"collapses": lo_c.as_dict(), "grows": hi_c.as_dict(), "relative_width": width,
                      "significant_digits": sig}, strength=float_check(digits))

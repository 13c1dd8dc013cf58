"""α_c(L) for even depth L ≥ 4 in floating point (ℓ2-SAM, one example z > 0, balanced init α·1), through the
degenerate equilibrium: a bisection in c on the ratio reduction blown up at r = 1.

At α_c(L) the path of the balanced flow runs into the interior equilibrium u* (every r_j = 1), where the field
vanishes to order L − 1: integrated in θ = ln u, the time to a persisting condition grows like a power of
1/|α − α_c| and a bisection stalls at a few digits. In r_j = 1 + e^λ ω_j, |ω| = 1, with the clock ς of
:func:`theorycheck.symbolic.validated_fields.ratio_blowup_system`, the equilibrium is a hyperbolic saddle at λ = −∞ and the
time to pass it grows only like ln 1/|c − c*|. The path starts on the ray r(0) = c z, with c = ρ/(α √L ‖z‖₂)
(:func:`theorycheck.symbolic.depth.alpha_of_c`). Fates (persisting lemmas, ``theorycheck prove`` P4): every
ω_j > 0 (every r_j > 1) ⇒ collapse; every ω_j ≤ 0 (every r_j ≤ 1) ⇒ growth. The fate is monotone in c
(P3), so a bisection in ln c between 1/z_max (growth) and 1/z_min (collapse) finds c*.

Every integration is DOP853 stepped one step at a time under a step budget and a horizon in ς, and the
bisection under an evaluation budget: each answer names the budget that ran out, never a clock.
:mod:`theorycheck.proofs.minor_first.proved.ratio_blowup` proves the ends of this bracket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from theorycheck.proofs.minor_first.predict.bisect import bisect_fate

from theorycheck.solvers.persisting import step_to_condition
from theorycheck.status import Fate
from theorycheck.symbolic import theory_forms as MF

__all__ = ["CSearch", "FateRun", "METHOD", "PRECISION", "c_bracket", "fate_of_c", "start"]

RTOL, ATOL = 1e-13, 1e-15
#: the margin a float64 ω_j must clear for a lemma's sign to count
MARGIN = 1e-9
#: how far |ω| may drift from 1 before the state is put back on the sphere (at the same point r)
RENORM = 1e-12
PRECISION = f"float64 (DOP853, rtol {RTOL:g}, atol {ATOL:g})"
METHOD = ("bisection in ln c, c = ρ/(α√L‖z‖₂), on the ratio reduction blown up at r = 1 (the equilibrium becomes "
          "a hyperbolic saddle); each c classified by the first persisting condition: every ω_j > 0 (collapse) or "
          "every ω_j ≤ 0 (growth)")


@dataclass
class FateRun:
    """One blown-up integration: its c, its fate, where the condition held (ς), the steps spent, why."""

    c: float
    fate: Fate
    varsigma: float | None
    steps: int
    why: str


def start(c: float, z: np.ndarray) -> np.ndarray:
    """(λ, ω) of r(0) = c z: λ = ln ‖c z − 1‖, ω = (c z − 1)/‖c z − 1‖ (None-free only for c z ≠ 1)."""
    s = c * z - 1.0
    R = math.hypot(*s)  # scaled: no overflow where ‖c z − 1‖² would leave float64
    return np.concatenate([[math.log(R)], s / R])


def _condition(omega: np.ndarray) -> Fate | None:
    if np.all(omega > MARGIN):
        return Fate.COLLAPSE
    if np.all(omega < -MARGIN):
        return Fate.GROWTH
    return None


def fate_of_c(c: float, z, L: int, *, max_steps: int = 20000, s_max: float = 400.0) -> FateRun:
    """The fate of the path from r(0) = c z (z > 0; c z ≠ 1) of the blown-up depth-L system, in float64: stepped
    with DOP853 until every ω_j > 0 (collapse) or every ω_j ≤ 0 (growth) — checked after every step — or until
    ``max_steps`` steps or the horizon ς = ``s_max`` run out (undecided, saying which), or the field leaves float64
    (undecided)."""
    z = np.asarray(z, float)
    _, num = MF.ratio_blowup(int(L), z.size)
    y0 = start(c, z)
    om0 = y0[1:]
    if np.all(om0 > 0):
        return FateRun(c, Fate.COLLAPSE, 0.0, 0, "every r_j(0) > 1")
    if np.all(om0 <= 0):
        return FateRun(c, Fate.GROWTH, 0.0, 0, "every r_j(0) ≤ 1")
    zt = tuple(float(v) for v in z)

    def rhs(_t, y):
        with np.errstate(all="ignore"):
            out = np.asarray(num(*y, *zt), dtype=float)
        if not np.all(np.isfinite(out)):  # scipy's step control loops for ever on a NaN field: stop here instead
            raise _NonFinite(f"the field is not finite in float64 at λ = {y[0]:.6g}")
        return out

    try:
        return _stepped(c, rhs, y0, max_steps, s_max)
    except _NonFinite as e:
        return FateRun(c, Fate.UNDECIDED, None, 0, f"{e} (z spans too many orders of magnitude for float64)")


class _NonFinite(ArithmeticError):
    """The blown-up field left float64 (overflow or NaN) during a run."""


def _stepped(c: float, rhs, y0: np.ndarray, max_steps: int, s_max: float) -> FateRun:
    """:func:`fate_of_c`'s DOP853 loop from y0, checking the persisting conditions after every step."""
    from scipy.integrate import DOP853

    def back_on_the_sphere(sol):
        """Where ⟨ω, G⟩ < 0 the sphere |ω| = 1 repels rounding errors: put the state back on it, at the same
        point r = 1 + e^λ ω = 1 + e^(λ + ln ν) (ω/ν), and go on from there."""
        nu = float(np.linalg.norm(sol.y[1:]))
        if abs(nu - 1.0) <= RENORM:
            return None
        y = np.concatenate([[sol.y[0] + math.log(nu)], sol.y[1:] / nu])
        return DOP853(rhs, sol.t, y, s_max, rtol=RTOL, atol=ATOL, first_step=min(sol.step_size, s_max - sol.t))

    def persisting(_t, y):
        f = _condition(y[1:])
        if f is Fate.COLLAPSE:
            return f, "every r_j > 1 (every ω_j > 0) from then on"
        if f is Fate.GROWTH:
            return f, "every r_j ≤ 1 (every ω_j ≤ 0) from then on"
        return None

    run = step_to_condition(DOP853(rhs, 0.0, y0, s_max, rtol=RTOL, atol=ATOL), persisting, max_steps=max_steps,
                            clock="ς", horizon_why=f"horizon ς = {s_max:g} reached with no condition",
                            restart=back_on_the_sphere)
    return FateRun(c, run.outcome if run.outcome is not None else Fate.UNDECIDED, run.t, run.steps, run.why)


@dataclass
class CSearch:
    """A bracket of c*: ``grows`` (the smaller c: growth) and ``collapses`` (the larger c: collapse), the
    integrations spent, and ``stopped`` (the budget that ran out before ``rel``, or None)."""

    grows: FateRun
    collapses: FateRun
    evaluations: int
    stopped: str | None

    @property
    def relative_width(self) -> float:
        return self.collapses.c / self.grows.c - 1.0


def c_bracket(z, L: int, *, rel: float = 1e-13, max_evaluations: int = 120, max_steps: int = 20000,
              s_max: float = 400.0, max_total_steps: int = 200000) -> CSearch:
    """Bisection in ln c between 1/z_max (every r_j(0) ≤ 1: growth) and 1/z_min (every r_j(0) ≥ 1: collapse,
    P4) until collapses.c/grows.c − 1 ≤ ``rel``. A midpoint left undecided is replaced by the quarter points;
    if all three are undecided, or ``max_evaluations`` integrations or ``max_total_steps`` steps over the search are
    spent, the search stops and says so (each integration also stops at ``max_steps`` steps or ς = ``s_max``).
    Below about 4e-14 the float64 start r(0) = c z is no longer resolved: ``rel`` is raised to that."""
    z = np.asarray(z, float)
    rel = max(float(rel), 4e-14)
    lo = FateRun(1.0 / z.max(), Fate.GROWTH, 0.0, 0, "closed form: every r_j(0) ≤ 1")
    hi = FateRun(1.0 / z.min(), Fate.COLLAPSE, 0.0, 0,
                 "closed form: every r_j(0) ≥ 1 (where r_j = 1 the others' rates push it back above 1)")
    lo, hi, evals, stopped = bisect_fate(
        lo, hi, lambda c: fate_of_c(c, z, L, max_steps=max_steps, s_max=s_max), at=lambda r: r.c,
        fate=lambda r: r.fate, upper=Fate.COLLAPSE, rel=rel, max_evaluations=max_evaluations, what="c",
        steps=lambda r: r.steps, max_steps=max_total_steps)
    return CSearch(lo, hi, evals, stopped)

"""The even-L ≥ 4 proved-fate system (:class:`~theorycheck.proved.fate_system.FateSystem`): the ratio reduction
blown up at the degenerate equilibrium, its validated (Lohner) run and its persisting lemmas.

At α_c(L) the path runs into the interior equilibrium u* (û = 0: every r_j = 1), where the field vanishes to order
L − 1: a longer horizon buys almost nothing (the approach is algebraic). The ratio reduction and its blow-up
(:mod:`theorycheck.symbolic.validated_fields`, checked by ``theorycheck prove`` P) make it hyperbolic: in r_j = 1 − û_j/u_j
with the clock dσ = (N/ρ)dτ the flow closes on r, starts on the ray r(0) = c z (c = ρ/(α √L ‖z‖₂)), and with
r = 1 + e^λ ω, |ω| = 1, dς = R^{L−2} dσ the field is regular at R = 0, where the equilibrium becomes a saddle on
the sphere. Fates (persisting lemmas, P4): every r_j > 1 (every ω_j > 0) ⇒ collapse; every r_j ≤ 1 (every
ω_j ≤ 0) ⇒ growth. The bracket is found by float64 bisection in c on the blown-up system
(:func:`theorycheck.proofs.minor_first.predict.blowup.c_bracket`), then each end is proved by validated integration (Lohner's method)
of the blown-up system. Steps, evaluations and width end a run, never seconds: the outcome does not depend on
the machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath as mp
import numpy as np

from theorycheck.arith.exact import ExactInputs, exact, exact_vector
from theorycheck.errors import TheorycheckError
from theorycheck.proved.bracket import FateProof
from theorycheck.proved.fate_system import Ends, FateSystem, Segment
from theorycheck.status import Budget, Status

__all__ = ["RatioBlowup"]

#: the most digits the float64 search of the bracket reaches
SEARCH_DIGITS = 13


@lru_cache(maxsize=16)
def _systems(L: int, d: int):
    from theorycheck.symbolic import forms as C
    from theorycheck.symbolic import theory_forms as MF

    (t, y, p, f), num = MF.ratio_blowup(L, d)
    return C.arb_system(f"ratio-blowup-L{L}-d{d}", t, y, p, f), num


@dataclass
class _State:
    """A point of the blown-up path: the time ς and (λ, ω_1 … ω_d) (balls)."""

    t: object
    y: list


class RatioBlowup(FateSystem):
    """Proves the fate of one α at even depth L ≥ 4 (see the module docstring)."""

    FORMAT = "theorycheck-validated-certificate-depth/2"
    LEMMAS = ("P3", "P4", "P5", "P6")
    LEMMA_NAMES = {"collapse": ("collapse: every r_j > 1 (every ω_j > 0)",),
                   "growth": ("growth: every r_j ≤ 1 (every ω_j < 0)",)}
    STATEMENT = ("ℓ2-SAM, even L = {L}, one example z, balanced init α·1: α = lower collapses (every r_j > 1) and "
                 "α = upper grows (every r_j ≤ 1) (proofs/minor_first/persisting.py P4, the blow-up of the ratio "
                 "reduction P5–P6), so α_c(L) ∈ [lower, upper] (P3: the fate is monotone in α)")
    TIMED = False
    STEP_WHEN_RECORDED = True
    #: validated steps one run may take (the budget that ends a run that proves no fate)
    MAX_STEPS = 20_000

    def __init__(self, z, rho, digits: int, *, depth: int = 4):
        """``z``, ``rho``: the exact inputs (decimal strings, Fractions, :class:`~theorycheck.arith.exact.Exact`; a float
        is its binary value): the proof is about these numbers."""
        from flint import arb

        from theorycheck.arith.balls import arb_context

        L = int(depth)
        zq = exact_vector(list(z) if not isinstance(z, str) else z, "z")
        rq = exact(rho, "rho")
        zf = np.array([float(v) for v in zq])
        if zf.size < 1 or any(v.value <= 0 for v in zq):
            raise TheorycheckError("the proved α_c(L) needs z > 0 (finite entries)")
        if not rq.value > 0:
            raise TheorycheckError("the proved collapse threshold needs a finite ρ > 0 (ρ = 0 is GD: α_c = 0, no "
                                   "collapse)")
        if L < 4 or L % 2:
            raise TheorycheckError("the proved α_c(L) is for even L ≥ 4 (L = 2: the reduced ODE; odd L: no collapse)")
        self.depth, self.d = L, zf.size
        #: what a bracket of this system is about: the floats' values (its search is in float64), exact where
        #: float64 holds the number given
        self.inputs = ExactInputs(tuple(v.as_float_used() for v in zq), rq.as_float_used(), None, L)
        self.digits = int(digits)
        # the ends lie about 10^-digits (relative) from α_c: the path lingers near the saddle at R = 0 for about
        # digits·ln 10/μ and every error made before (start ball, Taylor remainders, rounding) is amplified there by
        # about 10^digits. Local errors of 10^-(digits+12) per unit leave the enclosure well below the width at which
        # the fates separate (about 10^-2 when the path leaves the saddle); the balls carry 20 digits more.
        self.prec = int((self.digits + 20) * 3.33) + 16
        # order 0.6·(digits + 10) + 12 (26 for 14 digits) takes about 30 % fewer steps than 20 for the same tolerance
        self.order = max(16, min(40, int(0.6 * (self.digits + 10)) + 12))
        self.tol = 10.0 ** (-(self.digits + 12))
        self.system, self.num = _systems(L, self.d)
        self.zf, self.rho_f = zf, float(rq)
        with arb_context(prec=self.prec):
            self.z = [v.ball() for v in zq]
            self.rho = rq.ball()
            self.scale = self.rho / (arb(L).sqrt() * sum((v * v for v in self.z), arb(0)).sqrt())

    @classmethod
    def working_digits(cls, digits: int) -> int:
        return min(int(digits), SEARCH_DIGITS) + 2

    @property
    def method(self) -> str:
        return (f"ratio reduction blown up at r = 1; validated Taylor integration (order {self.order}, {self.prec}-bit "
                "balls, Lohner's method) of the blown-up system from the ends of a float64 bisection in "
                "c = ρ/(α√L‖z‖₂)")

    def c_of_alpha(self, alpha_text: str):
        from flint import arb

        return self.scale / arb(alpha_text)

    def start(self, alpha_text: str) -> _State:
        """(λ, ω) on the ray r(0) = c z: s = c z − 1, λ = ln|s|, ω = s/|s|."""
        from flint import arb

        c = self.c_of_alpha(alpha_text)
        s = [c * zj - 1 for zj in self.z]
        R = sum((v * v for v in s[1:]), s[0] * s[0]).sqrt()
        return _State(arb(0), [R.log(), *[v / R for v in s]])

    def fate_test(self, state: _State) -> str | None:
        omega = state.y[1:1 + self.d]
        if all(w > 0 for w in omega):
            return self.LEMMA_NAMES["collapse"][0]
        if all(w < 0 for w in omega):
            return self.LEMMA_NAMES["growth"][0]
        return None

    def segment(self, state: _State, *, deadline: float | None, record: bool) -> Segment:
        """The whole run in one call of the validated integrator (Lohner's method), within :attr:`MAX_STEPS`."""
        from theorycheck.proved.validated import integrate

        found: dict = {}

        def stop(step):
            lem = self.fate_test(_State(step.t1, step.end))
            if lem:
                found["lemma"] = lem
            return lem

        fp = integrate(self.system, state.y, params=self.z, order=self.order, prec=self.prec, tol=self.tol, stop=stop,
                       record=record, slack=record, budget=Budget(max_seconds=math.inf, max_steps=self.MAX_STEPS,
                                                                  max_evaluations=10**9, max_width=1e-2))
        if fp.status is Status.PROVED_EVENT:
            return Segment(fp, _State(fp.t_end, fp.end), found["lemma"], False)
        return Segment(fp, state, None, False)

    def clock(self, state: _State) -> list:
        from theorycheck.arith.balls import ball_text

        return ball_text(state.t)

    def ends(self, digits: int, *, deadline: float, guess=None) -> Ends:
        """The ends of a float64 bisection in c (:func:`theorycheck.proofs.minor_first.predict.blowup.c_bracket`) widened by
        10^−(digits+1), rounded outwards; at most :data:`SEARCH_DIGITS` digits are attempted (the note says so)."""
        from theorycheck.proofs.minor_first.predict.blowup import c_bracket

        from theorycheck.arith.decimals import outward

        asked = int(digits)
        digits = min(asked, SEARCH_DIGITS)
        note = "" if asked <= SEARCH_DIGITS else (f"{asked} digits asked: the float64 search of the bracket reaches "
                                                  f"about {SEARCH_DIGITS} (more are not attempted)")
        L = self.depth
        search = c_bracket(self.zf, L, rel=10.0 ** (-(digits + 3)))  # float64, step and evaluation budgets
        c_lo, c_hi = search.grows.c, search.collapses.c
        with mp.workdps(40):
            scale = mp.mpf(self.rho_f) / (mp.sqrt(L) * mp.sqrt(mp.fsum(mp.mpf(float(v)) ** 2 for v in self.zf)))
            a_hi = scale / mp.mpf(c_lo)  # c_lo grows ⇒ α = scale/c_lo grows
            a_lo = scale / mp.mpf(c_hi)
            w = mp.mpf(10) ** (-(digits + 1))
            lo = outward(a_lo * (1 - w), digits + 3, "down")
            hi = outward(a_hi * (1 + w), digits + 3, "up")
        return Ends(lo, hi, digits, note)

    # ------------------------------------------------------------------ the certificate's data
    def certificate_system(self) -> tuple:
        from theorycheck.symbolic import validated_fields as S

        _t, y, p, f = S.ratio_blowup_system(self.depth, self.d)
        return f"the ratio reduction blown up at r = 1 (L = {self.depth})", y, p, f, {"L": self.depth}

    def run_data(self, proof: FateProof) -> dict:
        """One run: the coordinates of its Lohner sets (the states, then any parameter carried as a state), its
        initial set and every step (start time, step size, order, Picard box, end set)."""
        from theorycheck.arith.balls import arb_context, ball_text

        (_k, fp), = proof.pipes
        with arb_context(prec=fp.prec):
            steps = [{"t0": ball_text(s.t0), "h": ball_text(s.h), "order": s.order,
                      "picard_box": [ball_text(v) for v in s.picard_box], "end": s.set_end.as_dict()}
                     for s in fp.steps]
            return {"alpha": proof.alpha, "fate": proof.fate, "lemma": proof.lemma, "prec": fp.prec,
                    "coordinates": list(fp.states), "set0": fp.set0.as_dict(), "steps": steps}

    def statement(self) -> str:
        return self.STATEMENT.format(L=self.depth)


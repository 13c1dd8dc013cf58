"""α_c(L) proved for even depth L ≥ 4 (ℓ2-SAM, one example, balanced init α·1), through the degenerate equilibrium.

At α_c(L) the path runs into the interior equilibrium u* (û = 0: every r_j = 1), where the field vanishes to order
L − 1: a longer horizon buys almost nothing (the approach is algebraic). The ratio reduction and its blow-up
(:mod:`theorycheck.symbolic.systems`, checked by ``theorycheck prove`` P) make it hyperbolic: in r_j = 1 − û_j/u_j
with the clock dσ = (N/ρ)dτ the flow closes on r, starts on the ray r(0) = c z (c = ρ/(α √L ‖z‖₂)), and with
r = 1 + e^λ ω, |ω| = 1, dς = R^{L−2} dσ the field is regular at R = 0, where the equilibrium becomes a saddle on
the sphere. Fates (persisting lemmas, P4): every r_j > 1 (every ω_j > 0) ⇒ collapse; every r_j ≤ 1 (every
ω_j ≤ 0) ⇒ growth. The bracket is found by float64 bisection in c on the blown-up system
(:func:`theorycheck.predict.blowup.c_bracket`), then each end is proved by validated integration (Lohner's method)
of the blown-up system.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import mpmath as mp
import numpy as np

from theorycheck.arith.balls import arb_context, ball_text
from theorycheck.arith.decimals import common_digits, outward
from theorycheck.arith.exact import exact, exact_vector
from theorycheck.errors import TheorycheckError
from theorycheck.predict.blowup import c_bracket
from theorycheck.proved.bracket import FateProof, ProvedAlphaC
from theorycheck.proved.validated import integrate
from theorycheck.status import Budget, Status

RESTS_ON_DEPTH = [
    "validated Taylor integration in ball arithmetic (python-flint's Arb, Lohner's QR method) of the blown-up ratio "
    "system",
    "the ratio reduction of the balanced ℓ2-SAM flow and its blow-up at r = 1 (theorycheck prove P, steps P5–P6)",
    "collapse lemma (even L): every r_j > 1 persists and every coordinate shrinks (theorycheck prove P4)",
    "growth lemma (even L): every r_j ≤ 1 persists and every coordinate grows (theorycheck prove P4)",
    "monotonicity of the fate in α (cooperative field, Kamke; theorycheck prove P3)",
]


@lru_cache(maxsize=16)
def _systems(L: int, d: int):
    from theorycheck.symbolic import forms as C

    (t, y, p, f), num = C.ratio_blowup(L, d)
    return C.arb_system(f"ratio-blowup-L{L}-d{d}", t, y, p, f), num


class DepthProver:
    """Proves the fate of one α at even depth L ≥ 4 (see the module docstring)."""

    #: validated steps one run may take (the budget that ends a run that proves no fate)
    MAX_STEPS = 20_000

    def __init__(self, z, rho, L: int, digits: int):
        """``z``, ``rho``: the exact inputs (decimal strings, Fractions, :class:`~theorycheck.arith.exact.Exact`; a float
        is its binary value): the proof is about these numbers."""
        from flint import arb

        zq = exact_vector(list(z) if not isinstance(z, str) else z, "z")
        rq = exact(rho, "rho")
        z = np.array([float(v) for v in zq])
        if z.size < 1 or any(v.value <= 0 for v in zq):
            raise TheorycheckError("the proved α_c(L) needs z > 0 (finite entries)")
        if not rq.value > 0:
            raise TheorycheckError("the proved collapse threshold needs a finite ρ > 0 (ρ = 0 is GD: α_c = 0, no "
                                   "collapse)")
        if L < 4 or L % 2:
            raise TheorycheckError("the proved α_c(L) is for even L ≥ 4 (L = 2: the reduced ODE; odd L: no collapse)")
        self.L, self.d = int(L), z.size
        self.digits = int(digits)
        # the ends lie about 10^-digits (relative) from α_c: the path lingers near the saddle at R = 0 for about
        # digits·ln 10/μ and every error made before (start ball, Taylor remainders, rounding) is amplified there by
        # about 10^digits. Local errors of 10^-(digits+12) per unit leave the enclosure well below the width at which
        # the fates separate (about 10^-2 when the path leaves the saddle); the balls carry 20 digits more.
        self.prec = int((self.digits + 20) * 3.33) + 16
        # order 0.6·(digits + 10) + 12 (26 for 14 digits) takes about 30 % fewer steps than 20 for the same tolerance
        self.order = max(16, min(40, int(0.6 * (self.digits + 10)) + 12))
        self.tol = 10.0 ** (-(self.digits + 12))
        self.system, self.num = _systems(self.L, self.d)
        self.zf, self.rho_f = z, float(rq)
        with arb_context(prec=self.prec):
            self.z = [v.ball() for v in zq]
            self.rho = rq.ball()
            self.scale = self.rho / (arb(self.L).sqrt() * sum((v * v for v in self.z), arb(0)).sqrt())

    def c_of_alpha(self, alpha_text: str):
        from flint import arb

        return self.scale / arb(alpha_text)

    def run(self, alpha_text: str, *, record: bool = False) -> FateProof:
        """Enclose α's blown-up path until a lemma holds (``record``: keep every step, for a certificate)."""
        t0 = time.perf_counter()
        with arb_context(prec=self.prec):
            c = self.c_of_alpha(alpha_text)
            s = [c * zj - 1 for zj in self.z]
            R = sum((v * v for v in s[1:]), s[0] * s[0]).sqrt()
            om = [v / R for v in s]
            y0 = [R.log(), *om]
            lem = _lemma(om)
            if lem and not record:  # a certificate records at least one step, whose start set it checks
                return FateProof(alpha_text, "collapse" if lem.startswith("collapse") else "growth", lem,
                                 ["0", "0"], 0, 0, time.perf_counter() - t0)
            found = {}

            def stop(step):
                lem = _lemma(step.end[1:1 + self.d])
                if lem:
                    found["lemma"] = lem
                return lem

            # steps, evaluations and width end a run (never seconds: the outcome does not depend on the machine)
            fp = integrate(self.system, y0, params=self.z, order=self.order, prec=self.prec, tol=self.tol, stop=stop,
                           record=record, slack=record, budget=Budget(max_seconds=math.inf, max_steps=self.MAX_STEPS,
                                                        max_evaluations=10**9, max_width=1e-2))
            pipes = [(None, fp)] if record else []
            if fp.status is Status.PROVED_EVENT:
                lem = found["lemma"]
                return FateProof(alpha_text, "collapse" if lem.startswith("collapse") else "growth", lem,
                                 ball_text(fp.t_end), fp.n_steps, 1, time.perf_counter() - t0, pipes=pipes)
            return FateProof(alpha_text, None, None, None, fp.n_steps, 1, time.perf_counter() - t0,
                             f"integration stopped: {fp.status} ({fp.message})")


def _lemma(omega) -> str | None:
    if all(w > 0 for w in omega):
        return "collapse: every r_j > 1 (every ω_j > 0)"
    if all(w < 0 for w in omega):
        return "growth: every r_j ≤ 1 (every ω_j < 0)"
    return None


def prove_alpha_c_depth(z, rho, L: int, *, digits: int = 12, record: bool = False) -> ProvedAlphaC:
    """α_c(L) ∈ [lower, upper] for even L ≥ 4, ``lower`` proved to collapse and ``upper`` proved to grow. The float64
    bisection limits the bracket to about 13 significant digits: more are not attempted (``note`` says so).
    ``record``: keep every step (for :func:`theorycheck.proved.certificate_depth.certificate_of_depth`)."""
    t_start = time.perf_counter()
    asked = int(digits)
    note = ""
    if asked > 13:
        note = f"{asked} digits asked: the float64 search of the bracket reaches about 13 (more are not attempted)"
        digits = 13
    pr = DepthProver(z, rho, L, digits + 2)
    search = c_bracket(pr.zf, L, rel=10.0 ** (-(digits + 3)))  # float64, step and evaluation budgets
    c_lo, c_hi = search.grows.c, search.collapses.c
    with mp.workdps(40):
        scale = mp.mpf(pr.rho_f) / (mp.sqrt(L) * mp.sqrt(mp.fsum(mp.mpf(float(v)) ** 2 for v in pr.zf)))
        a_hi = scale / mp.mpf(c_lo)  # c_lo grows ⇒ α = scale/c_lo grows
        a_lo = scale / mp.mpf(c_hi)
        w = mp.mpf(10) ** (-(digits + 1))
        lo = outward(a_lo * (1 - w), digits + 3, "down")
        hi = outward(a_hi * (1 + w), digits + 3, "up")
    method = (f"ratio reduction blown up at r = 1; validated Taylor integration (order {pr.order}, {pr.prec}-bit balls, "
              "Lohner's method) of the blown-up system from the ends of a float64 bisection in c = ρ/(α√L‖z‖₂)")
    fl = pr.run(lo, record=record)
    fh = pr.run(hi, record=record)
    seconds = time.perf_counter() - t_start
    if fl.fate == "collapse" and fh.fate == "growth":
        Dc, text = common_digits(lo, hi, digits + 6)
        return ProvedAlphaC("proved", lo, hi, Dc, asked, method, RESTS_ON_DEPTH, fl, fh, seconds, note, text)
    why = [f"α = {f.alpha}: {f.fate or 'not decided'} ({f.why or f.lemma})" for f, want in
           ((fl, "collapse"), (fh, "growth")) if f.fate != want]
    return ProvedAlphaC("not proved", None, None, 0, asked, method, RESTS_ON_DEPTH, fl, fh, seconds,
                        "; ".join([note] + why if note else why))

"""The L = 2 proved-fate system (:class:`~theorycheck.proved.fate_system.FateSystem`): C4's reduced ODE in a
moving frame, its validated segments and its persisting lemmas (THEORY.md C4/C5).

C4's reduced ODE dI/dτ = 1/N(τ, I) is enclosed by :func:`theorycheck.proved.validated.integrate` in a moving
frame I = w + κτ (κ = 1/N at the start of each segment: the ball in τ then barely widens the exponents), until
one of the lemmas of proofs/minor_first/persisting.py holds for every point of the enclosure:

- collapse: N < ρ z_min (every rate z_j(1 − ρ z_j/N) is negative from then on, N falls to 0);
- growth: N_S > ρ max_{j∈S} z_j for S = the coordinates of z_min (they grow from then on, N → ∞), or
  N ≥ ρ z_max.

The fate is monotone in α (proofs/minor_first/persisting.py, theorem P3: the balanced flow is cooperative, so
α ↦ u(τ; α) is order preserving — Kamke's comparison theorem), so collapse at ``lower`` and growth at ``upper``
put α_c in [lower, upper]. The two α are the floating-point α_c (:func:`predict.alpha_c.collapse_threshold`,
``digits + 3`` digits) times 1 ∓ 10^−(digits+2), rounded outward to decimals: the floating value is only a
guess, the proof is the two enclosures. All entries of z equal: α_c is C5's closed form, enclosed directly.

Beyond 2^±64 in scale, z and ρ are first divided by powers of two (exactly), using the flow's exact symmetries:
z → c z with τ → τ/c leaves every fate unchanged, and so does (α, ρ) → (sα, sρ); the times reported are in the
problem's own clock.

Every ball is built from the exact inputs (z and ρ as typed, :class:`theorycheck.arith.exact.Exact`: 0.1 is 1/10) and
every α from its exact decimal, never from a float: the bracket is about the numbers the user typed, and its
``inputs`` say which (a float passed to the library is its binary value, and ``inputs`` says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from theorycheck.arith.exact import ExactInputs, exact, exact_vector
from theorycheck.errors import TheorycheckError
from theorycheck.proved.bracket import FateProof, bracket_ends
from theorycheck.proved.fate_system import Ends, FateSystem, Segment
from theorycheck.status import Budget, Status

__all__ = ["ReducedL2", "rescaled"]

METHOD = ("validated Taylor integration (order {K}, {bits}-bit balls; Taylor series by Newton's iteration on "
          "series) of C4's reduced ODE in a moving frame in ball arithmetic (python-flint's Arb; every step an "
          "enclosure with a rigorous remainder), from the floating-point α_c ∓ 10^-(digits+2); persisting lemmas "
          "decide each end")


@lru_cache(maxsize=16)
def _compiled(d: int):

    from theorycheck.symbolic import forms as C
    from theorycheck.symbolic import validated_fields as S

    t, x, p, f = S.reduced_l2_system(d, frame=True)
    system = C.arb_system(f"l2-reduced-frame-d{d}", t, x, p, f)
    args, terms = S.reduced_l2_summands(d, frame=True)
    summands = C.arb_function(args[:2], terms, args[2:])
    largs, levels = S.l2_persisting_levels()
    lev = C.arb_function((), levels, largs)
    return system, summands, lev


@dataclass
class _State:
    """A point of the path in the moving frame: τ, w (I = w + κτ), the frame κ, and α (balls)."""

    tau: object
    w: object
    kappa: object
    alpha: object


class ReducedL2(FateSystem):
    """Proves fates of α for one (z, ρ) (ℓ2-SAM, L = 2, z > 0) at ``digits`` decimal digits of working accuracy.
    ``z`` and ``rho``: numbers as :func:`theorycheck.arith.exact.exact` reads them (decimal strings, Fractions,
    :class:`~theorycheck.arith.exact.Exact`; a float is its binary value); the balls contain them exactly."""

    depth = 2
    FORMAT = "theorycheck-validated-certificate/2"
    LEMMAS = ("C4", "P1", "P2", "P3")
    LEMMA_NAMES = {"collapse": ("collapse: N < ρ z_min",),
                   "growth": ("growth: N_S > ρ z_min for S = the coordinates of z_min", "growth: N ≥ ρ z_max")}
    STATEMENT = ("ℓ2-SAM, L = 2, one example z, balanced init α·1: α = lower collapses and α = upper grows "
                 "(proofs/minor_first/persisting.py P1, P2), so α_c ∈ [lower, upper] (P3: the fate is monotone in α)")
    #: validated steps per segment (the frame is re-centred between segments)
    SEGMENT_STEPS = 6

    def __init__(self, z, rho, digits: int, *, depth: int = 2, form: str = "interval"):
        from theorycheck.arith.balls import arb_context

        if int(depth) != 2:
            raise TheorycheckError(f"depth {depth}: this system is C4's reduced ODE (L = 2)")

        ez = exact_vector(z, "z") if not isinstance(z, (int, float)) else (exact(z, "z"),)
        erho = exact(rho, "rho")
        zq = [e.value for e in ez]
        if not zq or any(v <= 0 for v in zq):
            raise TheorycheckError("the proved collapse threshold needs z > 0 (finite entries)")
        if not erho.value > 0:
            raise TheorycheckError("the proved collapse threshold needs a finite ρ > 0")
        self.inputs = ExactInputs(tuple(ez), erho, None, 2)
        #: the problem is (z/2^a, ρ/2^b, α/2^b) in the clock τ·2^a (a = b = 0 within 2^±64 in scale)
        self.shift = (_rescaling(max(zq)), _rescaling(erho.value))
        zq = [v / Fraction(2) ** self.shift[0] for v in zq]
        erho = exact(erho.value / Fraction(2) ** self.shift[1])
        self.zq = zq
        self.form = form
        self.d = len(zq)
        self.digits = int(digits)
        self.prec = int((self.digits + 14) * 3.33) + 16
        self.order = max(24, min(60, int(0.9 * self.digits) + 14))
        self.tol = 10.0 ** (-(self.digits + 8))
        self.system, self.summands, self.levels = _compiled(self.d)
        zmin, zmax = min(zq), max(zq)
        self.min_idx = [j for j in range(self.d) if zq[j] == zmin]  # decided exactly
        with arb_context(prec=self.prec):
            self.z = [exact(v).ball() for v in zq]
            self.rho = erho.ball()
            lc, lg, ls = self.levels.bind(exact(zmin).ball(), exact(zmax).ball(), self.rho)()
            self.level_collapse, self.level_grow, self.level_subset = lc, lg, ls

    @classmethod
    def working_digits(cls, digits: int) -> int:
        if not 1 <= int(digits) <= 60:
            raise TheorycheckError("digits must be between 1 and 60 for a proved α_c")
        return int(digits) + 3  # a little beyond what is asked, so that the bracket shares `digits` digits

    @property
    def method(self) -> str:
        return METHOD.format(K=self.order, bits=self.prec)

    # -- the state's quantities, from the compiled summands (term j of N²)
    def _norms(self, s: _State):
        terms = self.summands.bind(*self.z, s.alpha, self.rho, s.kappa)(s.tau, s.w)
        N2 = sum(terms[1:], terms[0])
        Nmin2 = sum((terms[j] for j in self.min_idx[1:]), terms[self.min_idx[0]])
        return N2, Nmin2

    def fate_test(self, state: _State) -> str | None:
        N2, Nmin2 = self._norms(state)
        collapse, (subset, grow) = self.LEMMA_NAMES["collapse"][0], self.LEMMA_NAMES["growth"]
        if N2 < self.level_collapse ** 2:
            return collapse
        if Nmin2 > self.level_subset ** 2:
            return subset
        if N2 >= self.level_grow ** 2:
            return grow
        return None

    def start(self, alpha_text: str) -> _State:
        from flint import arb

        alpha = exact(exact(alpha_text, "alpha").value / Fraction(2) ** self.shift[1]).ball()
        return _State(arb(0), arb(0), arb(0), alpha)

    def segment(self, state: _State, *, deadline: float | None, record: bool) -> Segment:
        """Re-centre the frame (κ = 1/N now, a short binary number; w = I − κτ), then at most
        :attr:`SEGMENT_STEPS` validated steps, stopping when a lemma holds."""
        import time

        from theorycheck.proved.validated import integrate

        N2, _ = self._norms(state)
        k_new = _short(1 / N2.sqrt())
        s = _State(state.tau, state.w + (state.kappa - k_new) * state.tau, k_new, state.alpha)
        left = None if deadline is None else max(0.05, deadline - time.perf_counter())
        found: dict = {}

        def stop(step):
            lem = self.fate_test(_State(step.t1, step.end[0], s.kappa, s.alpha))
            if lem:
                found["lemma"] = lem
            return lem

        fp = integrate(self.system, [s.w], params=[*self.z, s.alpha, self.rho, s.kappa], t0=s.tau, t_end=None,
                       order=self.order, prec=self.prec, tol=self.tol, stop=stop, record=record,
                       budget=Budget(max_steps=self.SEGMENT_STEPS, max_seconds=left or 3600.0, max_width=1e-3),
                       form=self.form)
        if not fp.steps:
            return Segment(fp, s, None, False, s.kappa)
        end = _State(fp.t_end, fp.end[0], s.kappa, s.alpha)
        lemma = found["lemma"] if fp.status is Status.PROVED_EVENT else None
        return Segment(fp, end, lemma, fp.status in (Status.MAX_STEPS, Status.T_MAX), s.kappa)

    def clock(self, state: _State) -> list:
        """τ of the rescaled problem in the problem's own clock (τ/2^a, exact), as [mid, rad] decimal strings."""
        from flint import arb

        from theorycheck.arith.balls import ball_text

        tau = state.tau
        return ball_text(tau * arb(2) ** (-self.shift[0]) if self.shift[0] else tau)

    @property
    def rescaled(self) -> bool:
        """Whether the proof runs on the rescaled problem (its steps are not those of z and ρ as given)."""
        return self.shift != (0, 0)

    # ------------------------------------------------------------------ the bracket to prove
    def ends(self, digits: int, *, deadline: float, guess=None) -> Ends:
        """All z_j equal: C5's closed form enclosed; else the floating-point α_c (``guess`` when given) widened
        by 10^−(digits+2) on each side, rounded outwards."""
        D = self.working_digits(digits)
        if len(set(self.zq)) == 1:
            lo, hi = self._closed_all_equal(D)
            return Ends(lo, hi, int(digits), "all entries of z equal: α_c = ρ z_min/(√2‖z‖₂) exactly; both ends "
                                             "proved at τ = 0")
        a0 = _float_guess(self.inputs, D, deadline, base=guess)
        lo, hi = bracket_ends(a0, a0, Fraction(1, 10 ** (int(digits) + 2)), D + 1)
        return Ends(lo, hi, int(digits))

    def _closed_all_equal(self, D: int) -> tuple[str, str]:
        """All z_j equal: α_c = alpha_all_shrink = ρ z_min/(√2‖z‖₂) (C5, the symbolic layer's closed form),
        enclosed at the exact inputs and widened by 10^−(D+1) on each side, rounded outwards."""
        from theorycheck.arith.balls import arb_context
        from theorycheck.arith.decimals import down, up
        from theorycheck.symbolic import forms as C
        from theorycheck.symbolic import theory_forms as MF

        form = MF.alpha_all_shrink()
        f = C.arb_function(form.args, [form.expression])
        with arb_context(prec=self.prec):
            norm = sum((v * v for v in self.z[1:]), self.z[0] * self.z[0]).sqrt()
            v = f(self.z[self.min_idx[0]], norm, self.rho)[0]
            w = exact(Fraction(1, 10 ** (D + 1))).ball()
            return down(v * (1 - w), D + 1), up(v * (1 + w), D + 1)

    # ------------------------------------------------------------------ the certificate's data
    def certificate_system(self) -> tuple:
        from theorycheck.symbolic import validated_fields as S

        _t, x, p, f = S.reduced_l2_system(self.d, frame=True)
        return "C4's reduced ODE in the moving frame I = w + κτ", x, p, f, {}

    def run_data(self, proof: FateProof) -> dict:
        """One run: its α, fate, lemma, precision and segments (κ and every step; only the system's states are
        written — parameters the integrator carried as states are the checker's own business)."""
        from theorycheck.arith.balls import arb_context, ball_text

        segs, prec, n = [], None, 1
        for kappa, fp in proof.pipes:
            prec = fp.prec
            with arb_context(prec=fp.prec):
                steps = []
                for i, s in enumerate(fp.steps):
                    start = fp.steps[i - 1].end if i else fp.set0.box()
                    steps.append({"t0": ball_text(s.t0), "h": ball_text(s.h), "order": s.order,
                                  "x0": [ball_text(v) for v in start[:n]],
                                  "picard_box": [ball_text(v) for v in s.picard_box[:n]],
                                  "end": [ball_text(v) for v in s.end[:n]]})
                segs.append({"kappa": ball_text(kappa), "steps": steps})
        return {"alpha": proof.alpha, "fate": proof.fate, "lemma": proof.lemma, "prec": prec, "segments": segs}


#: the range of scales worked in directly; beyond it the problem is rescaled by a power of two (exactly)
SCALE_LIMIT = Fraction(2) ** 64


def rescaled(inputs: ExactInputs) -> bool:
    """Whether a proof for these inputs runs on the rescaled problem (z or ρ beyond 2^±64 in scale): its
    steps are then not those of the inputs as given, and no certificate of them is written."""
    return _rescaling(max(inputs.zq)) != 0 or _rescaling(inputs.rho.value) != 0


def _rescaling(q: Fraction) -> int:
    """a with q/2^a in [1/2, 1) when q lies outside [2^-64, 2^64], else 0 (q > 0)."""
    if 1 / SCALE_LIMIT <= q <= SCALE_LIMIT:
        return 0
    a = q.numerator.bit_length() - q.denominator.bit_length()
    while q / Fraction(2) ** a >= 1:
        a += 1
    while q / Fraction(2) ** a < Fraction(1, 2):
        a -= 1
    return a


def _short(x):
    """The midpoint of the ball x rounded to 24 significant bits, as an exact ball (a frame parameter: any
    value is exact, a short one is cheap)."""
    from flint import arb

    m, e = (int(v) for v in x.mid().man_exp())
    drop = max(0, abs(m).bit_length() - 24)
    m = (m + (1 << drop >> 1)) >> drop if drop else m
    return arb(m) * arb(2) ** (e + drop)


def _float_guess(inputs: ExactInputs, digits: int, deadline: float, base=None) -> str:
    """The floating-point α_c of the same exact inputs at ``digits`` digits
    (:func:`predict.alpha_c.collapse_threshold`): only a starting point — nothing proved rests on it. When
    no multiple of z fits in float64 exactly, α_c of the rounded z is corrected to first order, by one-ulp
    steps of each rounded coordinate (exact floats). ``base``: α_c of the (rounded) inputs when known."""
    import time

    from theorycheck.proofs.minor_first.predict.alpha_c import collapse_threshold, exact_scale_floats

    from theorycheck.arith.decimals import outward

    def alpha_c(z) -> Fraction:
        r = collapse_threshold(z, inputs.rho.value, digits=int(digits),
                               max_seconds=max(1.0, deadline - time.perf_counter()), progress=False)
        if r.value is None:
            raise TheorycheckError(f"no floating-point α_c to start from: {r.note}")
        return Fraction(r.value_text)

    zq = list(inputs.zq)
    base = alpha_c(zq) if base is None else Fraction(str(base))
    guess = base
    if not exact_scale_floats(zq)[1]:
        zf = [float(v) for v in zq]
        for j, (q, f) in enumerate(zip(zq, zf)):
            if Fraction(f) == q:
                continue
            step = math.nextafter(f, math.inf if q > Fraction(f) else -math.inf)
            moved = [Fraction(v) for v in zf]
            moved[j] = Fraction(step)
            guess += (alpha_c(moved) - base) / (Fraction(step) - Fraction(f)) * (q - Fraction(f))
    return outward(guess, int(digits) + 2, "down")

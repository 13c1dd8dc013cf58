"""α_c proved: a bracket [lower, upper] of the collapse threshold of ℓ2-SAM (one example, balanced init α·1)
whose lower end is *proved* to collapse and whose upper end is *proved* to grow, by validated (ball-arithmetic)
integration and a persisting lemma.

L = 2 (THEORY.md C4/C5): C4's reduced ODE dI/dτ = 1/N(τ, I) is enclosed by :func:`solvers.validated.integrate`
in a moving frame I = w + κτ (κ = 1/N at the start of each segment: the ball in τ then barely widens the
exponents), until one of the lemmas of proofs/minor_first/persisting.py holds for every point of the enclosure:

- collapse: N < ρ z_min (every rate z_j(1 − ρ z_j/N) is negative from then on, N falls to 0);
- growth: N_S > ρ max_{j∈S} z_j for S = the coordinates of z_min (they grow from then on, N → ∞), or
  N ≥ ρ z_max.

The fate is monotone in α (proofs/minor_first/persisting.py, theorem P3: the balanced flow is cooperative, so
α ↦ u(τ; α) is order preserving — Kamke's comparison theorem), so collapse at ``lower`` and growth at
``upper`` put α_c in [lower, upper]. The two α are the floating-point α_c (:func:`predict.thresholds.collapse_threshold`,
``digits + 3`` digits) times 1 ∓ 10^−(digits+2), rounded outward to decimals: the floating value is only a
guess, the proof is the two enclosures.

Beyond 2^±64 in scale, z and ρ are first divided by powers of two (exactly), using the flow's exact symmetries:
z → c z with τ → τ/c leaves every fate unchanged, and so does (α, ρ) → (sα, sρ); the times reported are in the
problem's own clock.

Every ball is built from the exact inputs (z and ρ as typed, :class:`theorycheck.arith.exact.Exact`: 0.1 is 1/10) and
every α from its exact decimal, never from a float: the bracket is about the numbers the user typed, and its
``inputs`` say which (a float passed to the library is its binary value, and ``inputs`` says so).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from functools import lru_cache

import mpmath as mp

from theorycheck.arith.balls import arb_context, ball_text
from theorycheck.arith.decimals import down, up
from theorycheck.arith.exact import ExactInputs, exact, exact_vector
from theorycheck.errors import TheorycheckError
from theorycheck.proved.bracket import FateProof, ProvedAlphaC, assemble, bracket_ends
from theorycheck.proved.validated import integrate
from theorycheck.status import Budget, Status

__all__ = ["LEMMAS_L2", "FateProof", "L2Prover", "ProvedAlphaC", "prove_alpha_c", "rescaled"]

#: the lemmas the L = 2 bracket rests on (names of :data:`theorycheck.symbolic.lemmas.LEMMAS`)
LEMMAS_L2 = ("C4", "P1", "P2", "P3")

METHOD_L2 = ("validated Taylor integration (order {K}, {bits}-bit balls; Taylor series by Newton's iteration on "
             "series) of C4's reduced ODE in a moving frame in ball arithmetic (python-flint's Arb; every step an "
             "enclosure with a rigorous remainder), from the floating-point α_c ∓ 10^-(digits+2); persisting lemmas "
             "decide each end")


@lru_cache(maxsize=16)
def _compiled(d: int):
    from theorycheck.symbolic import forms as C
    from theorycheck.symbolic import systems as S

    t, x, p, f = S.reduced_l2_system(d, frame=True)
    system = C.arb_system(f"l2-reduced-frame-d{d}", t, x, p, f)
    args, terms = S.reduced_l2_summands(d, frame=True)
    summands = C.arb_function(args[:2], terms, args[2:])
    largs, levels = S.l2_persisting_levels()
    lev = C.arb_function((), levels, largs)
    return system, summands, lev


class L2Prover:
    """Proves fates of α for one (z, ρ) (ℓ2-SAM, L = 2, z > 0) at ``digits`` decimal digits of working accuracy.
    ``z`` and ``rho``: numbers as :func:`theorycheck.arith.exact.exact` reads them (decimal strings, Fractions,
    :class:`~theorycheck.arith.exact.Exact`; a float is its binary value); the balls contain them exactly."""

    def __init__(self, z, rho, digits: int, form: str = "interval"):
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
        ez = [exact(v) for v in zq]
        self.zq = zq
        self.zf = [float(v) for v in zq]  # for heuristics only (step sizes, the frame, the saddle's rate)
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
            self.z = [e.ball() for e in ez]
            self.rho = erho.ball()
            lc, lg, ls = self.levels.bind(exact(zmin).ball(), exact(zmax).ball(), self.rho)()
            self.level_collapse, self.level_grow, self.level_subset = lc, lg, ls
        self.zmin, self.zmax = float(zmin), float(zmax)
        above = [v for v in zq if v > zmin]
        z2 = float(min(above)) if above else None
        # decay rate of the slowest other coordinate near the saddle: λ = 2 z_2 (z_2/z_min − 1)
        self.lam = 2 * z2 * (z2 / self.zmin - 1) if z2 else math.inf

    # -- the state's quantities, from the compiled summands (term j of N²)
    def _norms(self, tau, w, alpha, kappa):
        terms = self.summands.bind(*self.z, alpha, self.rho, kappa)(tau, w)
        N2 = sum(terms[1:], terms[0])
        Nmin2 = sum((terms[j] for j in self.min_idx[1:]), terms[self.min_idx[0]])
        return N2, Nmin2

    def _lemma(self, tau, w, alpha, kappa) -> str | None:
        N2, Nmin2 = self._norms(tau, w, alpha, kappa)
        if N2 < self.level_collapse ** 2:
            return "collapse: N < ρ z_min"
        if Nmin2 > self.level_subset ** 2:
            return "growth: N_S > ρ z_min for S = the coordinates of z_min"
        if N2 >= self.level_grow ** 2:
            return "growth: N ≥ ρ z_max"
        return None

    def run(self, alpha_text: str, *, t_end=None, deadline: float | None = None, segment_steps: int = 6,
            record: bool = False) -> FateProof:
        """Enclose the trajectory of α (an exact decimal string, read exactly) until a lemma holds (or τ =
        ``t_end``: then ``q`` is the saddle's unstable coordinate there, a midpoint), within ``deadline``."""
        from flint import arb

        t0 = time.perf_counter()
        steps = segments = 0
        pipes = []
        with arb_context(prec=self.prec):
            alpha = exact(exact(alpha_text, "alpha").value / Fraction(2) ** self.shift[1]).ball()
            tau = arb(0)
            w = arb(0)
            kappa = arb(0)
            T = None if t_end is None else exact(t_end, "t_end").ball()  # the horizon as given (a float: its binary value)
            lemma = self._lemma(tau, w, alpha, kappa)
            while lemma is None:
                if deadline is not None and time.perf_counter() > deadline:
                    return FateProof(alpha_text, None, None, None, steps, segments, time.perf_counter() - t0,
                                     "time budget ran out", pipes=pipes)
                if T is not None and not (tau < T):
                    break
                # re-centre the frame: κ = 1/N now (a short binary number), w = I − κτ
                N2, _ = self._norms(tau, w, alpha, kappa)
                k_new = _short(1 / N2.sqrt())
                w = w + (kappa - k_new) * tau
                kappa = k_new
                left = None if deadline is None else max(0.05, deadline - time.perf_counter())
                found = {}

                def stop(step, _a=alpha, _k=kappa):
                    lem = self._lemma(step.t1, step.end[0], _a, _k)
                    if lem:
                        found["lemma"] = lem
                    return lem

                fp = integrate(self.system, [w], params=[*self.z, alpha, self.rho, kappa], t0=tau, t_end=T,
                               order=self.order, prec=self.prec, tol=self.tol, stop=stop, record=record,
                               budget=Budget(max_steps=segment_steps, max_seconds=left or 3600.0, max_width=1e-3),
                               form=self.form)
                segments += 1
                steps += fp.n_steps
                if record:
                    pipes.append((kappa, fp))
                if not fp.steps:
                    return FateProof(alpha_text, None, None, None, steps, segments, time.perf_counter() - t0,
                                     f"integration stopped: {fp.status} ({fp.message})", pipes=pipes)
                tau, w = fp.t_end, fp.end[0]
                if fp.status is Status.PROVED_EVENT:
                    lemma = found["lemma"]
                    break
                if fp.status not in (Status.MAX_STEPS, Status.T_MAX):
                    return FateProof(alpha_text, None, None, None, steps, segments, time.perf_counter() - t0,
                                     f"integration stopped: {fp.status} ({fp.message})", pipes=pipes)
            q = None
            if lemma is None:
                N2, Nmin2 = self._norms(tau, w, alpha, kappa)
                x = (Nmin2.sqrt() / self.level_subset) - 1
                q = mp.mpf(x.mid().str(self.digits + 10, radius=False)) * mp.exp(-self.zmin * mp.mpf(float(tau.mid())))
                return FateProof(alpha_text, None, None, self._clock(tau), steps, segments,
                                 time.perf_counter() - t0, "reached the horizon", q=q, pipes=pipes)
            fate = "collapse" if lemma.startswith("collapse") else "growth"
            return FateProof(alpha_text, fate, lemma, self._clock(tau), steps, segments, time.perf_counter() - t0,
                             pipes=pipes)

    def _clock(self, tau) -> list:
        """τ of the rescaled problem in the problem's own clock (τ/2^a, exact), as [mid, rad] decimal strings."""
        from flint import arb

        return ball_text(tau * arb(2) ** (-self.shift[0]) if self.shift[0] else tau)

    @property
    def rescaled(self) -> bool:
        """Whether the proof runs on the rescaled problem (its steps are not those of z and ρ as given)."""
        return self.shift != (0, 0)


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


def prove_alpha_c(z, rho, *, digits: int = 12, max_seconds: float = 600.0, guess=None,
                  depth: int = 2, record: bool = False) -> ProvedAlphaC:
    """α_c ∈ [lower, upper] with ``lower`` proved to collapse and ``upper`` proved to grow (ℓ2-SAM, one example,
    z > 0, balanced init α·1), aiming at ``digits`` significant digits; ``status`` "not proved" (with ``note``)
    when the budget ``max_seconds`` runs out first. ``z``, ``rho``: the exact inputs (decimal strings,
    Fractions, :class:`~theorycheck.arith.exact.Exact`, e.g. ``exact_inputs(setting).z``; a float is its binary
    value); the answer's ``inputs`` echo them. ``guess``: a starting α (default: the floating-point α_c of
    the same exact inputs). ``record``: keep every step (for :func:`theorycheck.proved.certificate.certificate_of`).
    Depth 2 only here; even depths ≥ 4: :func:`theorycheck.proved.alpha_c_depth.prove_alpha_c_depth`."""
    t_start = time.perf_counter()
    digits = int(digits)
    if not 1 <= digits <= 60:
        raise TheorycheckError("digits must be between 1 and 60 for a proved α_c")
    if depth != 2:
        raise TheorycheckError("prove_alpha_c is for depth 2; even depths ≥ 4: proved.alpha_c_depth.prove_alpha_c_depth")
    deadline = t_start + max_seconds
    D = digits + 3  # work a little beyond what is asked, so that the bracket shares `digits` digits
    pr = L2Prover(z, rho, D)
    method = METHOD_L2.format(K=pr.order, bits=pr.prec)
    if len(set(pr.zq)) == 1:
        lo, hi = _closed_all_equal(pr, D)
        note = "all entries of z equal: α_c = ρ z_min/(√2‖z‖₂) exactly; both ends proved at τ = 0"
        return _prove_ends(pr, lo, hi, digits, method, deadline, t_start, record, note)
    a0 = _float_guess(pr.inputs, digits + 3, deadline, base=guess)
    lo, hi = bracket_ends(a0, a0, Fraction(1, 10 ** (digits + 2)), D + 1)
    return _prove_ends(pr, lo, hi, digits, method, deadline, t_start, record)


def _prove_ends(pr: L2Prover, lo: str, hi: str, digits: int, method: str, deadline: float, t_start: float,
                record: bool, note: str = "") -> ProvedAlphaC:
    """Prove the fates of the two ends and assemble the bracket (:func:`theorycheck.proved.bracket.assemble`)."""
    fl = pr.run(lo, deadline=deadline, record=record)
    fh = pr.run(hi, deadline=deadline, record=record)
    return assemble(lo, hi, fl, fh, digits=digits, method=method, lemmas=LEMMAS_L2, inputs=pr.inputs,
                    seconds=time.perf_counter() - t_start, note=note)


def _closed_all_equal(pr: L2Prover, D: int) -> tuple[str, str]:
    """All z_j equal: α_c = alpha_all_shrink = ρ z_min/(√2‖z‖₂) (C5, the symbolic layer's closed form), enclosed
    at the exact inputs and widened by 10^−(D+1) on each side, rounded outwards."""
    from theorycheck.symbolic import forms as C

    form = C.alpha_all_shrink()
    f = C.arb_function(form.args, [form.expression])
    with arb_context(prec=pr.prec):
        norm = sum((v * v for v in pr.z[1:]), pr.z[0] * pr.z[0]).sqrt()
        v = f(pr.z[pr.min_idx[0]], norm, pr.rho)[0]
        w = exact(Fraction(1, 10 ** (D + 1))).ball()
        return down(v * (1 - w), D + 1), up(v * (1 + w), D + 1)


def _float_guess(inputs: ExactInputs, digits: int, deadline: float, base=None) -> str:
    """The floating-point α_c of the same exact inputs at ``digits`` digits
    (:func:`predict.thresholds.collapse_threshold`): only a starting point — nothing proved rests on it. When
    no multiple of z fits in float64 exactly, α_c of the rounded z is corrected to first order, by one-ulp
    steps of each rounded coordinate (exact floats). ``base``: α_c of the (rounded) inputs when known."""
    from theorycheck.predict.thresholds import collapse_threshold, exact_scale_floats

    def alpha_c(z) -> Fraction:
        r = collapse_threshold(z, inputs.rho.value, digits=int(digits),
                               max_seconds=max(1.0, deadline - time.perf_counter()), progress=False)
        if r.value is None:
            raise TheorycheckError(f"no floating-point α_c to start from: {r.note}")
        return Fraction(r.value_text)

    zq = list(inputs.zq)
    base = alpha_c(zq) if base is None else Fraction(str(base))
    if exact_scale_floats(zq)[1]:
        return _decimal_of(base, digits)
    zf = [float(v) for v in zq]
    guess = base
    for j, (q, f) in enumerate(zip(zq, zf)):
        if Fraction(f) == q:
            continue
        step = math.nextafter(f, math.inf if q > Fraction(f) else -math.inf)
        moved = [Fraction(v) for v in zf]
        moved[j] = Fraction(step)
        guess += (alpha_c(moved) - base) / (Fraction(step) - Fraction(f)) * (q - Fraction(f))
    return _decimal_of(guess, digits)


def _decimal_of(q: Fraction, digits: int) -> str:
    from theorycheck.arith.decimals import outward

    return outward(q, int(digits) + 2, "down")

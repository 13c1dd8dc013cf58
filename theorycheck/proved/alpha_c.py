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
``upper`` put α_c in [lower, upper]. The two α are the floating-point certified α_c (:func:`predict.thresholds.collapse_threshold`,
``digits + 3`` digits) times 1 ∓ 10^−(digits+2), rounded outward to decimals: the floating value is only a
guess, the proof is the two enclosures.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache

import mpmath as mp
import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.proved.validated import Budget, arb_context, ball_text, integrate
from theorycheck.status import Status

#: what the bracket rests on besides the two enclosures
RESTS_ON_L2 = [
    "validated Taylor integration of C4's reduced ODE in ball arithmetic (python-flint's Arb; every step an "
    "enclosure with a rigorous remainder; the Taylor coefficients by Newton's iteration on series, each a ball "
    "containing the coefficient for every point of the step's balls)",
    "C4's reduction of the balanced ℓ2-SAM flow to dI/dτ = 1/N(τ, I) (theorycheck prove C4)",
    "collapse lemma: N < ρ z_min ⇒ collapse (theorycheck prove P1)",
    "growth lemma: N_S > ρ max_S z for some set S of coordinates ⇒ growth (theorycheck prove P2)",
    "monotonicity of the fate in α: the balanced ℓ2-SAM flow is cooperative, so α ↦ u(τ; α) is order preserving "
    "(theorycheck prove P3, with Kamke's comparison theorem)",
]


@dataclass
class FateProof:
    """One α's fate: ``fate`` "collapse" | "growth" | None (not proved within the budget, ``why``), the lemma
    used, the rescaled time ``tau`` (a ball as [mid, rad] decimal strings) where its hypothesis holds for
    every point of the enclosure, and the work done."""

    alpha: str
    fate: str | None
    lemma: str | None
    tau: list | None
    steps: int
    segments: int
    seconds: float
    why: str = ""
    q: object = None
    pipes: list = field(default_factory=list, repr=False)

    def as_dict(self) -> dict:
        return {"alpha": self.alpha, "fate": self.fate, "lemma": self.lemma, "tau": self.tau, "steps": self.steps,
                "segments": self.segments, "seconds": round(self.seconds, 3), "why": self.why}


@dataclass
class ProvedAlphaC:
    """The proved bracket: ``status`` "proved" | "not proved", ``lower``/``upper`` decimal strings (None when
    not proved), ``digits`` (significant digits every point of [lower, upper] shares), ``method``,
    ``rests_on``, the two :class:`FateProof` and a ``note`` (why not, or why fewer digits than asked)."""

    status: str
    lower: str | None
    upper: str | None
    digits: int
    digits_requested: int
    method: str
    rests_on: list
    collapses: FateProof | None
    grows: FateProof | None
    seconds: float
    note: str = ""
    value_text: str | None = None

    def as_dict(self) -> dict:
        """Keys: status, lower, upper, digits, digits_requested, value_text, method, rests_on, note, seconds,
        collapses, grows (each: alpha, fate, lemma, tau, steps, segments, seconds, why)."""
        return {"status": self.status, "lower": self.lower, "upper": self.upper, "digits": self.digits,
                "digits_requested": self.digits_requested, "value_text": self.value_text, "method": self.method,
                "rests_on": list(self.rests_on), "note": self.note, "seconds": round(self.seconds, 3),
                "collapses": self.collapses.as_dict() if self.collapses else None,
                "grows": self.grows.as_dict() if self.grows else None}


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
    """Proves fates of α for one (z, ρ) (ℓ2-SAM, L = 2, z > 0) at ``digits`` decimal digits of working accuracy."""

    def __init__(self, z, rho, digits: int, form: str = "interval"):
        from flint import arb

        z = np.asarray(z, dtype=float).reshape(-1)
        if z.size == 0 or not np.all(np.isfinite(z)) or np.any(z <= 0):
            raise TheorycheckError("the proved collapse threshold needs z > 0 (finite entries)")
        if not (np.isfinite(rho) and rho > 0):
            raise TheorycheckError("the proved collapse threshold needs a finite ρ > 0")
        self.zf = z
        self.form = form
        self.d = z.size
        self.digits = int(digits)
        self.prec = int((self.digits + 14) * 3.33) + 16
        self.order = max(24, min(60, int(0.9 * self.digits) + 14))
        self.tol = 10.0 ** (-(self.digits + 8))
        self.system, self.summands, self.levels = _compiled(self.d)
        with arb_context(prec=self.prec):
            self.z = [arb(float(v)) for v in z]
            self.rho = arb(float(rho))
            zmin, zmax = float(z.min()), float(z.max())
            self.min_idx = [j for j in range(self.d) if z[j] == zmin]
            lc, lg, ls = self.levels.bind(arb(zmin), arb(zmax), self.rho)()
            self.level_collapse, self.level_grow, self.level_subset = lc, lg, ls
        self.zmin, self.zmax = zmin, zmax
        above = z[z > zmin]
        z2 = float(above.min()) if above.size else None
        # decay rate of the slowest other coordinate near the saddle: λ = 2 z_2 (z_2/z_min − 1)
        self.lam = 2 * z2 * (z2 / zmin - 1) if z2 else math.inf

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
        """Enclose the trajectory of α (an exact decimal string) until a lemma holds (or τ = ``t_end``: then
        ``q`` is the saddle's unstable coordinate there, a midpoint), within ``deadline``."""
        from flint import arb

        t0 = time.perf_counter()
        steps = segments = 0
        pipes = []
        with arb_context(prec=self.prec):
            alpha = arb(alpha_text)
            tau = arb(0)
            w = arb(0)
            kappa = arb(0)
            T = None if t_end is None else arb(float(t_end))
            lemma = self._lemma(tau, w, alpha, kappa)
            while lemma is None:
                if deadline is not None and time.perf_counter() > deadline:
                    return FateProof(alpha_text, None, None, None, steps, segments, time.perf_counter() - t0,
                                     "time budget ran out", pipes=pipes)
                if T is not None and not (tau < T):
                    break
                # re-centre the frame: κ = 1/N now (a short binary number), w = I − κτ
                N2, _ = self._norms(tau, w, alpha, kappa)
                k_new = arb(_short(1.0 / math.sqrt(float(N2.mid()))))
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
                return FateProof(alpha_text, None, None, ball_text(tau), steps, segments, time.perf_counter() - t0,
                                 "reached the horizon", q=q, pipes=pipes)
            fate = "collapse" if lemma.startswith("collapse") else "growth"
            return FateProof(alpha_text, fate, lemma, ball_text(tau), steps, segments, time.perf_counter() - t0,
                             pipes=pipes)


def _short(x: float) -> float:
    """x rounded to 24 significant bits (a frame parameter: any value is exact, a short one is cheap)."""
    m, e = math.frexp(x)
    return math.ldexp(round(m * 2**24), e - 24)


def _decimal(x, digits: int, direction: str) -> str:
    """x (mpf) as a decimal string of ``digits`` significant digits, rounded down or up."""
    with mp.workdps(digits + 20):
        x = mp.mpf(x)
        e = int(mp.floor(mp.log10(abs(x)))) if x != 0 else 0
        scale = mp.mpf(10) ** (digits - 1 - e)
        v = mp.floor(x * scale) if direction == "down" else mp.ceil(x * scale)
        n = int(v)
        s = str(abs(n))
        point = len(s) - (digits - 1 - e)
        if point <= 0:
            s = "0." + "0" * (-point) + s
        elif point < len(s):
            s = s[:point] + "." + s[point:]
        else:
            s = s + "0" * (point - len(s))
        return ("-" if n < 0 else "") + s


def common_digits(lo: str, hi: str, most: int) -> tuple[int, str | None]:
    """The most significant digits D such that every number of [lo, hi] rounds ... (lo and hi round to the same
    D-digit decimal, so every point between does)."""
    best = (0, None)
    with mp.workdps(most + 20):
        a, b = mp.mpf(lo), mp.mpf(hi)
        for D in range(1, most + 1):
            sa = mp.nstr(a, D, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)
            sb = mp.nstr(b, D, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)
            if sa != sb:
                break
            best = (D, sa)
    return best


def prove_alpha_c(z, rho: float, *, digits: int = 12, max_seconds: float = 600.0, guess=None,
                  depth: int = 2, record: bool = False) -> ProvedAlphaC:
    """α_c ∈ [lower, upper] with ``lower`` proved to collapse and ``upper`` proved to grow (ℓ2-SAM, one example,
    z > 0, balanced init α·1), aiming at ``digits`` significant digits; ``status`` "not proved" (with ``note``)
    when the budget ``max_seconds`` runs out first. ``guess``: a starting α (default: the floating-point α_c).
    ``record``: keep every step (for :func:`theorycheck.proved.certificate.certificate_of`). Depth 2 only here;
    even depths ≥ 4 are proved by :func:`theorycheck.proved.alpha_c_depth.prove_alpha_c_depth`."""
    t_start = time.perf_counter()
    digits = int(digits)
    if not 1 <= digits <= 60:
        raise TheorycheckError("digits must be between 1 and 60 for a proved α_c")
    if depth != 2:
        raise TheorycheckError("prove_alpha_c is for depth 2; even depths ≥ 4: predict.proved_depth.prove_alpha_c_depth")
    deadline = t_start + max_seconds
    method = ("validated Taylor integration (order {K}, {bits}-bit balls; Taylor series by Newton's iteration on "
              "series) of C4's reduced ODE in a moving frame, "
              "from the floating-point certified α_c ∓ 10^-(digits+2); persisting lemmas decide each end")
    D = digits + 3  # work a little beyond what is asked, so that the bracket shares `digits` digits
    pr = L2Prover(z, rho, D)
    method = method.format(K=pr.order, bits=pr.prec)
    zf = np.asarray(z, float)
    if np.all(zf == zf[0]):
        lo_t = _closed_all_equal(zf, rho, D)
        return _bracket(pr, lo_t[0], lo_t[1], digits, method, deadline, t_start, record,
                        note="all entries of z equal: α_c = ρ z_min/(√2‖z‖₂) exactly; both ends proved at τ = 0")
    a0 = str(guess) if guess is not None else _float_guess(zf, rho, digits + 3, deadline)
    with mp.workdps(D + 20):
        a0 = mp.mpf(a0)
        w = mp.mpf(10) ** (-(digits + 2))
        lo = _decimal(a0 * (1 - w), D + 1, "down")
        hi = _decimal(a0 * (1 + w), D + 1, "up")
    return _bracket(pr, lo, hi, digits, method, deadline, t_start, record)


def _bracket(pr, lo, hi, digits, method, deadline, t_start, record=False, note=""):
    fl = pr.run(lo, deadline=deadline, record=record)
    fh = pr.run(hi, deadline=deadline, record=record)
    seconds = time.perf_counter() - t_start
    if fl.fate == "collapse" and fh.fate == "growth":
        Dc, text = common_digits(lo, hi, digits + 6)
        if Dc < digits:
            note = (note + "; " if note else "") + (f"{Dc} common significant digits (asked {digits}): the bracket "
                                                    "straddles a rounding boundary")
        return ProvedAlphaC("proved", lo, hi, Dc, digits, method, RESTS_ON_L2, fl, fh, seconds, note, text)
    why = []
    for f, want in ((fl, "collapse"), (fh, "growth")):
        if f.fate != want:
            why.append(f"α = {f.alpha}: {f.fate or 'not decided'} ({f.why or f.lemma})")
    return ProvedAlphaC("not proved", None, None, 0, digits, method, RESTS_ON_L2, fl, fh, seconds,
                        "; ".join(why))


def _closed_all_equal(z, rho, D):
    with mp.workdps(D + 20):
        v = mp.mpf(float(rho)) * mp.mpf(float(z.min())) / (mp.sqrt(2) * mp.sqrt(mp.fsum(mp.mpf(float(x)) ** 2 for x in z)))
        w = mp.mpf(10) ** (-(D + 1))
        return _decimal(v * (1 - w), D + 1, "down"), _decimal(v * (1 + w), D + 1, "up")


def _float_guess(z, rho, digits, deadline):
    """The floating-point certified α_c at ``digits`` digits (:func:`predict.thresholds.collapse_threshold`):
    only a starting point — nothing proved rests on it."""
    from theorycheck.predict.thresholds import collapse_threshold

    r = collapse_threshold(z, rho, digits=int(digits), max_seconds=max(1.0, deadline - time.perf_counter()),
                           progress=False)
    if r.value is None:
        raise TheorycheckError(f"no floating-point α_c to start from: {r.note}")
    return r.value_text  # a decimal string: parsed at the caller's precision

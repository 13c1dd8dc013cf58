"""Regime thresholds in α (C5), for one example and balanced init.

ℓ2-SAM, L = 2 (THEORY.md C5, with the refinements ``theorycheck prove`` found):

- ``alpha_all_shrink``: every coordinate shrinks at the start iff α < ρ z_min/(√2‖z‖₂)
  (closed form; z > 0; for z with zero entries it never happens, and for negative entries
  z_min is the smallest positive entry). All shrinking persists, so α < alpha_all_shrink
  implies collapse.
- ``alpha_gd_like``: the major coordinate grows fastest from the start iff
  α ≥ ρ (z_(d) + z_next)/(√2‖z‖₂), z_next the largest value strictly below z_(d) (THEORY.md
  writes z_(d−1), which is wrong at a tie at the top). Then every coordinate grows, N
  grows, and j† = d for all τ > 0: regime 3.
- ``alpha_collapse``: the exact collapse threshold α_c has no closed form: it is found by
  a root search on the reduced scalar ODE of C4
  (:func:`theorycheck.proofs.minor_first.predict.alpha_c.collapse_threshold`), each trajectory
  classified by a persisting condition reached in floating point: N < ρ z_min (every rate negative
  from then on: collapse) or N ≥ ρ z_max (every rate nonnegative from then on: no collapse). A
  floating-point check, not a proof: :mod:`theorycheck.proofs.minor_first.proved.alpha_c` proves a bracket.

Every answer carries its :class:`~theorycheck.strength.Strength`: the float64 closed forms and the
floating α_c are floating-point checks; the closed forms at more than 15 digits
(:func:`closed_form_enclosure`) are proved enclosures at the exact inputs.

ℓ∞-SAM (C2/C3): per coordinate, α_j > ρ grows; the predicted limit index is
argmax{z_j : α_j > ρ} (L = 2) or argmax z_j (α_j − ρ)^{L−2} (L ≥ 3), 0 when none.
GD: no threshold; the limit index is argmax z (uniform init).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.strength import Strength, float_check, proved
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import theory_forms as MF


@dataclass
class Threshold:
    """A threshold in α: ``value`` (None when it does not exist for these inputs),
    ``closed_form`` (bool) and ``expression`` (the sympy expression, when closed), ``check`` (the record
    of a floating-point check: its bracket and runs), and ``strength`` (how strong ``value_text`` is)."""

    name: str
    value: float | None
    closed_form: bool
    expression: str | None = None
    note: str = ""
    check: dict | None = field(default=None)
    value_text: str | None = None
    strength: Strength = field(default_factory=float_check)

    def as_dict(self) -> dict:
        """Keys: value, value_text, closed_form, expression, note, check, strength."""
        text = self.value_text
        if text is None and self.closed_form and self.value is not None:
            text = f"{self.value:.15g}"  # a closed form evaluated in float64
        return {"value": self.value, "value_text": text if self.value is not None else None,
                "closed_form": self.closed_form, "expression": self.expression,
                "note": self.note, "check": self.check, "strength": self.strength.as_dict()}


def positive_z(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)):
        raise TheorycheckError("z must be a non-empty vector of finite numbers")
    if not np.any(z > 0):
        raise TheorycheckError("z has no positive entry: the balanced network (β = u², u > 0) cannot fit it")
    return z


def _unit(z: np.ndarray) -> np.ndarray:
    """z / max|z|: every ℓ2-SAM threshold in α is invariant under z → c z (c > 0), and the
    scaled vector neither overflows nor underflows in ‖z‖₂ (z ~ 1e±300 included)."""
    return z / np.max(np.abs(z))


def alpha_all_shrink(z, rho: float) -> Threshold:
    """ρ z_min/(√2‖z‖₂): below it every coordinate shrinks from the start (and collapses)."""
    z = _unit(positive_z(z))
    form = MF.alpha_all_shrink()
    f = form.fn
    if np.any(z == 0):
        return Threshold("alpha_all_shrink", None, True, form.text,
                         "z has a zero entry: that coordinate never moves, so not all coordinates can shrink")
    note = ""
    zmin = float(z.min())
    if zmin < 0:
        zmin = float(z[z > 0].min())
        note = ("z has negative entries (those coordinates always shrink); z_min is taken over the positive "
                "entries — THEORY.md's formula with the overall z_min is wrong here")
    return Threshold("alpha_all_shrink", float(f(zmin, float(np.linalg.norm(z)), rho)), True, form.text, note)


def _rational(v) -> Fraction:
    """A Fraction as it is, any other number as its float's exact binary value."""
    return v if isinstance(v, Fraction) else Fraction(float(v))


def initial_norm_sign(z, alpha, rho, zref) -> int:
    """sign(N0 − ρ·zref), N0 = α√2‖z‖₂ (C5's :func:`theory_exprs.initial_norm`), decided exactly:
    both sides are ≥ 0, so their squares are compared in rational arithmetic (float inputs are the
    rationals they are, Fractions — the exact inputs — are kept). With all z_j equal, −1 / 0 / +1 is
    collapse / the saddle (every rate 0: an equilibrium) / growth, at any scale, including α exactly at α_c."""
    zs = list(z) if isinstance(z, (list, tuple)) else list(np.asarray(z, float).reshape(-1))
    S = sum(_rational(v) ** 2 for v in zs)
    gap = Fraction(MF.initial_norm_sq_exact()(_rational(alpha), S)) - (_rational(rho) * _rational(zref)) ** 2
    return (gap > 0) - (gap < 0)


def alpha_gd_like(z, rho: float) -> Threshold:
    """ρ (z_(d) + z_next)/(√2‖z‖₂): from it on, the major coordinate grows fastest from the
    start and j† = d for all τ > 0 (regime 3). z_next is the largest value strictly below
    z_(d); when z_next ≤ 0 (or there is none: all entries equal) the condition "the major
    coordinate grows" (N0 ≥ ρ z_(d)) is the binding one, so the value is never below
    alpha_all_shrink and never negative."""
    z = _unit(positive_z(z))
    form = MF.alpha_gd_like()
    f = form.fn
    top = float(z.max())
    nrm = float(np.linalg.norm(z))
    below = z[z < top]
    grow = float(f(top, 0.0, nrm, rho))  # N0 = ρ z_(d): the major coordinate's rate is 0
    if below.size == 0:
        return Threshold("alpha_gd_like", grow, True, MF.alpha_gd_like_without_next(),
                         "all entries of z are equal: no coordinate is major; every coordinate grows iff "
                         "N0 ≥ ρ z_(d) (z_(d−1) replaced by 0), which is also alpha_all_shrink and α_c")
    nxt = float(below.max())
    if nxt <= 0:
        return Threshold("alpha_gd_like", grow, True, MF.alpha_gd_like_without_next(),
                         "the largest entry below the maximum is ≤ 0: the major coordinate outgrows the others as "
                         "soon as it grows, i.e. from N0 ≥ ρ z_(d) (z_(d−1) replaced by 0)")
    zs = np.sort(z)
    note = ""
    if zs.size >= 2 and zs[-2] == top:
        note = ("tie at the top of z: z_(d−1) = z_(d); the threshold uses the largest value strictly below "
                "z_(d) (THEORY.md's z_(d−1) would give the wrong, larger value "
                f"{float(f(top, top, nrm, rho)):.12g})")
    return Threshold("alpha_gd_like", float(f(top, nxt, nrm, rho)), True, form.text, note)


def _closed_form_arguments(name: str, zq: list[Fraction]) -> tuple | None:
    """The arguments of the closed form ``name`` at the exact z (as alpha_all_shrink / alpha_gd_like choose
    them): (z_min over the positive entries,) or (z_(d), z_next or 0); None when it does not exist."""
    if name == "alpha_all_shrink":
        if any(v == 0 for v in zq):
            return None
        return (min(v for v in zq if v > 0),)
    top = max(zq)
    below = [v for v in zq if v < top]
    return (top, max(below) if below and max(below) > 0 else Fraction(0))


def closed_form_enclosure(name: str, z, rho, digits: int) -> dict | None:
    """The closed-form threshold ``name`` ("alpha_all_shrink" or "alpha_gd_like", the symbolic layer's
    expression) enclosed in ball arithmetic at the exact inputs ``z``, ``rho`` (what
    :func:`theorycheck.arith.exact.exact` reads: "0.1" is 1/10, a float its binary value): ``text`` (the
    significant digits, at most ``digits``, every point of the enclosure rounds to), ``digits`` (how many),
    ``enclosure`` ([lo, hi], outward decimals) and ``strength`` (proved). None when the threshold does not
    exist for z. The working precision is doubled until ``digits`` digits are common (at most 4 times: a value
    exactly at a rounding boundary keeps fewer)."""
    from theorycheck.arith.balls import arb_context
    from theorycheck.arith.decimals import common_digits, lo_hi
    from theorycheck.arith.exact import exact, exact_vector

    ez, er = exact_vector(z, "z"), exact(rho, "rho")
    args = _closed_form_arguments(name, [e.value for e in ez])
    if args is None:
        return None
    form = {"alpha_all_shrink": MF.alpha_all_shrink, "alpha_gd_like": MF.alpha_gd_like}[name]()
    f = C.arb_function(form.args, [form.expression])
    prec = int(digits * 3.33) + 64
    for _ in range(4):
        with arb_context(prec=prec):
            zb = [e.ball() for e in ez]
            norm = sum((v * v for v in zb[1:]), zb[0] * zb[0]).sqrt()
            v = f(*[exact(a).ball() for a in args], norm, er.ball())[0]
            lo, hi = lo_hi(v, int(digits) + 6)
        D, text = common_digits(lo, hi, int(digits))
        if D >= digits:
            break
        prec *= 2
    return {"text": text, "digits": D, "enclosure": [lo, hi], "strength": proved()}


def closed_form_text(name: str, z, rho, digits: int) -> str | None:
    """``digits`` significant digits of the closed-form threshold ``name`` at the exact inputs z, ρ (every
    one proved: :func:`closed_form_enclosure`), or None when it does not exist."""
    enc = closed_form_enclosure(name, z, rho, digits)
    return None if enc is None else enc["text"]


def initial_rates(z, alpha: float, rho: float) -> np.ndarray:
    """dθ_j/dτ at τ = 0: z_j (1 − ρ z_j / N0) (C4/C5), evaluated as s·(z_j/s)(1 − ρ (z_j/s)/N0(z/s))
    with s = max|z| so that no intermediate overflows (the rate is homogeneous of degree 1 in z)."""
    z = positive_z(z)
    s = float(np.max(np.abs(z)))
    u = z / s
    f = MF.l2_log_rate()
    with np.errstate(over="ignore"):
        r = s * np.asarray(f(u, MF.initial_norm()(alpha, float(np.linalg.norm(u))), rho), dtype=float)
    if not np.all(np.isfinite(r)):
        raise TheorycheckError("the initial rates overflow float64 for this z (|z| · ρ/α beyond 1e308): rescale z")
    return r


def initial_index(z, alpha: float, rho: float) -> int:
    """j†(0+) (1-based): argmax of the initial rates; at a tie of the top rates between
    different z values the second order decides (θ_j'' = ρ z_j² N'/N²: the larger z if
    N'(0) > 0, the smaller if < 0). Coordinates with equal z_j have equal β_j for all τ
    (uniform init): among them j† is the smallest index, like argmax."""
    z = positive_z(z)
    u = _unit(z)
    r = initial_rates(u, alpha, rho)  # the same ordering as for z (positive scale)
    top = np.flatnonzero(np.isclose(r, r.max(), rtol=1e-13, atol=1e-15))
    if np.unique(u[top]).size == 1:
        return int(top[0]) + 1
    dN2 = float(np.sum(u**2 * r))  # d(N²)/dτ at 0 is 4 α² Σ z_k² rate_k
    zbest = u[top].max() if dN2 > 0 else u[top].min()
    return int(top[u[top] == zbest][0]) + 1


def linf_limit_direction(z, alpha, rho: float, L: int) -> np.ndarray:
    """Predicted limit direction of balanced ℓ∞-SAM for one example z > 0, as refined by
    ``theorycheck prove``/``verify``: L = 1: z/‖z‖ (C1). Some α_j > ρ: L = 2 ∝ (α_j − ρ)²
    over the maximisers of z among α_j > ρ (C2); L ≥ 3 ∝ z_j^(−L/(L−2)) over the maximisers
    of the blow-up score z_j (α_j − ρ)^(L−2) (C3). No α_j > ρ: even L → ∝ 1[α_j = ρ] (the
    others reach 0 and slide; 0 when every α_j < ρ); odd L ≥ 3 → ∝ 1 (every u_j tends to ρ).

    Scores and weights are the compiled closed forms (:func:`theorycheck.symbolic.theory_forms.linf_limit`), evaluated
    in log space on z/max z and (α_j − ρ)/max_j(α_j − ρ): the direction does not depend on the
    scale of z or of (α, ρ). Maximisers are decided exactly (the score is a polynomial in the
    float inputs, compared in rational arithmetic): a 1-ulp gap in z is a gap, as it is for the
    flow, whose ratio |β_j|/|β_k| grows without bound whenever the scores differ."""
    z = np.asarray(z, float)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)):
        raise TheorycheckError("z must be a non-empty vector of finite numbers")
    if np.any(z <= 0):
        raise TheorycheckError("the ℓ∞-SAM predictions are derived for z > 0")
    a = np.broadcast_to(np.asarray(alpha, float), z.shape)
    if not (np.all(np.isfinite(a)) and np.all(a > 0) and np.isfinite(rho) and rho >= 0):
        raise TheorycheckError("the ℓ∞-SAM predictions need finite α_j > 0 and ρ ≥ 0")
    L = int(L)
    above = a > rho
    sel = np.ones(z.shape, dtype=bool) if L == 1 else above
    if not sel.any():
        w = np.ones(z.shape) if L % 2 == 1 else (a == rho).astype(float)
        n = np.linalg.norm(w)
        return w / n if n > 0 else w
    # scale-free arguments: z/max z, and α_j − ρ relative to its largest value (ρ then 0)
    zn = z / z.max()
    gap = np.where(above, a - rho, 0.0)
    an = np.where(above, gap / gap.max(), 1.0) if above.any() else np.ones(z.shape)
    f = MF.linf_limit(L)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(sel, np.broadcast_to(f.log_score(zn, an, 0.0), z.shape), -np.inf)
        top = score[sel].max()
        # candidates by the float score (a generous band), then the exact maximisers among them
        cand = np.flatnonzero(sel & (score >= top - 1e-6 * max(1.0, abs(top))))
        exact = MF.linf_limit_exact_score(L)
        fr_rho = Fraction(float(rho))
        ex = {int(j): Fraction(exact(Fraction(float(z[j])), Fraction(float(a[j])), fr_rho)) for j in cand}
        best = max(ex.values())
        sel = np.zeros(z.shape, dtype=bool)
        sel[[j for j, v in ex.items() if v == best]] = True
        lw = np.where(sel, np.broadcast_to(f.log_weight(zn, an, 0.0), z.shape), -np.inf)
    w = np.exp(lw - lw[sel].max())  # the largest selected weight is 1: no underflow of the norm
    return w / np.linalg.norm(w)


def linf_prediction(z, alpha, rho: float, L: int) -> int:
    """Predicted limit index for ℓ∞-SAM: the largest entry of :func:`linf_limit_direction`
    (the smallest index among ties: the limit is then not a basis vector), 0 for the zero
    vector."""
    d = linf_limit_direction(z, alpha, rho, L)
    if not d.any():
        return 0
    return int(np.flatnonzero(d == d.max())[0]) + 1

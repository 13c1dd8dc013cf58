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
  bisection on the reduced scalar ODE of C4 (:func:`collapse_threshold`), each trajectory
  classified by a certificate: N < ρ z_min (every rate negative from then on: collapse) or
  N ≥ ρ z_max (every rate nonnegative from then on: no collapse).

ℓ∞-SAM (C2/C3): per coordinate, α_j > ρ grows; the predicted limit index is
argmax{z_j : α_j > ρ} (L = 2) or argmax z_j (α_j − ρ)^{L−2} (L ≥ 3), 0 when none.
GD: no threshold; the limit index is argmax z (uniform init).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from . import closed_forms as cf
from .compile import lambdify
from .errors import TheorycheckError
from .symbolic import rho as rho_sym


@dataclass
class Threshold:
    """A threshold in α: ``value`` (None when it does not exist for these inputs),
    ``closed_form`` (bool) and ``expression`` (the sympy expression, when closed)."""

    name: str
    value: float | None
    closed_form: bool
    expression: str | None = None
    note: str = ""
    certificate: dict | None = field(default=None)

    def to_dict(self) -> dict:
        return {"value": self.value, "closed_form": self.closed_form, "expression": self.expression,
                "note": self.note, "certificate": self.certificate}


def _positive_z(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    if z.ndim != 1 or z.size == 0 or not np.all(np.isfinite(z)):
        raise TheorycheckError("z must be a non-empty vector of finite numbers")
    if not np.any(z > 0):
        raise TheorycheckError("z has no positive entry: the balanced network (β = u², u > 0) cannot fit it")
    return z


def alpha_all_shrink(z, rho: float) -> Threshold:
    """ρ z_min/(√2‖z‖₂): below it every coordinate shrinks from the start (and collapses)."""
    z = _positive_z(z)
    expr = cf.alpha_all_shrink()
    f = lambdify((cf.z_min, cf.z_norm, rho_sym), expr)
    if np.any(z == 0):
        return Threshold("alpha_all_shrink", None, True, sp.sstr(expr),
                         "z has a zero entry: that coordinate never moves, so not all coordinates can shrink")
    note = ""
    zmin = float(z.min())
    if zmin < 0:
        zmin = float(z[z > 0].min())
        note = ("z has negative entries (those coordinates always shrink); z_min is taken over the positive "
                "entries — THEORY.md's formula with the overall z_min is wrong here")
    return Threshold("alpha_all_shrink", float(f(zmin, float(np.linalg.norm(z)), rho)), True, sp.sstr(expr), note)


def alpha_gd_like(z, rho: float) -> Threshold:
    """ρ (z_(d) + z_next)/(√2‖z‖₂): from it on, the major coordinate grows fastest from the
    start and j† = d for all τ > 0 (regime 3)."""
    z = _positive_z(z)
    expr = cf.alpha_gd_like()
    f = lambdify((cf.z_1st, cf.z_2nd, cf.z_norm, rho_sym), expr)
    top = float(z.max())
    below = z[z < top]
    if below.size == 0:
        return Threshold("alpha_gd_like", 0.0, True, sp.sstr(expr),
                         "all entries of z are equal: no coordinate is major, every α is 'GD-like'")
    zs = np.sort(z)
    note = ""
    if zs.size >= 2 and zs[-2] == top:
        note = ("tie at the top of z: z_(d−1) = z_(d); the threshold uses the largest value strictly below "
                "z_(d) (THEORY.md's z_(d−1) would give the wrong, larger value "
                f"{float(f(top, top, float(np.linalg.norm(z)), rho)):.12g})")
    return Threshold("alpha_gd_like", float(f(top, float(below.max()), float(np.linalg.norm(z)), rho)), True,
                     sp.sstr(expr), note)


def initial_norm(z, alpha: float) -> float:
    """N0 = α √2 ‖z‖₂ (C5), compiled from closed_forms."""
    return float(lambdify((cf.alpha, cf.z_norm), cf.initial_norm())(alpha, float(np.linalg.norm(z))))


def initial_rates(z, alpha: float, rho: float) -> np.ndarray:
    """dθ_j/dτ at τ = 0: z_j (1 − ρ z_j / N0) (C4/C5)."""
    f = lambdify((cf.z_j, cf.N, rho_sym), cf.l2_log_rate())
    return np.asarray(f(np.asarray(z, float), initial_norm(z, alpha), rho), dtype=float)


def initial_index(z, alpha: float, rho: float) -> int:
    """j†(0+) (1-based): argmax of the initial rates; at a tie of the top rates the second
    order decides (θ_j'' = ρ z_j² N'/N²: the larger z if N'(0) > 0, the smaller if < 0)."""
    z = np.asarray(z, float)
    r = initial_rates(z, alpha, rho)
    top = np.flatnonzero(np.isclose(r, r.max(), rtol=1e-13, atol=1e-15))
    if top.size == 1:
        return int(top[0]) + 1
    dN2 = float(np.sum(z**2 * r))  # d(N²)/dτ at 0 is 4 α² Σ z_k² rate_k
    cand = top[np.argmax(z[top])] if dN2 > 0 else top[np.argmin(z[top])]
    return int(cand) + 1


def linf_prediction(z, alpha, rho: float, L: int) -> int:
    """Predicted limit index for ℓ∞-SAM (C2 for L = 2, C3 for L ≥ 3); 0 when no α_j > ρ
    (for odd L ≥ 3 the limit is then ρ^L·1, reported as 0 only for even L). Ties: the
    smallest index among the maximisers (the limit is then not a basis vector)."""
    z = np.asarray(z, float)
    a = np.broadcast_to(np.asarray(alpha, float), z.shape)
    above = a > rho
    if not above.any():
        return 0
    if L == 1:
        return int(np.argmax(z)) + 1
    if L == 2:
        score = np.where(above, z, -np.inf)
    else:
        f = lambdify((cf.z_j, cf.alpha_j, rho_sym), cf.linf_blowup_score(L))
        score = np.where(above, f(z, a, rho), -np.inf)
    return int(np.argmax(score)) + 1

"""Depth-L ℓ2-SAM at the start (one example, uniform init α): the initial rates, their α-free
shape and the α at which a coordinate's perturbed weight vanishes, derived from
:mod:`closed_forms` (what :mod:`theorycheck.proofs.minor_first.predict.depth` turns into thresholds)."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from theorycheck.errors import TheorycheckError
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic.model import L2_ASCENT
from theorycheck.symbolic.model import rho as rho_sym

__all__ = ["L_user", "alpha_of_c", "c_sym", "initial_forms", "zero_rate_alpha"]

#: c = ρ / (α √L ‖z‖₂), the scale-free parameter of the initial rates
c_sym = sp.Symbol("c", positive=True)
L_user = cf.L_sym


@lru_cache(maxsize=32)
def initial_forms(L: int) -> dict:
    """The sympy forms at u = α for depth L: N0, r_j(0), the log-rate, and its α-free shape
    g(z_j; c) = rate / α^{L−2} with c = ρ/(α√L‖z‖₂)."""
    if L < 2:
        raise TheorycheckError("the ℓ2-SAM thresholds need depth L ≥ 2 (L = 1: no SAM effect on the direction, C1)")
    a, zn = cf.alpha, cf.z_norm
    # N0² = Σ_j summand_j(u = α) = L α^{2L−2} ‖z‖²: the summand is z_j² times a z-free factor
    per = sp.simplify(cf.balanced_norm_summand(L).subs(cf.u_j, a) / cf.z_j**2)
    N0 = sp.sqrt(per) * zn
    uhat = cf.balanced_perturbed_point(L, L2_ASCENT)
    r = sp.simplify(1 - (uhat / cf.u_j).subs({cf.u_j: a, cf.N: N0}))
    derived = cf.balanced_log_field(L, L2_ASCENT).subs({cf.theta_j: sp.log(a), cf.N: N0})
    # the same rate with û^(L−1) kept as a power (no cancellation near a zero rate): checked equal
    rate = cf.z_j * a ** (L - 2) * (1 - r) ** (L - 1)
    if sp.simplify(sp.expand(rate - derived)) != 0:
        raise TheorycheckError(f"depth {L}: the factored initial rate differs from the derived one")
    g = sp.simplify((rate / a ** (L - 2)).subs(a, rho_sym / (c_sym * sp.sqrt(L) * zn)))
    return {"N0": N0, "r0": r, "rate": rate, "shape": sp.expand(g)}


@lru_cache(maxsize=32)
def major_fastest_c(L: int) -> tuple[tuple, sp.Expr]:
    """The root c* < 1/t of g(t; c) = g(v; c) (t = z_max > v = z_j > 0, g the shape of :func:`initial_forms`):
    with w = (v/t)^(1/(L−1)) and m = 1 − w, c* = m / ((t − v) + v m), a quotient of positive terms (no
    cancellation, even for v → t or v/t → 0). Checked here: it is a root (v = t w^(L−1) substituted). Returns
    ((d, v, m), c*) with d = t − v (the caller forms it: exact for v ≥ t/2)."""
    t, v, m, d = sp.symbols("t v m d", positive=True)
    c_d = m / (d + v * m)  # d = t − v, given apart: a printer may not keep (t − v) + v m in that order
    c = c_d.subs(d, t - v)
    g = initial_forms(L)["shape"]
    # g(x; c) = ± x (1 − c x)^(L−1), so g(t; c) = g(v; c) ⇐ 1 − c t = w (1 − c v) with v = t w^(L−1)
    one = cf.z_j * (1 - c_sym * cf.z_j) ** (L - 1)
    if not any(sp.expand(g - sgn * one) == 0 for sgn in (1, -1)):
        raise TheorycheckError(f"depth {L}: the initial rate's shape is not ± z (1 − c z)^(L−1)")
    w = 1 - m
    if sp.cancel(((1 - c * t) - w * (1 - c * v)).subs(v, t * w ** (L - 1))) != 0:
        raise TheorycheckError(f"depth {L}: m/((t − v) + v m) is not a root of g(t; c) = g(v; c)")
    return (d, v, m), c_d


def zero_rate_alpha(L: int):
    """α at which r_j(0) = 1 (û_j = 0 at the start), solved by sympy: ρ z_j/(√L ‖z‖₂)."""
    sol = sp.solve(sp.Eq(initial_forms(L)["r0"], 1), cf.alpha)
    if len(sol) != 1:
        raise TheorycheckError(f"r_j(0) = 1 has {len(sol)} solutions in α at depth {L}")
    return sol[0]


def alpha_of_c(L: int):
    """α at which the initial ratios are r(0) = c z (the ray the blown-up ratio system starts on), solved by sympy
    from r_j(0) = c z_j: ρ/(c √L ‖z‖₂)."""
    sol = sp.solve(sp.Eq(initial_forms(L)["r0"], c_sym * cf.z_j), cf.alpha)
    if len(sol) != 1 or sol[0].has(cf.z_j):
        raise TheorycheckError(f"r_j(0) = c z_j does not give one α free of z_j at depth {L}")
    return sol[0]

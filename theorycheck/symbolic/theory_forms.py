"""Compiled closed forms of the thresholds and limits a theory states, apart from the flows: C5's thresholds
(α_all-shrink, α_GD-like, N0 and the log rate), the ℓ∞-SAM limit directions, solutions and blow-up times of
C1–C3, the depth-L forms at the start and the blown-up ratio system of even depth, C4's reduced ODE (its rate, its
log-summands affine in (τ, I), their Taylor coefficients, its clocks), C5's certificate levels and the lock-in
levels, each compiled once from :mod:`theorycheck.symbolic.theory_exprs`, :mod:`theorycheck.symbolic.depth` and
:mod:`theorycheck.symbolic.validated_fields` and cached. The flows every pack integrates are in :mod:`theorycheck.symbolic.forms`; compiling stays in this
stage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.compiler import lambdify, numpy_system
from theorycheck.symbolic.forms import checked_depth


# ---------------------------------------------------------------- C1–C3: ℓ∞ limit directions
@dataclass(frozen=True)
class LinfLimit:
    """``log_score(z, alpha, rho)`` and ``log_weight(z, alpha, rho)``: the logs of
    :func:`theory_exprs.linf_limit_score` and :func:`theory_exprs.linf_limit_weight`
    (depth L), for z_j > 0 and α_j > ρ. Arguments broadcast."""

    L: int
    log_score: Callable
    log_weight: Callable


@lru_cache(maxsize=32)
def linf_limit(L: int, backend: str = "numpy") -> LinfLimit:
    """Compile the log score and log weight of the ℓ∞-SAM limit direction for depth L."""
    L = checked_depth(L)
    args = (cf.z_j, cf.alpha_j, sy.rho)
    return LinfLimit(L, lambdify(args, TE.linf_limit_log_score(L), backend),
                     lambdify(args, TE.linf_limit_log_weight(L), backend))


@lru_cache(maxsize=1)
def initial_norm_sq_exact() -> Callable:
    """``n0_sq(alpha, S)``: N0² for S = ‖z‖₂² (C5's :func:`theory_exprs.initial_norm`, squared:
    a polynomial) as plain Python arithmetic, exact with :class:`fractions.Fraction` arguments."""
    S = sp.Symbol("S", positive=True)
    expr = sp.expand(TE.initial_norm() ** 2).subs(cf.z_norm**2, S)
    if cf.z_norm in expr.free_symbols or not expr.is_polynomial(cf.alpha, S):
        raise AssertionError("N0² is not a polynomial in (α, ‖z‖²): no exact evaluation")
    return sp.lambdify((cf.alpha, S), expr, modules=[{}])


@lru_cache(maxsize=32)
def linf_limit_exact_score(L: int) -> Callable:
    """:func:`theory_exprs.linf_limit_score` (a polynomial in z_j, α_j, ρ) as plain Python
    arithmetic: called with :class:`fractions.Fraction` arguments it is exact, so the
    maximisers of the limit are decided exactly (a 1-ulp gap in z is a gap, not a tie)."""
    L = checked_depth(L)
    expr = TE.linf_limit_score(L)
    if not expr.is_polynomial(cf.z_j, cf.alpha_j, sy.rho):
        raise AssertionError(f"the ℓ∞ limit score at L = {L} is not a polynomial: no exact evaluation")
    return sp.lambdify((cf.z_j, cf.alpha_j, sy.rho), expr, modules=[{}])


# ---------------------------------------------------------------- C5's closed-form thresholds (one example)
@lru_cache(maxsize=4)
def initial_norm(backend: str = "numpy") -> Callable:
    """``N0(alpha, znorm)`` = α √2 ‖z‖₂ (:func:`theory_exprs.initial_norm`)."""
    return lambdify((cf.alpha, cf.z_norm), TE.initial_norm(), backend)


@lru_cache(maxsize=4)
def l2_log_rate(backend: str = "numpy") -> Callable:
    """``rate(z_j, N, rho)`` = dθ_j/dτ = z_j (1 − ρ z_j / N) (:func:`theory_exprs.l2_log_rate`)."""
    return lambdify((cf.z_j, cf.N, sy.rho), TE.l2_log_rate(), backend)


@dataclass(frozen=True)
class ClosedForm:
    """A closed form solved and compiled once: ``fn(*args)`` evaluates ``expression`` (whose
    sympy text is ``text``); callers on a hot path use these, never sympy."""

    expression: sp.Expr
    text: str
    args: tuple
    fn: Callable

    def __call__(self, *values):
        """``fn(*values)``: a ClosedForm is used as its compiled function."""
        return self.fn(*values)


def _closed(args: tuple, expr: sp.Expr, backend: str) -> ClosedForm:
    return ClosedForm(expr, sp.sstr(expr), args, lambdify(args, expr, backend))


@lru_cache(maxsize=8)
def alpha_all_shrink(backend: str = "numpy") -> ClosedForm:
    """ρ z_min/(√2‖z‖₂) (C5) as a function of (z_min, ‖z‖₂, ρ)."""
    return _closed((cf.z_min, cf.z_norm, sy.rho), TE.alpha_all_shrink(), backend)


@lru_cache(maxsize=8)
def alpha_gd_like(backend: str = "numpy") -> ClosedForm:
    """ρ (z_(d) + z_(d−1))/(√2‖z‖₂) (C5) as a function of (z_(d), z_(d−1), ‖z‖₂, ρ)."""
    return _closed((cf.z_1st, cf.z_2nd, cf.z_norm, sy.rho), TE.alpha_gd_like(), backend)


@lru_cache(maxsize=1)
def alpha_gd_like_without_next() -> str:
    """The text of alpha_gd_like with z_(d−1) replaced by 0 (no entry below the maximum)."""
    return sp.sstr(TE.alpha_gd_like().subs(cf.z_2nd, 0))



# ---------------------------------------------------------------- C1–C3: solutions and blow-up (one example)
@lru_cache(maxsize=4)
def l1_solution(backend: str = "numpy") -> Callable:
    """``w(alpha_j, z_j, tau)`` = α_j + z_j τ (L = 1, :func:`theory_exprs.l1_solution`)."""
    return lambdify((cf.alpha_j, cf.z_j, sy.tau), TE.l1_solution(), backend)


@lru_cache(maxsize=4)
def linf_l2_solution(backend: str = "numpy") -> tuple[Callable, Callable]:
    """``(u(alpha_j, z_j, rho, tau), tau0(alpha_j, z_j, rho))``: ℓ∞-SAM at L = 2 and its zero time (C2)."""
    return (lambdify((cf.alpha_j, cf.z_j, sy.rho, sy.tau), TE.linf_l2_solution(), backend),
            lambdify((cf.alpha_j, cf.z_j, sy.rho), TE.linf_l2_zero_time(), backend))


@lru_cache(maxsize=16)
def linf_blowup_time(L: int, backend: str = "numpy") -> Callable:
    """``t_star(alpha_j, z_j, rho)``: the blow-up time of ℓ∞-SAM at depth L ≥ 3 (C3,
    :func:`theory_exprs.linf_blowup_time`)."""
    return lambdify((cf.alpha_j, cf.z_j, sy.rho), TE.linf_blowup_time(checked_depth(L)), backend)


# ---------------------------------------------------------------- depth L, ℓ2-SAM at the start
@lru_cache(maxsize=32)
def depth_initial_rate(L: int, backend: str = "numpy") -> Callable:
    """``rate(z_j, alpha, znorm, rho)``: dθ_j/dτ at τ = 0, depth L (:func:`symbolic.depth.initial_forms`)."""
    from theorycheck.symbolic.depth import initial_forms

    return lambdify((cf.z_j, cf.alpha, cf.z_norm, sy.rho), initial_forms(checked_depth(L))["rate"], backend)


@lru_cache(maxsize=32)
def depth_zero_rate_alpha(L: int, backend: str = "numpy") -> Callable:
    """``alpha(z_j, znorm, rho)`` at which û_j(0) = 0, depth L (:func:`symbolic.depth.zero_rate_alpha`)."""
    from theorycheck.symbolic.depth import zero_rate_alpha

    return lambdify((cf.z_j, cf.z_norm, sy.rho), zero_rate_alpha(checked_depth(L)), backend)


@lru_cache(maxsize=32)
def depth_major_fastest_c(L: int, backend: str = "numpy") -> Callable:
    """``c(d, v, m)``: the root c* < 1/t of g(t; c) = g(v; c), d = t − v, m = 1 − (v/t)^(1/(L−1)), depth L
    (:func:`symbolic.depth.major_fastest_c`)."""
    from theorycheck.symbolic.depth import major_fastest_c

    args, c = major_fastest_c(checked_depth(L))
    return lambdify(args, c, backend)


def depth_alpha_of_c(L: int, backend: str = "numpy") -> Callable:
    """``alpha(c, znorm, rho)``: the α whose initial ratios are r(0) = c z, depth L
    (:func:`symbolic.depth.alpha_of_c`; c = ρ/(α √L ‖z‖₂))."""
    from theorycheck.symbolic.depth import alpha_of_c, c_sym

    return lambdify((c_sym, cf.z_norm, sy.rho), alpha_of_c(checked_depth(L)), backend)


@lru_cache(maxsize=16)
def ratio_blowup(L: int, d: int) -> tuple:
    """(symbolic system, float64 field): :func:`symbolic.validated_fields.ratio_blowup_system` (ς, (λ, ω_1 … ω_d),
    (z_1 … z_d), fields) and its fields compiled for float64, ``f(λ, ω_1 … ω_d, z_1 … z_d) -> tuple``."""
    from theorycheck.symbolic import validated_fields as S

    t, y, p, f = S.ratio_blowup_system(int(L), int(d))
    return (t, y, p, f), numpy_system((*y, *p), f)


# ---------------------------------------------------------------- C4's reduced ODE, C5's certificates, the lock-in levels
@lru_cache(maxsize=8)
def reduced_l2(backend: str = "numpy") -> tuple[Callable, Callable]:
    """C4's reduction (ℓ2-SAM, L = 2, one example, uniform α): returns
    ``summand(z, tau, I, alpha, rho)`` (term j of N(τ, I)²) and
    ``theta(z, tau, I, alpha, rho)`` (θ_j = ln u_j)."""
    args = (cf.z_j, sy.tau, cf.I, cf.alpha, sy.rho)
    return lambdify(args, TE.l2_reduced_summand(), backend), lambdify(args, TE.l2_theta(), backend)


@lru_cache(maxsize=8)
def reduced_l2_log(backend: str = "numpy") -> Callable:
    """``log_summand(z, tau, I, alpha, rho)``: ln(term j of N(τ, I)²) of C4's reduction."""
    args = (cf.z_j, sy.tau, cf.I, cf.alpha, sy.rho)
    return lambdify(args, TE.l2_reduced_log_summand(), backend)


@dataclass(frozen=True)
class ReducedL2Linear:
    """C4's ln(term j of N(τ, I)²) is affine in (τ, I): ``c0(z, alpha, rho) + c_tau(z, alpha,
    rho)·τ + c_I(z, alpha, rho)·I``. The coefficients are sympy derivatives of
    :func:`theory_exprs.l2_reduced_log_summand` (affinity is checked when compiling), so a
    batch precomputes them once per member and evaluates N with two multiply-adds per term."""

    c0: Callable
    c_tau: Callable
    c_I: Callable


@lru_cache(maxsize=8)
def reduced_l2_log_linear(backend: str = "numpy") -> ReducedL2Linear:
    """Compile the affine decomposition of C4's log summand in (τ, I) (see :class:`ReducedL2Linear`)."""
    e = TE.l2_reduced_log_summand()
    c_tau, c_I = sp.diff(e, sy.tau), sp.diff(e, cf.I)
    c0 = e.subs({sy.tau: 0, cf.I: 0})
    if sp.simplify(e - (c0 + c_tau * sy.tau + c_I * cf.I)) != 0 or ({sy.tau, cf.I} & (c_tau.free_symbols | c_I.free_symbols)):
        raise AssertionError("C4's log summand is not affine in (tau, I): the batched reduction needs it")
    args = (cf.z_j, cf.alpha, sy.rho)
    return ReducedL2Linear(lambdify(args, c0, backend), lambdify(args, c_tau, backend), lambdify(args, c_I, backend))


@lru_cache(maxsize=1)
def reduced_l2_taylor_coefficients() -> tuple[Callable, Callable, Callable]:
    """(c, p, q) as mpmath functions of (z_j, α, ρ): ln(term j of N(τ, I)²) = c + p τ + q I
    (C4), with c = simplify(e − p τ − q I) (the form the Taylor integrator of
    :mod:`theorycheck.proofs.minor_first.predict.reduced_taylor` evaluates at extra digits)."""
    from theorycheck.errors import TheorycheckError

    e = TE.l2_reduced_log_summand()
    p = sp.diff(e, sy.tau)
    q = sp.diff(e, cf.I)
    c = sp.simplify(e - p * sy.tau - q * cf.I)
    if sp.diff(p, sy.tau) != 0 or sp.diff(q, cf.I) != 0 or sp.diff(p, cf.I) != 0 or c.has(sy.tau) or c.has(cf.I):
        raise TheorycheckError("C4's log-summand is not linear in (τ, I): the Taylor integrator does not apply")
    args = (cf.z_j, cf.alpha, sy.rho)
    return lambdify(args, c, "mpmath"), lambdify(args, p, "mpmath"), lambdify(args, q, "mpmath")


@lru_cache(maxsize=8)
def l2_switch_level(backend: str = "numpy") -> Callable:
    """``level(z_j, z_k, rho)``: N̄ at which j† switches between j and k (C4)."""
    return lambdify((cf.z_j, cf.z_k, sy.rho), TE.l2_switch_level(), backend)


@lru_cache(maxsize=16)
def reduced_l2_clocked(kind: str, backend: str = "numpy") -> Callable:
    """``f(lnN, lnc) -> (dτ/ds, dI/ds)``: C4's reduced ODE dI/dτ = 1/N in the clock ``kind``
    (:func:`theory_exprs.l2_reduced_clocked_log`; "time", "arc" or "smooth" with c = e^{lnc})."""
    return lambdify((cf.lnN, TE.ln_c), TE.l2_reduced_clocked_log(kind), backend)


@dataclass(frozen=True)
class L2Certificates:
    """C5's levels of N (ℓ2-SAM, L = 2, one example), compiled from :mod:`closed_forms`:
    ``collapse(z_min, rho)`` (N below it: the collapse persists), ``no_collapse(z_max, rho)``
    (N at or above it: no collapse, ever), ``stop(m, z_max, rho, collapse_tol)`` (an
    integrator stops at N ≤ it), ``clock_scale(z_min, rho)`` (c of the smooth clock)."""

    collapse: Callable
    no_collapse: Callable
    stop: Callable
    clock_scale: Callable


@lru_cache(maxsize=4)
def l2_certificates(backend: str = "numpy") -> L2Certificates:
    """Compile C5's certificate levels and the collapse stop level (see :class:`L2Certificates`)."""
    return L2Certificates(
        collapse=lambdify((cf.z_min, sy.rho), TE.l2_collapse_certificate(), backend),
        no_collapse=lambdify((cf.z_1st, sy.rho), TE.l2_no_collapse_certificate(), backend),
        stop=lambdify((TE.z_abs_min, cf.z_1st, sy.rho, TE.stop_tol), TE.l2_collapse_stop_level(), backend),
        clock_scale=lambdify((cf.z_min, sy.rho), TE.l2_clock_scale(), backend),
    )


def l2_certificate_levels(z, rho, collapse_tol: float = 1e-10) -> dict:
    """The levels of :class:`L2Certificates` for a data vector z (numpy, float64; ``rho``
    a number or an array, broadcast): z_min is the smallest *positive* entry (inf when
    none), z_max the largest entry, m the smallest nonzero |z_j|. Returns
    ``{"collapse", "no_collapse", "stop", "clock_scale"}``."""
    import numpy as np

    z = np.asarray(z, dtype=float).reshape(-1)
    rho = np.asarray(rho, dtype=float)
    # every level is homogeneous of degree 1 in z: evaluate on z/s (s = max|z_j|) and scale
    # back, so that intermediate powers (m² at |z| ~ 1e300) neither overflow nor underflow
    s = float(np.max(np.abs(z))) if z.size and np.max(np.abs(z)) > 0 else 1.0
    z = z / s
    pos, nz = z[z > 0], np.abs(z[z != 0])
    zmin = float(pos.min()) if pos.size else np.inf
    zmax = float(z.max())
    m = float(nz.min()) if nz.size else np.nan
    f = l2_certificates("numpy")
    with np.errstate(invalid="ignore", over="ignore"):
        return {"collapse": s * f.collapse(zmin, rho), "no_collapse": s * f.no_collapse(zmax, rho),
                "stop": s * f.stop(m, zmax, rho, collapse_tol), "clock_scale": s * f.clock_scale(zmin, rho)}


@dataclass(frozen=True)
class DepthLockin:
    """L ≥ 3 lock-in forms (closed_forms, "lock-in of j†"), θ = ln u: ``log_floor(rho)`` =
    ln(ρ√L), ``winner(z, θ, rho)`` and ``rival(z, θ, rho)`` the log scores, ``blowup(z, u, rho)``
    the bounds (lo, hi) on the winner's remaining time to blow-up."""

    L: int
    log_floor: Callable
    winner: Callable
    rival: Callable
    blowup: Callable


@lru_cache(maxsize=32)
def depth_lockin(L: int, backend: str = "numpy") -> DepthLockin:
    """Compile the L ≥ 3 lock-in forms for depth L (numpy: ρ = 0 gives ln 0 = −inf, under errstate)."""
    L = checked_depth(L)
    if L < 3:
        raise ValueError("the depth lock-in forms are for L ≥ 3 (L = 2: l2_lockin_level)")
    return DepthLockin(
        L=L,
        log_floor=lambdify((sy.rho,), sp.log(TE.depth_lockin_floor(L)), backend),
        winner=lambdify((cf.z_j, cf.theta_j, sy.rho), TE.depth_lockin_winner_log_score(L), backend),
        rival=lambdify((cf.z_j, cf.theta_j, sy.rho), TE.depth_lockin_rival_log_score(L), backend),
        blowup=lambdify((cf.z_j, cf.u_j, sy.rho), TE.depth_lockin_blowup_bounds(L), backend),
    )


@lru_cache(maxsize=4)
def l2_lockin_level(backend: str = "numpy") -> Callable:
    """``level(z_max, z_next, rho)``: the L = 2 lock-in level of N (theory_exprs.l2_lockin_level)."""
    return lambdify((cf.z_1st, cf.z_2nd, sy.rho), TE.l2_lockin_level(), backend)

"""Compile the symbolic layer into numerical functions (numpy, mpmath, torch).

Every numerical formula in theorycheck comes from here: ``sympy.lambdify`` with an
explicit ``modules=`` and ``cse=True``, cached, so that a constant can never differ
between the symbolic statement and the code that integrates it. Depth L is substituted
as an integer before compiling (``u**(L-1)`` with a float exponent is NaN for u < 0).

mpmath functions work on ``mpf`` scalars at the caller's working precision
(use ``mpmath.workdps``; this module never changes the global precision).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy

BACKENDS: dict[str, str] = {"numpy": "numpy", "mpmath": "mpmath", "torch": "torch"}


def _modules(backend: str) -> list[str]:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return [BACKENDS[backend]]


def _numeric_functions_as_floats(expr):
    """torch's functions take tensors only: a function of a number (``log(2)``) becomes its
    float64 value, so that the printed code never calls ``torch.log(2)``."""
    if isinstance(expr, tuple):
        return tuple(_numeric_functions_as_floats(e) for e in expr)
    if not isinstance(expr, sp.Basic):
        return expr
    return expr.replace(lambda e: isinstance(e, sp.Function) and e.is_number,
                        lambda e: sp.Float(e.evalf(17), 17))


@lru_cache(maxsize=1)
def _torch_printer():
    """sympy's TorchPrinter (lambdify's settings for torch) that also prints ``log1p``
    (used by the overflow-free logistic loss) as ``torch.log1p``."""
    from sympy.printing.pytorch import TorchPrinter

    class _Printer(TorchPrinter):
        def _print_log1p(self, expr):
            return f"{self._module_format('torch.log1p')}({self._print(expr.args[0])})"

    return _Printer({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True,
                     "user_functions": {}})


@lru_cache(maxsize=1)
def _numpy_printer():
    """sympy's NumPyPrinter (lambdify's settings for numpy) that prints a Piecewise with a
    final ``True`` branch as nested ``where`` (the same values as ``select``, a fraction of
    its per-call cost: the batched engine evaluates the smooth clock at every stage)."""
    from sympy.printing.numpy import NumPyPrinter

    class _Printer(NumPyPrinter):
        def _print_Piecewise(self, expr):
            if expr.args[-1].cond != sp.true:
                return super()._print_Piecewise(expr)
            out = self._print(expr.args[-1].expr)
            for e, c in reversed(expr.args[:-1]):
                out = f"{self._module_format('numpy.where')}({self._print(c)}, {self._print(e)}, {out})"
            return out

    return _Printer({"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True,
                     "user_functions": {}})


@lru_cache(maxsize=512)
def _lambdify_cached(args: tuple, expr, backend: str) -> Callable:
    if backend == "torch":
        expr = _numeric_functions_as_floats(expr)
        return sp.lambdify(args, expr, modules=_modules(backend), cse=True, printer=_torch_printer())
    if backend == "numpy":
        return sp.lambdify(args, expr, modules=_modules(backend), cse=True, printer=_numpy_printer())
    return sp.lambdify(args, expr, modules=_modules(backend), cse=True)


def lambdify(args, expr, backend: str = "numpy") -> Callable:
    """``sympy.lambdify(args, expr, modules=[backend], cse=True)``, cached by (args, expr, backend)."""
    args = tuple(args)
    if isinstance(expr, (list, tuple)):
        expr = tuple(expr)
    return _lambdify_cached(args, expr, backend)


def numpy_system(args, exprs) -> Callable:
    """A system of sympy expressions compiled once for float64 (``f(*args) -> tuple``), for the solvers and
    predictors that integrate a derived system in floating point beside its ball-arithmetic twin."""
    return lambdify(tuple(args), tuple(exprs), "numpy")


def residual_functions(args, exprs) -> list[Callable]:
    """mpmath functions of proof steps' differences lhs − rhs, evaluated at random points by
    :func:`theorycheck.proofs._core.numeric_residual` (plain lambdify, no cse and no cache: each
    expression evaluated as the proof states it)."""
    return [sp.lambdify(tuple(args), e, modules="mpmath") for e in exprs]


def _depth(L: int) -> int:
    if isinstance(L, bool) or int(L) != L or L < 1:
        raise ValueError(f"depth must be an integer ≥ 1, got {L!r}")
    return int(L)


@dataclass(frozen=True)
class BalancedField:
    """The balanced, rescaled one-example flow in coordinate form (THEORY.md, Rescaled flows).

    ``summand(z, u)`` is term j of N² (so ``N = sqrt(Σ_j summand)``; ℓ2-SAM only, the
    others ignore N); ``field(z, u, N, rho)`` is du_j/dτ, or dθ_j/dτ with ``u`` read as
    θ = ln u when ``log`` is true. All arguments broadcast (numpy/torch)."""

    L: int
    optimizer: str
    backend: str
    log: bool
    summand: Callable
    field: Callable
    uses_norm: bool


@lru_cache(maxsize=128)
def balanced_field(L: int, optimizer: str, backend: str = "numpy", log: bool = False) -> BalancedField:
    """Compile :func:`closed_forms.balanced_field` (or its log-coordinate form) for depth L."""
    L = _depth(L)
    sy.check_optimizer(optimizer)
    if log:
        expr = cf.balanced_log_field(L, optimizer)
        var = cf.theta_j
        summand = cf.balanced_norm_summand(L).subs(cf.u_j, sp.exp(cf.theta_j))
    else:
        expr = cf.balanced_field(L, optimizer)
        var = cf.u_j
        summand = cf.balanced_norm_summand(L)
    return BalancedField(
        L=L,
        optimizer=optimizer,
        backend=backend,
        log=log,
        summand=lambdify((cf.z_j, var), summand, backend),
        field=lambdify((cf.z_j, var, cf.N, sy.rho), expr, backend),
        uses_norm=cf.N in expr.free_symbols,
    )


@lru_cache(maxsize=64)
def layer_gradient(L: int, backend: str = "numpy") -> Callable:
    """``f(G, w_1, …, w_L) -> (g_1, …, g_L)``: ∂Lo/∂w_k = G ⊙ Π_{m≠k} w_m coordinatewise,
    with ``G = ∂Lo/∂β`` (see :func:`symbolic.layer_gradient_coordinate`)."""
    G, w, g = sy.layer_gradient_coordinate(_depth(L))
    return lambdify((G, *w), g, backend)


@lru_cache(maxsize=16)
def perturbation(optimizer: str, backend: str = "numpy") -> Callable:
    """``eps(g, S, rho)``: SAM's ascent step for gradient entries g with joint ℓ2 norm S
    (:func:`symbolic.perturbation_coordinate`). GD returns zeros shaped like g."""
    g, S, eps = sy.perturbation_coordinate(optimizer)
    if eps == 0:
        return lambda g_, S_, rho_: g_ * 0
    return lambdify((g, S, sy.rho), eps, backend)


@lru_cache(maxsize=16)
def loss_functions(loss: str = "logistic", backend: str = "numpy") -> tuple[Callable, Callable]:
    """(ℓ, ℓ') compiled from :func:`symbolic.loss_expr` and its derivative."""
    return lambdify((sy.s,), sy.loss_expr(loss), backend), lambdify((sy.s,), sy.loss_derivative(loss), backend)


@lru_cache(maxsize=8)
def reduced_l2(backend: str = "numpy") -> tuple[Callable, Callable]:
    """C4's reduction (ℓ2-SAM, L = 2, one example, uniform α): returns
    ``summand(z, tau, I, alpha, rho)`` (term j of N(τ, I)²) and
    ``theta(z, tau, I, alpha, rho)`` (θ_j = ln u_j)."""
    args = (cf.z_j, sy.tau, cf.I, cf.alpha, sy.rho)
    return lambdify(args, cf.l2_reduced_summand(), backend), lambdify(args, cf.l2_theta(), backend)


# ---------------------------------------------------------------- forms for the integrators
@dataclass(frozen=True)
class BalancedLogField:
    """ℓ2-SAM / GD balanced flow in θ = ln u with N carried as ln N (no overflow):
    ``log_summand(z, θ)`` = ln(term j of N²), ``field(z, θ, lnN, rho)`` = dθ_j/dτ."""

    L: int
    optimizer: str
    backend: str
    log_summand: Callable
    field: Callable


@lru_cache(maxsize=128)
def balanced_log_field(L: int, optimizer: str, backend: str = "numpy") -> BalancedLogField:
    """Compile :func:`closed_forms.balanced_log_field_factored` and
    :func:`closed_forms.balanced_log_norm_summand` for depth L."""
    L = _depth(L)
    sy.check_optimizer(optimizer)
    return BalancedLogField(
        L=L, optimizer=optimizer, backend=backend,
        log_summand=lambdify((cf.z_j, cf.theta_j), cf.balanced_log_norm_summand(L), backend),
        field=lambdify((cf.z_j, cf.theta_j, cf.lnN, sy.rho), cf.balanced_log_field_factored(L, optimizer), backend),
    )


@dataclass(frozen=True)
class BranchField:
    """GD / ℓ∞-SAM balanced flow on a locked branch σ of the sign (C2, C3):
    ``argument(z, u)`` (σ = sign of it), ``point(z, u, sigma, rho)`` = û_j,
    ``field(z, u, sigma, rho)`` = du_j/dτ, ``shifted(z, v, s, sigma, rho)`` = dv_j/dτ for
    v = ln|û|, s = sign û."""

    L: int
    optimizer: str
    backend: str
    argument: Callable
    point: Callable
    field: Callable
    shifted: Callable


@lru_cache(maxsize=128)
def branch_field(L: int, optimizer: str, backend: str = "numpy") -> BranchField:
    """Compile the locked-branch forms of :mod:`closed_forms` for GD or ℓ∞-SAM, depth L."""
    L = _depth(L)
    if optimizer not in ("gd", "sam-linf"):
        raise ValueError(f"locked branches exist for gd and sam-linf, not {optimizer!r}")
    args = (cf.z_j, cf.u_j, cf.sigma, sy.rho)
    return BranchField(
        L=L, optimizer=optimizer, backend=backend,
        argument=lambdify((cf.z_j, cf.u_j), cf.linf_branch_argument(L), backend),
        point=lambdify(args, cf.balanced_branch_point(L, optimizer), backend),
        field=lambdify(args, cf.balanced_branch_field(L, optimizer), backend),
        shifted=lambdify((cf.z_j, cf.v_j, cf.s_hat, cf.sigma, sy.rho),
                         cf.balanced_shifted_log_field(L, optimizer), backend),
    )


@lru_cache(maxsize=8)
def reduced_l2_log(backend: str = "numpy") -> Callable:
    """``log_summand(z, tau, I, alpha, rho)``: ln(term j of N(τ, I)²) of C4's reduction."""
    args = (cf.z_j, sy.tau, cf.I, cf.alpha, sy.rho)
    return lambdify(args, cf.l2_reduced_log_summand(), backend)


@lru_cache(maxsize=8)
def log_norm(backend: str = "numpy") -> Callable:
    """``lnN(lse)``: ln N from lse = ln Σ_j (term j of N²) (:func:`closed_forms.log_norm_of_lse`)."""
    return lambdify((cf.lse,), cf.log_norm_of_lse(), backend)


@lru_cache(maxsize=16)
def stable_loss_functions(loss: str = "logistic", backend: str = "numpy") -> tuple[Callable, Callable]:
    """(ℓ, ℓ') compiled from the overflow-free forms :func:`symbolic.loss_expr_stable` and
    :func:`symbolic.loss_derivative_stable` (same values as :func:`loss_functions`)."""
    return (lambdify((sy.s,), sy.loss_expr_stable(loss), backend),
            lambdify((sy.s,), sy.loss_derivative_stable(loss), backend))


@lru_cache(maxsize=16)
def log_loss_functions(loss: str = "logistic", backend: str = "numpy") -> tuple[Callable, Callable]:
    """(ln ℓ, ln|ℓ'|) compiled from :func:`symbolic.loss_log_stable` and
    :func:`symbolic.loss_log_derivative_stable`: the per-example loss and weight in log space,
    finite for every finite margin (the pixel flows' weights and log-loss)."""
    return (lambdify((sy.s,), sy.loss_log_stable(loss), backend),
            lambdify((sy.s,), sy.loss_log_derivative_stable(loss), backend))


# ---------------------------------------------------------------- the model, coordinatewise (sweeps)
@lru_cache(maxsize=32)
def predictor(L: int, backend: str = "numpy") -> Callable:
    """``beta(w_1, …, w_L)``: β_j = w_{1,j} ⋯ w_{L,j}, compiled from :func:`symbolic.predictor`
    (the model's definition) for one coordinate; arguments broadcast."""
    W = sy.layer_symbols(_depth(L), 1)
    # the printed product runs over the layers in order (w_1 w_2 ⋯ w_L, as np.prod does): the
    # layers are renamed so that sympy's ordering of the factors by name is the layer order
    # (w10 would come before w2 otherwise)
    ordered = [sp.Symbol(f"w{k + 1:04d}", real=True) for k in range(len(W))]
    expr = sy.predictor(W)[0, 0].subs(dict(zip(W, ordered)), simultaneous=True)
    return lambdify(tuple(ordered), expr, backend)


@dataclass(frozen=True)
class ReducedL2Linear:
    """C4's ln(term j of N(τ, I)²) is affine in (τ, I): ``c0(z, alpha, rho) + c_tau(z, alpha,
    rho)·τ + c_I(z, alpha, rho)·I``. The coefficients are sympy derivatives of
    :func:`closed_forms.l2_reduced_log_summand` (affinity is checked when compiling), so a
    batch precomputes them once per member and evaluates N with two multiply-adds per term."""

    c0: Callable
    c_tau: Callable
    c_I: Callable


@lru_cache(maxsize=8)
def reduced_l2_log_linear(backend: str = "numpy") -> ReducedL2Linear:
    """Compile the affine decomposition of C4's log summand in (τ, I) (see :class:`ReducedL2Linear`)."""
    e = cf.l2_reduced_log_summand()
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
    :mod:`theorycheck.solvers.taylor` evaluates at extra digits)."""
    from theorycheck.errors import TheorycheckError

    e = cf.l2_reduced_log_summand()
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
    return lambdify((cf.z_j, cf.z_k, sy.rho), cf.l2_switch_level(), backend)


@dataclass(frozen=True)
class BalancedMultiLog:
    """Several examples, balanced layers, θ = ln u (closed_forms, "several examples"):
    ``log_summand(G, θ)`` = ln(term j of S²), ``ratio(G, θ, lnS, rho)`` = û_j/u_j,
    ``rate(Ghat, r, θ)`` = dθ_j/dt. Arguments broadcast."""

    L: int
    optimizer: str
    backend: str
    log_summand: Callable
    ratio: Callable
    rate: Callable


@lru_cache(maxsize=64)
def balanced_multi_log(L: int, optimizer: str, backend: str = "numpy") -> BalancedMultiLog:
    """Compile the several-examples balanced forms for depth L."""
    L = _depth(L)
    sy.check_optimizer(optimizer)
    return BalancedMultiLog(
        L=L, optimizer=optimizer, backend=backend,
        log_summand=lambdify((cf.G_j, cf.theta_j), cf.balanced_multi_log_norm_summand(L), backend),
        ratio=lambdify((cf.G_j, cf.theta_j, cf.lnS, sy.rho), cf.balanced_multi_ratio(L, optimizer), backend),
        rate=lambdify((cf.Ghat_j, cf.r_j, cf.theta_j), cf.balanced_multi_log_rate(L), backend),
    )


@dataclass(frozen=True)
class SlidingForms:
    """ℓ∞-SAM's Filippov sliding on a surface G_j = 0 (closed_forms, "Filippov sliding"):
    ``weight(a_plus, a_minus)`` = λ, ``combine(lam, f_plus, f_minus)`` = λ f₊ + (1 − λ) f₋,
    ``coordinate_rate(thetadot, theta)`` = d(u^L)/dt of one doubled coordinate (θ = ln u for
    L ≥ 2, u itself for L = 1) and ``log_curvature(m)`` = ln ℓ''(m). Arguments broadcast."""

    L: int
    weight: Callable
    combine: Callable
    coordinate_rate: Callable
    log_curvature: Callable


@lru_cache(maxsize=32)
def sliding_forms(L: int, loss: str = "logistic", backend: str = "numpy") -> SlidingForms:
    """Compile :class:`SlidingForms` for depth L and ``loss``."""
    L = _depth(L)
    return SlidingForms(
        L=L,
        weight=lambdify((cf.a_plus, cf.a_minus), cf.sliding_weight(), backend),
        combine=lambdify((cf.lam, cf.f_plus, cf.f_minus), cf.sliding_combination(), backend),
        coordinate_rate=lambdify((cf.theta_dot, cf.theta_j), cf.doubled_coordinate_rate(L), backend),
        log_curvature=lambdify((sy.s,), cf.loss_gradient_rate_weight(loss), backend),
    )


# ---------------------------------------------------------------- C4's reduced ODE in its clocks
@lru_cache(maxsize=16)
def reduced_l2_clocked(kind: str, backend: str = "numpy") -> Callable:
    """``f(lnN, lnc) -> (dτ/ds, dI/ds)``: C4's reduced ODE dI/dτ = 1/N in the clock ``kind``
    (:func:`closed_forms.l2_reduced_clocked_log`; "time", "arc" or "smooth" with c = e^{lnc})."""
    return lambdify((cf.lnN, cf.ln_c), cf.l2_reduced_clocked_log(kind), backend)


# ---------------------------------------------------------------- C5's certificates and stop level
@dataclass(frozen=True)
class L2Certificates:
    """C5's levels of N (ℓ2-SAM, L = 2, one example), compiled from :mod:`closed_forms`:
    ``collapse(z_min, rho)`` (N below it: collapse certified), ``no_collapse(z_max, rho)``
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
        collapse=lambdify((cf.z_min, sy.rho), cf.l2_collapse_certificate(), backend),
        no_collapse=lambdify((cf.z_1st, sy.rho), cf.l2_no_collapse_certificate(), backend),
        stop=lambdify((cf.z_abs_min, cf.z_1st, sy.rho, cf.stop_tol), cf.l2_collapse_stop_level(), backend),
        clock_scale=lambdify((cf.z_min, sy.rho), cf.l2_clock_scale(), backend),
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


# ---------------------------------------------------------------- C1–C3: ℓ∞ limit directions
@dataclass(frozen=True)
class LinfLimit:
    """``log_score(z, alpha, rho)`` and ``log_weight(z, alpha, rho)``: the logs of
    :func:`closed_forms.linf_limit_score` and :func:`closed_forms.linf_limit_weight`
    (depth L), for z_j > 0 and α_j > ρ. Arguments broadcast."""

    L: int
    log_score: Callable
    log_weight: Callable


@lru_cache(maxsize=32)
def linf_limit(L: int, backend: str = "numpy") -> LinfLimit:
    """Compile the log score and log weight of the ℓ∞-SAM limit direction for depth L."""
    L = _depth(L)
    args = (cf.z_j, cf.alpha_j, sy.rho)
    return LinfLimit(L, lambdify(args, cf.linf_limit_log_score(L), backend),
                     lambdify(args, cf.linf_limit_log_weight(L), backend))


@lru_cache(maxsize=1)
def initial_norm_sq_exact() -> Callable:
    """``n0_sq(alpha, S)``: N0² for S = ‖z‖₂² (C5's :func:`closed_forms.initial_norm`, squared:
    a polynomial) as plain Python arithmetic, exact with :class:`fractions.Fraction` arguments."""
    S = sp.Symbol("S", positive=True)
    expr = sp.expand(cf.initial_norm() ** 2).subs(cf.z_norm**2, S)
    if cf.z_norm in expr.free_symbols or not expr.is_polynomial(cf.alpha, S):
        raise AssertionError("N0² is not a polynomial in (α, ‖z‖²): no exact evaluation")
    return sp.lambdify((cf.alpha, S), expr, modules=[{}])


@lru_cache(maxsize=32)
def linf_limit_exact_score(L: int) -> Callable:
    """:func:`closed_forms.linf_limit_score` (a polynomial in z_j, α_j, ρ) as plain Python
    arithmetic: called with :class:`fractions.Fraction` arguments it is exact, so the
    maximisers of the limit are decided exactly (a 1-ulp gap in z is a gap, not a tie)."""
    L = _depth(L)
    expr = cf.linf_limit_score(L)
    if not expr.is_polynomial(cf.z_j, cf.alpha_j, sy.rho):
        raise AssertionError(f"the ℓ∞ limit score at L = {L} is not a polynomial: no exact evaluation")
    return sp.lambdify((cf.z_j, cf.alpha_j, sy.rho), expr, modules=[{}])


# ---------------------------------------------------------------- the empirical risk in β
@dataclass(frozen=True)
class EmpiricalRisk:
    """Lo(β) = (1/n) Σ_i ℓ(<β, z_i>) (:func:`symbolic.empirical_loss`) and
    G = ∂Lo/∂β = (1/n) Σ_i ℓ'(<β, z_i>) z_i (:func:`symbolic.loss_gradient_factor`), with ℓ, ℓ'
    the compiled overflow-free forms. β has shape (d,) or (..., d) (a batch), Z (n, d).

    ``contraction`` says how the two sums run: ``"dot"`` as matrix products (one β; numpy
    float, complex or mpmath object arrays), ``"elementwise"`` as products and sums without
    BLAS (numpy or torch), so that a member's numbers never depend on the other members of
    its batch. ``apply(f, x)`` maps the scalar ℓ / ℓ' over x (mpmath: ``MpBackend.call``).
    tests/test_symbolic.py checks both contractions against the sympy expressions."""

    loss: str
    backend: str
    contraction: str
    ell: Callable
    dell: Callable

    def margins(self, beta, Z):
        """m_i = <β, z_i>: (..., n)."""
        if self.contraction == "dot":
            return Z.dot(beta)
        return (beta[..., None, :] * Z).sum(-1)

    def value(self, beta, Z, apply: Callable | None = None):
        """Lo(β): (...)."""
        m = self.margins(beta, Z)
        return (apply(self.ell, m) if apply else self.ell(m)).sum(-1) / Z.shape[0]

    def gradient(self, beta, Z, apply: Callable | None = None):
        """∂Lo/∂β: (..., d)."""
        m = self.margins(beta, Z)
        w = apply(self.dell, m) if apply else self.dell(m)
        if self.contraction == "dot":
            return w.dot(Z) / Z.shape[0]
        return (w[..., :, None] * Z).sum(-2) / Z.shape[0]


@lru_cache(maxsize=32)
def empirical_risk(loss: str = "logistic", backend: str = "numpy", contraction: str = "dot") -> EmpiricalRisk:
    """The empirical risk and its β-gradient for ``loss`` (see :class:`EmpiricalRisk`)."""
    if contraction not in ("dot", "elementwise"):
        raise ValueError(f"contraction must be 'dot' or 'elementwise', not {contraction!r}")
    ell, dell = stable_loss_functions(loss, backend)
    return EmpiricalRisk(loss, backend, contraction, ell, dell)


# ---------------------------------------------------------------- lock-in of j† (proofs/lockin.py)
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
    L = _depth(L)
    if L < 3:
        raise ValueError("the depth lock-in forms are for L ≥ 3 (L = 2: l2_lockin_level)")
    return DepthLockin(
        L=L,
        log_floor=lambdify((sy.rho,), sp.log(cf.depth_lockin_floor(L)), backend),
        winner=lambdify((cf.z_j, cf.theta_j, sy.rho), cf.depth_lockin_winner_log_score(L), backend),
        rival=lambdify((cf.z_j, cf.theta_j, sy.rho), cf.depth_lockin_rival_log_score(L), backend),
        blowup=lambdify((cf.z_j, cf.u_j, sy.rho), cf.depth_lockin_blowup_bounds(L), backend),
    )


@lru_cache(maxsize=4)
def l2_lockin_level(backend: str = "numpy") -> Callable:
    """``level(z_max, z_next, rho)``: the L = 2 lock-in level of N (closed_forms.l2_lockin_level)."""
    return lambdify((cf.z_1st, cf.z_2nd, sy.rho), cf.l2_lockin_level(), backend)


# ---------------------------------------------------------------- ball arithmetic (python-flint's Arb)
# An expression is compiled into Python source that calls only the methods common to ``arb`` and
# ``arb_series`` (+, −, ×, ÷, exp, log, sqrt, rsqrt, integer powers), so one compiled function
# evaluates a field at a ball (an enclosure of its value for every point of the balls) and on
# truncated power series (its Taylor coefficients). Constants are built at call time, at the caller's
# precision: a rational p/q is the ball arb(p)/q, a sympy Float its exact binary value; nothing is
# rounded at compile time. Everything that depends on the parameters only is computed once per
# binding (:meth:`ArbFunction.bind`), and a series is always the left operand of a mixed product
# (python-flint's mixed-type operators are several times slower the other way round).
class _ArbPrinter:
    """sympy expression → Python source; ``scalars`` are the symbols bound once (parameters)."""

    def __init__(self, scalars: set, series: bool):
        self.scalars = scalars
        self.series = series
        self.hoisted: list[tuple[str, str]] = []  # (name, code) computed once per binding
        self.cache: dict = {}
        self.series_consts: dict[str, str] = {}

    def is_scalar(self, e) -> bool:
        return e.free_symbols <= self.scalars

    def hoist(self, e) -> str:
        """A name for the scalar expression e, computed once per binding."""
        key = e
        if key in self.cache:
            return self.cache[key]
        code = self._scalar(e)
        name = f"_h{len(self.hoisted)}"
        self.hoisted.append((name, code))
        self.cache[key] = name
        return name

    def as_series_const(self, name: str) -> str:
        """A length-1 series of the hoisted scalar ``name`` (series + series is the fast addition)."""
        if not self.series:
            return name
        out = self.series_consts.get(name)
        if out is None:
            out = self.series_consts[name] = f"{name}s"
        return out

    def _scalar(self, e) -> str:
        """Source for a scalar (parameter-only) expression, using earlier hoisted names."""
        if isinstance(e, sp.Symbol):
            return self.cache.get(e, e.name)
        if isinstance(e, sp.Integer):
            return f"_A({int(e)})"
        if isinstance(e, sp.Rational):
            return f"(_A({int(e.p)}) / _A({int(e.q)}))"
        if isinstance(e, sp.Float):
            import mpmath

            man, exp = mpmath.mpf(e._mpf_).man_exp
            return f"_ldexp({int(man)}, {int(exp)})"
        if e is sp.pi:
            return "_A.pi()"
        if e is sp.E:
            return "_A(1).exp()"
        return self.node(e, scalar=True)

    def __call__(self, e) -> str:
        if self.is_scalar(e):
            return self.hoist(e)
        return self.node(e, scalar=False)

    def sub(self, e, scalar: bool) -> str:
        if scalar:
            return self._scalar(e)
        return self.hoist(e) if self.is_scalar(e) else self.node(e, scalar=False)

    def node(self, e, scalar: bool) -> str:  # noqa: C901 - one branch per node type
        if isinstance(e, sp.Symbol):
            return e.name
        if scalar and isinstance(e, sp.Add):
            return "(" + " + ".join(self._scalar(a) for a in e.args) + ")"
        if scalar and isinstance(e, sp.Mul):
            num = [self._scalar(a) for a in e.args if not (isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0)]
            den = [self._scalar(sp.Pow(a.base, -a.exp)) for a in e.args
                   if isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0]
            out = " * ".join(num) if num else "_A(1)"
            return f"(({out}) / ({' * '.join(den)}))" if den else f"({out})"
        if isinstance(e, sp.Add):
            terms = [a for a in e.args if not self.is_scalar(a)]
            consts = [a for a in e.args if self.is_scalar(a)]
            parts = [self.sub(a, scalar) for a in terms]
            if consts:
                c = self.hoist(sp.Add(*consts))
                parts.append(c if scalar else self.as_series_const(c))
            return "(" + " + ".join(parts) + ")"
        if isinstance(e, sp.Mul):
            num, den = [], []
            consts = [a for a in e.args if self.is_scalar(a)]
            for a in e.args:
                if self.is_scalar(a):
                    continue
                if isinstance(a, sp.Pow) and a.exp.is_Integer and a.exp < 0:
                    den.append(self.sub(a.base, scalar) if a.exp == -1 else self.sub(sp.Pow(a.base, -a.exp), scalar))
                else:
                    num.append(self.sub(a, scalar))
            c = self.hoist(sp.Mul(*consts)) if consts else None
            if not num:
                out = f"({c} / ({' * '.join(den)}))" if c else f"(_A(1) / ({' * '.join(den)}))"
                return out
            out = " * ".join(num)
            if den:
                out = f"({out}) / ({' * '.join(den)})"
            if c:
                out = f"({out}) * {c}"
            return "(" + out + ")"
        if isinstance(e, sp.Pow):
            b, x = e.base, e.exp
            if x.is_Integer:
                n = int(x)
                if n == 0:
                    return "_A(1)"
                if n > 0:
                    return f"_ipow({self.sub(b, scalar)}, {n})"
                return f"(_A(1) / _ipow({self.sub(b, scalar)}, {-n}))"
            if x == sp.Rational(1, 2):
                return f"({self.sub(b, scalar)}).sqrt()"
            if x == sp.Rational(-1, 2):
                return f"({self.sub(b, scalar)}).rsqrt()"
            if x.is_Rational and x.q == 2:
                n = int(x.p)
                root = f"({self.sub(b, scalar)}).sqrt()" if n > 0 else f"({self.sub(b, scalar)}).rsqrt()"
                return f"_ipow({root}, {abs(n)})"
            lg = f"({self.sub(b, scalar)}).log()"
            if self.is_scalar(x):
                return f"({lg} * {self.hoist(x)}).exp()"
            return f"({lg} * {self.sub(x, scalar)}).exp()"
        if isinstance(e, sp.exp):
            return f"({self.sub(e.args[0], scalar)}).exp()"
        if isinstance(e, sp.log) and len(e.args) == 1:
            return f"({self.sub(e.args[0], scalar)}).log()"
        if isinstance(e, (sp.Integer, sp.Rational, sp.Float)) or e in (sp.pi, sp.E):
            return self._scalar(e)
        raise TypeError(f"no ball-arithmetic form for {type(e).__name__}: {e}")


def _ipow(x, n: int):
    """x**n for an integer n ≥ 1 by repeated squaring (arb and arb_series alike)."""
    out = None
    while n:
        if n & 1:
            out = x if out is None else out * x
        n >>= 1
        if n:
            x = x * x
    return out


def _ldexp(man: int, exp: int):
    from flint import arb

    return arb(man) * arb(2) ** exp if exp < 0 else arb(man * 2**exp)


#: python-flint's series carry their own truncation O(x^n): a constant series made at the default length
#: would silently truncate every sum it enters, so constants are made with this length
_SERIES_CONST_CAP = 1 << 12


class ArbFunction:
    """A compiled expression list for ball arithmetic (see :func:`arb_function`). ``f(*args)`` evaluates at
    balls (all arguments ``flint.arb``) or on series (the variables ``arb_series``, the parameters ``arb``);
    ``f.bind(*params)`` returns ``g(*variables)`` with the parameter-only parts computed once (``series=True``:
    for series arguments). ``source`` is the generated code."""

    def __init__(self, variables: tuple, params: tuple, exprs: tuple):
        from flint import arb, arb_series

        self.variables, self.params, self.exprs = variables, params, exprs
        # symbols by safe Python names (a sympy name such as "z_(d)" is not an identifier)
        safe = {s_: sp.Symbol(f"_a{i}", **s_.assumptions0) for i, s_ in enumerate((*variables, *params))}
        exprs = tuple(e.xreplace(safe) for e in exprs)
        variables = tuple(safe[v] for v in variables)
        params = tuple(safe[p] for p in params)
        scal = set(params)
        subs, reduced = sp.cse(list(exprs), symbols=sp.numbered_symbols("_c"), optimizations="basic")
        # a CSE symbol that depends on parameters only is itself a scalar
        self.sources = {}
        self._fns = {}
        for series in (False, True):
            pr = _ArbPrinter(set(scal), series)
            lines = []
            for sym, val in subs:
                if val.free_symbols <= pr.scalars:
                    pr.scalars.add(sym)
                    pr.cache[sym] = pr.hoist(val)
                    continue
                lines.append(f"    {sym.name} = {pr(val)}")
            outs = [pr(r) for r in reduced]
            # hoisted names used as CSE aliases
            alias = [f"    {sym.name} = {pr.cache[sym]}" for sym, _ in subs if sym in pr.cache]
            prep = ([f"def _prep({', '.join(p.name for p in params)}):"] +
                    [f"    {n} = {c}" for n, c in pr.hoisted] +
                    [f"    {n}s = _S([{n}])" for n in pr.series_consts] +
                    [f"    return ({', '.join([n for n, _ in pr.hoisted] + list(pr.series_consts.values()))}"
                     f"{',' if (pr.hoisted or pr.series_consts) else ''})"])
            hnames = [n for n, _ in pr.hoisted] + list(pr.series_consts.values())
            body = ([f"def _f({', '.join([v.name for v in variables] + ['_H'])}):",
                     f"    ({', '.join(hnames)}{',' if hnames else ''}) = _H" if hnames else "    pass"]
                    + alias + lines + [f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})"])
            src = "\n".join(prep) + "\n\n" + "\n".join(body) + "\n"
            ns = {"_A": arb, "_S": arb_series, "_ipow": _ipow, "_ldexp": _ldexp}
            exec(compile(src, "<theorycheck.symbolic.compile.arb>", "exec"), ns)  # noqa: S102 - printed from sympy
            self._fns[series] = (ns["_prep"], ns["_f"])
            self.sources[series] = src
        self.source = self.sources[False]
        self._nv = len(variables)

    def bind(self, *params, series: bool = False):
        """``g(*variables)`` with these parameter values (arb) fixed."""
        prep, f = self._fns[bool(series)]
        from flint import ctx

        old = ctx.cap
        ctx.cap = _SERIES_CONST_CAP  # a constant series is exact: O(x^n) only past any length used
        try:
            H = prep(*params)
        finally:
            ctx.cap = old
        return lambda *v: f(*v, H)

    def __call__(self, *args):
        from flint import arb_series

        v, p = args[: self._nv], args[self._nv:]
        series = any(isinstance(a, arb_series) for a in v)
        return self.bind(*p, series=series)(*v)


@lru_cache(maxsize=256)
def _arb_compiled(variables: tuple, params: tuple, exprs: tuple) -> ArbFunction:
    return ArbFunction(variables, params, exprs)


def arb_function(args, exprs, params=()) -> ArbFunction:
    """Compile ``exprs`` (sympy expressions in the symbols ``args`` followed by ``params``) for ball
    arithmetic: ``f(*args, *params) -> tuple`` of one value per expression, each a ``flint.arb`` (a ball
    enclosing the exact value for every point of the argument balls) or an ``arb_series`` (the Taylor
    coefficients, truncated at ``flint.ctx.cap``) when some argument is a series (parameters are always arb).
    Constants are made at call time, at the caller's ``flint.ctx.prec``; ``f.bind(*params)`` fixes the
    parameters once. The source is ``f.source``."""
    return _arb_compiled(tuple(args), tuple(params), tuple(sp.sympify(e) for e in exprs))


class _LazyArbFunction:
    """An :class:`ArbFunction` compiled on first use (``bind``, a call, ``source``): a Jacobian that a run never
    asks for costs no sympy differentiation."""

    def __init__(self, build: Callable[[], ArbFunction]):
        self._build = build
        self._fn: ArbFunction | None = None

    def get(self) -> ArbFunction:
        if self._fn is None:
            self._fn = self._build()
        return self._fn

    def bind(self, *params, series: bool = False):
        return self.get().bind(*params, series=series)

    def __call__(self, *args):
        return self.get()(*args)

    @property
    def source(self) -> str:
        return self.get().source


@dataclass(frozen=True)
class ArbSystem:
    """An ODE dx/dt = f(t, x; p) compiled for ball arithmetic (see :func:`arb_system`):
    ``field(t, *x, *p)`` → d values, ``jacobian(t, *x, *p)`` → the d × (d + m) entries
    ∂f_i/∂(x, p)_j row by row, ``field_and_state_jacobian(t, *x, *p)`` → the d values of f followed by the
    d × d entries ∂f_i/∂x_j row by row (one compiled function, so the two share their subexpressions; all three
    with ``bind``; the Jacobians are compiled on first use); ``identity`` names the sympy system (a sha256 of its
    text), ``text`` the fields as sympy strings."""

    name: str
    time: sp.Symbol
    states: tuple
    params: tuple
    exprs: tuple
    field: ArbFunction
    jacobian: _LazyArbFunction
    identity: str
    text: tuple
    field_and_state_jacobian: _LazyArbFunction | None = None


@lru_cache(maxsize=64)
def _arb_system_cached(name: str, time, states: tuple, params: tuple, exprs: tuple) -> ArbSystem:
    import hashlib

    args = (time, *states)
    text = tuple(sp.srepr(e) for e in exprs)
    ident = hashlib.sha256(repr((name, str(time), [str(s) for s in states], [str(p) for p in params],
                                 text)).encode()).hexdigest()

    def jacobian():
        return arb_function(args, [sp.diff(f, v) for f in exprs for v in (*states, *params)], params)

    def field_and_state_jacobian():
        return arb_function(args, [*exprs, *[sp.diff(f, v) for f in exprs for v in states]], params)

    return ArbSystem(name, time, states, params, exprs, arb_function(args, exprs, params),
                     _LazyArbFunction(jacobian), ident, tuple(sp.sstr(e) for e in exprs),
                     _LazyArbFunction(field_and_state_jacobian))


def arb_system(name: str, time, states, params, exprs) -> ArbSystem:
    """Compile the vector field ``exprs`` (sympy, one per state symbol) of dx/d``time`` with parameter
    symbols ``params`` for ball arithmetic, with its Jacobian in (states, params) (sympy.diff)."""
    exprs = tuple(sp.sympify(e) for e in exprs)
    if len(exprs) != len(states):
        raise ValueError(f"{len(exprs)} field entries for {len(states)} states")
    return _arb_system_cached(str(name), time, tuple(states), tuple(params), exprs)


# ---------------------------------------------------------------- C5's closed-form thresholds (one example)
@lru_cache(maxsize=4)
def initial_norm(backend: str = "numpy") -> Callable:
    """``N0(alpha, znorm)`` = α √2 ‖z‖₂ (:func:`closed_forms.initial_norm`)."""
    return lambdify((cf.alpha, cf.z_norm), cf.initial_norm(), backend)


@lru_cache(maxsize=4)
def l2_log_rate(backend: str = "numpy") -> Callable:
    """``rate(z_j, N, rho)`` = dθ_j/dτ = z_j (1 − ρ z_j / N) (:func:`closed_forms.l2_log_rate`)."""
    return lambdify((cf.z_j, cf.N, sy.rho), cf.l2_log_rate(), backend)


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
    return _closed((cf.z_min, cf.z_norm, sy.rho), cf.alpha_all_shrink(), backend)


@lru_cache(maxsize=8)
def alpha_gd_like(backend: str = "numpy") -> ClosedForm:
    """ρ (z_(d) + z_(d−1))/(√2‖z‖₂) (C5) as a function of (z_(d), z_(d−1), ‖z‖₂, ρ)."""
    return _closed((cf.z_1st, cf.z_2nd, cf.z_norm, sy.rho), cf.alpha_gd_like(), backend)


@lru_cache(maxsize=1)
def alpha_gd_like_without_next() -> str:
    """The text of alpha_gd_like with z_(d−1) replaced by 0 (no entry below the maximum)."""
    return sp.sstr(cf.alpha_gd_like().subs(cf.z_2nd, 0))



# ---------------------------------------------------------------- C1–C3: solutions and blow-up (one example)
@lru_cache(maxsize=4)
def l1_solution(backend: str = "numpy") -> Callable:
    """``w(alpha_j, z_j, tau)`` = α_j + z_j τ (L = 1, :func:`closed_forms.l1_solution`)."""
    return lambdify((cf.alpha_j, cf.z_j, sy.tau), cf.l1_solution(), backend)


@lru_cache(maxsize=4)
def linf_l2_solution(backend: str = "numpy") -> tuple[Callable, Callable]:
    """``(u(alpha_j, z_j, rho, tau), tau0(alpha_j, z_j, rho))``: ℓ∞-SAM at L = 2 and its zero time (C2)."""
    return (lambdify((cf.alpha_j, cf.z_j, sy.rho, sy.tau), cf.linf_l2_solution(), backend),
            lambdify((cf.alpha_j, cf.z_j, sy.rho), cf.linf_l2_zero_time(), backend))


@lru_cache(maxsize=16)
def linf_blowup_time(L: int, backend: str = "numpy") -> Callable:
    """``t_star(alpha_j, z_j, rho)``: the blow-up time of ℓ∞-SAM at depth L ≥ 3 (C3,
    :func:`closed_forms.linf_blowup_time`)."""
    return lambdify((cf.alpha_j, cf.z_j, sy.rho), cf.linf_blowup_time(_depth(L)), backend)


# ---------------------------------------------------------------- depth L, ℓ2-SAM at the start
@lru_cache(maxsize=32)
def depth_initial_rate(L: int, backend: str = "numpy") -> Callable:
    """``rate(z_j, alpha, znorm, rho)``: dθ_j/dτ at τ = 0, depth L (:func:`symbolic.depth.initial_forms`)."""
    from theorycheck.symbolic.depth import initial_forms

    return lambdify((cf.z_j, cf.alpha, cf.z_norm, sy.rho), initial_forms(_depth(L))["rate"], backend)


@lru_cache(maxsize=32)
def depth_zero_rate_alpha(L: int, backend: str = "numpy") -> Callable:
    """``alpha(z_j, znorm, rho)`` at which û_j(0) = 0, depth L (:func:`symbolic.depth.zero_rate_alpha`)."""
    from theorycheck.symbolic.depth import zero_rate_alpha

    return lambdify((cf.z_j, cf.z_norm, sy.rho), zero_rate_alpha(_depth(L)), backend)


# ---------------------------------------------------------------- the signed (pm) parametrisation, squared loss
@lru_cache(maxsize=16)
def pm_forms(D: int) -> dict:
    """NumPy functions for depth D (:mod:`symbolic.regression`): ``log_field_p``/``log_field_m``
    (u_p, u_m, g), ``metric(w_p, w_m)``, ``h(theta)``, ``dh(theta)``, ``H(theta)``,
    ``q_theta(theta)``, ``loss_grad(p, y)`` and ``loss(p, y)``."""
    from theorycheck.symbolic import regression as R

    if D < 2:
        raise ValueError("the signed parametrisation needs depth D ≥ 2")
    fp, fm = R.pm_log_field(D)
    hh = R.h(D)
    return {
        "log_field_p": lambdify((R.up, R.um, R.g), fp),
        "log_field_m": lambdify((R.up, R.um, R.g), fm),
        "metric": lambdify((R.wp, R.wm), R.pm_metric(D)),
        "h": lambdify((R.theta,), hh),
        "dh": lambdify((R.theta,), sp.diff(hh, R.theta)),
        "H": lambdify((R.theta,), R.H(D)),
        "q_theta": lambdify((R.theta,), R.q_via_theta(D)),
        "loss_grad": lambdify((R.p_, R.y_), R.squared_loss_derivative()),
        "loss": lambdify((R.p_, R.y_), R.squared_loss()),
    }


@lru_cache(maxsize=1)
def pm_q2() -> Callable:
    """``q(z)`` of the depth-2 potential Q (:func:`symbolic.regression.q2`)."""
    from theorycheck.symbolic import regression as R

    return lambdify((R.z,), R.q2())


@lru_cache(maxsize=16)
def balanced_product_log_field(L: int) -> Callable:
    """``du(u, g)``: the balanced product flow in u = log w (:func:`symbolic.regression.balanced_product_log_field`)."""
    from theorycheck.symbolic import regression as R

    return lambdify((R.up, R.g), R.balanced_product_log_field(L))

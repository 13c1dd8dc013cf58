"""The catalogue of compiled forms: every formula of the symbolic layer that numerical code evaluates,
compiled once by :mod:`theorycheck.symbolic.compiler` (numpy, mpmath, torch, Arb) and cached. A solver
or a prediction takes its numbers from here, never from a re-typed formula.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic.compiler import (  # noqa: F401  (the compiler's entry points, for the forms' users)
    BACKENDS,
    ArbFunction,
    ArbSystem,
    arb_function,
    arb_system,
    lambdify,
    numpy_system,
    residual_functions,
)


def checked_depth(L: int) -> int:
    """``L`` as an int, or a ValueError when it is not an integer ≥ 1."""
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
    L = checked_depth(L)
    sy.ascent_of(optimizer)  # a name, an optimizer or an Ascent (unknown names: one-line error)
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
    G, w, g = sy.layer_gradient_coordinate(checked_depth(L))
    return lambdify((G, *w), g, backend)


@lru_cache(maxsize=16)
def perturbation(optimizer: str, backend: str = "numpy") -> Callable:
    """``eps(g, S, rho, w=None)``: SAM's ascent step for gradient entries g with joint norm S
    (:func:`symbolic.perturbation_coordinate`) at the weights w (same shape as g; needed by a weighted
    step, :attr:`symbolic.model.Ascent.weighted`, and ignored by the others). GD returns zeros shaped
    like g."""
    asc = sy.ascent_of(optimizer)
    g, S, eps = asc.coordinate()
    if eps == 0:
        return lambda g_, S_, rho_, w_=None: g_ * 0
    if not asc.weighted:
        f = lambdify((g, S, sy.rho), eps, backend)
        return lambda g_, S_, rho_, w_=None: f(g_, S_, rho_)
    fw = lambdify((g, sy.w_coord, S, sy.rho), eps, backend)

    def eps_w(g_, S_, rho_, w_=None):
        if w_ is None:
            raise ValueError("this ascent step is weighted (it depends on w): pass the weights")
        return fw(g_, w_, S_, rho_)

    return eps_w


@lru_cache(maxsize=16)
def norm_weight(optimizer: str, backend: str = "numpy") -> Callable | None:
    """``T(w)``: the weight of each entry in the joint norm S = ‖T(w) ⊙ g‖₂ of the ascent step
    (:meth:`symbolic.model.Ascent.weight`, compiled; ASAM's |w| + η), or None for the unweighted norm
    S = ‖g‖₂."""
    asc = sy.ascent_of(optimizer)
    if not asc.weighted:
        return None
    return lambdify((sy.w_coord,), asc.weight(sy.w_coord), backend)


@lru_cache(maxsize=16)
def loss_functions(loss: str = "logistic", backend: str = "numpy") -> tuple[Callable, Callable]:
    """(ℓ, ℓ') compiled from :func:`symbolic.loss_expr` and its derivative."""
    return lambdify((sy.s,), sy.loss_expr(loss), backend), lambdify((sy.s,), sy.loss_derivative(loss), backend)


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


@lru_cache(maxsize=32)
def balanced_log_summand(L: int, backend: str = "numpy") -> Callable:
    """``log_summand(z, θ)`` = ln(term j of N²) of the balanced flow at depth L, u_j = e^{θ_j}
    (:func:`closed_forms.balanced_log_norm_summand`; the same for every optimizer: N is the gradient's norm)."""
    return lambdify((cf.z_j, cf.theta_j), cf.balanced_log_norm_summand(checked_depth(L)), backend)


@lru_cache(maxsize=128)
def balanced_log_field(L: int, optimizer: str, backend: str = "numpy") -> BalancedLogField:
    """Compile :func:`closed_forms.balanced_log_field_factored` and
    :func:`closed_forms.balanced_log_norm_summand` for depth L."""
    L = checked_depth(L)
    sy.ascent_of(optimizer)  # a name, an optimizer or an Ascent (unknown names: one-line error)
    return BalancedLogField(
        L=L, optimizer=optimizer, backend=backend,
        log_summand=balanced_log_summand(L, backend),
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
    L = checked_depth(L)
    cf._check_branch(optimizer)
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
    W = sy.layer_symbols(checked_depth(L), 1)
    # the printed product runs over the layers in order (w_1 w_2 ⋯ w_L, as np.prod does): the
    # layers are renamed so that sympy's ordering of the factors by name is the layer order
    # (w10 would come before w2 otherwise)
    ordered = [sp.Symbol(f"w{k + 1:04d}", real=True) for k in range(len(W))]
    expr = sy.predictor(W)[0, 0].subs(dict(zip(W, ordered)), simultaneous=True)
    return lambdify(tuple(ordered), expr, backend)


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
def balanced_multi_rate(L: int, backend: str = "numpy") -> Callable:
    """``rate(Ĝ, r, θ)`` of the several-examples balanced flow at depth L
    (:func:`closed_forms.balanced_multi_log_rate`; the same for every optimizer: the step enters through r)."""
    return lambdify((cf.Ghat_j, cf.r_j, cf.theta_j), cf.balanced_multi_log_rate(checked_depth(L)), backend)


@lru_cache(maxsize=64)
def balanced_multi_log(L: int, optimizer: str, backend: str = "numpy") -> BalancedMultiLog:
    """Compile the several-examples balanced forms for depth L."""
    L = checked_depth(L)
    sy.ascent_of(optimizer)  # a name, an optimizer or an Ascent (unknown names: one-line error)
    return BalancedMultiLog(
        L=L, optimizer=optimizer, backend=backend,
        log_summand=lambdify((cf.G_j, cf.theta_j), cf.balanced_multi_log_norm_summand(L), backend),
        ratio=lambdify((cf.G_j, cf.theta_j, cf.lnS, sy.rho), cf.balanced_multi_ratio(L, optimizer), backend),
        rate=balanced_multi_rate(L, backend),
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
    L = checked_depth(L)
    return SlidingForms(
        L=L,
        weight=lambdify((cf.a_plus, cf.a_minus), cf.sliding_weight(), backend),
        combine=lambdify((cf.lam, cf.f_plus, cf.f_minus), cf.sliding_combination(), backend),
        coordinate_rate=lambdify((cf.theta_dot, cf.theta_j), cf.doubled_coordinate_rate(L), backend),
        log_curvature=lambdify((sy.s,), cf.loss_gradient_rate_weight(loss), backend),
    )


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

"""The symbolic layer, regression part: the squared loss and the signed parametrisation.

Conventions (README, "Regression"):

- squared loss of (prediction p, target y): ℓ(p, y) = ½ (p − y)², so that
  Lo(β) = ½ Σ_i (⟨x_i, β⟩ − y_i)² and ∇_β Lo = Xᵀ(Xβ − y);
- signed parametrisation of depth D: β = w₊^D − w₋^D (entrywise), w₊(0) = w₋(0) = α·1, so
  β(0) = 0; gradient flow dw±/dt = −∂Lo/∂w±.

Everything below is built with sympy from those two definitions: the flow, its form in log
coordinates u± = log w± (w± stays positive), the solved flow in terms of G(t) = ∫₀ᵗ ∇_β Lo,
the metric M with dβ/dt = −M ∇_β Lo, and the mirror potential Q_α whose gradient the flow
keeps in the row space of X (Woodworth et al. 2020, "Kernel and rich regimes"):

- D = 2: ∇Q_α(β) = arcsinh(β/(2α²)) = −4G, Q_α(β) = α² Σ q(β_j/α²),
  q(z) = 2 − √(4+z²) + z·arcsinh(z/2);
- D ≥ 3: h_D(θ) = (1−θ)^(−D/(D−2)) − (1+θ)^(−D/(D−2)) on (−1, 1), β/α^D = h_D(θ) with
  θ = −D(D−2)α^(D−2) G, Q_α(β) = α^D Σ q_D(β_j/α^D), q_D(z) = ∫₀^z h_D⁻¹ — no closed form;
  with θ = h_D⁻¹(z): q_D(z) = zθ − H_D(θ), H_D = ∫₀^θ h_D (closed form, derived here).
"""

from __future__ import annotations

import sympy as sp

from theorycheck.vocabulary import PARAMETRISATIONS

PARAMS: tuple[str, ...] = PARAMETRISATIONS
REGRESSION_LOSSES: tuple[str, ...] = ("squared",)

p_, y_ = sp.symbols("p y", real=True)  # prediction, target
alpha = sp.Symbol("alpha", positive=True)
wp, wm = sp.symbols("w_p w_m", positive=True)  # w₊, w₋ (one coordinate)
up, um = sp.symbols("u_p u_m", real=True)  # log w₊, log w₋
g = sp.Symbol("g", real=True)  # ∂Lo/∂β_j
G = sp.Symbol("G", real=True)  # ∫₀ᵗ g
theta = sp.Symbol("theta", real=True)  # ∇Q_α(β)_j (dual variable)
z = sp.Symbol("z", real=True)  # β_j / α^D


def squared_loss() -> sp.Expr:
    """ℓ(p, y) = ½ (p − y)²."""
    return sp.Rational(1, 2) * (p_ - y_) ** 2


def squared_loss_derivative() -> sp.Expr:
    """∂ℓ/∂p (so ∇_β Lo = Xᵀ ∂ℓ/∂p(Xβ, y)), by differentiation."""
    return sp.diff(squared_loss(), p_)


def pm_beta(D: int) -> sp.Expr:
    """β = w₊^D − w₋^D (one coordinate)."""
    return wp**D - wm**D


def pm_field(D: int) -> tuple[sp.Expr, sp.Expr]:
    """(dw₊/dt, dw₋/dt) = −∂β/∂w± · g (chain rule through β)."""
    b = pm_beta(D)
    return -sp.diff(b, wp) * g, -sp.diff(b, wm) * g


def pm_log_field(D: int) -> tuple[sp.Expr, sp.Expr]:
    """(du₊/dt, du₋/dt) with u = log w: (dw/dt)/w evaluated at w = e^u."""
    fp, fm = pm_field(D)
    sub = {wp: sp.exp(up), wm: sp.exp(um)}
    return (sp.simplify((fp / wp).subs(sub)), sp.simplify((fm / wm).subs(sub)))


def pm_metric(D: int) -> sp.Expr:
    """M with dβ/dt = −M·g (the flow is a preconditioned gradient flow in β)."""
    b = pm_beta(D)
    fp, fm = pm_field(D)
    return sp.simplify(-(sp.diff(b, wp) * fp + sp.diff(b, wm) * fm) / g)


def pm_solution(D: int) -> tuple[sp.Expr, sp.Expr]:
    """w₊(t), w₋(t) as functions of G(t) = ∫₀ᵗ g: a candidate that ``proofs/kernel_rich``
    checks against :func:`pm_field` (dw/dt = (∂w/∂G)·g) and the initial condition."""
    if D == 2:
        return alpha * sp.exp(-2 * G), alpha * sp.exp(2 * G)
    e = sp.Rational(1, 2 - D)  # w^(2−D) = α^(2−D) ± D(D−2)G
    return ((alpha ** (2 - D) + D * (D - 2) * G) ** e, (alpha ** (2 - D) - D * (D - 2) * G) ** e)


def h(D: int) -> sp.Expr:
    """The inverse mirror map θ ↦ β/α^D: 2 sinh θ (D = 2), h_D(θ) (D ≥ 3)."""
    if D == 2:
        return 2 * sp.sinh(theta)
    pw = sp.Rational(D, D - 2)
    return (1 - theta) ** (-pw) - (1 + theta) ** (-pw)


def theta_of_G(D: int) -> sp.Expr:
    """θ = ∇Q_α(β(t)) as a function of G(t): linear in G, hence in the row space of X."""
    if D == 2:
        return -4 * G
    return -D * (D - 2) * alpha ** (D - 2) * G


def H(D: int) -> sp.Expr:
    """H_D(θ) = ∫₀^θ h_D (the conjugate of q_D): derived by sympy."""
    s = sp.Symbol("s", real=True)
    expr = sp.integrate(h(D).subs(theta, s), (s, 0, theta))
    return sp.simplify(sp.piecewise_fold(expr).rewrite(sp.Pow)) if D > 2 else sp.simplify(expr)


def q2() -> sp.Expr:
    """Depth-2 potential q(z) = 2 − √(4+z²) + z·arcsinh(z/2) (Woodworth et al. 2020, Thm 1)."""
    return 2 - sp.sqrt(4 + z**2) + z * sp.asinh(z / 2)


def q_via_theta(D: int) -> sp.Expr:
    """q_D(h_D(θ)) = h_D(θ)·θ − H_D(θ) (Legendre: q_D' = h_D⁻¹)."""
    return h(D) * theta - H(D)


def derivation(D: int) -> dict[str, str]:
    """What ``theorycheck derive --loss squared --param pm`` prints."""
    return {
        "loss": f"l(p, y) = {sp.sstr(squared_loss())}",
        "dloss/dp": sp.sstr(squared_loss_derivative()),
        "beta": f"beta = {sp.sstr(pm_beta(D))}",
        "flow": f"dw_p/dt = {sp.sstr(pm_field(D)[0])}, dw_m/dt = {sp.sstr(pm_field(D)[1])}  (g = dLo/dbeta_j)",
        "log_flow": f"du_p/dt = {sp.sstr(pm_log_field(D)[0])}, du_m/dt = {sp.sstr(pm_log_field(D)[1])}",
        "metric": f"dbeta/dt = -({sp.sstr(pm_metric(D))}) * g",
        "solution": f"w_p = {sp.sstr(pm_solution(D)[0])}, w_m = {sp.sstr(pm_solution(D)[1])}  (G = int_0^t g)",
        "mirror": f"grad Q(beta) = theta = {sp.sstr(theta_of_G(D))}, beta/alpha^{D} = {sp.sstr(h(D))}",
        "potential": (f"Q = alpha^2 sum q(beta/alpha^2), q(z) = {sp.sstr(q2())}" if D == 2 else
                      f"Q = alpha^{D} sum q_D(beta/alpha^{D}), q_D(h_D(theta)) = {sp.sstr(q_via_theta(D))}"),
    }


# ------------------------------------------------------------ balanced product flow (lp-margin)
def balanced_product_log_field(L: int) -> sp.Expr:
    """du/dt for u = log w when every layer equals w > 0 (β_j = w^L), g = ∂Lo/∂β_j: the
    product-of-others ∂β/∂w_k from :func:`theorycheck.symbolic.model.product_of_others`
    at w_k = w, times −g, divided by w."""
    from theorycheck.symbolic.model import layer_symbols, product_of_others

    W = layer_symbols(L, 1)
    w = sp.Symbol("w", positive=True)
    d_beta = product_of_others(W)[0, 0].subs({W[k, 0]: w for k in range(L)})
    return sp.simplify((-d_beta * g / w).subs(w, sp.exp(up)))

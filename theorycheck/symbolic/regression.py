"""The symbolic layer, regression part: the squared loss and the signed parametrisation.

Conventions (docs/commands/trajectory.md, "regression"):

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

from dataclasses import dataclass

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


# ------------------------------------------------------------ parametrisations × optimizers (regression)
# One coordinate j has two weights (a, b): (w₊, w₋) for pm, β = a^D − b^D, w±(0) = α; (u, v) for uv,
# β = a b, u(0) = α, v(0) = 0 (Andriushchenko & Flammarion's code: u0 = α·1, v0 = 0). The flows are
# integrated in a log chart (s₁, s₂) in which both stay finite and every optimizer's field is smooth:
# pm s = (ln w₊, ln w₋); uv s = (ln(u + v), ln(u − v)) (u ± v > 0 for all time: each moves
# multiplicatively). Loss: L(β) = (1/n) Σ_i ℓ_i, ℓ_i = ½ (⟨x_i, β⟩ − y_i)² (:func:`squared_loss`).
a_, b_ = sp.symbols("a b", real=True)  # one coordinate's two weights
s1, s2 = sp.symbols("s_1 s_2", real=True)  # its log chart
ghat = sp.Symbol("ghat", real=True)  # ∂L/∂β_j at the perturbed point (per example for 1-SAM: ∂ℓ_i/∂β_j)


@dataclass(frozen=True)
class Chart:
    """A regression parametrisation at depth ``depth``: ``beta`` (in a, b), the chart (``a_of_s``,
    ``b_of_s``), the start (``a0``, ``b0``) at scale α, the effective scale ``scale`` (in s: the
    quantity gradient descent conserves, = α at the start), the mirror coordinate ``theta`` (in s) and
    ``q_scale`` (in the effective scale c: the scale of Q_α that the flow's limit minimises,
    β = q_scale^D · h(θ))."""

    param: str
    depth: int
    beta: sp.Expr
    a_of_s: sp.Expr
    b_of_s: sp.Expr
    a0: sp.Expr
    b0: sp.Expr
    scale: sp.Expr
    theta: sp.Expr
    q_scale: sp.Expr


#: the effective scale c (a symbol for q_scale)
c_ = sp.Symbol("c", positive=True)


def chart(param: str, D: int = 2) -> Chart:
    """The :class:`Chart` of ``param`` ("pm", any D ≥ 2; "uv", D = 2)."""
    e1, e2 = sp.exp(s1), sp.exp(s2)
    if param == "pm":
        if D == 2:
            scale, theta = sp.exp((s1 + s2) / 2), s1 - s2
        else:  # GD conserves a^{2−D} + b^{2−D}: the power mean of order 2 − D (→ √(ab) as D → 2)
            k = 2 - D
            scale = ((sp.exp(k * s1) + sp.exp(k * s2)) / 2) ** sp.Rational(1, k)
            theta = (sp.exp(k * s2) - sp.exp(k * s1)) / (2 * scale**k)
        return Chart("pm", D, a_**D - b_**D, e1, e2, alpha, alpha, scale, theta, c_)
    if param == "uv":
        if D != 2:
            raise ValueError("param 'uv' is β = u ⊙ v: depth 2 only")
        # u² − v² = (u + v)(u − v) is conserved by GD; β = uv = (c/2)² · 2 sinh(s₁ − s₂)
        return Chart("uv", 2, a_ * b_, (e1 + e2) / 2, (e1 - e2) / 2, alpha, sp.Integer(0),
                     sp.exp((s1 + s2) / 2), s1 - s2, c_ / 2)
    raise ValueError(f"unknown regression parametrisation {param!r}: choose pm or uv")


def chart_beta(ch: Chart) -> sp.Expr:
    """β_j in the chart coordinates."""
    return sp.simplify(ch.beta.subs({a_: ch.a_of_s, b_: ch.b_of_s}, simultaneous=True))


def chart_metric(ch: Chart) -> sp.Expr:
    """M = ∂β/∂θ at a fixed effective scale, in the chart: q(c)^D h'(θ) simplified in (s₁, s₂), which
    stays finite where c → 0 while θ → ±∞ (pm, D = 2: w₊² + w₋²; uv: (u + v)²/4 + (u − v)²/4)."""
    q = ch.q_scale.subs(c_, ch.scale)
    return sp.simplify((q**ch.depth * sp.diff(h(ch.depth), theta).subs(theta, ch.theta)).rewrite(sp.exp))


def chart_start(ch: Chart) -> tuple[sp.Expr, sp.Expr]:
    """(s₁, s₂) at the start (a, b) = (a0, b0): pm (ln α, ln α); uv (ln α, ln α)."""
    sol = sp.solve([sp.Eq(ch.a_of_s, ch.a0), sp.Eq(ch.b_of_s, ch.b0)], [s1, s2], dict=True)
    (s,) = [x for x in sol if all(v.is_real is not False for v in x.values())]
    return sp.simplify(s[s1]), sp.simplify(s[s2])


def regression_flow(ch: Chart, ascent) -> dict[str, sp.Expr]:
    """The flow of one coordinate in the chart for an optimizer's ascent (:class:`model.Ascent`),
    built from the definitions: the loss gradient entries of the weights (∂β/∂a g, ∂β/∂b g), g the
    symbol of ∂L/∂β_j (per example, ∂ℓ_i/∂β_j, for a per-example ascent) and S the joint norm; the
    perturbed weights â = a + ε(∂β/∂a g, S), b̂ likewise; β̂ = β(â, b̂); the field
    da/dt = −∂β/∂a(â, b̂) ĝ, db/dt likewise, ĝ the symbol of ∂L/∂β_j at the perturbed point (1-SAM:
    averaged over the examples by the caller); then ds/dt = (∂s/∂(a, b)) (da/dt, db/dt).

    Returns ``beta``, ``grad_a``, ``grad_b`` (the loss gradient entries of a and b), ``beta_hat`` and
    ``ds1``, ``ds2``, all in (s₁, s₂, g, S, ĝ, ρ)."""
    from theorycheck.symbolic.model import grad_norm, rho

    if ascent.weighted:
        raise ValueError("the regression flows take an ascent step of the gradient alone (GD, n-SAM, 1-SAM), "
                         "not a weighted one: its joint norm is not the one the regression solver computes")
    da_beta, db_beta = sp.diff(ch.beta, a_), sp.diff(ch.beta, b_)
    ga, gb = da_beta * g, db_beta * g
    a_hat = a_ + ascent.at(ga, a_, grad_norm)
    b_hat = b_ + ascent.at(gb, b_, grad_norm)
    hat = {a_: a_hat, b_: b_hat}
    beta_hat = ch.beta.subs(hat, simultaneous=True)
    fa = -da_beta.subs(hat, simultaneous=True) * ghat
    fb = -db_beta.subs(hat, simultaneous=True) * ghat
    # the chart's inverse Jacobian: (da, db) = J (ds1, ds2)  ⇒  (ds1, ds2) = J⁻¹ (da, db)
    J = sp.Matrix([[sp.diff(ch.a_of_s, s1), sp.diff(ch.a_of_s, s2)], [sp.diff(ch.b_of_s, s1), sp.diff(ch.b_of_s, s2)]])
    to_s = {a_: ch.a_of_s, b_: ch.b_of_s}
    ds = sp.simplify(J.inv()) * sp.Matrix([fa, fb]).subs(to_s, simultaneous=True)

    def tidy(e):
        return sp.powsimp(sp.expand(sp.simplify(e)), force=True)

    del rho  # ρ enters through the ascent's formula
    return {"beta": chart_beta(ch), "grad_a": ga.subs(to_s, simultaneous=True),
            "grad_b": gb.subs(to_s, simultaneous=True), "beta_hat": tidy(beta_hat.subs(to_s, simultaneous=True)),
            "ds1": tidy(ds[0]), "ds2": tidy(ds[1])}


def regression_derivation(param: str, D: int, ascent, title: str) -> dict[str, str]:
    """What ``theorycheck derive --loss squared --param pm|uv --optimizer OPT`` prints: the loss, β,
    the ascent step, the perturbed point and the flow in the chart, with the effective scale and the
    mirror coordinate."""
    ch = chart(param, D)
    f = regression_flow(ch, ascent)
    g_sym, S_sym, eps = ascent.coordinate()
    per = " (per example i: g = dl_i/dbeta_j, ghat = dl_i/dbeta_j at the perturbed point; the field is averaged over i)"
    a_name, b_name = ("w_p", "w_m") if param == "pm" else ("u", "v")
    return {
        "optimizer": title,
        "loss": f"L(beta) = (1/n) sum_i l_i, l_i = {sp.sstr(squared_loss().subs({p_: sp.Symbol('<x_i, beta>'), y_: sp.Symbol('y_i')}))}",
        "beta": f"beta = {sp.sstr(ch.beta.subs({a_: sp.Symbol(a_name), b_: sp.Symbol(b_name)}))}",
        "init": f"{a_name}(0) = {sp.sstr(ch.a0)}, {b_name}(0) = {sp.sstr(ch.b0)}",
        "chart": f"{a_name} = {sp.sstr(ch.a_of_s)}, {b_name} = {sp.sstr(ch.b_of_s)}",
        "ascent": f"eps(g) = {sp.sstr(eps)}" + (per if ascent.per_example else "  (g = dL/dbeta_j)"),
        "beta_hat": f"beta_hat_j = {sp.sstr(f['beta_hat'])}",
        "flow": f"ds_1/dt = {sp.sstr(f['ds1'])}, ds_2/dt = {sp.sstr(f['ds2'])}",
        "effective_scale": f"c = {sp.sstr(ch.scale)}",
        "mirror": f"theta = {sp.sstr(ch.theta)}, beta = ({sp.sstr(ch.q_scale)})^{D} * h(theta), h = {sp.sstr(h(D))}",
    }

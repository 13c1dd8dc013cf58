"""The symbolic layer, part 2: the flows in the coordinate forms the integrators read (balanced, branch, shifted,
several examples, ℓ∞ sliding), as sympy expressions, and the symbols every closed form is written in. The closed
forms a theory states about these flows (the first paper's C1–C6 and lock-in levels) are
:mod:`theorycheck.symbolic.theory_exprs`.

Each is a *claim* until ``proofs/`` has derived it from :mod:`theorycheck.symbolic.model`.
Numerical code is compiled from these (via :mod:`theorycheck.symbolic.forms`), never re-typed.

Coordinate forms: a balanced field is written for one coordinate j with the aggregate
``N`` as a symbol and ``N² = Σ_j summand_j`` given separately, so one expression serves
every dimension d.
"""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import model as sy
from theorycheck.symbolic.model import ascent_of, rho

# one coordinate j (and a second one, k, for pairwise statements)
z_j = sp.Symbol("z_j", real=True)
z_k = sp.Symbol("z_k", real=True)
u_j = sp.Symbol("u_j", real=True)
theta_j = sp.Symbol("theta_j", real=True)
#: the ℓ2 norm of the full gradient in the balanced, rescaled flow
N = sp.Symbol("N", positive=True)
#: N̄(τ) = τ / I(τ), the harmonic mean of N on [0, τ] (C4)
N_bar = sp.Symbol("Nbar", positive=True)
#: I(τ) = ∫_0^τ ds / N(s) (C4)
I = sp.Symbol("I", nonnegative=True)
alpha = sp.Symbol("alpha", positive=True)
alpha_j = sp.Symbol("alpha_j", positive=True)
#: depth as a symbol, for the statements that hold for every L
L_sym = sp.Symbol("L", integer=True, positive=True)
# order statistics of z for the C5 thresholds (one example, z > 0)
z_min = sp.Symbol("z_min", positive=True)
z_1st = sp.Symbol("z_(d)", positive=True)  # largest
z_2nd = sp.Symbol("z_(d-1)", positive=True)  # second largest
z_norm = sp.Symbol("||z||_2", positive=True)


# ---------------------------------------------------------------- balanced rescaled flows
def balanced_norm_summand(L, optimizer=None) -> sp.Expr:
    """Term j of ``N² = L Σ_j z_j² u_j^{2L−2}`` (ℓ2-SAM, balanced, one example). For an ascent whose norm
    weighs the entries (``optimizer`` with a norm weight T, ASAM) the term is L (T(u_j) z_j u_j^{L−1})²,
    from :meth:`symbolic.model.Ascent.norm_term` at the rescaled gradient entry −z_j u_j^{L−1}."""
    if optimizer is not None and ascent_of(optimizer).weighted:
        return L * ascent_of(optimizer).norm_term(-z_j * u_j ** (L - 1), u_j)
    return L * z_j**2 * u_j ** (2 * L - 2)


def balanced_perturbed_point(L, optimizer) -> sp.Expr:
    """û_j = u_j + ε(g_j, N) for the balanced rescaled flow, ε the optimizer's ascent
    (:func:`symbolic.perturbation_coordinate`) at the rescaled gradient entry g_j = −z_j u_j^{L−1}
    with the joint norm N: GD u_j, ℓ2 ``u_j − ρ z_j u_j^{L−1}/N``, ℓ∞ the general sign
    ``u_j + ρ sign(−z_j u_j^{L−1})`` (THEORY.md's ``u_j − ρ`` when z, u > 0). Only for an ascent
    with a rescaled time (:attr:`symbolic.Ascent.scale_invariant`)."""
    asc = ascent_of(optimizer)
    if asc.per_example or not asc.scale_invariant:
        raise ValueError("the balanced rescaled flow needs a full-batch ascent invariant under positive scaling "
                         "of the gradient (GD, ℓ2-SAM, ℓ∞-SAM)")
    return u_j + asc.at(-z_j * u_j ** (L - 1), u_j, N)


def balanced_field(L, optimizer: str) -> sp.Expr:
    """du_j/dτ = z_j û_j^{L−1} (THEORY.md, Rescaled flows: GD, ℓ2-SAM, ℓ∞-SAM)."""
    return z_j * balanced_perturbed_point(L, optimizer) ** (L - 1)


def balanced_field_linf_positive(L) -> sp.Expr:
    """THEORY.md's ℓ∞-SAM balanced field for z > 0, u > 0: ``z_j (u_j − ρ)^{L−1}``."""
    return z_j * (u_j - rho) ** (L - 1)


def balanced_log_field(L, optimizer: str) -> sp.Expr:
    """dθ_j/dτ for θ_j = ln u_j (u_j > 0): the balanced field divided by u_j, in θ."""
    f = balanced_field(L, optimizer).subs(u_j, sp.exp(theta_j)) * sp.exp(-theta_j)
    return sp.powsimp(sp.expand_power_base(sp.expand(f), force=True), force=True)


# ---------------------------------------------------------------- forms for the integrators
# Rewritings of the formulas above that integrators need (log coordinates, locked branches,
# log-space sums). Each is *derived* here from the forms above by substitution, never typed
# anew, and tests/test_forms_traj.py checks that it equals the form it came from.

#: ln N, so that N = e^{lnN} never overflows (ℓ2-SAM)
lnN = sp.Symbol("lnN", real=True)
#: a locked branch ±1 of the sign in ℓ∞-SAM's perturbation (constant between switching events)
sigma = sp.Symbol("sigma", real=True)
#: the sign of û_j and v_j = ln|û_j| (shifted log coordinate of the GD / ℓ∞-SAM flows)
s_hat = sp.Symbol("s", real=True)
v_j = sp.Symbol("v_j", real=True)


def balanced_log_norm_summand(L) -> sp.Expr:
    """ln of term j of N² with u_j = e^{θ_j}: N = exp(½ logsumexp_j(·)) without overflow."""
    return sp.expand_log(sp.log(balanced_norm_summand(L).subs(u_j, sp.exp(theta_j))))


def balanced_log_field_factored(L, optimizer: str) -> sp.Expr:
    """dθ_j/dτ = z_j r_j^{L−1} e^{(L−2)θ_j} with r_j = û_j/u_j and N = e^{lnN}: the
    balanced field (THEORY.md, Rescaled flows) divided by u_j, factored so that nothing
    cancels near û_j = 0 and nothing overflows when u_j and N are huge."""
    r = sp.Dummy("r")
    uhat = balanced_perturbed_point(L, optimizer)
    ratio = sp.expand(uhat / u_j)
    f = balanced_field(L, optimizer).subs(uhat, u_j * r) / u_j
    f = f.subs(r, ratio).subs({u_j: sp.exp(theta_j), N: sp.exp(lnN)})
    return sp.powsimp(sp.expand_power_base(f, force=True), deep=True, force=True, combine="exp")


def linf_branch_argument(L) -> sp.Expr:
    """The argument a of the sign in ℓ∞-SAM's balanced perturbed point, as sympy writes it
    (``u_j − ρ sign(z_j u_j^{L−1})``, i.e. a = z_j u_j^{L−1}); the branch is σ = sign(a)."""
    (sgn,) = balanced_perturbed_point(L, sy.SIGN_ASCENT).atoms(sp.sign)
    return sgn.args[0]


def _check_branch(optimizer) -> None:
    """Locked branches exist for an ascent without the joint norm (GD, ℓ∞-SAM): on a branch its
    perturbed point is û_j = u_j − ρσ."""
    asc = ascent_of(optimizer)
    if asc.uses_norm or not (asc.trivial or asc.discontinuous):
        raise ValueError("locked branches exist for the trivial (GD) and sign (ℓ∞-SAM) ascents only")


def balanced_branch_point(L, optimizer) -> sp.Expr:
    """û_j with the sign locked to the branch σ = sign(:func:`linf_branch_argument`):
    u_j − ρσ (ℓ∞-SAM), u_j (GD)."""
    _check_branch(optimizer)
    return balanced_perturbed_point(L, optimizer).replace(sp.sign, lambda *_: sigma)


def balanced_branch_field(L, optimizer: str) -> sp.Expr:
    """du_j/dτ on one branch σ of the ℓ∞ sign (GD: the field itself): z_j (u_j − ρσ)^{L−1}."""
    _check_branch(optimizer)
    return balanced_field(L, optimizer).replace(sp.sign, lambda *_: sigma)


def balanced_shifted_log_field(L, optimizer: str) -> sp.Expr:
    """dv_j/dτ for v_j = ln|û_j|, û_j = s e^{v_j} (GD, ℓ∞-SAM on a branch σ): the branch
    field with u_j = s e^{v_j} − (û_j − u_j), divided by dû_j/dv_j = s e^{v_j}. For L = 2
    and ℓ∞ this is z_j, so C2's u_j = ρ + (α_j − ρ) e^{z_j τ} is linear in v."""
    uhat = balanced_branch_point(L, optimizer)
    u_of_v = s_hat * sp.exp(v_j) - (uhat - u_j)
    f = balanced_branch_field(L, optimizer).subs(u_j, u_of_v) / (s_hat * sp.exp(v_j))
    return sp.powsimp(sp.expand_power_base(sp.expand(f), force=True), force=True)


#: ln Σ_j (term j of N²), a log-space sum of the log summands above
lse = sp.Symbol("lse", real=True)


def log_norm_of_lse() -> sp.Expr:
    """ln N from ``lse`` = ln Σ_j (term j of N²): N = √(Σ_j ·) gives ln N = ½ lse (the one
    definition behind every "½ logsumexp" of the integrators)."""
    return sp.expand_log(sp.log(sp.sqrt(sp.exp(lse))), force=True)


# ---------------------------------------------------------------- several examples, balanced, θ = ln u (sweeps)
# Real-time flow at a balanced point w_k = u (every layer equal), any number of examples, with
# G_j = ∂Lo/∂β_j (symbolic.loss_gradient_factor) as a symbol: the per-coordinate factors below
# are derived from symbolic.layer_gradient_coordinate and symbolic.perturbation_coordinate, in
# θ = ln u so that nothing is divided by a u_j that underflows.
#: ∂Lo/∂β_j at the current point and at the perturbed point
G_j = sp.Symbol("G_j", real=True)
Ghat_j = sp.Symbol("Ghat_j", real=True)
#: ln S, S = ‖∇Lo‖₂ over all layers jointly
lnS = sp.Symbol("lnS", real=True)
#: r_j = û_j / u_j, the perturbed point relative to the point
r_j = sp.Symbol("r_j", real=True)


def _balanced_layer_gradient(L, G) -> sp.Expr:
    """∂Lo/∂w_{1,j} at the balanced point w_k = u: G ∏_{m≠1} u_j (symbolic.layer_gradient_coordinate)."""
    Gs, w, g = sy.layer_gradient_coordinate(L)
    return g[0].subs({Gs: G, **{wk: u_j for wk in w}}, simultaneous=True)


def balanced_multi_log_norm_summand(L) -> sp.Expr:
    """ln of term j of S² = Σ_k Σ_j (∂Lo/∂w_{k,j})² at a balanced point, u_j = e^{θ_j}:
    L equal layers, each contributing (G_j u_j^{L−1})²."""
    term = L * _balanced_layer_gradient(L, G_j) ** 2
    return sp.expand_log(sp.log(term.subs(u_j, sp.exp(theta_j))))  # no force: keeps ln(G_j²) for G_j < 0


def balanced_multi_ratio(L, optimizer: str) -> sp.Expr:
    """r_j = û_j/u_j with û_j = u_j + ε_j(g_j, S) (symbolic.perturbation_coordinate),
    g_j = G_j u_j^{L−1}, S = e^{lnS}, u_j = e^{θ_j}: finite however small u_j is (ℓ2, GD)."""
    e = ascent_of(optimizer).at(_balanced_layer_gradient(L, G_j), u_j, sp.exp(lnS))
    ratio = sp.expand((u_j + e) / u_j).subs(u_j, sp.exp(theta_j))
    return sp.powsimp(sp.expand_power_base(sp.expand(ratio), force=True), force=True)


def balanced_multi_log_rate(L) -> sp.Expr:
    """dθ_j/dt = −(∂Lo/∂w_{1,j} at the perturbed balanced point û = r u)/u_j =
    −Ghat_j r_j^{L−1} e^{(L−2)θ_j} (all layers move alike)."""
    du = -_balanced_layer_gradient(L, Ghat_j).subs(u_j, r_j * u_j)
    rate = sp.expand(du / u_j).subs(u_j, sp.exp(theta_j))
    return sp.powsimp(sp.expand_power_base(rate, force=True), force=True)


# ---------------------------------------------------------------- ℓ∞-SAM on a surface G_j = 0 (Filippov sliding)
# ℓ∞-SAM's perturbation ρ sign(G_j) jumps where G_j = ∂Lo/∂β_j changes sign. Where the fields
# f₊ (sign +1) and f₋ (sign −1) of the two sides both point at the surface (a₊ < 0 < a₋ with
# a± = dG_j/dt along f±), the solution slides on it (Filippov): its velocity is the convex
# combination λ f₊ + (1 − λ) f₋ tangent to the surface, dG_j/dt = 0. The discrete algorithm
# chattering across the surface moves, on average, with this velocity (a fraction λ of its
# steps on the + side), which is why the convex combination (not a sign value s ∈ (−1, 1) put
# into the field, which is nonlinear in s) is the limit of the algorithm.
#: dG_j/dt along the field of the + side (sign(G_j) = +1) and of the − side
a_plus = sp.Symbol("a_plus", real=True)
a_minus = sp.Symbol("a_minus", real=True)
#: one coordinate of the two one-sided fields, and the weight of the + side
f_plus = sp.Symbol("f_plus", real=True)
f_minus = sp.Symbol("f_minus", real=True)
lam = sp.Symbol("lambda", real=True)
#: the margin m_i = ⟨β, z_i⟩ and its rate
m_dot = sp.Symbol("mdot", real=True)
theta_dot = sp.Symbol("thetadot", real=True)


def sliding_combination() -> sp.Expr:
    """One coordinate of the Filippov velocity λ f₊ + (1 − λ) f₋ (a point of the segment
    between the two one-sided fields)."""
    return lam * f_plus + (1 - lam) * f_minus


def sliding_weight() -> sp.Expr:
    """λ with λ a₊ + (1 − λ) a₋ = 0 (dG_j/dt = 0 along :func:`sliding_combination`, which is
    affine in the field): λ = a₋/(a₋ − a₊), in (0, 1) exactly when a₊ < 0 < a₋."""
    (sol,) = sp.solve(sp.Eq(sliding_combination().subs({f_plus: a_plus, f_minus: a_minus}), 0), lam)
    return sp.simplify(sol)


def doubled_coordinate_rate(L) -> sp.Expr:
    """d(u_j^L)/dt for one coordinate of the doubled network given dθ_j/dt (L ≥ 2, u_j = e^{θ_j})
    or du_j/dt (L = 1, u_j itself): the chain rule of :func:`symbolic.predictor`'s u^L;
    dβ_j/dt is the + coordinate's value minus the − coordinate's."""
    t = sy.t
    if L == 1:
        x = sp.Function("u")(t)
        return sp.diff(x, t).subs(sp.Derivative(x, t), theta_dot)
    x = sp.Function("theta")(t)
    expr = sp.diff(sp.exp(x) ** L, t)
    return sp.simplify(expr.subs(sp.Derivative(x, t), theta_dot).subs(x, theta_j))


def loss_gradient_rate_weight(loss: str = "logistic") -> sp.Expr:
    """ln ℓ''(m_i): dG_j/dt = (1/n) Σ_i ℓ''(m_i) ṁ_i z_ij (the derivative of
    symbolic.loss_gradient_factor along the flow, ṁ_i = ⟨dβ/dt, z_i⟩), in log space
    (:func:`symbolic.loss_log_second_derivative_stable`)."""
    return sy.loss_log_second_derivative_stable(loss)

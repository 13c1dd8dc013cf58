"""The symbolic layer, part 2: the formulas THEORY.md states, as sympy expressions.

Each is a *claim* until ``proofs/`` has derived it from :mod:`theorycheck.symbolic.model`.
Numerical code is compiled from these (via :mod:`theorycheck.symbolic.forms`), never re-typed.

Coordinate forms: a balanced field is written for one coordinate j with the aggregate
``N`` as a symbol and ``N² = Σ_j summand_j`` given separately, so one expression serves
every dimension d.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import model as sy
from theorycheck.symbolic.model import ascent_of, rho, tau

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


# ---------------------------------------------------------------- C1, C6: GD and L = 1
def l1_solution() -> sp.Expr:
    """L = 1, any optimizer, one example: w_j(τ) = α_j + z_j τ (C1)."""
    return alpha_j + z_j * tau


def gd_l2_solution() -> sp.Expr:
    """GD, L = 2, balanced: u_j(τ) = α_j e^{z_j τ} (C6)."""
    return alpha_j * sp.exp(z_j * tau)


# ---------------------------------------------------------------- C2: ℓ∞-SAM, L = 2
def linf_l2_solution() -> sp.Expr:
    """u_j(τ) = ρ + (α_j − ρ) e^{z_j τ} while u_j > 0 (C2, derived)."""
    return rho + (alpha_j - rho) * sp.exp(z_j * tau)


def linf_l2_zero_time() -> sp.Expr:
    """τ_j = ln(ρ/(ρ − α_j)) / z_j: when u_j reaches 0 for α_j < ρ (C2, derived)."""
    return sp.log(rho / (rho - alpha_j)) / z_j


# ---------------------------------------------------------------- C3: ℓ∞-SAM, L ≥ 3
def linf_blowup_solution(L=L_sym) -> sp.Expr:
    """u_j(τ) = ρ + ((α_j − ρ)^{−(L−2)} − (L−2) z_j τ)^{−1/(L−2)} for α_j > ρ (C3)."""
    return rho + ((alpha_j - rho) ** (-(L - 2)) - (L - 2) * z_j * tau) ** (-1 / (L - 2))


def linf_blowup_time(L=L_sym) -> sp.Expr:
    """τ_j* = 1 / ((L−2) z_j (α_j − ρ)^{L−2}) (C3, derived)."""
    return 1 / ((L - 2) * z_j * (alpha_j - rho) ** (L - 2))


def linf_blowup_score(L=L_sym) -> sp.Expr:
    """The quantity whose argmax (over α_j > ρ) blows up first: z_j (α_j − ρ)^{L−2} (C3)."""
    return z_j * (alpha_j - rho) ** (L - 2)


def gd_blowup_time(L=L_sym) -> sp.Expr:
    """GD, balanced, L ≥ 3: u_j^{−(L−2)} = α_j^{−(L−2)} − (L−2) z_j τ blows up at
    1/((L−2) z_j α_j^{L−2}) (the ρ = 0 case of C3's formula)."""
    return linf_blowup_time(L).subs(rho, 0)


# ---------------------------------------------------------------- C1–C3: limit directions of balanced ℓ∞-SAM
# One example, z > 0, balanced init α. The limit direction of β is ∝ a weight over the
# *selected* coordinates (the maximisers of a selection score among the eligible ones) and 0
# elsewhere: L = 1 every coordinate, weight z_j (C1); L = 2 the α_j > ρ, score z_j, weight
# (α_j − ρ)² (C2: β_j = u_j² ~ (α_j − ρ)² e^{2 z_j τ}); L ≥ 3 the α_j > ρ, score the blow-up
# score z_j (α_j − ρ)^{L−2}, weight z_j^{−L/(L−2)} (C3: at the common blow-up time
# u_j − ρ ~ ((L−2) z_j (τ* − τ))^{−1/(L−2)}). With no α_j > ρ (L ≥ 2): odd L → ∝ 1 (every
# u_j tends to ρ), even L → ∝ 1[α_j = ρ] (the others reach 0 and slide).
# tests/test_symbolic.py derives the weights from the solutions above.


def linf_limit_score(L) -> sp.Expr:
    """The selection score of :func:`linf_limit_weight` (its maximisers carry the limit)."""
    L = int(L)
    if L == 1:
        return sp.Integer(1)
    if L == 2:
        return z_j
    return linf_blowup_score(L)


def linf_limit_weight(L) -> sp.Expr:
    """The weight of a selected coordinate in the limit direction of balanced ℓ∞-SAM."""
    L = int(L)
    if L == 1:
        return z_j
    if L == 2:
        return (alpha_j - rho) ** 2
    return z_j ** sp.Rational(-L, L - 2)


def linf_limit_log_score(L) -> sp.Expr:
    """ln :func:`linf_limit_score` (for z_j > 0, α_j > ρ): compared in log space, scale-free."""
    return sp.expand_log(sp.log(linf_limit_score(L)), force=True)


def linf_limit_log_weight(L) -> sp.Expr:
    """ln :func:`linf_limit_weight` (for z_j > 0, α_j > ρ): normalised in log space."""
    return sp.expand_log(sp.log(linf_limit_weight(L)), force=True)


# ---------------------------------------------------------------- C4: ℓ2-SAM, L = 2
def l2_log_rate() -> sp.Expr:
    """dθ_j/dτ = z_j (1 − ρ z_j / N) (C4, derived)."""
    return z_j * (1 - rho * z_j / N)


def l2_theta() -> sp.Expr:
    """θ_j(τ) = ln α + z_j τ − ρ z_j² I(τ) (C4, derived; uniform init α)."""
    return sp.log(alpha) + z_j * tau - rho * z_j**2 * I


def l2_reduced_summand() -> sp.Expr:
    """Term j of ``N(τ, I)² = 2 Σ_j z_j² u_j²`` with u_j = e^{θ_j} from :func:`l2_theta`."""
    return 2 * z_j**2 * sp.exp(2 * l2_theta())


def l2_index_score() -> sp.Expr:
    """j†(τ) = argmax_j z_j (1 − ρ z_j / N̄(τ)) (C4, derived)."""
    return z_j * (1 - rho * z_j / N_bar)


def l2_switch_level() -> sp.Expr:
    """A switch j → k of j† happens where N̄ = ρ (z_j + z_k) (C4, derived)."""
    return rho * (z_j + z_k)


# ---------------------------------------------------------------- C4's reduced ODE and its clocks
#: the smooth clock's scale c (C4's reduction: the collapse certificate level ρ z_min) and ln c
c_clock = sp.Symbol("c", nonnegative=True)
ln_c = sp.Symbol("lnc", real=True)
#: below N = e^{−TINY_LOG_N}, e^{−ln N} is near the float64 overflow (e^{709.8})
TINY_LOG_N = 700
#: the clocks an integrator of C4's reduced ODE may run in (see :func:`l2_reduced_clock`)
REDUCED_CLOCKS: tuple[str, ...] = ("time", "arc", "smooth")


def l2_reduced_rate() -> sp.Expr:
    """C4's reduced ODE: dI/dτ = 1/N(τ, I), N² = Σ_j :func:`l2_reduced_summand` (derived:
    I(τ) = ∫_0^τ ds/N)."""
    return 1 / N


def l2_reduced_clock(kind: str) -> sp.Expr:
    """κ = dτ/ds of a clock s for C4's reduced ODE: ``"time"`` κ = 1 (s = τ); ``"arc"`` κ = N
    (then dI/ds = 1: smooth through a collapse N → 0); ``"smooth"`` κ = N/(N + c) with
    c = :func:`l2_clock_scale` (bounded rates both as N → 0 and as N → ∞)."""
    if kind == "time":
        return sp.Integer(1)
    if kind == "arc":
        return N
    if kind == "smooth":
        return N / (N + c_clock)
    raise ValueError(f"unknown clock {kind!r}; choose one of {', '.join(REDUCED_CLOCKS)}")


def l2_reduced_clocked(kind: str) -> tuple[sp.Expr, sp.Expr]:
    """(dτ/ds, dI/ds) = (κ, κ · dI/dτ) in the clock ``kind``."""
    k = l2_reduced_clock(kind)
    return k, sp.simplify(k * l2_reduced_rate())


def l2_reduced_clocked_log(kind: str) -> tuple[sp.Expr, sp.Expr]:
    """:func:`l2_reduced_clocked` with N = e^{lnN} and c = e^{lnc}, written so that nothing
    overflows: the smooth clock κ = 1/(1 + e^{lnc − lnN}) is split on the sign of lnN − lnc
    (each branch equals κ; tests/test_symbolic.py checks it). lnc = −∞ (ρ = 0) gives κ = 1."""
    dtau, dI = l2_reduced_clocked(kind)
    subs = {N: sp.exp(lnN), c_clock: sp.exp(ln_c)}
    if kind != "smooth":
        return sp.simplify(dtau.subs(subs)), sp.simplify(dI.subs(subs))
    x = lnN - ln_c
    small = sp.exp(x) / (sp.exp(x) + 1)  # N < c: e^{x} ≤ 1
    large = 1 / (1 + sp.exp(-x))  # N ≥ c: e^{−x} ≤ 1
    kappa = sp.Piecewise((small, x < 0), (large, True))
    # dI/ds = κ e^{−lnN}; where e^{−lnN} overflows (N < e^{−TINY_LOG_N}) and κ underflows the
    # product is 0·∞: there 1/(N + c) = 1/(e^{lnN} + e^{lnc}) instead (finite)
    dI = sp.Piecewise((kappa * sp.exp(-lnN), lnN > -TINY_LOG_N), (1 / (sp.exp(lnN) + sp.exp(ln_c)), True))
    return kappa, dI


# ---------------------------------------------------------------- C5: certificates (ℓ2-SAM, L = 2, one example)
#: m = the smallest nonzero |z_j|, and the relative collapse stop tolerance
z_abs_min = sp.Symbol("m", positive=True)
stop_tol = sp.Symbol("collapse_tol", positive=True)


def _level_where_rate_vanishes(z_at) -> sp.Expr:
    """The N at which dθ_j/dτ = z_j (1 − ρ z_j/N) (:func:`l2_log_rate`) is 0, for z_j = ``z_at``."""
    (level,) = sp.solve(sp.Eq(l2_log_rate().subs(z_j, z_at), 0), N)
    return level


def l2_collapse_certificate() -> sp.Expr:
    """N < ρ z_min ⇒ every rate z_j (1 − ρ z_j/N) is negative (z_min: the smallest positive
    entry), N keeps falling and the flow collapses: the level ρ z_min (C5)."""
    return _level_where_rate_vanishes(z_min)


def l2_no_collapse_certificate() -> sp.Expr:
    """N ≥ ρ z_(d) ⇒ every rate is ≥ 0, N keeps growing: never a collapse (C5)."""
    return _level_where_rate_vanishes(z_1st)


def l2_clock_scale() -> sp.Expr:
    """c of the smooth clock (:func:`l2_reduced_clock`): the collapse certificate level ρ z_min,
    so that κ → 0 exactly where the rates turn singular (N → 0 after the certificate)."""
    return l2_collapse_certificate()


def l2_collapse_stop_level() -> sp.Expr:
    """Where an integrator stops at a collapse that persists: N ≤ collapse_tol·ρ m²/(2 z_(d)).
    Below ρ z_min, dN/dτ ≤ −ρ m²/2, so the collapse time is within 2N/(ρ m²) ≤
    collapse_tol/z_(d) after the stop."""
    return stop_tol * rho * z_abs_min**2 / (2 * z_1st)


# ---------------------------------------------------------------- C5: regimes in α
def initial_norm() -> sp.Expr:
    """N0 = α √2 ‖z‖₂ (C5)."""
    return alpha * sp.sqrt(2) * z_norm


@lru_cache(maxsize=1)
def alpha_all_shrink() -> sp.Expr:
    """All coordinates shrink at the start iff N0 < ρ z_min, i.e. α < ρ z_min/(√2‖z‖₂) (C5).
    Solved once (cached): callers at run time use :func:`theorycheck.symbolic.theory_forms.alpha_all_shrink`."""
    return sp.solve(sp.Eq(initial_norm(), rho * z_min), alpha)[0]


@lru_cache(maxsize=1)
def alpha_gd_like() -> sp.Expr:
    """The major coordinate grows fastest from the start iff N0 ≥ ρ (z_(d) + z_(d−1)),
    i.e. α ≥ ρ (z_(d) + z_(d−1)) / (√2‖z‖₂) (C5). Solved once (cached): callers at run time
    use :func:`theorycheck.symbolic.theory_forms.alpha_gd_like`."""
    return sp.solve(sp.Eq(initial_norm(), rho * (z_1st + z_2nd)), alpha)[0]


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


def l2_reduced_log_summand() -> sp.Expr:
    """ln of term j of N(τ, I)² (C4's reduction), for a log-space sum."""
    return sp.expand_log(sp.log(l2_reduced_summand()))


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


# ---------------------------------------------------------------- lock-in of j† (proofs/minor_first/lockin.py)
# Conditions on a state after which j† can no longer change (the lock-in lemma, derived and
# checked in proofs/minor_first/lockin.py). GD is the ρ = 0 case of ℓ2-SAM throughout.


def l2_pair_log_gap_rate() -> sp.Expr:
    """d(θ_k − θ_j)/dτ = (z_k − z_j)(1 − ρ (z_j + z_k)/N) (L = 2, any α_j > 0): the gap of a
    larger z_k over z_j grows iff N ≥ ρ (z_j + z_k), the switch level of C4."""
    return sp.factor(l2_log_rate().subs(z_j, z_k) - l2_log_rate())


def l2_lockin_level() -> sp.Expr:
    """L = 2 lock-in: once j† = argmax z and N ≥ ρ (z_(d) + z_next) (z_next the largest value
    strictly below z_(d); 0 when there is none), N keeps growing and j† never changes."""
    return l2_switch_level().subs({z_j: z_1st, z_k: z_2nd})


def depth_lockin_floor(L=L_sym) -> sp.Expr:
    """L ≥ 3 lock-in: u_k ≥ ρ √L makes r_k = ρ z_k u_k^{L−2}/N ≤ 1/L, which keeps u_k growing and
    no smaller-z coordinate can overtake it."""
    return rho * sp.sqrt(L)


def depth_lockin_rate_factor(L=L_sym) -> sp.Expr:
    """c = (1 − ρ/(√L u_j))^{L−1} ≤ (1 − r_j)^{L−1}: the slowest a coordinate with u_j ≥ ρ√L can
    move, relative to GD (r_j ≤ ρ/(√L u_j) because N² ≥ L z_j² u_j^{2L−2})."""
    return (1 - rho / (sp.sqrt(L) * u_j)) ** (L - 1)


def depth_lockin_rival_floor(L=L_sym) -> sp.Expr:
    """|û_j| ≤ max(u_j, ρ/√L): no coordinate moves faster than GD started from max(u_j, ρ/√L)."""
    return rho / sp.sqrt(L)


def depth_lockin_winner_log_score(L=L_sym) -> sp.Expr:
    """ln(z_j u_j^{L−2} c) with c = :func:`depth_lockin_rate_factor`, in θ_j = ln u_j: the winner
    blows up no later than GD at the score z_j u_j^{L−2} c."""
    return (sp.log(z_j) + (L - 2) * theta_j
            + (L - 1) * sp.log(1 - rho * sp.exp(-theta_j) / sp.sqrt(L)))


def depth_lockin_rival_log_score(L=L_sym) -> sp.Expr:
    """ln(z_j max(u_j, ρ/√L)^{L−2}) in θ_j = ln u_j: a rival blows up no earlier than GD at this
    score. j† = k is locked when every rival with z_j > z_k scores below k's
    :func:`depth_lockin_winner_log_score` and u_k ≥ :func:`depth_lockin_floor`."""
    return sp.log(z_j) + (L - 2) * sp.Max(theta_j, sp.log(depth_lockin_rival_floor(L)))


def depth_lockin_blowup_bounds(L=L_sym) -> tuple[sp.Expr, sp.Expr]:
    """The locked winner's remaining time to blow-up lies in [t*, t*/c]: t* = 1/((L−2) z_j u_j^{L−2})
    (:func:`gd_blowup_time` from u_j) and c = :func:`depth_lockin_rate_factor`."""
    t = gd_blowup_time(L).subs(alpha_j, u_j)
    return t, t / depth_lockin_rate_factor(L)


def l2_collapse_time_bound() -> sp.Expr:
    """ln(ρ z_min/(ρ z_min − N))/z_min: below the collapse certificate (N < ρ z_min) the time to β = 0
    from a state with norm N is at most this, and at least the same form with z_max (lock-in lemma:
    comparison with y' = c(y − ρc), c = z_min and z_max)."""
    return sp.log(rho * z_min / (rho * z_min - N)) / z_min

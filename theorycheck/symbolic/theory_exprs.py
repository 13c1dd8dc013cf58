"""The symbolic layer: the closed forms the first paper states (its claims C1–C6 and the lock-in lemmas), as sympy
expressions: GD's and ℓ∞-SAM's solutions and blow-up times, the limit directions of balanced ℓ∞-SAM, C4's ℓ2-SAM
rate, its reduced ODE dI/dτ = 1/N(τ, I) and its clocks, C5's certificates and regimes in α, the lock-in levels.

Each is a *claim* until ``proofs/`` has derived it from :mod:`theorycheck.symbolic.model`; numerical code is
compiled from these (:mod:`theorycheck.symbolic.theory_forms`, :mod:`theorycheck.symbolic.forms`), never re-typed.
The flows they are about, and the symbols they are written in, are :mod:`theorycheck.symbolic.closed_forms`.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from theorycheck.symbolic.closed_forms import (  # the symbols the closed forms are written in
    I,
    L_sym,
    N,
    N_bar,
    alpha,
    alpha_j,
    lnN,
    theta_j,
    u_j,
    z_1st,
    z_2nd,
    z_j,
    z_k,
    z_min,
    z_norm,
)
from theorycheck.symbolic.model import rho, tau


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



def l2_reduced_log_summand() -> sp.Expr:
    """ln of term j of N(τ, I)² (C4's reduction), for a log-space sum."""
    return sp.expand_log(sp.log(l2_reduced_summand()))

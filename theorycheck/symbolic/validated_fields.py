"""The symbolic layer, part 3: explicit d-dimensional systems for validated (ball-arithmetic) integration.

Each system is (time symbol, state symbols, parameter symbols, field expressions), built from the
coordinate forms of :mod:`closed_forms` by substitution (never re-typed), for a given dimension d.
:func:`theorycheck.symbolic.compiler.arb_system` compiles them.

New here (derived, checked by ``theorycheck prove``, theorem V in proofs/validated.py):

- the **ratio reduction** of balanced ℓ2-SAM at depth L ≥ 3: with r_j = 1 − û_j/u_j
  (= ρ z_j u_j^{L−2}/N) and the clock dσ = (N/ρ) dτ, the flow closes on r alone:
  dr_j/dσ = r_j [(L−2) r_j (1−r_j)^{L−1} − (L−1) Σ_k p_k r_k (1−r_k)^{L−1}], with
  p_k = w_k/Σ_m w_m, w_k = z_k^{−2/(L−2)} r_k^{(2L−2)/(L−2)} (the share of coordinate k in N²).
  From u = α·1 it starts on the ray r_j(0) = c z_j, c = ρ/(α √L ‖z‖₂).
- its **blow-up** at the degenerate equilibrium r = 1 (even L: L − 1 odd): with
  r = 1 + R ω, |ω| = 1, λ = ln R and the clock dς = R^{L−2} dσ, the field is regular at R = 0:
  dλ/dς = ⟨ω, G⟩, dω/dς = G − ⟨ω, G⟩ ω, G_j = r_j [−(L−2) r_j ω_j^{L−1} + (L−1) Σ_k p_k r_k ω_k^{L−1}].
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE


def _d(d: int) -> int:
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"the dimension must be an integer ≥ 1, got {d!r}")
    return int(d)


def data(d: int) -> tuple:
    """The data symbols z_1 … z_d (one example)."""
    return tuple(sp.Symbol(f"z{j + 1}", positive=True) for j in range(_d(d)))


@lru_cache(maxsize=64)
def balanced_system(L: int, optimizer: str, d: int) -> tuple:
    """(τ, (u_1 … u_d), (z_1 … z_d, ρ), fields): the balanced rescaled flow du_j/dτ = z_j û_j^{L−1}
    (:func:`closed_forms.balanced_field`) with N = sqrt(Σ_j :func:`closed_forms.balanced_norm_summand`).
    GD and ℓ2-SAM (ℓ∞-SAM's sign is discontinuous: no Taylor method through it)."""
    if sy.ascent_of(optimizer).discontinuous:
        raise ValueError("validated Taylor integration needs a smooth field: ℓ∞-SAM's sign is not (use its closed forms)")
    L = int(L)
    z = data(d)
    u = tuple(sp.Symbol(f"u{j + 1}", positive=True) for j in range(d))
    N = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(L, optimizer).subs({cf.z_j: z[j], cf.u_j: u[j]}) for j in range(d)]))
    f = cf.balanced_field(L, optimizer)
    fields = tuple(f.subs({cf.z_j: z[j], cf.u_j: u[j], cf.N: N}, simultaneous=True) for j in range(d))
    params = (*z, sy.rho)
    return sy.tau, u, params, fields


#: the moving frame of C4's reduction: I = w + κ τ (κ = 1/(ρ z_min) follows the saddle, where dI/dτ = κ)
w_frame = sp.Symbol("w", real=True)
kappa = sp.Symbol("kappa", nonnegative=True)


@lru_cache(maxsize=64)
def reduced_l2_system(d: int, frame: bool = False) -> tuple:
    """(τ, (I,), (z_1 … z_d, α, ρ), (dI/dτ,)): C4's reduced ODE dI/dτ = 1/N(τ, I)
    (:func:`theory_exprs.l2_reduced_rate`), N² = Σ_j :func:`theory_exprs.l2_reduced_summand`.
    ``frame``: the same ODE for w = I − κ τ (parameters … , κ last): dw/dτ = 1/N(τ, w + κτ) − κ. With
    κ = 1/(ρ z_min) the dominant exponent near the saddle no longer depends on τ, so a ball in τ does
    not widen it (the ball-arithmetic dependency problem)."""
    z = data(d)
    N = sp.sqrt(sp.Add(*[TE.l2_reduced_summand().subs(cf.z_j, z[j]) for j in range(d)]))
    rate = TE.l2_reduced_rate().subs(cf.N, N)
    if not frame:
        return sy.tau, (cf.I,), (*z, cf.alpha, sy.rho), (rate,)
    moved = sp.expand(rate.subs(cf.I, w_frame + kappa * sy.tau))
    moved = rate.subs(cf.I, w_frame + kappa * sy.tau)
    return sy.tau, (w_frame,), (*z, cf.alpha, sy.rho, kappa), (_frame_simplify(moved) - kappa,)


def _frame_simplify(e: sp.Expr) -> sp.Expr:
    """Collect each exponent of the moved field, so that τ appears once per exponential (its factor
    z_j(1 − ρ z_j κ) is 0 for the saddle's coordinates when κ = 1/(ρ z_min))."""
    return e.replace(lambda x: isinstance(x, sp.exp), lambda x: sp.exp(sp.collect(sp.expand(x.args[0]), sy.tau)))


def reduced_l2_norm(d: int, frame: bool = False) -> tuple:
    """((τ, I, z_1 … z_d, α, ρ), N, (θ_1 … θ_d)): N(τ, I) and θ_j(τ, I) = ln u_j of C4's reduction
    (``frame``: in (τ, w, z, α, ρ, κ) with I = w + κτ)."""
    z = data(d)
    N = sp.sqrt(sp.Add(*[TE.l2_reduced_summand().subs(cf.z_j, z[j]) for j in range(d)]))
    theta = tuple(TE.l2_theta().subs(cf.z_j, z[j]) for j in range(d))
    if not frame:
        return (sy.tau, cf.I, *z, cf.alpha, sy.rho), N, theta
    sub = {cf.I: w_frame + kappa * sy.tau}
    return ((sy.tau, w_frame, *z, cf.alpha, sy.rho, kappa), _frame_simplify(N.subs(sub)),
            tuple(sp.collect(sp.expand(th.subs(sub)), sy.tau) for th in theta))


# ---------------------------------------------------------------- the ratio reduction (depth L ≥ 3)
sigma = sp.Symbol("sigma", nonnegative=True)
varsigma = sp.Symbol("varsigma", nonnegative=True)
lam = sp.Symbol("lam", real=True)


def ratio_of_perturbation(L) -> sp.Expr:
    """r_j = 1 − û_j/u_j from :func:`closed_forms.balanced_perturbed_point` (ℓ2-SAM): ρ z_j u_j^{L−2}/N."""
    return sp.simplify(1 - cf.balanced_perturbed_point(L, sy.L2_ASCENT) / cf.u_j)


def ratio_weight(L, r_k, z_k) -> sp.Expr:
    """Coordinate k's weight in the ratio field, w_k ∝ z_k² u_k^{2L−2} (its term of N²) written in r_k:
    z_k^{−2/(L−2)} r_k^{(2L−2)/(L−2)}. ``L`` an integer ≥ 3 or a sympy symbol (the lemma proofs use a
    symbolic L: :mod:`theorycheck.proofs.minor_first.lemma_proofs`)."""
    return z_k ** (sp.S(-2) / (L - 2)) * r_k ** (sp.S(2 * L - 2) / (L - 2))


def ratio_mean_term(L, r_k) -> sp.Expr:
    """Coordinate k's term of the weighted mean in the ratio field: r_k (1 − r_k)^{L−1}."""
    return r_k * (1 - r_k) ** (L - 1)


def ratio_component(L, r_j, mean) -> sp.Expr:
    """dr_j/dσ = r_j [(L−2) r_j (1 − r_j)^{L−1} − (L−1) mean], ``mean`` = Σ_k p_k
    :func:`ratio_mean_term` (r_k) with p_k = w_k / Σ_m w_m (:func:`ratio_weight`): one coordinate j,
    any dimension, any L (integer or symbol)."""
    return r_j * ((L - 2) * r_j * (1 - r_j) ** (L - 1) - (L - 1) * mean)


def ratio_weights(L: int, r: tuple, z: tuple) -> tuple:
    """w_k ∝ z_k² u_k^{2L−2} (coordinate k's term of N²) written in r: z_k^{−2/(L−2)} r_k^{(2L−2)/(L−2)}."""
    L = int(L)
    return tuple(ratio_weight(L, rk, zk) for rk, zk in zip(r, z))


def ratio_field(L: int, r: tuple, z: tuple) -> tuple:
    """dr_j/dσ of the ratio reduction (module docstring), for the given r and z symbols:
    :func:`ratio_component` with the mean of :func:`ratio_mean_term` under the weights :func:`ratio_weight`."""
    L = int(L)
    w = ratio_weights(L, r, z)
    W = sp.Add(*w)
    mean = sp.Add(*[wk / W * ratio_mean_term(L, rk) for wk, rk in zip(w, r)])
    return tuple(ratio_component(L, rj, mean) for rj in r)


@lru_cache(maxsize=32)
def ratio_system(L: int, d: int) -> tuple:
    """(σ, (r_1 … r_d), (z_1 … z_d), fields): the ratio reduction of balanced ℓ2-SAM at depth L ≥ 3."""
    if int(L) < 3:
        raise ValueError("the ratio reduction needs L ≥ 3 (L = 2: r_j = ρ z_j/N, use C4's reduction)")
    z = data(d)
    r = tuple(sp.Symbol(f"r{j + 1}", positive=True) for j in range(d))
    return sigma, r, z, ratio_field(L, r, z)


def blowup_mean_term(L, r_k, omega_k) -> sp.Expr:
    """Coordinate k's term of the blown-up mean: r_k ω_k^{L−1} (:func:`ratio_mean_term` at r_k = 1 + R ω_k is
    −R^{L−1} times it for even L)."""
    return r_k * omega_k ** (L - 1)


def blowup_component(L, r_j, omega_j, mean) -> sp.Expr:
    """G_j = r_j [−(L−2) r_j ω_j^{L−1} + (L−1) mean], ``mean`` = Σ_k p_k :func:`blowup_mean_term`: one
    coordinate j of the blown-up field, any dimension, any L (integer or symbol)."""
    return r_j * (-(L - 2) * r_j * omega_j ** (L - 1) + (L - 1) * mean)


def blowup_projected(G_j, omega_j, dot) -> sp.Expr:
    """dω_j/dς = G_j − ⟨ω, G⟩ ω_j (``dot`` = ⟨ω, G⟩ = dλ/dς): the blown-up flow on the sphere |ω| = 1."""
    return G_j - dot * omega_j


def blowup_G(L: int, R, omega: tuple, z: tuple) -> tuple:
    """G_j(R, ω) with r = 1 + R ω: the ratio field at r divided by R^{L−1} (even L), written without R
    in a denominator (regular at R = 0): :func:`blowup_component` with the mean of :func:`blowup_mean_term`."""
    L = int(L)
    if L % 2:
        raise ValueError("the blow-up is for even L (L − 1 odd)")
    r = tuple(1 + R * w for w in omega)
    wts = ratio_weights(L, r, z)
    W = sp.Add(*wts)
    mean = sp.Add(*[wk / W * blowup_mean_term(L, rk, ok) for wk, rk, ok in zip(wts, r, omega)])
    return tuple(blowup_component(L, rj, oj, mean) for rj, oj in zip(r, omega))


@lru_cache(maxsize=32)
def ratio_blowup_system(L: int, d: int) -> tuple:
    """(ς, (λ, ω_1 … ω_d), (z_1 … z_d), fields): the blow-up of the ratio reduction at r = 1 (even L ≥ 4),
    R = e^λ: dλ/dς = ⟨ω, G⟩, dω/dς = G − ⟨ω, G⟩ ω."""
    if int(L) < 4 or int(L) % 2:
        raise ValueError("the blow-up at r = 1 is for even L ≥ 4")
    z = data(d)
    om = tuple(sp.Symbol(f"omega{j + 1}", real=True) for j in range(d))
    G = blowup_G(L, sp.exp(lam), om, z)
    dot = sp.Add(*[o * g for o, g in zip(om, G)])
    return varsigma, (lam, *om), z, (dot, *[blowup_projected(g, o, dot) for g, o in zip(G, om)])


def reduced_l2_summands(d: int, frame: bool = False) -> tuple:
    """((τ, I or w, z_1 … z_d, α, ρ[, κ]), (term j of N²)_j): :func:`theory_exprs.l2_reduced_summand` per
    coordinate, so that N² and the part N_S² carried by any set S of coordinates are sums of them."""
    z = data(d)
    terms = [TE.l2_reduced_summand().subs(cf.z_j, z[j]) for j in range(d)]
    if not frame:
        return (sy.tau, cf.I, *z, cf.alpha, sy.rho), tuple(terms)
    sub = {cf.I: w_frame + kappa * sy.tau}
    return (sy.tau, w_frame, *z, cf.alpha, sy.rho, kappa), tuple(_frame_simplify(t.subs(sub)) for t in terms)


def l2_persisting_levels() -> tuple:
    """((z_min, z_max, ρ), (collapse level, growth level, subset-growth level)) of ℓ2-SAM, L = 2 (C5 and
    proofs/minor_first/persisting.py): N < ρ z_min ⇒ collapse; N ≥ ρ z_max ⇒ growth; N_S > ρ max_S z ⇒ growth, for any
    set S of coordinates (N_S² = Σ_{j∈S} term j of N²); with S the coordinates of z_min the level is ρ z_min."""
    return (cf.z_min, cf.z_1st, sy.rho), (TE.l2_collapse_certificate(), TE.l2_no_collapse_certificate(),
                                          TE.l2_collapse_certificate())


@lru_cache(maxsize=32)
def balanced_shifted_system(L: int, d: int) -> tuple:
    """(τ, (v_1 … v_d), (z_1 … z_d, α, ρ), fields): :func:`balanced_system` (ℓ2-SAM) in v_j = u_j − α, so that the
    uniform start u = α·1 is v = 0 exactly for every α (an interval α is then a parameter carried by the
    validated integrator, correlated with every coordinate, instead of d independent initial intervals)."""
    t, u, params, f = balanced_system(int(L), sy.L2_ASCENT, d)
    v = tuple(sp.Symbol(f"v{j + 1}", real=True) for j in range(d))
    sub = {u[j]: cf.alpha + v[j] for j in range(d)}
    return t, v, (*params[:d], cf.alpha, params[d]), tuple(e.xreplace(sub) for e in f)


def balanced_forms(L: int, d: int) -> tuple:
    """((u_1 … u_d), (z_1 … z_d, ρ), (r_1 … r_d)): the perturbation ratios r_j = 1 − û_j/u_j =
    ρ z_j u_j^{L−2}/N of the balanced ℓ2-SAM flow (:func:`ratio_of_perturbation`, with N from
    :func:`closed_forms.balanced_norm_summand`): every r_j > 1 is the even-L collapse lemma's set."""
    z = data(d)
    u = tuple(sp.Symbol(f"u{j + 1}", positive=True) for j in range(d))
    N = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(L).subs({cf.z_j: z[j], cf.u_j: u[j]}) for j in range(d)]))
    r = ratio_of_perturbation(L)
    return u, (*z, sy.rho), tuple(r.subs({cf.z_j: z[j], cf.u_j: u[j], cf.N: N}, simultaneous=True) for j in range(d))

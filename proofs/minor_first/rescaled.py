"""Lemma R (rescaled flow) and Lemma B (balanced reduction) of THEORY.md, "Rescaled flows".

R: with one example, ∇_{w_k} Lo = ℓ'(m) z ⊙ Π_{m≠k} w_m; −ℓ' > 0; ε depends on the
gradient only through its direction, so ε(∇Lo) = ε(g) with g_k = −z ⊙ Π_{m≠k} w_m; hence
the SAM flow is −ℓ'(m̂) times ``dw_k/dτ = z ⊙ Π_{m≠k} ŵ_m``.
B: on balanced points (w_k = u) the rescaled field is the same for every layer (the flow
stays balanced) and equals THEORY.md's GD / ℓ2-SAM / ℓ∞-SAM formulas.
"""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, refuted, verified

DEPTHS = (1, 2, 3, 4)


def _gradient_steps():
    for L in DEPTHS:
        W = sy.layer_symbols(L, 2)
        z = sy.data_symbols(1, 2)
        m = sy.margins(W, z)[0]
        P = sy.product_of_others(W)
        rhs = sp.Matrix(L, 2, lambda k, j: sy.loss_derivative("logistic").subs(sy.s, m) * z[j] * P[k, j])
        yield Identity(f"∇_w Lo = ℓ'(m) z ⊙ Π_(m≠k) w_m  (one example, L = {L}, d = 2, logistic)",
                       sy.gradient(sy.empirical_loss(W, z), W), rhs)
    for n, L in ((2, 2), (3, 3)):
        W = sy.layer_symbols(L, 2)
        Z = sy.data_symbols(n, 2)
        G = sy.loss_gradient_factor(Z, W)
        P = sy.product_of_others(W)
        yield Identity(f"∇_w Lo = G ⊙ Π_(m≠k) w_m, G = (1/n) Σ_i ℓ'(m_i) z_i  (n = {n}, L = {L}, d = 2): "
                       "the coordinate form compiled for numerics",
                       sy.gradient(sy.empirical_loss(W, Z), W), sp.Matrix(L, 2, lambda k, j: G[j] * P[k, j]))
    Gs, w, g = sy.layer_gradient_coordinate(3)
    yield Identity("layer_gradient_coordinate(L = 3) is G·∂β/∂w_k with β = w_1 w_2 w_3",
                   sp.Matrix(g), sp.Matrix([Gs * w[1] * w[2], Gs * w[0] * w[2], Gs * w[0] * w[1]]))


def _loss_sign(loss: str):
    def check():
        e = -sy.loss_derivative(loss)
        if e.is_positive:
            return verified(f"−ℓ'(s) = {sp.simplify(e)} is positive for every real s (sympy assumptions)")
        return refuted(f"sympy cannot show −ℓ'(s) = {e} > 0", {"loss": loss})
    return check


def _scale_invariance():
    c = sp.Symbol("c", positive=True)
    g = sy.layer_symbols(2, 2, prefix="g")
    for opt in ("sam-l2", "sam-linf"):
        yield Identity(f"ε(c·g) = ε(g) for every c > 0 ({opt}): the scalar −ℓ'(m) cancels",
                       sy.perturbation(c * g, opt), sy.perturbation(g, opt))
        yield Identity(f"ε(−c·g) = −ε(g) for every c > 0 ({opt}): so ε(∇Lo) = ε(−z⊙P) as ℓ' < 0",
                       sy.perturbation(-c * g, opt), -sy.perturbation(g, opt))


def _flow_steps():
    cases = [(L, loss) for L in (1, 2) for loss in sy.LOSSES] + [(3, "exponential")]
    for L, loss in cases:
        for opt in sy.OPTIMIZERS:
            W = sy.layer_symbols(L, 2)
            z = sy.data_symbols(1, 2)
            P = sy.product_of_others(W)
            eps = sy.perturbation(sp.Matrix(L, 2, lambda k, j: -z[j] * P[k, j]), opt)
            m_hat = sy.margins(W + eps, z)[0]
            speed = -sy.loss_derivative(loss).subs(sy.s, m_hat)
            yield Identity(f"dw/dt = −ℓ'(m̂) · (z ⊙ Π_(m≠k) ŵ_m)  ({opt}, L = {L}, d = 2, {loss})",
                           sy.flow(W, z, opt, loss), speed * sy.rescaled_flow(W, z, opt))


def build_R():
    yield from _gradient_steps()
    for loss in sy.LOSSES:
        yield Fact(f"−ℓ'(s) > 0 ({loss}): dτ = −ℓ'(m̂) dt is a valid time change", _loss_sign(loss))
    yield from _scale_invariance()
    yield from _flow_steps()


THEOREM_R = Theorem(
    key="R",
    title="Rescaled flow (one example)",
    statement="dτ = −ℓ'(m̂) dt turns the SAM flow into dw_k/dτ = z ⊙ Π_(m≠k) ŵ_m, ŵ = w + ε(g), "
              "g_k = −z ⊙ Π_(m≠k) w_m.",
    build=build_R,
)


def build_B():
    for L in DEPTHS:
        for d in (2, 3):
            u = sp.Matrix(1, d, lambda _, j: sp.Symbol(f"u{j + 1}", real=True))
            z = sy.data_symbols(1, d)
            for opt in sy.OPTIMIZERS:
                F = sy.balanced_rescaled_flow(u, z, L, opt)
                if L > 1:
                    yield Identity(f"balanced points stay balanced: every layer has the same field ({opt}, L = {L}, d = {d})",
                                   F[1:, :], sp.Matrix.vstack(*[F[0, :]] * (L - 1)))
                N = sp.sqrt(sp.Add(*[cf.balanced_norm_summand(L).subs({cf.z_j: z[j], cf.u_j: u[j]}) for j in range(d)]))
                stated = sp.Matrix(1, d, lambda _, j: cf.balanced_field(L, opt).subs(
                    {cf.z_j: z[j], cf.u_j: u[j], cf.N: N}, simultaneous=True))
                yield Identity(f"du/dτ = z ⊙ û^(L−1) with THEORY.md's û{' and N' if opt == 'sam-l2' else ''} "
                               f"({opt}, L = {L}, d = {d})", F[0, :], stated)
    for L in DEPTHS:
        zp, up = sp.Symbol("z", positive=True), sp.Symbol("u", positive=True)
        yield Identity(f"ℓ∞-SAM, z > 0, u > 0: du/dτ = z (u − ρ)^(L−1)  (L = {L})",
                       cf.balanced_field(L, "sam-linf").subs({cf.z_j: zp, cf.u_j: up}),
                       cf.balanced_field_linf_positive(L).subs({cf.z_j: zp, cf.u_j: up}))


THEOREM_B = Theorem(
    key="B",
    title="Balanced reduction (one example)",
    statement="w_k = u for all k is preserved; GD du/dτ = z ⊙ u^(L−1); ℓ2-SAM û = u − ρ z ⊙ u^(L−1)/N, "
              "N = sqrt(L Σ z_j² u_j^(2L−2)); ℓ∞-SAM (z, u > 0) du/dτ = z ⊙ (u − ρ)^(L−1).",
    build=build_B,
)

"""C1 (L = 1): GD, ℓ∞-SAM and ℓ2-SAM converge in direction to the ℓ2 max-margin
classifier, z/‖z‖ for one example.

Derivation: with L = 1, Π_(m≠k) ŵ_m is the empty product, so the rescaled field is z
whatever ε is; w(τ) = α + zτ; τ(t) → ∞; the direction tends to z/‖z‖, which is the ℓ2
max-margin direction (KKT)."""

from __future__ import annotations

import sympy as sp

from theorycheck import closed_forms as cf
from theorycheck import symbolic as sy

from ._core import Fact, Identity, Theorem, refuted, register, verified


def _limit_direction():
    z1, z2 = sp.symbols("z1 z2", positive=True)
    a1, a2 = sp.symbols("a1 a2", real=True)
    T = sp.Symbol("T", positive=True)
    w1, w2 = a1 + z1 * T, a2 + z2 * T
    lim = [sp.limit(w / sp.sqrt(w1**2 + w2**2), T, sp.oo) for w in (w1, w2)]
    want = [z1 / sp.sqrt(z1**2 + z2**2), z2 / sp.sqrt(z1**2 + z2**2)]
    if all(sp.simplify(a - b) == 0 for a, b in zip(lim, want)):
        return verified("lim_(τ→∞) (α + zτ)/‖α + zτ‖ = z/‖z‖ (sympy limit, d = 2, any α, z > 0)")
    return refuted(f"limit is {lim}", {"limit": str(lim)})


def _tau_unbounded():
    for loss in sy.LOSSES:
        e = -sy.loss_derivative(loss)
        dom = sp.calculus.util.continuous_domain(e, sy.s, sp.S.Reals)
        if not (e.is_positive and dom == sp.S.Reals):
            return refuted(f"−ℓ'(s) = {e} is not positive and continuous on ℝ", {"loss": loss})
    return verified("−ℓ' is positive and continuous on ℝ for both losses, so dτ/dt is bounded below while "
                    "the margin is bounded: τ(t) → ∞ as t → ∞ (else m̂ stays bounded, a contradiction)")


def _max_margin():
    z = sy.data_symbols(1, 3)
    b = sp.Matrix(1, 3, lambda _, j: sp.Symbol(f"b{j + 1}", real=True))
    lam = sp.Symbol("lambda", positive=True)
    lagr = (b * b.T)[0] / 2 - lam * ((b * z.T)[0] - 1)
    sol = sp.solve([sp.diff(lagr, bj) for bj in b] + [(b * z.T)[0] - 1], [*b, lam], dict=True)
    if len(sol) != 1:
        return refuted(f"KKT system has {len(sol)} solutions", {})
    beta = sp.Matrix(1, 3, lambda _, j: sol[0][b[j]])
    norm2 = (z * z.T)[0]
    if all(sp.simplify(beta[j] - z[j] / norm2) == 0 for j in range(3)):
        return verified("argmin ‖β‖₂ s.t. <β, z> ≥ 1 is z/‖z‖² (KKT, d = 3): direction z/‖z‖")
    return refuted(f"KKT solution {beta}", {})


def build():
    W = sy.layer_symbols(1, 3)
    z = sy.data_symbols(1, 3)
    for opt in sy.OPTIMIZERS:
        yield Identity(f"L = 1: the rescaled field is z whatever ε is ({opt}, d = 3)",
                       sy.rescaled_flow(W, z, opt), z)
    yield Identity("w_j(τ) = α_j + z_j τ solves dw_j/dτ = z_j", sp.diff(cf.l1_solution(), sy.tau), cf.z_j)
    yield Identity("w_j(0) = α_j", cf.l1_solution().subs(sy.tau, 0), cf.alpha_j)
    yield Fact("rescaled time is unbounded: τ(t) → ∞", _tau_unbounded)
    yield Fact("the direction of w(τ) tends to z/‖z‖", _limit_direction)
    yield Fact("z/‖z‖ is the ℓ2 max-margin direction for one example", _max_margin)


register(Theorem(
    key="C1",
    title="L = 1: every flow converges to the ℓ2 max-margin direction",
    statement="For L = 1, GD, ℓ∞-SAM and ℓ2-SAM converge in direction to the ℓ2 max-margin "
              "classifier (one example: z/‖z‖).",
    build=build,
))

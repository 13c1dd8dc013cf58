"""C6 (GD, L = 2): j†(τ) = argmax z from the start (uniform init), limit e_(argmax z),
the ℓ1 max-margin direction for one example."""

from __future__ import annotations

import sympy as sp

from theorycheck import closed_forms as cf
from theorycheck import symbolic as sy

from ._core import Fact, Identity, Theorem, incomplete, refuted, register, verified


def _order_from_start():
    beta = cf.gd_l2_solution().subs(cf.alpha_j, cf.alpha) ** 2
    dz = sp.diff(beta, cf.z_j)
    tau_pos = sp.Symbol("tau", positive=True)
    if sp.simplify(dz.subs(sy.tau, tau_pos)).is_positive:
        return verified("β_j(τ) = α² e^(2 z_j τ) is strictly increasing in z_j for every τ > 0, so "
                        "j†(τ) = argmax z for all τ > 0 (when the argmax is unique)")
    return refuted(f"∂β_j/∂z_j = {dz} not shown positive", {})


def _ties():
    # z = (1, 1): β_1 = β_2 for all τ, so the limit direction is (1, 1)/√2, not a basis vector
    z = [1, 1]
    beta = [cf.gd_l2_solution().subs({cf.alpha_j: 1, cf.z_j: zj}) ** 2 for zj in z]
    T = sp.Symbol("T", positive=True)
    d = [sp.limit(b.subs(sy.tau, T) / sp.sqrt(sum(x.subs(sy.tau, T) ** 2 for x in beta)), T, sp.oo) for b in beta]
    if d == [1 / sp.sqrt(2), 1 / sp.sqrt(2)]:
        return incomplete("with ties in max z the limit is not e_(argmax z): z = (1, 1), α = 1 gives direction "
                       "(1, 1)/√2. Holds when argmax z is unique; with ties the limit spreads over the tied "
                       "coordinates ∝ α_j² (here equally)",
                       {"z": z, "alpha": 1.0, "limit_direction": [float(x) for x in d]})
    return verified(f"limit direction at the tie is {d}")


def _l1_margin():
    z1, z2, z3 = sp.symbols("z1 z2 z3", positive=True)
    # with z1 the largest entry: β = e_1/z1 has margin 1 and ‖β‖₁ = 1/z1 = 1/‖z‖_∞, the Hölder bound
    beta = sp.Matrix([1 / z1, 0, 0])
    margin = (beta.T * sp.Matrix([z1, z2, z3]))[0]
    if sp.simplify(margin - 1) == 0:
        return verified("<β, z> ≤ ‖β‖₁ ‖z‖_∞ (Hölder), with equality at β = e_(argmax z)/max z: the ℓ1 max-margin "
                        "solution for one example z > 0 is e_(argmax z) (unique iff the argmax is)")
    return refuted("margin check failed", {})


def build():
    yield Identity("GD, L = 2: u_j = α_j e^(z_j τ) solves du_j/dτ = z_j u_j",
                   sp.diff(cf.gd_l2_solution(), sy.tau),
                   cf.balanced_field(2, "gd").subs(cf.u_j, cf.gd_l2_solution()))
    yield Identity("u_j(0) = α_j", cf.gd_l2_solution().subs(sy.tau, 0), cf.alpha_j)
    yield Fact("uniform init: j†(τ) = argmax z from the start", _order_from_start)
    yield Fact("the limit is e_(argmax z), the ℓ1 max-margin direction", _l1_margin)
    yield Fact("ties in max z", _ties)


register(Theorem(
    key="C6",
    title="GD, L = 2: no sequential amplification",
    statement="GD, L = 2, uniform init: j†(t) = argmax z from the start; limit e_(argmax z) (ℓ1 max margin).",
    build=build,
))

"""C6 (GD, L = 2): j†(τ) = argmax z from the start (uniform init), limit e_(argmax z),
the ℓ1 max-margin direction for one example."""

from __future__ import annotations

import functools

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE
from theorycheck.symbolic.theorem import Fact, Identity, Theorem, incomplete, refuted, verified


def _order_from_start():
    beta = TE.gd_l2_solution().subs(cf.alpha_j, cf.alpha) ** 2
    dz = sp.diff(beta, cf.z_j)
    tau_pos = sp.Symbol("tau", positive=True)
    if sp.simplify(dz.subs(sy.tau, tau_pos)).is_positive:
        return verified("β_j(τ) = α² e^(2 z_j τ) is strictly increasing in z_j for every τ > 0, so "
                        "j†(τ) = argmax z for all τ > 0 (when the argmax is unique)")
    return refuted(f"∂β_j/∂z_j = {dz} not shown positive", {})


def _ties():
    # z = (1, 1): β_1 = β_2 for all τ, so the limit direction is (1, 1)/√2, not a basis vector
    z = [1, 1]
    beta = [TE.gd_l2_solution().subs({cf.alpha_j: 1, cf.z_j: zj}) ** 2 for zj in z]
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
                   sp.diff(TE.gd_l2_solution(), sy.tau),
                   cf.balanced_field(2, "gd").subs(cf.u_j, TE.gd_l2_solution()))
    yield Identity("u_j(0) = α_j", TE.gd_l2_solution().subs(sy.tau, 0), cf.alpha_j)
    yield Fact("uniform init: j†(τ) = argmax z from the start", _order_from_start)
    yield Fact("the limit is e_(argmax z), the ℓ1 max-margin direction", _l1_margin)
    yield Fact("ties in max z", _ties)


THEOREM = Theorem(
    key="C6",
    title="GD, L = 2: no sequential amplification",
    statement="GD, L = 2, uniform init: j†(t) = argmax z from the start; limit e_(argmax z) (ℓ1 max margin).",
    build=build,
)


# ---------------------------------------------------------------------------- claims
def _inputs():
    from hypothesis import strategies as st

    from theorycheck.claims import strategies as tcs

    @st.composite
    def inputs(draw):
        z = draw(tcs.single_examples(d=(1, 5), min_value=0.2, max_value=5.0, ties=True))
        return {"z": z.tolist(), "alpha": draw(tcs.init_scales(1e-3, 10.0))}

    return inputs()


def _gap(z) -> float:
    import numpy as np

    zs = np.unique(z)
    return float(np.min(np.diff(zs))) if zs.size > 1 else 1.0


def _observe(x):
    """The GD flow to τ = 20/gap (capped at 1e5) and whether that horizon was affordable."""
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.setting import Setting

    z = np.array(x["z"])
    gap = _gap(z)
    tr = num.solve(Setting.from_z(z, depth=2, optimizer="gd", alpha=x["alpha"]), min(20.0 / gap, 1e5))
    return tr, 20.0 / gap <= 1e5


def check(x, refined: bool = False):
    """C6.gd (``refined``: C6.gd-refined, the limit spread over tied maximisers) on one input."""
    import numpy as np
    from theorycheck.proofs.minor_first import _numerics as num

    from theorycheck.claims.claim import Outcome

    z = np.array(x["z"])
    gap = _gap(z)
    tr, ok = _observe(x)
    if not ok:  # the direction separates like e^(−gap·τ): a tiny gap needs τ ≫ the budget
        return Outcome(None, detail={"stopped_because": f"z gap {gap:.3g} needs τ ≈ 20/gap = {20 / gap:.3g} "
                                                        "> the budget 1e5"})
    if not tr.successful:
        return Outcome(None, detail={"stopped_because": tr.stopped_because})
    sw = [s_ for s_ in num.switches(tr) if z[s_[1] - 1] != z[s_[2] - 1]]
    first = num.index_at(tr, min(1e-5 / gap, tr.t_end))  # the z-gap separates the leaders beyond the tie tolerance
    d = num.direction(tr.log_abs_beta[-1], tr.sign_beta[-1])
    if refined:
        want = (z == z.max()).astype(float)
        want /= np.linalg.norm(want)
    else:
        want = np.zeros(z.size)
        want[int(np.argmax(z))] = 1.0
    dev = float(np.linalg.norm(d - want))
    ok = not sw and z[first - 1] == z.max() and dev <= 1e-6
    return Outcome(ok, dev, {"switches": [list(s_) for s_ in sw], "first_index": first, "direction": d.tolist()})


def _c6_claims():
    from theorycheck.claims.claim import Claim

    tie = {"z": [1.0, 2.0, 2.0], "alpha": 0.5}
    return [Claim(
        key="C6.gd",
        statement="GD, L = 2, uniform α: j† = argmax z from the start, no switch, limit direction e_(argmax z)",
        inputs=_inputs(), check=functools.partial(check, refined=False), pinned=[tie],
        tolerance="exact switches/index; ‖direction(T) − e_(argmax z)‖ ≤ 1e-6 at T = 20/gap",
        refined=Claim(
            key="C6.gd-refined",
            statement="(refined by theorycheck) with ties at the top the limit is ∝ 1 over the tied maximisers",
            inputs=_inputs(), check=functools.partial(check, refined=True), pinned=[tie, {"z": [1.5], "alpha": 0.2}],
            tolerance="exact switches/index; ‖direction(T) − prediction‖ ≤ 1e-6"),
    )]


@functools.cache
def claims() -> tuple:
    """This module's claims, built once; the pack's manifest (``theorycheck.proofs.claims``) lists them."""
    return (*_c6_claims(),)

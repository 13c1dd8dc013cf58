"""C4's reduced ODE and the forms a proved map evaluates on it, compiled for ball arithmetic for one exact
example (z, ρ rationals: the balls contain them exactly), and the mean-value enclosures of N and of N − N̄ on a
Lohner set of (I, α) that keep I and α correlated."""


from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy as sp

__all__ = ["L2Forms", "l2_forms", "l2_forms_exact", "exact_ball", "meet", "norm_on_set", "gap_on_set"]


# ---------------------------------------------------------------- the compiled forms (ball arithmetic)
def _arb(args, exprs):
    """forms.arb_function with the arguments renamed to plain identifiers (``||z||_2`` is not one)."""
    from theorycheck.symbolic import forms as C

    plain = [sp.Symbol(f"_x{i}", **a.assumptions0) for i, a in enumerate(args)]
    rename = dict(zip(args, plain))
    return C.arb_function(plain, [sp.sympify(e).xreplace(rename) for e in exprs])


def exact_ball(q: Fraction):
    from theorycheck.arith.exact import Exact

    return Exact(q).ball()


class L2Forms:
    """C4's reduced ODE and the forms the map evaluates, compiled for ball arithmetic, for one exact z, ρ
    (rationals: the balls contain them exactly)."""

    def __init__(self, z: tuple, rho: Fraction):
        from theorycheck.symbolic import closed_forms as cf
        from theorycheck.symbolic import forms as C
        from theorycheck.symbolic import model as sy
        from theorycheck.symbolic import theory_exprs as TE
        from theorycheck.symbolic import validated_fields as S

        d = len(z)
        t, x, p, f = S.reduced_l2_system(d)
        self.system = C.arb_system(f"reduced-l2-{d}", t, x, p, f)
        args, N, _theta = S.reduced_l2_norm(d)
        self.N = C.arb_function(args, [N])
        # dN/dτ along the flow: ∂N/∂τ + ∂N/∂I · dI/dτ (C4's reduced rate)
        rate = TE.l2_reduced_rate().subs(cf.N, N)
        dN = sp.diff(N, sy.tau) + sp.diff(N, cf.I) * rate
        self.dN = C.arb_function(args, [dN])
        # d²N/dτ² along the flow: the mean-value form of dN/dτ over a step from its value at the step's start
        self.ddN = C.arb_function(args, [sp.diff(dN, sy.tau) + sp.diff(dN, cf.I) * rate])
        # ∂N/∂I and ∂N/∂α: the mean-value form of N on a Lohner set c + A r keeps I and α correlated
        self.gradN = C.arb_function(args, [sp.diff(N, cf.I), sp.diff(N, cf.alpha)])
        self.N0 = _arb((cf.alpha, cf.z_norm), [TE.initial_norm()])
        self.level = _arb((cf.z_j, cf.z_k, sy.rho), [TE.l2_switch_level()])
        self.collapse_level = _arb((cf.z_min, sy.rho), [TE.l2_collapse_certificate()])
        self.growth_level = _arb((cf.z_1st, sy.rho), [TE.l2_no_collapse_certificate()])
        c, n0 = sp.Symbol("c", positive=True), sp.Symbol("N0", positive=True)
        self.zero_time = _arb((c, n0, sy.rho), [TE.l2_collapse_time_bound().subs({cf.z_min: c, cf.N: n0})])
        self.zq, self.rhoq = tuple(Fraction(v) for v in z), Fraction(rho)
        self.z = [float(v) for v in self.zq]  # heuristics only (cuts, messages)
        self.rho = float(self.rhoq)
        self.values = sorted(set(self.zq))
        #: cell i (0-based, values[i]) -> the 1-based index j† takes there (the smallest index among ties)
        self.index_of_cell = [self.zq.index(v) + 1 for v in self.values]

    def critical_values(self) -> list[Fraction]:
        """v with N0 = ρ v where the answer may change: z_min, z_max and v_i + v_{i+1} (the switch levels)."""
        v = self.values
        return [v[0], v[-1]] + [a + b for a, b in zip(v, v[1:])]

    def balls(self):
        """(z, ρ, switch levels) as balls of the exact inputs at the current precision."""
        zb = [exact_ball(v) for v in self.zq]
        rb = exact_ball(self.rhoq)
        levels = [self.level(exact_ball(a), exact_ball(b), rb)[0] for a, b in zip(self.values, self.values[1:])]
        return zb, rb, levels

    def cells(self, x, levels) -> list[int]:
        """The cells (0-based) a ball of N̄ meets."""
        lo = 0
        while lo < len(levels) and x > levels[lo]:
            lo += 1
        hi = lo
        while hi < len(levels) and not (x < levels[hi]):
            hi += 1
        return list(range(lo, hi + 1))


@lru_cache(maxsize=16)
def l2_forms_exact(z: tuple, rho: Fraction) -> L2Forms:
    return L2Forms(z, rho)


def l2_forms(z, rho) -> L2Forms:
    """The compiled forms of one example (z, ρ read exactly by :mod:`theorycheck.arith.exact`: a float is its binary
    value), cached."""
    from theorycheck.arith.exact import exact, exact_vector

    zs = exact_vector(z, "z") if not isinstance(z, (int, float, Fraction)) else (exact(z, "z"),)
    return l2_forms_exact(tuple(e.value for e in zs), exact(rho, "rho").value)


def meet(a, b):
    """A ball containing the intersection of two balls that both contain the same set (python-flint's
    ``intersection`` is far from tight); the narrower one when they do not overlap (rounding)."""
    from theorycheck.arith.balls import interval

    lo, hi = max(a.lower(), b.lower()), min(a.upper(), b.upper())
    if not lo <= hi:
        return a if a.rad() < b.rad() else b
    return interval(lo, hi)


def norm_on_set(F: L2Forms, t1, step, zb, a_end, rb):
    """N at the step's end: the narrower of N(box) and the mean-value form N(c) + ∇N(box)·A·R on the
    Lohner set {c + A r : r ∈ R} of (I, α) (the box loses how I depends on α)."""
    box = F.N(t1, step.end[0], *zb, a_end, rb)[0]
    S = step.set_end
    if len(S.c) != 2:
        return box
    n_c = F.N(t1, S.c[0], *zb, S.c[1], rb)[0]
    g = F.gradN(t1, step.end[0], *zb, a_end, rb)
    mv = n_c + sum(((g[0] * S.A[0, j] + g[1] * S.A[1, j]) * S.R[j] for j in range(2)), 0 * n_c)
    return mv if mv.rad() < box.rad() else box


def gap_on_set(F: L2Forms, t1, step, zb, a_end, rb, n_end):
    """N − N̄ = N − τ/I at the step's end, by the mean-value form on the Lohner set of (I, α) (for every α of the
    piece the gap has its sign even when the enclosures of N and of N̄ overlap), or from the two enclosures."""
    box = n_end - t1 / step.end[0]
    S = step.set_end
    if len(S.c) != 2:
        return box
    gap_c = F.N(t1, S.c[0], *zb, S.c[1], rb)[0] - t1 / S.c[0]
    g = F.gradN(t1, step.end[0], *zb, a_end, rb)
    gI = g[0] + t1 / (step.end[0] * step.end[0])  # ∂(N − τ/I)/∂I
    mv = gap_c + sum(((gI * S.A[0, j] + g[1] * S.A[1, j]) * S.R[j] for j in range(2)), 0 * gap_c)
    return meet(mv, box)


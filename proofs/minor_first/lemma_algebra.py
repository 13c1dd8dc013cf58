"""The algebra the first paper's lemma proofs are written in (:mod:`theorycheck.proofs.minor_first.lemma_proofs`,
:mod:`theorycheck.proofs.minor_first.lock_proof`): the symbols of a symbolic depth L and dimension d, the coordinate
functions of the symbolic sums, the small rewrites sympy needs to see a step (one denominator per base, exponents
cancelled, L = 2n + 4 for an even L ≥ 4), the one-coordinate forms of ℓ2-SAM's balanced field in u_j, z_j > 0, and
:class:`LemmaStep`, one step of a proof."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import validated_fields as S
from theorycheck.symbolic.theorem import StepResult

__all__ = ["LemmaStep", "G_", "L_any", "L_even", "R", "at_least_4", "cancel_exponents", "coordinate_field", "d_sym", "is_zero", "j_", "k_", "log_rate_of", "m_", "omega_", "p_", "perturbed_point", "q_", "r_", "ratio_of", "s", "sum_over", "t", "theta_", "tidy", "u", "z", "z_"]


@dataclass(frozen=True)
class LemmaStep:
    """One step of a lemma's proof: a statement and the function that checks it."""

    statement: str
    fn: Callable[[], StepResult]


# ---------------------------------------------------------------- symbols
#: L ≥ 3 (P5, LOCK): an integer symbol; even L ≥ 2 (P3, P4, P6): an even symbol (L − 1 odd)
L_any = sp.Symbol("L", integer=True, positive=True)
L_even = sp.Symbol("L", even=True, positive=True)
d_sym = sp.Symbol("d", integer=True, positive=True)
k_ = sp.Symbol("k", integer=True, positive=True)
m_ = sp.Symbol("m", integer=True, positive=True)
j_ = sp.Symbol("j", integer=True, positive=True)
z_ = sp.Function("z", positive=True)
r_ = sp.Function("r", positive=True)
theta_ = sp.Function("theta", real=True)
q_ = sp.Function("q", real=True)  # θ_k' (the log-rate of coordinate k)
p_ = sp.Function("p", positive=True)  # a weight p_k > 0
omega_ = sp.Function("omega", real=True)
G_ = sp.Function("G", real=True)
u = sp.Symbol("u", positive=True)
z = sp.Symbol("z", positive=True)
t = sp.Symbol("t", positive=True)
s = sp.Symbol("s", nonnegative=True)
R = sp.Symbol("R", positive=True)


def sum_over(expr, d, k=k_):
    """Σ_{k=1}^{d} expr: a symbolic sum for a symbol d, written out for an integer d."""
    out = sp.Sum(expr, (k, 1, d))
    return out.doit() if isinstance(d, int) else out


def tidy(e):
    """Bring every base over one denominator (so that (1 − 1/(1 + s))^{L−1} reads (s/(1 + s))^{L−1})."""
    return sp.powsimp(e.replace(lambda x: x.is_Pow, lambda x: sp.Pow(sp.together(x.base), x.exp)), force=True)


def at_least_4(e, L):
    """``e`` with an even symbol L written L = 2n + 4, n ≥ 0 (so that L − 2 > 0 is known); an integer L as is."""
    n = sp.Symbol("n", integer=True, nonnegative=True)
    return e.subs(L, 2 * n + 4) if isinstance(L, sp.Symbol) else e


def is_zero(e) -> bool:
    return sp.simplify(e) == 0


def cancel_exponents(e):
    """Cancel every exponent (so that u^{(L−2)(2L−2)/(L−2)} reads u^{2L−2})."""
    return e.replace(lambda x: x.is_Pow, lambda x: sp.Pow(x.base, sp.cancel(sp.together(x.exp))))


def coordinate_field(L, field):
    """du_j/dτ (ℓ2-SAM, balanced, one coordinate) with u_j, z_j positive."""
    return field(L, sy.L2_ASCENT).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)


def ratio_of(L):
    """r_j = 1 − û_j/u_j (:func:`systems.ratio_of_perturbation`) with u_j, z_j positive."""
    return S.ratio_of_perturbation(L).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)


def perturbed_point(L):
    return cf.balanced_perturbed_point(L, sy.L2_ASCENT).subs({cf.u_j: u, cf.z_j: z}, simultaneous=True)


def log_rate_of(L, field=cf.balanced_field):
    """θ_j' = (du_j/dτ)/u_j with û_j written as u_j(1 − r_j): z_j u_j^{L−2} (1 − r_j)^{L−1} when the field is
    z_j û_j^{L−1}. Returns (the log-rate in u and a dummy r, the dummy)."""
    rr = sp.Dummy("r")
    f = coordinate_field(L, field).subs(perturbed_point(L), u * (1 - rr))
    return sp.powsimp(sp.expand_power_base(f / u)), rr

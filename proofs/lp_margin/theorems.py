"""Theorems of the pack ``lp-margin`` (``theorycheck prove``): THEORY.md beside this file, step by step."""

from __future__ import annotations

import sympy as sp

from theorycheck.symbolic import regression as R
from theorycheck.symbolic.model import layer_symbols, predictor, product_of_others
from theorycheck.symbolic.theorem import Identity, Theorem

DEPTHS = (2, 3, 4)


# ------------------------------------------------------------------------------- theorems
def _lm1():
    for L in DEPTHS:
        W = layer_symbols(L, 1)
        P = product_of_others(W)
        w = sp.Symbol("w", positive=True)
        eq = {W[k, 0]: w for k in range(L)}
        w0 = sp.Symbol("w0", real=True)
        yield Identity(f"L={L}: with equal layers w the common field −w^(L−1)·g vanishes at w = 0, so w > 0 stays "
                       "positive (unequal layers could cross 0)",
                       (-P[0, 0] * R.g).subs({W[k, 0]: w0 for k in range(L)}).subs(w0, 0), 0)
        yield Identity(f"L={L}: with equal layers all fields are equal (balance is kept): "
                       "d/dt(w_k − w_1) = 0 at w_k = w_1",
                       [(-P[k, 0] * R.g).subs(eq) for k in range(L)], [(-P[0, 0] * R.g).subs(eq)] * L)
        yield Identity(f"L={L}: in u = log w the balanced field is du/dt = {sp.sstr(R.balanced_product_log_field(L))}",
                       R.balanced_product_log_field(L), (-(w ** (L - 1)) * R.g / w).subs(w, sp.exp(R.up)))


def _lm2():
    s_ = sp.Symbol("s", real=True)  # s = Σ_i λ_i z_ij
    for L in DEPTHS:
        w = sp.Symbol("w", positive=True)
        W = layer_symbols(L, 1)
        beta = predictor(W)[0, 0]
        # min ‖w‖² s.t. margins ≥ 1: 2 w_k = s·∂β/∂w_k; at equal layers w: 2w = s w^(L−1) ⇒ s = 2 w^(2−L)
        s_w = sp.solve(sp.Eq(2 * w, s_ * (product_of_others(W)[0, 0]).subs({W[k, 0]: w for k in range(L)})), s_)[0]
        b = beta.subs({W[k, 0]: w for k in range(L)})
        # min Σ β^(2/L): (2/L) β^(2/L − 1) = μ s with μ = λ/(2/L)·… : proportional to s_w with a constant factor L
        yield Identity(f"L={L}: the layer KKT multiplier s = {sp.sstr(s_w)} equals L × the ℓ_(2/L) gradient "
                       "(2/L)β^(2/L−1) at β = w^L (so layer-KKT ⇔ β-KKT on the support, multipliers ×L)",
                       s_w, L * (sp.Rational(2, L) * b ** (sp.Rational(2, L) - 1)))


THEOREMS = (
    Theorem("LM1", "positive balanced start", "From w_k(0) = α·1 (α > 0) gradient flow keeps the layers equal and "
            "positive, so β = w^L ≥ 0: only the orthant β ≥ 0 is reachable.", _lm1),
    Theorem("LM2", "KKT in the layers and in β", "For balanced positive layers, the KKT conditions of min ‖w‖² s.t. "
            "y_i⟨x_i, β(w)⟩ ≥ 1 (Lyu & Li) are those of min ‖β‖_{2/L}^{2/L} on the support of β.", _lm2),
)


def theorems() -> list[Theorem]:
    """The pack's theorems, in THEORY.md's order."""
    return list(THEOREMS)

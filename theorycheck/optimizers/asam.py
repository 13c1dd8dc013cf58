"""ASAM, adaptive SAM (Kwon, Kim, Park & Choi, ICML 2021, arXiv 2102.11600), element-wise: the gradient
at w + ε with ε = ρ T(w)² ∇L / ‖T(w) ∇L‖₂ and T(w) = |w| + η per entry, the norm over all layers jointly.
It is ℓ2-SAM's step in the coordinates w/T(w), so it is invariant under rescaling a weight. Its step
depends on w as well as on ∇L (:attr:`~theorycheck.symbolic.model.Ascent.weighted`). η = 0 (the
registered ``asam``) gives ε = ρ w² ∇L/‖w ⊙ ∇L‖₂, a smooth field wherever w ⊙ ∇L ≠ 0. ``Asam(eta)``
builds the step with the paper's stabiliser η > 0 (register it under a name of its own)."""

from __future__ import annotations

from fractions import Fraction
from functools import cached_property

from theorycheck.optimizers.base import Optimizer


class Asam(Optimizer):
    name = "asam"
    title = "ASAM"
    description = "ASAM (adaptive, element-wise): the gradient at w + ρ T² ∇L/‖T ∇L‖₂, T = |w| + η"
    color = "tab:olive"
    #: not in the default sets of the experiments and property draws (it runs where it is named)
    default_sets = False

    def __init__(self, eta=0, name: str | None = None) -> None:
        eta = Fraction(str(eta)) if isinstance(eta, float) else Fraction(eta)
        if eta < 0:
            raise ValueError(f"eta = {eta}: ASAM's stabiliser η must be ≥ 0")
        self.eta = eta
        if name is not None:
            self.name = name
        if eta:
            self.description = f"ASAM with η = {eta}: the gradient at w + ρ T² ∇L/‖T ∇L‖₂, T = |w| + η"

    @cached_property
    def _ascent(self):
        import sympy as sp

        from theorycheck.symbolic.model import Ascent

        eta = sp.Rational(self.eta.numerator, self.eta.denominator)

        def weight(w):
            return sp.Abs(w) + eta

        def formula(g, w, S, radius):
            return radius * weight(w) ** 2 * g / S

        text = "rho*w**2*g/||w*g||_2" if not eta else f"rho*(|w| + {eta})**2*g/||(|w| + {eta})*g||_2"
        return Ascent(formula, text=text, norm_weight=weight)

    def ascent(self):
        return self._ascent

    def regression_refusal(self, param: str, depth: int) -> str | None:
        return ("ASAM's normalised step is undefined at every interpolator (∇L = 0) and does not vanish near one: "
                "the regression flow has no limit to integrate to (use n-sam or 1-sam)")


ASAM = Asam()

"""1-SAM, unnormalised (Andriushchenko & Flammarion 2022): each example perturbed by its own
gradient, w' = −(1/n) Σ_i ∇ℓ_i(w + ρ∇ℓ_i(w))."""

from __future__ import annotations

from theorycheck.optimizers.base import Optimizer


class OneSam(Optimizer):
    name = "1-sam"
    title = "1-SAM"
    description = "1-SAM (unnormalised, per example): the mean over i of ∇ℓ_i at w + ρ ∇ℓ_i(w)"
    color = "tab:orange"

    def ascent(self):
        from theorycheck.symbolic.model import EXAMPLE_GRADIENT_ASCENT

        return EXAMPLE_GRADIENT_ASCENT

    def regression_refusal(self, param: str, depth: int) -> str | None:
        return None if depth == 2 else f"{self.title} on param={param!r} is derived at depth 2"


ONE_SAM = OneSam()

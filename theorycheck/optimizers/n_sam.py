"""n-SAM, unnormalised (Andriushchenko & Flammarion 2022): w' = −∇L(w + ρ∇L(w))."""

from __future__ import annotations

from theorycheck.optimizers.base import Optimizer


class NSam(Optimizer):
    name = "n-sam"
    title = "n-SAM"
    description = "n-SAM (unnormalised): the gradient at w + ρ ∇L(w)"
    color = "tab:purple"

    def ascent(self):
        from theorycheck.symbolic.model import GRADIENT_ASCENT

        return GRADIENT_ASCENT

    def regression_refusal(self, param: str, depth: int) -> str | None:
        return None if depth == 2 else f"{self.title} on param={param!r} is derived at depth 2"


N_SAM = NSam()

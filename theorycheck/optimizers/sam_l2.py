"""ℓ2-SAM, normalised (the first paper's): w' = −∇L(w + ρ ∇L(w)/‖∇L(w)‖₂), the norm over all
layers jointly. Its field is singular where ∇L = 0."""

from __future__ import annotations

from theorycheck.optimizers.base import Optimizer


class SamL2(Optimizer):
    name = "sam-l2"
    title = "ℓ2-SAM"
    description = "ℓ2-SAM: the gradient at w + ρ ∇L/‖∇L‖₂"
    color = "tab:red"

    def ascent(self):
        from theorycheck.symbolic.model import L2_ASCENT

        return L2_ASCENT

    def regression_refusal(self, param: str, depth: int) -> str | None:
        return ("ℓ2-SAM's normalised step ρ∇L/‖∇L‖ is undefined at every interpolator (∇L = 0) and does not "
                "vanish near one: the regression flow has no limit to integrate to (use n-sam or 1-sam)")


SAM_L2 = SamL2()

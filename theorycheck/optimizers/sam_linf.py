"""ℓ∞-SAM: w' = −∇L(w + ρ sign(∇L(w))). Its field jumps where a gradient entry changes sign:
solvers slide on those surfaces by Filippov's rule (:meth:`Optimizer.sliding`, from the symbolic
layer's ``closed_forms.sliding_weight``)."""

from __future__ import annotations

from theorycheck.optimizers.base import Optimizer


class SamLinf(Optimizer):
    name = "sam-linf"
    title = "ℓ∞-SAM"
    description = "ℓ∞-SAM: the gradient at w + ρ sign(∇L)"
    color = "tab:green"

    def ascent(self):
        from theorycheck.symbolic.model import SIGN_ASCENT

        return SIGN_ASCENT

    def regression_refusal(self, param: str, depth: int) -> str | None:
        return ("ℓ∞-SAM's field is discontinuous on the regression parametrisations and their sliding rule is "
                "not derived: not integrated (use n-sam or 1-sam)")


SAM_LINF = SamLinf()

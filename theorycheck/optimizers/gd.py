"""Gradient descent (its flow): w' = −∇L(w); no ascent step, ρ plays no part."""

from __future__ import annotations

from theorycheck.optimizers.base import Optimizer


class GradientDescent(Optimizer):
    name = "gd"
    title = "GD"
    description = "gradient descent (its flow): w' = -∇L(w)"
    color = "tab:blue"

    def ascent(self):
        from theorycheck.symbolic.model import NO_ASCENT

        return NO_ASCENT

    def regression_refusal(self, param: str, depth: int) -> str | None:
        if param == "uv" and depth != 2:
            return "param='uv' is β = u ⊙ v: depth 2 only"
        if depth < 2:
            return f"param={param!r} needs depth ≥ 2"
        return None


GD = GradientDescent()

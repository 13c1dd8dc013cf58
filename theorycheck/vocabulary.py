"""The tool's vocabulary: optimizers, losses and the argument checks every layer shares.

Plain Python (no numpy, no sympy), so that :class:`~theorycheck.setting.Setting`, the CLI
parser and the symbolic layer take their names from one place and ``import theorycheck``
stays light.
"""

from __future__ import annotations

import math

from theorycheck.errors import SettingError

__all__ = ["OPTIMIZERS", "LOSSES", "OPTIMIZER_DESCRIPTIONS", "LOSS_DESCRIPTIONS", "check_optimizer",
           "check_loss", "check_depth", "check_rho", "counted"]

#: optimizer name -> one line
OPTIMIZER_DESCRIPTIONS: dict[str, str] = {
    "gd": "gradient descent (its flow): w' = -∇L(w)",
    "sam-l2": "ℓ2-SAM: the gradient at w + ρ ∇L/‖∇L‖₂",
    "sam-linf": "ℓ∞-SAM: the gradient at w + ρ sign(∇L)",
}
#: loss name -> one line
LOSS_DESCRIPTIONS: dict[str, str] = {
    "logistic": "ℓ(s) = log(1 + exp(-s))",
    "exponential": "ℓ(s) = exp(-s)",
}

OPTIMIZERS: tuple[str, ...] = tuple(OPTIMIZER_DESCRIPTIONS)
LOSSES: tuple[str, ...] = tuple(LOSS_DESCRIPTIONS)


def check_optimizer(optimizer: str) -> str:
    """``optimizer`` if it is one of :data:`OPTIMIZERS`, else a one-line SettingError."""
    if optimizer not in OPTIMIZERS:
        raise SettingError(f"unknown optimizer {optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")
    return optimizer


def check_loss(loss: str) -> str:
    """``loss`` if it is one of :data:`LOSSES`, else a one-line SettingError."""
    if loss not in LOSSES:
        raise SettingError(f"unknown loss {loss!r}: choose one of {', '.join(LOSSES)}")
    return loss


def check_depth(depth) -> int:
    """The depth L as an int ≥ 1 (bools and non-integers are refused)."""
    try:
        ok = not isinstance(depth, bool) and float(depth).is_integer() and depth >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise SettingError(f"depth = {depth!r}: the depth L must be an integer ≥ 1")
    return int(depth)


def check_rho(rho) -> float:
    """The SAM radius ρ as a finite float ≥ 0."""
    try:
        rho = float(rho)
    except (TypeError, ValueError):
        raise SettingError(f"rho = {rho!r} is not a number") from None
    if not math.isfinite(rho):
        raise SettingError(f"rho = {rho}: ρ must be a finite number ≥ 0")
    if rho < 0:
        raise SettingError(f"rho = {rho:g}: the SAM radius ρ must be ≥ 0")
    return rho


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 claim"``, ``"2 claims"``: a count with its noun in the right number (``plural``
    when it is not noun + "s")."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"

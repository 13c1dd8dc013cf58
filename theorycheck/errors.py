"""Errors a user can act on: one line that names the problem and the fix."""

from __future__ import annotations


class TheorycheckError(Exception):
    """Base class: the CLI prints these as one line (no traceback) and exits 2."""


class SettingError(TheorycheckError, ValueError):
    """Invalid input to a :class:`~theorycheck.setting.Setting` (bad data, depth, ρ, init...)."""


class NotSeparableError(SettingError):
    """The data are not linearly separable; ``examples`` are 1-based indices of a certificate."""

    def __init__(self, message: str, examples: list[int], weights: list[float]):
        super().__init__(message)
        self.examples = examples
        self.weights = weights

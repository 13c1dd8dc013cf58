"""Errors a user can act on: one line that names the problem and the fix."""

from __future__ import annotations


class TheorycheckError(Exception):
    """Base class: the CLI prints these as one line (no traceback) and exits 2."""


class ArgumentError(TheorycheckError, ValueError):
    """A bad value of a library function's argument. The message names arguments by their
    Python names (``discrete=True needs eta and steps``, ``depth=0: …``); ``arguments`` lists
    the names it mentions, so that a front end can speak its own language (the CLI renders
    ``name=value`` as ``--flag value`` and ``name`` as ``--flag``)."""

    def __init__(self, message: str, *arguments: str):
        super().__init__(message)
        self.arguments: tuple[str, ...] = tuple(arguments)


class SettingError(TheorycheckError, ValueError):
    """Invalid input to a :class:`~theorycheck.setting.Setting` (bad data, depth, ρ, init...)."""


class NotSeparableError(SettingError):
    """The data are not linearly separable; ``examples`` are 1-based indices of a certificate."""

    def __init__(self, message: str, examples: list[int], weights: list[float]):
        super().__init__(message)
        self.examples = examples
        self.weights = weights

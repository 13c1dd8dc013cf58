"""The table of optimizers: name → object, filled by :mod:`theorycheck.optimizers` (its ``__init__``
registers each module's optimizer) and read everywhere a name must be resolved or checked.

Plain Python, no numerics: the words stage (rank 0), so that :class:`~theorycheck.setting.Setting`
and the symbolic layer can check and resolve a name without importing the optimizers' stage.
The table is filled before any of them runs: importing this module runs the package's
``__init__`` first, which registers every built-in optimizer.
"""

from __future__ import annotations

from typing import Any

from theorycheck.errors import SettingError

__all__ = ["register", "registered", "names", "check_optimizer", "default_name", "descriptions", "default_for",
           "supported_names"]

_TABLE: dict[str, Any] = {}
_DEFAULT: list[str] = []


def register(optimizer: Any, *, default: bool = False, replace: bool = False) -> Any:
    """Add ``optimizer`` (an object with ``name``, ``description`` and ``ascent``) under its name.
    ``default``: the optimizer a Setting uses when none is given; ``replace``: allow a second
    registration of a name. Returns the optimizer."""
    name = optimizer.name
    if not isinstance(name, str) or not name or name != name.strip():
        raise ValueError(f"an optimizer's name must be a non-empty word, got {name!r}")
    if name in _TABLE and _TABLE[name] is not optimizer and not replace:
        raise ValueError(f"an optimizer named {name!r} is registered already (replace=True replaces it)")
    _TABLE[name] = optimizer
    if default:
        _DEFAULT[:] = [name]
    return optimizer


def names() -> tuple[str, ...]:
    """The registered names, in registration order (the CLI's ``--optimizer`` choices)."""
    return tuple(_TABLE)


def descriptions() -> dict[str, str]:
    """name → one line."""
    return {k: v.description for k, v in _TABLE.items()}


def check_optimizer(optimizer: str) -> str:
    """``optimizer`` if it is a registered name, else a one-line SettingError naming the choices."""
    if not isinstance(optimizer, str) or optimizer not in _TABLE:
        raise SettingError(f"unknown optimizer {optimizer!r}: choose one of {', '.join(_TABLE)}")
    return optimizer


def registered(optimizer) -> Any:
    """The optimizer object of a name (checked), or ``optimizer`` itself when it is one already."""
    if isinstance(optimizer, str):
        return _TABLE[check_optimizer(optimizer)]
    if not hasattr(optimizer, "ascent"):
        raise SettingError(f"not an optimizer: {optimizer!r} (give a name: {', '.join(_TABLE)})")
    return optimizer


def default_name() -> str:
    """The name a Setting uses when no optimizer is given."""
    return _DEFAULT[0]


def default_for(param: str, loss: str, depth: int) -> str:
    """The default optimizer's name, or (where its flow is not integrated, e.g. regression) the first
    registered one whose flow is."""
    first = default_name()
    if _TABLE[first].supports(param, loss, depth) is None:
        return first
    return next((n for n, o in _TABLE.items() if o.supports(param, loss, depth) is None), first)


def supported_names(param: str, loss: str, depth: int) -> tuple[str, ...]:
    """The registered optimizers whose flow the engine integrates for (param, loss, depth)."""
    return tuple(n for n, o in _TABLE.items() if o.supports(param, loss, depth) is None)

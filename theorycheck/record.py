"""A result that is a set of named values (thresholds, a max-margin solution, a setting's
summary, …): read it as attributes or items; :meth:`Record.as_dict` is what the CLI prints."""

from __future__ import annotations

import copy
from typing import Any


class Record:
    """Named values in a fixed order. ``r.key`` and ``r["key"]`` read a value; ``"key" in r``
    asks whether it is there; :meth:`as_dict` returns a copy of all of them (the JSON object
    of the CLI, before :func:`theorycheck.jsonio.to_plain`)."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any]):
        object.__setattr__(self, "_values", dict(values))

    def as_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def keys(self):
        return self._values.keys()

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no value {key!r}; it has {', '.join(self._values)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in list(self._values.items())[:6])
        more = ", …" if len(self._values) > 6 else ""
        return f"{type(self).__name__}({shown}{more})"

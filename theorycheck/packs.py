"""Theorem packs: a paper's setting, theorems (for ``prove``), claims (for ``verify``) and
experiments (for ``reproduce``), found by name.

Built-in packs live in ``proofs/<pack>/`` and ``numerics/<pack>/`` of the repository (installed
as ``theorycheck.proofs`` / ``theorycheck.numerics``); third-party packs are distributions that
declare an entry point in the group ``theorycheck.packs`` pointing at a :class:`Pack`.

A pack's module is imported only when its theorems or claims are asked for, so
``import theorycheck`` stays light and nothing is registered by a side-effect import.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from theorycheck.errors import TheorycheckError

__all__ = ["Pack", "available", "get", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "theorycheck.packs"


@dataclass(frozen=True)
class Pack:
    """A paper as a pack. ``proofs`` / ``numerics``: importable modules that define
    ``theorems() -> list[Theorem]``, ``claims() -> list[Claim]`` and ``experiments() -> dict``
    (either may be None)."""

    name: str
    title: str
    reference: str
    proofs: str | None = None
    numerics: str | None = None
    theory: str | None = None  # the pack's THEORY text (a path inside the package), if any
    extra: dict[str, Any] = field(default_factory=dict)

    def _call(self, module: str | None, fn: str):
        if module is None:
            return [] if fn != "experiments" else {}
        mod = importlib.import_module(module)
        f = getattr(mod, fn, None)
        if f is None:
            return [] if fn != "experiments" else {}
        return f()

    def theorems(self) -> list:
        return list(self._call(self.proofs, "theorems"))

    def claims(self) -> list:
        return list(self._call(self.proofs, "claims"))

    def experiments(self) -> dict:
        return dict(self._call(self.numerics, "experiments"))


BUILTIN: tuple[Pack, ...] = (
    Pack(
        name="minor-first",
        title="Minor First, Major Last: A Depth-Induced Implicit Bias of Sharpness-Aware Minimization",
        reference="Moon, Si, Yun, arXiv 2603.08290",
        proofs="theorycheck.proofs",
        numerics="theorycheck.numerics",
    ),
)


def _entry_point_packs() -> list[Pack]:
    from importlib.metadata import entry_points

    out: list[Pack] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken third-party pack must not break the tool
            raise TheorycheckError(f"pack entry point {ep.name!r} ({ep.value}) failed to load: {exc}") from None
        pack = obj() if callable(obj) and not isinstance(obj, Pack) else obj
        if not isinstance(pack, Pack):
            raise TheorycheckError(f"pack entry point {ep.name!r} ({ep.value}) is not a theorycheck.packs.Pack")
        out.append(pack)
    return out


def available() -> dict[str, Pack]:
    """Every installed pack by name: the built-in ones first, then entry points."""
    out = {p.name: p for p in BUILTIN}
    for p in _entry_point_packs():
        out.setdefault(p.name, p)
    return out


def get(name: str) -> Pack:
    packs = available()
    if name not in packs:
        raise TheorycheckError(f"unknown pack {name!r}; installed: {', '.join(packs)}")
    return packs[name]

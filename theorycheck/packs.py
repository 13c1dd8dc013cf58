"""Theorem packs: a paper's setting, theorems (for ``prove``), claims (for ``verify``) and
experiments (for ``reproduce``), found by name.

Built-in packs live in ``proofs/<pack>/`` and ``numerics/<pack>/`` of the repository (installed
as ``theorycheck.proofs`` / ``theorycheck.numerics``); third-party packs are distributions that
declare an entry point in the group ``theorycheck.packs`` pointing at a :class:`Pack`.

A pack's module is imported only when its theorems or claims are asked for, so
``import theorycheck`` stays light and nothing is registered by a side-effect import.

The pack author's API (docs/writing-a-pack.md) is this module: :class:`Pack`; for theorems
``Theorem``, ``Step``, ``Identity``, ``Fact``, ``StepResult`` and the step verdicts
``verified``, ``refuted``, ``incomplete``; for claims ``Claim`` and ``Outcome``. They are
loaded on first use (sympy only with a theorem name).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from theorycheck.errors import TheorycheckError

#: the pack author's API, loaded on first use: public name → the module that defines it
_AUTHOR_API = {**dict.fromkeys(("Theorem", "Step", "Identity", "Fact", "StepResult", "verified", "refuted",
                                "incomplete"), "theorycheck.proofs._core"),
               **dict.fromkeys(("Claim", "Outcome"), "theorycheck.claims.claim")}
__all__ = ["Pack", "available", "get", "candidates", "select", "select_claims", "ENTRY_POINT_GROUP", *_AUTHOR_API]


def __getattr__(name: str):
    if name in _AUTHOR_API:
        value = getattr(importlib.import_module(_AUTHOR_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
    predict: str | None = None  # "module:function" for ``theorycheck predict`` (X, y, **options) -> dict
    extra: dict[str, Any] = field(default_factory=dict)

    def _call(self, module: str | None, fn: str):
        if module is None:
            return [] if fn != "experiments" else {}
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:  # a pack whose modules are missing is a user-facing error, not a crash
            raise TheorycheckError(f"pack {self.name!r}: module {module!r} failed to import: {exc}") from None
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

    def predictor(self):
        """The pack's ``predict`` function, or a one-line error when it has none."""
        if not self.predict:
            raise TheorycheckError(f"pack {self.name!r} makes no predictions (it defines no predict function)")
        module, _, fn = self.predict.partition(":")
        return getattr(importlib.import_module(module), fn)

    def theory_text(self) -> str | None:
        """The pack's THEORY text, read from inside its package (``theory``: 'package:FILE')."""
        if not self.theory:
            return None
        from importlib.resources import files

        pkg, _, name = self.theory.partition(":")
        return files(pkg).joinpath(name).read_text(encoding="utf-8")

    def as_dict(self) -> dict:
        """What ``theorycheck packs --json`` prints for this pack."""
        return {"name": self.name, "title": self.title, "reference": self.reference,
                "theorems": len(self.theorems()), "claims": len(self.claims()),
                "experiments": len(self.experiments()), "predict": self.predict is not None,
                "theory": self.theory}


BUILTIN: tuple[Pack, ...] = (
    Pack(
        name="minor-first",
        title="Minor First, Major Last: A Depth-Induced Implicit Bias of Sharpness-Aware Minimization",
        reference="Moon, Si, Yun, arXiv 2603.08290",
        proofs="theorycheck.proofs",
        numerics="theorycheck.numerics",
        theory="theorycheck.proofs:THEORY.md",
    ),
    Pack(
        name="kernel-rich",
        title="Kernel and Rich Regimes in Overparametrized Models",
        reference="Woodworth, Gunasekar, Lee, Moroshko, Savarese, Golan, Soudry, Srebro, COLT 2020",
        proofs="theorycheck.proofs.kernel_rich",
        numerics="theorycheck.numerics.kernel_rich",
        theory="theorycheck.proofs.kernel_rich:THEORY.md",
        predict="theorycheck.proofs.kernel_rich:predict",
    ),
    Pack(
        name="lp-margin",
        title="Implicit Bias of Gradient Descent on Linear Convolutional Networks (diagonal case)",
        reference="Gunasekar, Lee, Soudry, Srebro, NeurIPS 2018; Lyu & Li, ICLR 2020",
        proofs="theorycheck.proofs.lp_margin",
        numerics="theorycheck.numerics.lp_margin",
        theory="theorycheck.proofs.lp_margin:THEORY.md",
        predict="theorycheck.proofs.lp_margin:predict",
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


def select(name: str | None) -> list[Pack]:
    """The pack named (one), or every installed pack (``name`` None or "all")."""
    if name in (None, "all"):
        return list(available().values())
    return [get(name)]


def candidates(pack: str | None = None) -> list[tuple[str, Any]]:
    """The claims ``verify`` chooses from, as (pack name, claim): every installed pack's
    (``pack`` None or "all"), or one pack's, then the user's (pack name ``"user"``)."""
    from theorycheck.claims.registry import user_claims

    out: dict[str, tuple[str, Any]] = {}
    for p in select(pack):
        for c in p.claims():
            out.setdefault(c.key, (p.name, c))
    for c in user_claims():
        out.setdefault(c.key, ("user", c))
    return list(out.values())


def select_claims(pack: str | None, prefixes=None) -> list[tuple[Pack, Any]]:
    """(pack, claim) pairs: the claims of the selected packs whose key equals a prefix or starts
    with ``prefix.``; a refined claim alone when named exactly (the selection rule of
    :func:`theorycheck.claims.registry.select`). Raises KeyError(prefix) when a prefix matches
    nothing in the selected packs."""
    from theorycheck.claims.registry import pack_of
    from theorycheck.claims.registry import select as select_keys

    chosen = select(pack)
    pairs = [(p.name, c) for p in chosen for c in p.claims()]
    owner = pack_of(pairs)
    by_name = {p.name: p for p in chosen}
    return [(by_name[owner[c.key]], c) for c in select_keys(prefixes, [c for _, c in pairs])]



class PackList(list):
    """Every installed pack's :meth:`Pack.as_dict` (a list); ``as_dict()`` is what
    ``theorycheck packs --json`` prints."""

    def as_dict(self) -> dict:
        return {"packs": list(self)}


def list_packs() -> PackList:
    """Every installed pack (built-in first, then entry points), summarised."""
    return PackList(p.as_dict() for p in available().values())


def predict(pack: str, X, y, **options) -> dict:
    """A pack's predicted limit for the data (rows of ``X``, targets/labels ``y``):
    ``get(pack).predictor()(X, y, **options)``; what ``theorycheck predict --json`` prints."""
    return get(pack).predictor()(X, y, **options)

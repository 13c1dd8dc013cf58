"""Theorem packs: a paper's setting, theorems (for ``prove``), claims (for ``verify``) and
experiments (for ``reproduce``), found by name.

A pack is a :class:`Pack` (its manifest) and the modules it names. theorycheck's own packs are the
subpackages of ``theorycheck.proofs`` (``proofs/<pack>/`` of the repository, experiments in
``numerics/<pack>/``), each defining ``PACK``: a new folder there is a new pack, with no line of
engine code. Packs of other distributions declare an entry point in the group ``theorycheck.packs``
pointing at a :class:`Pack`. Both kinds are loaded and run by the same code.

A pack's module is imported only when its theorems or claims are asked for, so
``import theorycheck`` stays light and nothing is registered by a side-effect import.

The pack author's API (docs/writing-a-pack.md) is this module: :class:`Pack`; for theorems
``Theorem``, ``Step``, ``Identity``, ``Fact``, ``StepResult`` and the step verdicts
``verified``, ``refuted``, ``incomplete``; for claims ``Claim`` and ``Outcome``. They are
loaded on first use (sympy only with a theorem name).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

from theorycheck.errors import TheorycheckError
from theorycheck.record import Keys, ListOf

#: the pack author's API, loaded on first use: public name → the module that defines it
_AUTHOR_API = {**dict.fromkeys(("Theorem", "Step", "Identity", "Fact", "StepResult", "verified", "refuted",
                                "incomplete"), "theorycheck.symbolic.theorem"),
               **dict.fromkeys(("Claim", "Outcome"), "theorycheck.claims.claim")}
__all__ = ["Pack", "available", "get", "reductions", "candidates", "select", "select_claims", "ENTRY_POINT_GROUP", *_AUTHOR_API]


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
    (either may be None); for a package, each function may instead live in its submodule of the
    same name (``<proofs>.theorems`` defining ``theorems()``, ``<proofs>.claims`` defining ``claims()``:
    the shape of theorycheck's own packs)."""

    name: str
    title: str
    reference: str
    proofs: str | None = None
    numerics: str | None = None
    theory: str | None = None  # the pack's THEORY text (a path inside the package), if any
    predict: str | None = None  # "module:function" for ``theorycheck predict`` (X, y, **options) -> dict
    extra: dict[str, Any] = field(default_factory=dict)
    #: "module:attribute" naming a tuple of the pack's reductions of the flow (:mod:`theorycheck.solvers.reduction`),
    #: which ``solve(method="reduced")`` and the sweeps use where one applies; None: it offers none
    reductions: str | None = None

    def _call(self, module: str | None, fn: str):
        if module is None:
            return [] if fn != "experiments" else {}
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:  # a pack whose modules are missing is a user-facing error, not a crash
            raise TheorycheckError(f"pack {self.name!r}: module {module!r} failed to import: {exc}") from None
        f = getattr(mod, fn, None)
        if f is None and hasattr(mod, "__path__"):  # a package: its submodule of that name, if any
            try:
                f = importlib.import_module(f"{module}.{fn}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{module}.{fn}":
                    raise TheorycheckError(f"pack {self.name!r}: module {module}.{fn} failed to import: {exc}") from None
        if inspect.ismodule(f):  # the module ``theorems`` defines theorems(), ``claims`` claims()
            f = getattr(f, fn, None)
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

    def reduction_list(self) -> tuple:
        """The pack's reductions of the flow (empty when it offers none)."""
        if not self.reductions:
            return ()
        module, _, attr = self.reductions.partition(":")
        try:
            return tuple(getattr(importlib.import_module(module), attr))
        except (ImportError, AttributeError) as exc:
            raise TheorycheckError(f"pack {self.name!r}: reductions {self.reductions!r} failed to load: {exc}") from None

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


def _own_packs() -> list[Pack]:
    """``PACK`` of every subpackage of ``theorycheck.proofs``, by folder name. The registry finds the
    folder without importing it and loads each pack by name, as it loads a pack of another distribution:
    the packs import :class:`Pack`, never the other way."""
    import importlib.util
    import pkgutil

    spec = importlib.util.find_spec(f"{__package__}.proofs")
    folders = list(spec.submodule_search_locations) if spec is not None else []
    out: list[Pack] = []
    for info in sorted(pkgutil.iter_modules(folders), key=lambda m: m.name):
        if not info.ispkg:
            continue
        name = f"{spec.name}.{info.name}"
        pack = getattr(importlib.import_module(name), "PACK", None)
        if not isinstance(pack, Pack):
            raise TheorycheckError(f"{name} defines no PACK (a theorycheck.packs.Pack): every folder of proofs/ is a pack")
        out.append(pack)
    return out


def _entry_point_packs() -> list[Pack]:
    from importlib.metadata import entry_points

    out: list[Pack] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (getattr(ep.dist, "name", ""), ep.name)):
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
    """Every installed pack by name: theorycheck's own (by folder name), then other distributions' (by
    distribution, then entry-point name); a name declared twice keeps its first pack."""
    out: dict[str, Pack] = {}
    for p in [*_own_packs(), *_entry_point_packs()]:
        out.setdefault(p.name, p)
    return out


def reductions() -> tuple:
    """The reductions of the flow every installed pack offers, in the order of :func:`available` (the first paper's:
    C4's scalar ODE). The API passes them to ``solve`` and the sweeps, which use the first that applies."""
    return tuple(r for p in available().values() for r in p.reduction_list())


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
    ``theorycheck packs --json`` prints (docs/commands/packs.md)."""

    KEYS = Keys("packs", packs=ListOf(Keys("packs.pack", "name", "title", "reference", "theorems", "claims",
                                            "experiments", "predict", "theory")))

    def as_dict(self) -> dict:
        return {"packs": list(self)}


def list_packs() -> PackList:
    """Every installed pack (built-in first, then entry points), summarised."""
    return PackList(p.as_dict() for p in available().values())


def predict(pack: str, X, y, **options) -> dict:
    """A pack's predicted limit for the data (rows of ``X``, targets/labels ``y``):
    ``get(pack).predictor()(X, y, **options)``; what ``theorycheck predict --json`` prints, with a ``strength``
    (a floating-point check, unless the pack says otherwise)."""
    from theorycheck.strength import float_check

    out = get(pack).predictor()(X, y, **options)
    if isinstance(out, dict):
        out.setdefault("strength", float_check().as_dict())
    return out

"""The user's claims (explicit registration) and selection of claims by key.

A pack's claims are not registered: its manifest lists them (:meth:`theorycheck.packs.Pack.claims`;
:func:`theorycheck.packs.candidates` puts a pack's and the user's together). A user registers a
claim of their own with :func:`register_claim` (exported as ``theorycheck.register_claim``).
"""

from __future__ import annotations

from collections.abc import Sequence

from theorycheck.claims.claim import Claim
from theorycheck.errors import TheorycheckError

__all__ = ["REGISTRY", "UnknownClaimError", "pack_of", "register", "register_claim", "select",
           "unregister_claim", "user_claims"]

#: every registered claim by key (the user's: a pack's claims are listed by its manifest)
REGISTRY: dict[str, Claim] = {}
#: keys registered by the user (register_claim), in registration order
_USER: list[str] = []


class UnknownClaimError(TheorycheckError, KeyError):
    """No claim matches a key or prefix."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def register(claim: Claim) -> Claim:
    """Add a claim to the registry (keys are unique, e.g. ``C4.switch-level``)."""
    if claim.key in REGISTRY:
        raise ValueError(f"claim {claim.key} registered twice")
    REGISTRY[claim.key] = claim
    return claim


def register_claim(claim: Claim, *, replace: bool = False) -> Claim:
    """Register a user's claim so that :func:`theorycheck.verify` runs it (beside the pack's
    claims) and selects it by key. ``replace=True`` replaces an earlier claim of the user's
    with the same key (a pack's claim is never replaced)."""
    if not isinstance(claim, Claim):
        raise TheorycheckError(f"register_claim needs a theorycheck.Claim, got {type(claim).__name__}")
    if claim.key in REGISTRY:
        if not (replace and claim.key in _USER):
            raise TheorycheckError(f"a claim with key {claim.key!r} is already registered: choose another key"
                                   + (" or pass replace=True" if claim.key in _USER else ""))
        del REGISTRY[claim.key]
        _USER.remove(claim.key)
    register(claim)
    _USER.append(claim.key)
    return claim


def unregister_claim(key: str) -> None:
    """Remove a claim the user registered (a pack's claims stay)."""
    if key not in _USER:
        raise TheorycheckError(f"no user claim {key!r} is registered")
    _USER.remove(key)
    del REGISTRY[key]


def user_claims() -> list[Claim]:
    """The user's claims, in registration order."""
    return [REGISTRY[k] for k in _USER]


def pack_of(pairs: Sequence[tuple[str, Claim]]) -> dict[str, str]:
    """Claim key (refined claims included) → the pack it belongs to."""
    out: dict[str, str] = {}
    for name, c in pairs:
        while c is not None:
            out.setdefault(c.key, name)
            c = c.refined
    return out


def select(prefixes: Sequence[str] | None, claims: Sequence[Claim] | None = None) -> list[Claim]:
    """Claims (of ``claims``, default the user's registered ones) whose key equals a prefix or starts
    with ``prefix.`` (``C4`` selects ``C4.*``); a refined claim is selected alone when named
    exactly. Raises :class:`UnknownClaimError` naming the first prefix that matches nothing."""
    pool = list(REGISTRY.values()) if claims is None else list(claims)
    if not prefixes:
        return pool
    every: dict[str, Claim] = {}
    for c in pool:  # refined claims run with their parent; alone when named exactly
        c = c.refined
        while c is not None:
            every.setdefault(c.key, c)
            c = c.refined
    out: list[Claim] = []
    for p in prefixes:
        hits = [c for c in pool if c.key == p or c.key.startswith(p + ".")]
        if not hits and p in every:
            hits = [every[p]]
        if not hits:
            raise UnknownClaimError(p)
        out += [c for c in hits if c not in out]
    return out

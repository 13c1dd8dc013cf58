"""THEORY.md's derivations, executable: one module per theorem.

The built-in pack ``minor-first`` (:mod:`theorycheck.packs`) reads its theorems and claims
from :func:`theorems` and :func:`claims`; importing the theorem modules registers them.
"""

from theorycheck.proofs import c1, c2, c3, c4, c5, c6, e1, e2_linear, rescaled  # noqa: F401  (registers R, B, C1..C6, E1, E2)
from theorycheck.proofs._core import MARKS, REGISTRY, ProveResult, Theorem, TheoremResult, prove

__all__ = ["MARKS", "ORDER", "REGISTRY", "ProveResult", "Theorem", "TheoremResult", "check_keys", "claims", "prove",
           "run_all", "theorems"]


#: THEORY.md's order
ORDER = ("R", "B", "C1", "C2", "C3", "C4", "C5", "C6")


def check_keys(keys: list[str]) -> None:
    """Raise KeyError naming unknown theorem keys."""
    unknown = [k for k in keys if k not in REGISTRY]
    if unknown:
        raise KeyError(f"unknown theorem(s) {', '.join(unknown)}; known: {', '.join(ORDER)}")


def run_all(keys: list[str] | None = None) -> list[TheoremResult]:
    """Run the registered theorems (all, or those whose keys are given), in THEORY.md's order."""
    check_keys(keys or [])
    return [REGISTRY[k].run() for k in (keys or [k for k in ORDER if k in REGISTRY])]


def theorems() -> list[Theorem]:
    """The pack's theorems, in THEORY.md's order."""
    return [REGISTRY[k] for k in ORDER if k in REGISTRY]


def claims() -> list:
    """The pack's claims (registered by the theorem modules beside their derivations; a
    user's claims are not the pack's)."""
    from theorycheck.claims.registry import REGISTRY as CLAIMS
    from theorycheck.claims.registry import user_claims

    mine = {c.key for c in user_claims()}
    return [c for k, c in CLAIMS.items() if k not in mine]

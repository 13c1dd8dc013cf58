"""THEORY.md's derivations, executable: one module per theorem.

The manifest of the built-in pack ``minor-first`` (:mod:`theorycheck.packs`): :func:`theorems`
and :func:`claims` list the theorems and claims of the modules below, explicitly; importing a
module registers nothing.
"""

from theorycheck.proofs import c1, c2, c3, c4, c5, c6, e1, rescaled
from theorycheck.proofs._core import MARKS, ProveResult, Theorem, TheoremResult, prove

__all__ = ["MARKS", "ORDER", "REGISTRY", "THEOREMS", "ProveResult", "Theorem", "TheoremResult", "check_keys",
           "claims", "prove", "run_all", "theorems"]

#: the pack's theorems, in THEORY.md's order
THEOREMS: tuple[Theorem, ...] = (rescaled.THEOREM_R, rescaled.THEOREM_B, c1.THEOREM, c2.THEOREM, c3.THEOREM,
                                 c4.THEOREM, c5.THEOREM, c6.THEOREM)
#: theorem key -> theorem
REGISTRY: dict[str, Theorem] = {t.key: t for t in THEOREMS}
#: THEORY.md's order
ORDER = tuple(t.key for t in THEOREMS)


def check_keys(keys: list[str]) -> None:
    """Raise KeyError naming unknown theorem keys."""
    unknown = [k for k in keys if k not in REGISTRY]
    if unknown:
        raise KeyError(f"unknown theorem(s) {', '.join(unknown)}; known: {', '.join(ORDER)}")


def run_all(keys: list[str] | None = None) -> list[TheoremResult]:
    """Run the theorems (all, or those whose keys are given), in THEORY.md's order."""
    check_keys(keys or [])
    return [REGISTRY[k].run() for k in (keys or ORDER)]


def theorems() -> list[Theorem]:
    """The pack's theorems, in THEORY.md's order."""
    return list(THEOREMS)


def claims() -> list:
    """The pack's claims, listed module by module (each module builds its claims once, beside
    its derivation)."""
    return [*c1.claims(), *c2.claims(), *c3.claims(), *c4.claims(), *c5.claims(), *c6.claims(), *e1.claims()]

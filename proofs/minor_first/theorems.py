"""The theorems of the pack ``minor-first``, in THEORY.md's order (each module holds its derivation)."""

from __future__ import annotations

from theorycheck.proofs.minor_first import c1, c2, c3, c4, c5, c6, lockin, persisting, rescaled

from theorycheck.symbolic.theorem import Theorem

__all__ = ["THEOREMS", "theorems"]

#: the pack's theorems, in THEORY.md's order
THEOREMS: tuple[Theorem, ...] = (rescaled.THEOREM_R, rescaled.THEOREM_B, c1.THEOREM, c2.THEOREM, c3.THEOREM,
                                 c4.THEOREM, c5.THEOREM, c6.THEOREM, persisting.THEOREM, lockin.THEOREM)


def theorems() -> list[Theorem]:
    """The pack's theorems, in THEORY.md's order."""
    return list(THEOREMS)

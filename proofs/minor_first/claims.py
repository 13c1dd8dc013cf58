"""The claims of the pack ``minor-first``, listed module by module (each module builds its claims once,
beside its derivation)."""

from __future__ import annotations

from theorycheck.proofs.minor_first import c1, c2, c3, c4, c5, c6, e1, e2_linear

__all__ = ["claims"]


def claims() -> list:
    """C1–C6, E1, E2 and their refinements, in THEORY.md's order."""
    return [*c1.claims(), *c2.claims(), *c3.claims(), *c4.claims(), *c5.claims(), *c6.claims(), *e1.claims(),
            *e2_linear.claims()]

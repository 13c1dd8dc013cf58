"""The lemmas the proved answers rest on (stage ``proved``), with the strength each has for the depth L and
dimension d of a request.

A proved answer lists these in ``rests_on``, each with its own strength; it is called proved only when
every one of them is proved for the (L, d) it is about.

Interface (stable): :data:`LEMMAS` (name → statement) and :func:`strength`. This version reports what the
derivations of the pack ``minor-first`` (theorems P and LOCK) establish today: several lemmas are
checked at one depth only, and are reported as such.
"""

from __future__ import annotations

from theorycheck.strength import Strength, float_check, not_decided, proved

__all__ = ["LEMMAS", "strength"]

#: lemma name -> what it states
LEMMAS: dict[str, str] = {
    "C4": "C4's reduction of the balanced ℓ2-SAM flow (L = 2) to dI/dτ = 1/N(τ, I)",
    "P1": "collapse lemma (L = 2): N < ρ z_min ⇒ collapse",
    "P2": "growth lemma (L = 2): N_S > ρ max_S z for some set S of coordinates ⇒ growth",
    "P3": "monotonicity of the fate in α: the balanced ℓ2-SAM field is cooperative (Kamke)",
    "P4": "even L: {r_j > 1 ∀j} (collapse) and {r_j ≤ 1 ∀j} (growth) are forward invariant",
    "P5": "the balanced flow in r with dσ = (N/ρ) dτ is the ratio field",
    "P6": "the ratio field blown up at r = 1 is R^(L−1) G(R, ω), regular at R = 0",
    "LOCK": "the lock-in lemma: when j† can no longer change",
}


def strength(name: str, *, depth: int, dim: int) -> Strength:
    """The strength of lemma ``name`` for depth ``depth`` and dimension ``dim``."""
    if name not in LEMMAS:
        raise KeyError(f"unknown lemma {name!r}; known: {', '.join(LEMMAS)}")
    if name in ("C4", "P1", "P2"):
        return proved() if depth == 2 else not_decided(f"{name} is a lemma of L = 2")
    if name == "LOCK":
        return proved()
    if name == "P3":
        return proved() if depth in (2, 4) else not_decided(f"P3 is checked at L = 2 and 4 only, not at L = {depth}")
    if name == "P5":
        return float_check(30) if (depth, dim) == (4, 2) else not_decided(
            f"P5 is checked at L = 4, d = 2 only (numerically), not at L = {depth}, d = {dim}")
    return proved() if depth == 4 else not_decided(f"{name} is checked at L = 4 only, not at L = {depth}")

"""The first paper's lemmas its proved answers rest on, with the strength each has for the depth L and
dimension d of a request (:data:`BOOK`, the book the engine's provers and checkers read).

A proved answer lists these in ``rests_on``, each with its own strength; it is called proved only when
every one of them is proved for the (L, d) it is about.

Interface (stable): :data:`LEMMAS` (name → statement) and :func:`strength`. P3, P4, P5, P6 and LOCK (L ≥ 3) are
proved by the sympy proofs of :mod:`theorycheck.proofs.minor_first.lemma_proofs` for a symbolic depth L and dimension d
(or, where that route fails, on demand at the exact (L, d) of the request); the pack ``minor-first`` shows the
same steps as theorems P and LOCK. A proved lemma's strength says in ``because`` which route proved it.
"""

from __future__ import annotations

from theorycheck.proofs.minor_first import lemma_proofs

from theorycheck.proved.lemmas import LemmaBook
from theorycheck.strength import Kind, Strength, not_decided

__all__ = ["BOOK", "LEMMAS", "strength"]

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
        return _proved(f"{name}: theorem {'C4' if name == 'C4' else 'P'}'s L = 2 steps") if depth == 2 else \
            not_decided(f"{name} is a lemma of L = 2")
    if name == "LOCK" and depth == 2:
        return _proved("LOCK at L = 2: theorem LOCK's L = 2 steps (symbolic in z and N, any d)")
    pr = lemma_proofs.prove(name, depth, dim)
    if pr.ok:
        return _proved(f"{name}: sympy proof for {pr.route} (theorycheck.proofs.minor_first.lemma_proofs; theorem "
                       f"{'LOCK' if name == 'LOCK' else 'P'} of minor-first)")
    return not_decided(pr.detail)


#: the lemmas as the engine's provers and checkers read them
BOOK = LemmaBook(LEMMAS, lambda name, depth, dim: strength(name, depth=depth, dim=dim),
                 "theorycheck.proofs.minor_first.lemmas")


def _proved(how: str) -> Strength:
    """A proved lemma; ``because`` says how it was proved."""
    return Strength(Kind.PROVED, because=how)

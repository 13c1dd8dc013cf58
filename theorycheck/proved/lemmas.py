"""What a proved answer rests on: a pack's lemmas (:class:`LemmaBook`: name → statement, and the strength of
each for the depth L and dimension d of a request), each lemma's strength (:func:`lemma_strengths`) and the
strength of an answer whose computation is proved (:func:`resting_strength`: proved only when every lemma it
rests on is proved for that (L, d), else as strong as its weakest lemma, and it says so).

The engine names no lemma: the pack that states them hands its book to the prover, the box prover and the
certificate checker (the first paper's is :data:`theorycheck.proofs.minor_first.lemmas.BOOK`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from theorycheck.strength import Kind, Strength, not_decided, proved

__all__ = ["LemmaBook", "lemma_strengths", "resting_strength"]


@dataclass(frozen=True)
class LemmaBook:
    """A pack's lemmas: ``statements`` (name → what it states), ``strength_of(name, depth, dim)`` (how strong
    lemma ``name`` is for that (L, d)) and ``source`` (where they are proved: named when a lemma is missing)."""

    statements: Mapping[str, str]
    strength_of: Callable[[str, int, int], Strength]
    source: str

    def statement(self, name: str) -> str:
        """What lemma ``name`` states ("" for a name the book does not hold)."""
        return self.statements.get(name, "")

    def strength(self, name: str, *, depth: int, dim: int) -> Strength:
        """The strength of lemma ``name`` for ``depth`` and ``dim``; not decided for a name the book lacks."""
        if name not in self.statements:
            return not_decided(f"{name} has no strength registered in {self.source}")
        return self.strength_of(name, int(depth), int(dim))


def lemma_strengths(names: Iterable[str], *, depth: int, dim: int,
                    book: LemmaBook | None) -> list[tuple[str, Strength]]:
    """Each lemma of ``names`` with its own strength in ``book`` for depth ``depth`` and dimension ``dim``;
    every one is not decided without a book."""
    if book is None:
        return [(n, not_decided(f"{n}: no lemma book was given")) for n in names]
    return [(n, book.strength(n, depth=depth, dim=dim)) for n in names]


def resting_strength(rests: Sequence[tuple[str, Strength]]) -> Strength:
    """The strength of an answer whose computation is proved and which rests on ``rests``: proved when every
    lemma is, else the weakest lemma's kind (its digits; ``because`` names what is not proved), with every
    lemma listed in ``rests_on``."""
    weak = [(n, s) for n, s in rests if s.kind is not Kind.PROVED]
    if not weak:
        return proved(rests)
    w = Strength.weakest([s for _, s in weak])
    because = "rests on " + "; ".join(f"{n}: {s.text}" for n, s in weak)
    if w.kind is Kind.FLOAT_CHECK:
        return Strength(Kind.FLOAT_CHECK, digits=w.digits, because=because, rests_on=tuple(rests))
    if w.kind is Kind.HOLDS_ON_INPUTS:
        return Strength(Kind.HOLDS_ON_INPUTS, inputs=w.inputs, because=because, rests_on=tuple(rests))
    return Strength(Kind.NOT_DECIDED, because=because, rests_on=tuple(rests))

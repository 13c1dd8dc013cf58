"""How strong an answer is: one type, defined here only, carried by every answer of every command.

Four kinds, from strongest to weakest:

- ``proved``: ball-arithmetic enclosures of the exact inputs the user typed (0.1 is 1/10), on lemmas
  proved for the case used; re-checkable by code that trusts nothing in a certificate.
- ``floating-point check``: a computation in floating point that was not proved: float64 (``digits``
  None) or mpmath at ``digits`` digits. A condition reached in float64 that would persist if the
  numbers were exact is this kind: validated numerics reserves "certified" for rigour, and so do we.
- ``holds on N inputs``: a statement tried on ``inputs`` inputs (drawn or from a declared grid), none
  of which disagreed; evidence, not proof.
- ``not decided``: a horizon, budget or precision ran out first (``because`` says which), or the
  inputs disagree with nothing and agree with nothing.

A horizon or a budget that ran out can only weaken an answer (:meth:`Strength.weakest`), never
strengthen it. ``as_dict()`` is the ``strength`` key of every JSON answer; ``text`` the same words
in the text output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from theorycheck.record import Keys, MapOf

__all__ = ["KEYS", "LEMMA_KEYS", "Kind", "Strength", "proved", "float_check", "holds_on", "not_decided"]

#: the keys of a ``strength`` object (:meth:`Strength.as_dict`); ``rests_on`` maps a lemma to its own strength
KEYS = Keys("strength", "kind", "text", "digits", "inputs", "because")
KEYS.nest({"rests_on": MapOf(KEYS)})
#: the keys of one entry of a proved answer's ``rests_on`` list: a lemma, what it states, its own strength
LEMMA_KEYS = Keys("lemma", "name", "statement", strength=KEYS)


class Kind(StrEnum):
    """The four kinds of strength; a member is its word. Ordered strongest first (:attr:`rank`)."""

    PROVED = "proved"
    FLOAT_CHECK = "floating-point check"
    HOLDS_ON_INPUTS = "holds on inputs"
    NOT_DECIDED = "not decided"

    @property
    def rank(self) -> int:
        """0 for the strongest (proved) … 3 for the weakest (not decided)."""
        return list(Kind).index(self)


@dataclass(frozen=True)
class Strength:
    """How strong one answer is: its :class:`Kind` and what qualifies it.

    ``digits``: the working precision of a floating-point check (None: float64); ``inputs``: how many
    inputs a sampled statement held on; ``because``: why an answer is not decided (the budget, horizon
    or precision that ran out); ``rests_on``: the lemmas and facts a proved answer uses, each with its
    own strength (name → Strength)."""

    kind: Kind
    digits: int | None = None
    inputs: int | None = None
    because: str | None = None
    rests_on: tuple[tuple[str, Strength], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Kind(self.kind))
        if self.kind is Kind.HOLDS_ON_INPUTS and (self.inputs is None or self.inputs < 1):
            raise ValueError("a sampled strength needs inputs ≥ 1")
        if self.kind is Kind.PROVED and any(s.kind is not Kind.PROVED for _, s in self.rests_on):
            weak = [n for n, s in self.rests_on if s.kind is not Kind.PROVED]
            raise ValueError(f"a proved answer cannot rest on what is not proved: {', '.join(weak)}")

    @property
    def text(self) -> str:
        """The words of the text output: "proved", "a floating-point check (float64)", "a floating-point
        check (30 digits)", "holds on 12 inputs", "not decided (max_steps)"."""
        if self.kind is Kind.PROVED:
            return "proved"
        if self.kind is Kind.FLOAT_CHECK:
            return f"a floating-point check ({'float64' if self.digits is None else f'{self.digits} digits'})"
        if self.kind is Kind.HOLDS_ON_INPUTS:
            return f"holds on {self.inputs} input{'s' * (self.inputs != 1)}"
        return "not decided" + (f" ({self.because})" if self.because else "")

    @property
    def proved(self) -> bool:
        return self.kind is Kind.PROVED

    def as_dict(self) -> dict:
        """The ``strength`` key of a JSON answer: ``kind`` (one of the four words), ``text``, and the
        qualifiers that apply (``digits``, ``inputs``, ``because``, ``rests_on``: name → strength dict)."""
        out: dict = {"kind": str(self.kind), "text": self.text}
        if self.kind is Kind.FLOAT_CHECK:
            out["digits"] = self.digits
        if self.inputs is not None:
            out["inputs"] = self.inputs
        if self.because is not None:
            out["because"] = self.because
        if self.rests_on:
            out["rests_on"] = {name: s.as_dict() for name, s in self.rests_on}
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Strength:
        """The inverse of :meth:`as_dict`."""
        rests = tuple((k, cls.from_dict(v)) for k, v in (d.get("rests_on") or {}).items())
        return cls(Kind(d["kind"]), digits=d.get("digits"), inputs=d.get("inputs"), because=d.get("because"),
                   rests_on=rests)

    @staticmethod
    def weakest(strengths: Iterable[Strength]) -> Strength:
        """The weakest of several strengths (an answer built from parts is as strong as its weakest
        part); among floating-point checks the one with fewer digits (float64 counts as 16)."""
        items = list(strengths)
        if not items:
            raise ValueError("weakest() of no strengths")

        def key(s: Strength):
            return (s.kind.rank, -(s.digits or 16) if s.kind is Kind.FLOAT_CHECK else 0)

        return max(items, key=key)

    def __str__(self) -> str:
        return self.text


def proved(rests_on: Iterable[tuple[str, Strength]] = ()) -> Strength:
    """Proved, on the given lemmas (each must itself be proved)."""
    return Strength(Kind.PROVED, rests_on=tuple(rests_on))


def float_check(digits: int | None = None) -> Strength:
    """A floating-point check: float64 (``digits`` None) or mpmath at ``digits`` digits."""
    return Strength(Kind.FLOAT_CHECK, digits=digits)


def holds_on(inputs: int) -> Strength:
    """Holds on ``inputs`` inputs, none of which disagreed."""
    return Strength(Kind.HOLDS_ON_INPUTS, inputs=int(inputs))


def not_decided(because: str | None = None) -> Strength:
    """Not decided: ``because`` names the budget, horizon or precision that ran out."""
    return Strength(Kind.NOT_DECIDED, because=because)

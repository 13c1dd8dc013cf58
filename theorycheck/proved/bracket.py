"""A proved bracket of α_c, assembled: its two ends (outward decimals), the proofs of their fates, the digits
every point of it shares, the exact inputs it is about, and how strong it is.

The bracket [lower, upper] is a proof when ``lower`` is proved to collapse, ``upper`` proved to grow, and the
fate is monotone in α: then α_c ∈ [lower, upper]. Its strength is :func:`theorycheck.strength.proved` only
when every lemma it rests on is proved for the depth L and dimension d of the request
(the pack's :class:`theorycheck.proved.lemmas.LemmaBook`); otherwise it is as strong as its weakest lemma, and
says so.
Used by the proved α_c of every depth (:mod:`theorycheck.proofs.minor_first.proved.alpha_c`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from theorycheck.arith.decimals import common_digits, outward
from theorycheck.arith.exact import ExactInputs
from theorycheck.proved.lemmas import LemmaBook, lemma_strengths, resting_strength
from theorycheck.strength import Strength, not_decided, proved

__all__ = ["FateProof", "ProvedAlphaC", "assemble", "bracket_ends"]

PROVED, NOT_PROVED = "proved", "not proved"


@dataclass
class FateProof:
    """One α's fate: ``fate`` "collapse" | "growth" | None (not proved within the budget, ``why``), the lemma
    used, the time ``tau`` (a ball as [mid, rad] decimal strings) where its hypothesis holds for every point
    of the enclosure, and the work done."""

    alpha: str
    fate: str | None
    lemma: str | None
    tau: list | None
    steps: int
    segments: int
    seconds: float
    why: str = ""
    q: object = None
    pipes: list = field(default_factory=list, repr=False)

    def as_dict(self) -> dict:
        return {"alpha": self.alpha, "fate": self.fate, "lemma": self.lemma, "tau": self.tau, "steps": self.steps,
                "segments": self.segments, "seconds": round(self.seconds, 3), "why": self.why}


@dataclass
class ProvedAlphaC:
    """A bracket of α_c: ``status`` "proved" (both ends' fates proved and every lemma proved for this (L, d))
    | "not proved"; ``lower``/``upper`` decimal strings (None when an end's fate was not proved), ``digits``
    (significant digits every point of [lower, upper] shares) and ``value_text`` (those digits), ``method``,
    ``rests_on`` (lemma names), the two :class:`FateProof`, a ``note`` (why not, or why fewer digits than
    asked), ``inputs`` (the exact numbers it is about), ``strength`` and the ``system`` that proved it."""

    status: str
    lower: str | None
    upper: str | None
    digits: int
    digits_requested: int
    method: str
    rests_on: list
    collapses: FateProof | None
    grows: FateProof | None
    seconds: float
    note: str = ""
    value_text: str | None = None
    inputs: ExactInputs | None = None
    strength: Strength | None = None
    lemmas: tuple = ()
    #: the proved-fate system that made it (:class:`theorycheck.proved.fate_system.FateSystem`; writes its
    #: certificate), None when assembled by hand
    system: object = field(default=None, repr=False, compare=False)
    #: what each lemma of ``lemmas`` states (from the pack's lemma book)
    statements: dict = field(default_factory=dict, repr=False, compare=False)

    def as_dict(self) -> dict:
        """Keys: status, lower, upper, digits, digits_requested, value_text, method, rests_on (one object per
        lemma: name, statement, strength), note, seconds, collapses, grows (each: alpha, fate, lemma, tau,
        steps, segments, seconds, why), inputs (the exact inputs, or null) and strength."""
        strength = self.strength or (proved() if self.status == PROVED else not_decided(self.note or None))
        return {"status": self.status, "lower": self.lower, "upper": self.upper, "digits": self.digits,
                "digits_requested": self.digits_requested, "value_text": self.value_text, "method": self.method,
                "rests_on": _rests_on_dicts(self.rests_on, self.lemmas, self.statements), "note": self.note,
                "seconds": round(self.seconds, 3),
                "collapses": self.collapses.as_dict() if self.collapses else None,
                "grows": self.grows.as_dict() if self.grows else None,
                "inputs": self.inputs.as_dict() if self.inputs is not None else None,
                "strength": strength.as_dict()}


def _rests_on_dicts(rests_on: list, lemmas: tuple, statements: dict) -> list:
    """``rests_on`` as one object per lemma {name, statement, strength}; prose entries (no lemma registered)
    are kept as {name: null, statement, strength: null}."""
    by_name = dict(lemmas)
    out = []
    for r in rests_on:
        if r in by_name:
            out.append({"name": r, "statement": statements.get(r, ""), "strength": by_name[r].as_dict()})
        else:
            out.append({"name": None, "statement": str(r), "strength": None})
    return out


def bracket_ends(lower, upper, rel: float | str, digits: int) -> tuple[str, str]:
    """Decimal ends of a bracket to prove: ``lower``·(1 − w) rounded down and ``upper``·(1 + w) rounded up,
    w = ``rel`` (a relative margin, e.g. 10^−(D+2)), at ``digits`` significant digits (exact arithmetic)."""
    from fractions import Fraction

    from theorycheck.arith.decimals import fraction_of

    w = Fraction(rel) if isinstance(rel, str) else fraction_of(rel)
    lo, hi = fraction_of(lower), fraction_of(upper)
    return outward(lo * (1 - w), digits, "down"), outward(hi * (1 + w), digits, "up")


def assemble(lower: str, upper: str, collapses: FateProof, grows: FateProof, *, digits: int, method: str,
             lemmas: Sequence[str], book: LemmaBook, inputs: ExactInputs, seconds: float, note: str = "",
             digits_asked: int | None = None) -> ProvedAlphaC:
    """The bracket [lower, upper] of α_c from the proofs of its ends' fates: "proved" with the digits its
    points share when ``lower`` collapses, ``upper`` grows and every one of ``lemmas`` is proved for the
    inputs' (L, d); otherwise "not proved", with what failed in ``note`` and the strength of what it rests
    on (each lemma's strength and statement from ``book``). ``digits``: the digits aimed at (``digits_asked``:
    those the user asked, when more)."""
    dim = len(inputs.z) if inputs.z is not None else 0
    rests = lemma_strengths(lemmas, depth=inputs.depth or 2, dim=dim, book=book)
    statements = {n: book.statement(n) for n in lemmas}
    asked = int(digits_asked if digits_asked is not None else digits)
    if collapses.fate == "collapse" and grows.fate == "growth":
        D, text = common_digits(lower, upper, int(digits) + 6)
        if D < digits:
            note = (note + "; " if note else "") + (f"{D} common significant digits (asked {digits}): the bracket "
                                                    "straddles a rounding boundary")
        strength = resting_strength(rests)
        if not strength.proved:
            note = (note + "; " if note else "") + f"both ends' fates are proved, but the bracket {strength.because}"
        return ProvedAlphaC(PROVED if strength.proved else NOT_PROVED, lower, upper, D, asked, method,
                            list(lemmas), collapses, grows, seconds, note, text, inputs, strength, tuple(rests),
                            statements=statements)
    why = [f"α = {f.alpha}: {f.fate or 'not decided'} ({f.why or f.lemma})"
           for f, want in ((collapses, "collapse"), (grows, "growth")) if f.fate != want]
    note = "; ".join(([note] if note else []) + why)
    return ProvedAlphaC(NOT_PROVED, None, None, 0, asked, method, list(lemmas), collapses, grows, seconds, note,
                        None, inputs, not_decided(note), tuple(rests), statements=statements)

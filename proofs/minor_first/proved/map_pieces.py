"""The pieces of a proved regime map and the map itself: one sub-interval of α with its status (proved or
undecided), fate, j† sequence and switch-time enclosures (:class:`Piece`), the map that lists them in α order
(:class:`RegimeMap`), the strength a proved piece takes from the lemmas it rests on, and the joining of
neighbouring proved pieces (undecided pieces are never merged)."""


from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from theorycheck.arith.decimals import exact_decimal as _dec
from theorycheck.arith.decimals import scaled as _scaled
from theorycheck.arith.exact import INPUTS_KEYS
from theorycheck.record import Keys, ListOf
from theorycheck.status import Budget
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength, not_decided

__all__ = ["PROVED", "UNDECIDED", "COLLAPSE", "GROWTH", "Piece", "RegimeMap", "MAP_BUDGET", "undecided_piece",
           "proved_piece", "rescale_times", "merge_pieces"]

PROVED, UNDECIDED = "proved", "undecided"
COLLAPSE, GROWTH = "collapse", "growth"


@dataclass
class Piece:
    """One sub-interval [lower, upper] of α: ``status`` proved | undecided; when proved its ``fate``,
    ``sequence`` (j† from the start, every value in order, 0 last for a collapse) and
    ``switch_times`` (one enclosure [lo, hi] per switch, decimal strings; hi None when only a lower
    bound is known), ``collapse_time`` (an enclosure), ``reason`` (how it was decided or why not), ``steps``
    (validated steps spent on it) and ``strength`` (proved only when the lemmas it rests on are; undecided
    pieces: not decided, because of the budget or limit that stopped them)."""

    lower: Fraction
    upper: Fraction
    status: str
    fate: str | None = None
    sequence: list = field(default_factory=list)
    switch_times: list = field(default_factory=list)
    collapse_time: list | None = None
    reason: str = ""
    steps: int = 0
    blowup_time: list | None = None
    sequence_complete: bool = True
    strength: Strength | None = None
    because: str | None = None

    def width(self) -> float:
        return float(self.upper - self.lower)

    def as_dict(self) -> dict:
        strength = self.strength or not_decided(self.because or self.reason or None)
        return {"lower": _dec(self.lower), "upper": _dec(self.upper), "status": self.status, "fate": self.fate,
                "sequence": list(self.sequence), "switch_times": [list(t) for t in self.switch_times],
                "collapse_time": self.collapse_time, "blowup_time": self.blowup_time,
                "sequence_complete": self.sequence_complete, "width": self.width(), "reason": self.reason,
                "steps": self.steps, "strength": strength.as_dict()}


def undecided_piece(lo, hi, reason: str, because: str, steps: int = 0) -> Piece:
    return Piece(lo, hi, UNDECIDED, reason=reason, steps=steps, because=because)


class RegimeMap:
    """The result of :func:`proved_regime_map`. ``as_dict()`` keys: optimizer, depth, z, rho (the exact inputs,
    decimal strings), inputs, alpha_range ([A, B] decimal strings), regime_map (the pieces, in α order: see
    :class:`Piece`), proved_width, undecided_width, steps, seconds, method, rests_on, stopped (the budget that
    ran out, or None), strength (the weakest of the pieces')."""

    KEYS = Keys("thresholds.regime_map", "optimizer", "depth", "z", "rho", "alpha_range", "proved_width",
                "undecided_width", "steps", "seconds", "method", "rests_on", "stopped", inputs=INPUTS_KEYS,
                strength=STRENGTH_KEYS,
                regime_map=ListOf(Keys("thresholds.piece", "lower", "upper", "status", "fate", "sequence",
                                       "switch_times", "collapse_time", "blowup_time", "sequence_complete",
                                       "width", "reason", "steps", strength=STRENGTH_KEYS)))

    def __init__(self, values: dict, pieces: list[Piece]):
        self.values = values
        self.pieces = pieces

    def __getitem__(self, key):
        return self.as_dict()[key]

    def as_dict(self) -> dict:
        out = dict(self.values)
        out["regime_map"] = [p.as_dict() for p in self.pieces]
        out["proved_width"] = sum(p.width() for p in self.pieces if p.status == PROVED)
        out["undecided_width"] = sum(p.width() for p in self.pieces if p.status != PROVED)
        out["steps"] = sum(p.steps for p in self.pieces)
        strengths = [p.strength or not_decided(p.because or p.reason or None) for p in self.pieces]
        out["strength"] = Strength.weakest(strengths).as_dict() if strengths else not_decided().as_dict()
        return out


#: a proved map's limits when none are given: validated steps in all and per piece, pieces tried, no clock (a map
#: then does not depend on the load of the machine)
MAP_BUDGET = Budget(max_steps=200_000, piece_steps=20_000, max_pieces=400, max_seconds=math.inf)



@lru_cache(maxsize=64)
def _resting(rests: tuple, depth: int, d: int) -> Strength:
    """The strength of a piece whose computation is proved, resting on ``rests`` at (depth, d)."""
    from theorycheck.proofs.minor_first.lemmas import BOOK

    from theorycheck.proved.lemmas import lemma_strengths, resting_strength

    return resting_strength(lemma_strengths(rests, depth=depth, dim=d, book=BOOK))


def proved_piece(p: Piece, rests: tuple, depth: int, d: int) -> Piece:
    """``p`` (computed as proved) with its strength; a piece whose lemmas are not all proved for (depth, d) is
    not called proved: it is undecided, and says what it would have been and what it rests on."""
    s = _resting(rests, depth, d)
    if s.proved:
        p.strength = s
        return p
    what = f"{p.fate}, j† sequence {p.sequence}" if p.fate else f"j† sequence {p.sequence}"
    return Piece(p.lower, p.upper, UNDECIDED, reason=f"computed {what}, but it {s.because}", steps=p.steps,
                 strength=s, because=s.because)



def rescale_times(p: Piece, s: float) -> None:
    """Times of a piece computed on z/s back to z's clock (τ_z = τ_{z/s} / s)."""
    if s == 1.0:
        return
    p.switch_times = [[_scaled(a, s, False), _scaled(b, s, True)] for a, b in p.switch_times]
    if p.collapse_time:
        p.collapse_time = [_scaled(p.collapse_time[0], s, False), _scaled(p.collapse_time[1], s, True)]


def merge_pieces(pieces: list[Piece]) -> list[Piece]:
    """Join neighbouring proved pieces with the same fate and sequence (switch enclosures: hulls);
    undecided pieces are kept apart, never merged."""
    out: list[Piece] = []
    for p in pieces:
        q = out[-1] if out else None
        if (q is not None and p.status == PROVED and q.status == PROVED and p.fate == q.fate
                and p.sequence == q.sequence and p.sequence_complete == q.sequence_complete
                and q.upper == p.lower and q.strength == p.strength):
            q.upper = p.upper
            q.steps += p.steps
            q.switch_times = [_hull_text(a, b) for a, b in zip(q.switch_times, p.switch_times)]
            if q.collapse_time and p.collapse_time:
                q.collapse_time = _hull_text(q.collapse_time, p.collapse_time)
            if q.blowup_time and p.blowup_time:
                q.blowup_time = _hull_text(q.blowup_time, p.blowup_time)
            if p.reason != q.reason:
                q.reason = q.reason.split(";")[0] + "; (joined with neighbouring proved pieces)"
            continue
        out.append(p)  # two undecided pieces stay two pieces (each with its width)
    return out


def _hull_text(a, b) -> list:
    """The hull of two enclosures [lo, hi] (decimal strings; hi None: only a lower bound), exactly."""
    lo = min(a[0], b[0], key=Fraction)
    hi = None if a[1] is None or b[1] is None else max(a[1], b[1], key=Fraction)
    return [lo, hi]


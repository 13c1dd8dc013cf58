"""Statements proved for every input in a box, by ball arithmetic (python-flint's Arb).

A :class:`Box` is a product of closed intervals of named inputs (``z1``, ``alpha2``, ``rho``, …;
ends are floats, i.e. exact binary numbers; an end given as a decimal string, a Fraction or an
:class:`~theorycheck.arith.exact.Exact` is rounded outwards to a float, so that the box contains the
interval typed) and fixed integers (``L``). A *statement* maps the
balls of a box to a :class:`Decision`: ``proved`` (true at every point of the box: the branch
conditions are certain and every comparison is decided by interval evaluation), ``refuted``
(false at the box's points — a point box is a counterexample), or ``undecided`` (optionally with
a ``hint``: a point worth testing, e.g. where two scores tie). :func:`prove_on_box` splits
undecided boxes (widest relative side first) within a budget: the answer is ``proved`` only
when every piece is proved, ``refuted`` as soon as a point is, and ``undecided`` otherwise,
with the undecided pieces listed — never merged into a proved neighbour. These three words are the
decision on the box; how strong the answer is (:class:`~theorycheck.strength.Strength`: proved only
when every theorem it rests on is proved for its depth and dimension) is :attr:`BoxProof.strength`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from theorycheck.arith.exact import exact
from theorycheck.proved.lemmas import LemmaBook, lemma_strengths, resting_strength
from theorycheck.strength import Strength, not_decided, proved

PROVED, REFUTED, UNDECIDED = "proved", "refuted", "undecided"

__all__ = ["PROVED", "REFUTED", "UNDECIDED", "Box", "BoxProof", "Decision", "certain_argmax", "prove_on_box",
           "sign"]


@contextmanager
def _precision(bits: int) -> Iterator[None]:
    from flint import ctx

    old = ctx.prec
    ctx.prec = int(bits)
    try:
        yield
    finally:
        ctx.prec = old


def _exact(x: float):
    """The arb of a float's exact binary value."""
    return exact(float(x)).ball()


def _outward(v, up: bool) -> float:
    """An end of a box side as a float: a float as it is; an exact number (decimal string, Fraction, Exact)
    rounded outwards (down for a lower end, ``up`` for an upper one) so that the side contains it."""
    if isinstance(v, float | int) and not isinstance(v, bool):
        return float(v)
    q = exact(v, "box side").value
    f = float(q)
    if up and Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    elif not up and Fraction(f) > q:
        f = math.nextafter(f, -math.inf)
    return f


def _ball(lo: float, hi: float):
    """A ball containing [lo, hi] exactly (both ends are binary numbers)."""
    from flint import arb

    a, b = _exact(lo), _exact(hi)
    if lo == hi:
        return a
    mid = (a + b) / 2
    rad = ((b - a) / 2).upper()  # an upper bound of the half-width
    return arb(mid.mid(), arb(rad) + mid.rad())


@dataclass(frozen=True)
class Box:
    """``bounds``: (name, lo, hi) per real input (lo ≤ hi, floats); ``fixed``: integer inputs."""

    bounds: tuple[tuple[str, float, float], ...]
    fixed: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, bounds: Mapping[str, tuple[float, float] | float], fixed: Mapping[str, int] | None = None) -> Box:
        b = []
        for k, v in bounds.items():
            lo, hi = (v, v) if not isinstance(v, (tuple, list)) else (v[0], v[1])
            lo, hi = _outward(lo, False), _outward(hi, True)
            if not lo <= hi:
                raise ValueError(f"box side {k}: lower end {lo} above upper end {hi}")
            b.append((k, lo, hi))
        return cls(tuple(b), tuple(sorted((fixed or {}).items())))

    def balls(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: _ball(lo, hi) for k, lo, hi in self.bounds}
        out.update(dict(self.fixed))
        return out

    def center(self) -> dict[str, float]:
        return {k: 0.5 * (lo + hi) for k, lo, hi in self.bounds}

    def point(self, values: Mapping[str, float]) -> Box:
        """The point box at ``values`` (names not given: the centre)."""
        c = self.center()
        c.update(values)
        return Box(tuple((k, float(c[k]), float(c[k])) for k, _, _ in self.bounds), self.fixed)

    def contains(self, values: Mapping[str, float]) -> bool:
        return all(lo <= values.get(k, lo) <= hi for k, lo, hi in self.bounds)

    def width(self) -> float:
        """The largest relative side (side / max(1, |centre|))."""
        return max(((hi - lo) / max(1.0, abs(0.5 * (lo + hi))) for _, lo, hi in self.bounds), default=0.0)

    def split(self) -> tuple[Box, Box]:
        i = max(range(len(self.bounds)),
                key=lambda j: (self.bounds[j][2] - self.bounds[j][1]) / max(1.0, abs(sum(self.bounds[j][1:]) / 2)))
        k, lo, hi = self.bounds[i]
        mid = 0.5 * (lo + hi)
        left = self.bounds[:i] + ((k, lo, mid),) + self.bounds[i + 1:]
        right = self.bounds[:i] + ((k, mid, hi),) + self.bounds[i + 1:]
        return Box(left, self.fixed), Box(right, self.fixed)

    def as_dict(self) -> dict:
        """Sides as [lo, hi] decimal strings (repr of the floats: exact round trip), fixed inputs as ints."""
        return {**{k: [repr(lo), repr(hi)] for k, lo, hi in self.bounds}, **dict(self.fixed)}


@dataclass
class Decision:
    """A statement's answer on one box (see the module docstring)."""

    kind: str
    detail: dict = field(default_factory=dict)
    hint: dict | None = None


Statement = Callable[[dict, Box], Decision]


@dataclass
class BoxProof:
    """The outcome of :func:`prove_on_box`: ``status`` proved | refuted | undecided; ``proved`` and
    ``undecided`` pieces; ``counterexample`` (a point and what the statement says there) when
    refuted; ``facts`` (the detail of the first proved piece: e.g. enclosures) and ``rests_on``
    (the theorems whose symbolic steps the statement uses), each with its strength for the box's depth and
    dimension in :attr:`strength`."""

    status: str
    box: Box
    proved: list[Box]
    undecided: list[Box]
    counterexample: dict | None
    evaluations: int
    seconds: float
    precision_bits: int
    rests_on: tuple[str, ...] = ()
    facts: dict = field(default_factory=dict)
    stopped: str | None = None
    #: the pack's lemmas that ``rests_on`` names (:class:`theorycheck.proved.lemmas.LemmaBook`)
    book: LemmaBook | None = field(default=None, repr=False, compare=False)

    @property
    def strength(self) -> Strength:
        """How strong the decision is: a proved (or refuted) box rests on the theorems of ``rests_on``
        (:func:`theorycheck.proved.lemmas.resting_strength`, in the pack's ``book``; a refutation is a point evaluated in ball
        arithmetic, proved on its own); an undecided one is not decided (the budget that ran out)."""
        if self.status == REFUTED:
            return proved()
        if self.status != PROVED:
            return not_decided(self.stopped or "pieces narrower than the smallest width are undecided")
        fixed = dict(self.box.fixed)
        dim = fixed.get("d") or max(1, sum(1 for k, _, _ in self.box.bounds if k.startswith("z")))
        return resting_strength(lemma_strengths(self.rests_on, depth=fixed.get("L", 2), dim=dim, book=self.book))

    def as_dict(self) -> dict:
        """Keys: status (the decision: proved | refuted | undecided), box, rests_on, strength, proved_pieces,
        undecided, undecided_count, counterexample, facts, evaluations, seconds, precision_bits, stopped."""
        return {"status": self.status, "box": self.box.as_dict(), "rests_on": list(self.rests_on),
                "strength": self.strength.as_dict(),
                "proved_pieces": len(self.proved),
                "undecided": [{"box": b.as_dict(), "width": b.width()} for b in self.undecided[:20]],
                "undecided_count": len(self.undecided), "counterexample": self.counterexample,
                "facts": self.facts, "evaluations": self.evaluations, "seconds": round(self.seconds, 3),
                "precision_bits": self.precision_bits, "stopped": self.stopped}


def sign(x) -> int | None:
    """+1 / −1 when the ball is certainly positive / negative, 0 when it is exactly 0, None when undecided."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    if x.is_exact() and x.is_zero():
        return 0
    return None


def certain_argmax(scores: Mapping[int, Any]) -> tuple[int | None, list[int]]:
    """(i, []) when scores[i] > scores[j] is certain for every other j; else (None, the candidates:
    the indices whose ball overlaps the largest lower end)."""
    if not scores:
        return None, []
    keys = list(scores)
    for i in keys:
        if all(scores[i] > scores[j] for j in keys if j != i):
            return i, []
    best_lo = max(scores[i].lower() for i in keys)
    return None, [i for i in keys if scores[i].upper() >= best_lo]


def prove_on_box(statement: Statement, box: Box, *, max_boxes: int = 4000, max_seconds: float = 20.0,
                 precision_bits: int = 128, min_width: float = 1e-12,
                 rests_on: tuple[str, ...] = (), book: LemmaBook | None = None) -> BoxProof:
    """Decide ``statement`` for every point of ``box`` by interval evaluation and bisection (see the
    module docstring); a proof rests on the lemmas ``rests_on`` of the pack's ``book``. Budgets: ``max_boxes`` evaluations, ``max_seconds``; pieces narrower than
    ``min_width`` (relative) are left undecided. Hints of undecided pieces are tested as points."""
    t0 = time.perf_counter()
    queue, proved, undecided = [box], [], []
    n, facts, tried_hints = 0, {}, set()
    stopped = None
    with _precision(precision_bits):
        while queue:
            if n >= max_boxes:
                stopped = f"{max_boxes} box evaluations"
                break
            if time.perf_counter() - t0 > max_seconds:
                stopped = f"{max_seconds:g} s"
                break
            b = queue.pop()
            n += 1
            dec = statement(b.balls(), b)
            if dec.kind == PROVED:
                proved.append(b)
                if not facts:
                    facts = dec.detail
                continue
            if dec.kind == REFUTED:
                pt = b.center() if b.width() == 0 else None
                if pt is None:  # false on the whole piece: its centre is a counterexample
                    cb = b.point({})
                    cdec = statement(cb.balls(), cb)
                    pt, dec = (cb.center(), cdec) if cdec.kind == REFUTED else (b.center(), dec)
                return BoxProof(REFUTED, box, proved, undecided + queue, {"input": pt, "detail": dec.detail},
                                n, time.perf_counter() - t0, precision_bits, rests_on, facts, book=book)
            if dec.hint is not None:
                key = tuple(sorted(dec.hint.items()))
                if key not in tried_hints and b.contains(dec.hint):
                    tried_hints.add(key)
                    pb = b.point(dec.hint)
                    n += 1
                    pdec = statement(pb.balls(), pb)
                    if pdec.kind == REFUTED:
                        return BoxProof(REFUTED, box, proved, undecided + queue + [b],
                                        {"input": pb.center(), "detail": pdec.detail}, n,
                                        time.perf_counter() - t0, precision_bits, rests_on, facts, book=book)
            if b.width() <= min_width:
                undecided.append(b)
                continue
            queue.extend(b.split())
    undecided.extend(queue)
    status = PROVED if not undecided else UNDECIDED
    return BoxProof(status, box, proved, undecided, None, n, time.perf_counter() - t0, precision_bits, rests_on,
                    facts, stopped, book=book)

"""Claims as checks with verdicts: a registry, and a runner that draws inputs with hypothesis.

A :class:`Claim` has hypotheses (a hypothesis strategy of valid inputs, plus pinned edge
cases), a check that computes the prediction and the observation for one input and says
whether they agree within the tolerance, and optionally a *refined* statement (another
Claim) that the tool found to hold where the original fails. The runner gives a
:class:`ClaimVerdict` whose ``status`` is a :class:`Verdict`:

- ``proved``: (``verify --prove``) true for every input in the stated boxes, by ball arithmetic
  and the theorems it rests on (the boxes are in ``proof``);
- ``holds``: every input tried agreed;
- ``fails``: some input disagreed — the counterexample is the one hypothesis shrank to;
- ``inconclusive``: no disagreement, but some check ran out of budget (never "holds");
- ``error``: a check raised (a bug of the tool, reported with the input, never hidden).

The runner is :mod:`theorycheck.claims.runner`, the registry :mod:`theorycheck.claims.registry`;
a pack's manifest lists its claims; a user registers their own with :func:`theorycheck.register_claim`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # hypothesis is imported by the runner, when claims run
    from hypothesis import strategies as st

class Verdict(StrEnum):
    """What a claim's check found (a member is its word: it prints and serialises to JSON as
    that word). ``ok``: not a failure and not a bug."""

    #: (``verify --prove``) true for every input in the stated boxes
    PROVED = "proved"
    HOLDS = "holds"
    FAILS = "fails"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"

    @property
    def ok(self) -> bool:
        return self not in (Verdict.FAILS, Verdict.ERROR)


HOLDS, FAILS, INCONCLUSIVE, ERROR = Verdict.HOLDS, Verdict.FAILS, Verdict.INCONCLUSIVE, Verdict.ERROR
PROVED = Verdict.PROVED


@dataclass
class Outcome:
    """One input's result: ``ok`` True (agrees), False (disagrees) or None (a budget ran
    out: inconclusive); ``deviation`` the measured distance between prediction and
    observation (in the claim's unit); ``detail`` numbers worth showing."""

    ok: bool | None
    deviation: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # numpy booleans are not `False`: normalise once, here
        if self.ok is not None:
            self.ok = bool(self.ok)
        self.deviation = float(self.deviation)


@dataclass
class Claim:
    """One checkable statement of THEORY.md."""

    key: str
    statement: str
    inputs: st.SearchStrategy
    check: Callable[[Any], Outcome]
    tolerance: str
    pinned: Sequence[Any] = ()
    refined: Claim | None = None
    describe: Callable[[Any], dict] = field(default=lambda x: x)  # inputs -> JSON-able dict
    max_examples: int | None = None  # cap for expensive checks (None: the profile's number)
    #: ``prover(max_seconds=…) -> list[BoxProof]`` (proved/boxes.py): the claim decided on stated boxes of
    #: inputs by ball arithmetic (``verify --prove``); None: the claim is only sampled
    prover: Callable[..., list] | None = None


@dataclass
class ClaimVerdict:
    """A claim's verdict with its numbers (``status`` a :class:`Verdict`)."""

    key: str
    statement: str
    status: Verdict
    tried: int
    inconclusive: int
    worst_deviation: float | None
    tolerance: str
    seconds: float
    counterexample: dict | None = None
    counterexample_detail: dict | None = None
    message: str = ""
    refined: ClaimVerdict | None = None
    #: the first few inputs whose check ran out of budget, each {"input", "detail"} (what ran out)
    inconclusive_examples: list = field(default_factory=list)
    #: ``verify --prove``: one BoxProof dict per stated box (status, box, undecided pieces, counterexample)
    proof: list | None = None
    #: checks of pinned edge cases, and of drawn inputs (with hypothesis's shrinking steps after a
    #: disagreement): ``tried`` = ``pinned`` + ``drawn``
    pinned: int = 0
    drawn: int = 0
    #: drawn inputs asked for (the profile's or ``examples``), and the claim's own cap (its
    #: ``max_examples``) when it is below that; hypothesis draws at most min(requested, cap)
    requested: int = 0
    cap: int | None = None

    def rows(self, depth: int = 0) -> list[tuple]:
        """Table rows (claim, verdict, tried, worst deviation, statement or counterexample) of this
        verdict and its refined statement's, for :meth:`_repr_markdown_`."""
        from theorycheck.markdown import number

        tried = f"{self.tried} ({self.pinned} pinned + {self.drawn} drawn"
        tried += f"; capped at {self.cap} of {self.requested}" if self.cap is not None else ""
        tried += f"; {self.inconclusive} out of budget)" if self.inconclusive else ")"
        what = self.statement
        if self.counterexample is not None:
            what += f" — counterexample: {self.counterexample}"
        elif self.message:
            what += f" — {self.message}"
        out = [("↳ " * depth + self.key, self.status, tried, number(self.worst_deviation, 3), what)]
        return out + (self.refined.rows(depth + 1) if self.refined is not None else [])

    def _repr_markdown_(self) -> str:
        from theorycheck.markdown import table

        return table(("claim", "verdict", "tried", "worst deviation", "statement"), self.rows())

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("key", "statement", "status", "tried", "pinned", "drawn", "requested",
                                            "cap", "inconclusive", "worst_deviation", "tolerance", "seconds",
                                            "counterexample", "counterexample_detail", "message",
                                            "inconclusive_examples", "proof")}
        d["seconds"] = round(self.seconds, 3)
        d["refined"] = self.refined.as_dict() if self.refined else None
        return d

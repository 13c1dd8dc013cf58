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
- ``inconclusive``: no disagreement, but some check was not decided (a budget ran out, data are missing, a
  statistic's interval straddles its threshold: the check's detail says which; never "holds");
- ``error``: a check raised (a bug of the tool, reported with the input, never hidden).

A claim may also declare a fixed ``grid`` of inputs (e.g. 40 regression problems): every one is
checked, none shrunk, and the verdict reports how many fail (:class:`GridCount`: "fails on 36 of 40
problems") beside the counterexample hypothesis shrank to. Every verdict carries a
:class:`~theorycheck.strength.Strength` (``strength``): proved, a floating-point check (a
disagreement found at the check's precision), holds on N inputs, or not decided.

The runner is :mod:`theorycheck.claims.runner`, the registry :mod:`theorycheck.claims.registry`;
a pack's manifest lists its claims; a user registers their own with :func:`theorycheck.register_claim`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from theorycheck.record import Keys, ListOf
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength

if TYPE_CHECKING:  # hypothesis is imported by the runner, when claims run
    from hypothesis import strategies as st

#: the columns of a verdict table (notebook view)
COLUMNS = ("claim", "verdict", "strength", "tried", "worst deviation", "statement")

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
    #: a fixed grid of inputs, every one checked (none shrunk): the verdict's failure rate on it
    #: (:class:`GridCount`); a callable is called once, when the claim runs (building a grid may cost)
    grid: Sequence[Any] | Callable[[], Sequence[Any]] = ()
    #: the working precision of one check (None: float64; D: mpmath at D digits): the strength of a
    #: disagreement the check finds
    digits: int | None = None
    #: checks hypothesis may spend shrinking a disagreement once it found one (None: no limit); past it,
    #: inputs not yet checked count as agreeing, so the counterexample is the smallest failing input found
    #: so far (for expensive checks: a budget in checks, not seconds)
    shrink_budget: int | None = None

    def grid_inputs(self) -> list:
        """The claim's grid of inputs (``grid`` called when it is a callable)."""
        return list(self.grid() if callable(self.grid) else self.grid)


#: failing grid inputs kept per verdict (shown by ``theorycheck verify``)
MAX_GRID_SHOWN = 3


@dataclass
class GridCount:
    """A claim's failure rate on its fixed grid: ``tried`` inputs checked, ``failed`` of them
    disagree, ``inconclusive`` were not decided; ``failures``: the first few failing inputs,
    each {"input", "deviation"}."""

    tried: int = 0
    failed: int = 0
    inconclusive: int = 0
    failures: list = field(default_factory=list)

    @property
    def text(self) -> str:
        """"fails on 36 of 40 grid inputs" (with "(2 not decided)" when some were not)."""
        what = f"fails on {self.failed} of {self.tried} grid inputs" if self.failed else \
            f"no failure on {self.tried} grid inputs"
        return what + (f" ({self.inconclusive} not decided)" if self.inconclusive else "")

    def as_dict(self) -> dict:
        """The ``grid`` key of a verdict's JSON: tried, failed, inconclusive, failures, text."""
        return {"tried": self.tried, "failed": self.failed, "inconclusive": self.inconclusive,
                "failures": list(self.failures), "text": self.text}


@dataclass
class ClaimVerdict:
    """A claim's verdict with its numbers (``status`` a :class:`Verdict`). ``KEYS``: a verdict as
    ``verify --json`` prints it (``pack`` is added there; a refined statement has none; meanings:
    docs/commands/verify.md); a ``proof`` item is a box proof (:class:`theorycheck.proved.boxes.BoxProof`)."""

    KEYS = Keys("verify.claim", "key", "statement", "status", "tried", "pinned", "drawn", "requested", "cap",
                "inconclusive", "worst_deviation", "tolerance", "seconds", "counterexample",
                "counterexample_detail", "message", "pack",
                grid=Keys("verify.grid", "tried", "failed", "inconclusive", "text",
                          failures=ListOf(Keys("verify.grid_failure", "input", "deviation"))),
                strength=STRENGTH_KEYS,
                inconclusive_examples=ListOf(Keys("verify.inconclusive_example", "input", "detail")),
                proof=ListOf(Keys("verify.box_proof", "status", "box", "rests_on", "proved_pieces",
                                  "undecided_count", "facts", "evaluations", "seconds", "precision_bits", "stopped",
                                  strength=STRENGTH_KEYS,
                                  undecided=ListOf(Keys("verify.undecided_box", "box", "width")),
                                  counterexample=Keys("verify.box_counterexample", "input", "detail"))))

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
    #: the first few inputs whose check was not decided, each {"input", "detail"} (why: what ran out, what is missing)
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
    #: the failure rate on the claim's fixed grid (None: the claim declares none, or grids were skipped)
    grid: GridCount | None = None
    #: how strong the verdict is (:mod:`theorycheck.strength`); None only while the runner builds it
    strength: Strength | None = None

    def rows(self, depth: int = 0) -> list[tuple]:
        """Table rows (claim, verdict, tried, worst deviation, statement or counterexample) of this
        verdict and its refined statement's, for :meth:`_repr_markdown_`."""
        from theorycheck.markdown import number

        tried = f"{self.tried} ({self.pinned} pinned + " + (f"{self.grid.tried} grid + " if self.grid else "")
        tried += f"{self.drawn} drawn"
        tried += f"; capped at {self.cap} of {self.requested}" if self.cap is not None else ""
        tried += f"; {self.inconclusive} not decided)" if self.inconclusive else ")"
        what = self.statement
        if self.grid is not None:
            what += f" — {self.grid.text}"
        if self.counterexample is not None:
            what += f" — counterexample: {self.counterexample}"
        elif self.message:
            what += f" — {self.message}"
        out = [("↳ " * depth + self.key, self.status, self.strength.text if self.strength else "—", tried,
                number(self.worst_deviation, 3), what)]
        return out + (self.refined.rows(depth + 1) if self.refined is not None else [])

    def _repr_markdown_(self) -> str:
        from theorycheck.markdown import table

        return table(COLUMNS, self.rows())

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("key", "statement", "status", "tried", "pinned", "drawn", "requested",
                                            "cap", "inconclusive", "worst_deviation", "tolerance", "seconds",
                                            "counterexample", "counterexample_detail", "message",
                                            "inconclusive_examples", "proof")}
        d["seconds"] = round(self.seconds, 3)
        d["grid"] = self.grid.as_dict() if self.grid is not None else None
        d["strength"] = self.strength.as_dict() if self.strength is not None else None
        d["refined"] = self.refined.as_dict() if self.refined else None
        return d


ClaimVerdict.KEYS.nest({"refined": ClaimVerdict.KEYS})  # a refined statement has a verdict of its own

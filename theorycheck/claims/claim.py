"""Claims as checks with verdicts: a registry, and a runner that draws inputs with hypothesis.

A :class:`Claim` has hypotheses (a hypothesis strategy of valid inputs, plus pinned edge
cases), a check that computes the prediction and the observation for one input and says
whether they agree within the tolerance, and optionally a *refined* statement (another
Claim) that the tool found to hold where the original fails. The runner gives a
:class:`Verdict`:

- ``holds``: every input tried agreed;
- ``fails``: some input disagreed — the counterexample is the one hypothesis shrank to;
- ``inconclusive``: no disagreement, but some check ran out of budget (never "holds");
- ``error``: a check raised (a bug of the tool, reported with the input, never hidden).

Claims are registered by ``proofs/`` beside their derivations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from theorycheck.report.plain import to_plain

HOLDS, FAILS, INCONCLUSIVE, ERROR = "holds", "fails", "inconclusive", "error"

#: examples per claim for each profile of ``theorycheck verify``
PROFILES: dict[str, int] = {"fast": 12, "thorough": 100}


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


@dataclass
class Verdict:
    key: str
    statement: str
    status: str
    tried: int
    inconclusive: int
    worst_deviation: float | None
    tolerance: str
    seconds: float
    counterexample: dict | None = None
    counterexample_detail: dict | None = None
    message: str = ""
    refined: Verdict | None = None
    #: the first few inputs whose check ran out of budget, each {"input", "detail"} (what ran out)
    inconclusive_examples: list = field(default_factory=list)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("key", "statement", "status", "tried", "inconclusive",
                                            "worst_deviation", "tolerance", "seconds", "counterexample",
                                            "counterexample_detail", "message", "inconclusive_examples")}
        d["seconds"] = round(self.seconds, 3)
        d["refined"] = self.refined.to_dict() if self.refined else None
        return d


class _Disagrees(AssertionError):
    pass


class _Crashed(Exception):
    pass


#: inconclusive inputs kept per verdict (shown by ``theorycheck verify``)
MAX_INCONCLUSIVE_SHOWN = 3


def run_claim(claim: Claim, *, examples: int = 12, seed_: int = 0,
              progress: Callable[[str, int], None] | None = None) -> Verdict:
    """Check ``claim`` on its pinned inputs, then on ``examples`` drawn inputs; on a
    disagreement hypothesis shrinks to a minimal counterexample."""
    t0 = time.perf_counter()
    stats = {"tried": 0, "inconclusive": 0, "worst": None}
    undecided: list[dict] = []  # the first MAX_INCONCLUSIVE_SHOWN inconclusive inputs
    last_fail: dict[str, Any] = {}

    def one(x) -> Outcome:
        try:
            out = claim.check(x)
        except Exception as exc:
            last_fail["x"], last_fail["exc"] = x, exc
            raise _Crashed() from exc
        stats["tried"] += 1
        if progress:
            progress(claim.key, stats["tried"])
        if out.ok is None:
            stats["inconclusive"] += 1
            if len(undecided) < MAX_INCONCLUSIVE_SHOWN:
                undecided.append({"input": to_plain(claim.describe(x)), "detail": to_plain(out.detail)})
        elif math.isfinite(out.deviation):
            stats["worst"] = out.deviation if stats["worst"] is None else max(stats["worst"], out.deviation)
        return out

    def verdict(status, message="", ce=None, ce_detail=None) -> Verdict:
        v = Verdict(claim.key, claim.statement, status, stats["tried"], stats["inconclusive"], stats["worst"],
                    claim.tolerance, time.perf_counter() - t0, to_plain(ce), to_plain(ce_detail), message,
                    inconclusive_examples=list(undecided))
        if claim.refined is not None and status == FAILS:
            v.refined = run_claim(claim.refined, examples=examples, seed_=seed_, progress=progress)
        return v

    def crashed() -> Verdict:
        exc = last_fail["exc"]
        return verdict(ERROR, f"the check raised {type(exc).__name__}: {exc}", claim.describe(last_fail["x"]))

    pinned_fail = None
    for x in claim.pinned:
        try:
            out = one(x)
        except _Crashed:
            return crashed()
        if out.ok is False and pinned_fail is None:
            pinned_fail = (x, out)

    n = examples if claim.max_examples is None else min(examples, claim.max_examples)
    drawn_before = stats["tried"]
    if n > 0:
        @settings(max_examples=n, database=None, deadline=None, derandomize=False,
                  suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
                  report_multiple_bugs=False)
        @seed(seed_)
        @given(claim.inputs)
        def _search(x):
            out = one(x)
            if out.ok is False:
                last_fail["x"], last_fail["out"] = x, out
                raise _Disagrees()

        try:
            _search()
        except _Crashed:
            return crashed()
        except _Disagrees:
            x, out = last_fail["x"], last_fail["out"]
            msg = "hypothesis shrank a disagreement to this input"
            if pinned_fail is not None:
                msg += f" (a pinned edge case fails too: {to_plain(claim.describe(pinned_fail[0]))})"
            return verdict(FAILS, msg, claim.describe(x), out.detail)
    if pinned_fail is not None:
        x, out = pinned_fail
        drawn = stats["tried"] - drawn_before
        return verdict(FAILS, f"a pinned edge case disagrees; all {drawn} drawn inputs agree (the failure is at the "
                       "edge case, not generic)", claim.describe(x), out.detail)
    if stats["inconclusive"]:
        return verdict(INCONCLUSIVE, f"{stats['inconclusive']} of {stats['tried']} checks ran out of budget")
    return verdict(HOLDS)


REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add a claim to the registry (keys are unique, e.g. ``C4.switch-level``)."""
    if claim.key in REGISTRY:
        raise ValueError(f"claim {claim.key} registered twice")
    REGISTRY[claim.key] = claim
    return claim


def select(prefixes: Sequence[str] | None) -> list[Claim]:
    """Claims whose key equals a prefix or starts with ``prefix.`` (``C4`` selects ``C4.*``)."""
    if not prefixes:
        return list(REGISTRY.values())
    every: dict[str, Claim] = {}
    for c in REGISTRY.values():  # refined claims run with their parent; alone when named exactly
        c = c.refined
        while c is not None:
            every.setdefault(c.key, c)
            c = c.refined
    out: list[Claim] = []
    for p in prefixes:
        hits = [c for k, c in REGISTRY.items() if k == p or k.startswith(p + ".")]
        if not hits and p in every:
            hits = [every[p]]
        if not hits:
            raise KeyError(p)
        out += [c for c in hits if c not in out]
    return out

"""The prover: executable derivations as steps and theorems (public: every pack's theorems are built from it;
:func:`theorycheck.prove` runs them).

A :class:`Theorem` is a statement of THEORY.md and a list of steps. An
:class:`Identity` step is verified when ``simplify(lhs − rhs)`` is 0; when sympy cannot
decide, it is evaluated at random points with mpmath (30 digits): a nonzero value there
refutes it (the point is the counterexample), agreement everywhere is reported as
"verified numerically" — never as verified. A :class:`Fact` step runs a check function
(limits, argmax statements, sign arguments) that returns its own verdict.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import mpmath
import sympy as sp

from theorycheck.record import Keys, ListOf
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength, float_check, not_decided, proved
from theorycheck.symbolic.compiler import residual_functions


class StepStatus(StrEnum):
    """What a proof step (or a theorem, its worst step) found; a member is its word (it prints
    and serialises to JSON as that word)."""

    VERIFIED = "verified"
    NUMERIC = "verified-numerically"
    INCOMPLETE = "incomplete"
    REFUTED = "refuted"
    ERROR = "error"


VERIFIED, NUMERIC, INCOMPLETE = StepStatus.VERIFIED, StepStatus.NUMERIC, StepStatus.INCOMPLETE
REFUTED, ERROR = StepStatus.REFUTED, StepStatus.ERROR

#: how each status is shown in the terminal
MARKS = {VERIFIED: "✓", NUMERIC: "≈", INCOMPLETE: "◐", REFUTED: "✗", ERROR: "!"}


@dataclass
class StepResult:
    status: StepStatus
    detail: str = ""
    counterexample: dict[str, Any] | None = None
    seconds: float = 0.0


def _domain(sym: sp.Symbol) -> tuple[float, float]:
    if sym.is_positive:
        return (0.05, 3.0)
    if sym.is_nonnegative:
        return (0.0, 3.0)
    return (-3.0, 3.0)


def _as_list(expr) -> list[sp.Expr]:
    if isinstance(expr, sp.MatrixBase):
        return list(expr)
    if isinstance(expr, (list, tuple)):
        return [e for x in expr for e in _as_list(x)]
    return [sp.sympify(expr)]


def numeric_residual(diffs: list[sp.Expr], points: int = 12, seed: int = 0, dps: int = 30,
                     domains: dict[sp.Symbol, tuple[float, float]] | None = None,
                     constraint: Callable[[dict], bool] | None = None) -> tuple[float, dict | None]:
    """Largest |diff| over random points (mpmath, ``dps`` digits), and the worst point."""
    syms = sorted(set().union(*[d.free_symbols for d in diffs]), key=str)
    rng = random.Random(seed)
    worst, worst_pt = 0.0, None
    fns = residual_functions(syms, diffs)
    tried = 0
    with mpmath.workdps(dps):
        while tried < points:
            pt = {}
            for s_ in syms:
                lo, hi = (domains or {}).get(s_, _domain(s_))
                pt[s_] = mpmath.mpf(rng.uniform(lo, hi))
            if constraint is not None and not constraint(pt):
                continue
            tried += 1
            for f in fns:
                try:
                    v = abs(f(*[pt[s_] for s_ in syms]))
                except (ZeroDivisionError, ValueError):
                    continue
                if v > worst:
                    worst, worst_pt = float(v), {str(k): float(x) for k, x in pt.items()}
    return worst, worst_pt


class Step:
    """One step of a derivation."""

    statement: str

    def check(self) -> StepResult:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class Identity(Step):
    """``lhs = rhs`` as an identity (entrywise for matrices) under the symbols' assumptions."""

    statement: str
    lhs: Any
    rhs: Any
    simplifier: Callable[[sp.Expr], sp.Expr] = sp.simplify
    domains: dict | None = None
    constraint: Callable[[dict], bool] | None = None

    def check(self) -> StepResult:
        lhs, rhs = _as_list(self.lhs), _as_list(self.rhs)
        if len(lhs) != len(rhs):
            return StepResult(REFUTED, f"shapes differ ({len(lhs)} vs {len(rhs)} entries)")
        diffs = [sp.sympify(a) - sp.sympify(b) for a, b in zip(lhs, rhs)]
        left = [d for d in diffs if self.simplifier(d) != 0]
        if not left:
            return StepResult(VERIFIED, "difference simplifies to 0")
        worst, pt = numeric_residual(left, domains=self.domains, constraint=self.constraint)
        if worst > 1e-20:
            return StepResult(REFUTED, f"difference is {worst:.3g} at a point", counterexample=pt)
        return StepResult(NUMERIC, f"sympy could not simplify {len(left)} entr{'y' if len(left) == 1 else 'ies'} "
                          "to 0; |difference| < 1e-20 at 12 random points (30 digits)")


@dataclass
class Fact(Step):
    """A step checked by a function returning a :class:`StepResult` (limits, argmax, signs)."""

    statement: str
    fn: Callable[[], StepResult]

    def check(self) -> StepResult:
        return self.fn()


@dataclass
class Theorem:
    """A statement of THEORY.md with its derivation; ``steps`` is built lazily."""

    key: str
    title: str
    statement: str
    build: Callable[[], Iterable[Step]]
    notes: str = ""

    def run(self) -> TheoremResult:
        results: list[tuple[Step, StepResult]] = []
        for step in self.build():
            t0 = time.perf_counter()
            try:
                res = step.check()
            except Exception as exc:  # a broken step is reported, not hidden
                res = StepResult(ERROR, f"{type(exc).__name__}: {exc}")
            res.seconds = time.perf_counter() - t0
            results.append((step, res))
        return TheoremResult(self, results)


@dataclass
class TheoremResult:
    theorem: Theorem
    steps: list[tuple[Step, StepResult]] = field(default_factory=list)

    @property
    def status(self) -> str:
        order = [ERROR, REFUTED, INCOMPLETE, NUMERIC, VERIFIED]
        statuses = {r.status for _, r in self.steps}
        for s_ in order:
            if s_ in statuses:
                return s_
        return VERIFIED

    @property
    def strength(self) -> Strength:
        """How strong the theorem's status is: verified or refuted by sympy (exact) is proved, a step checked
        numerically only is a floating-point check, an incomplete or crashed step leaves it not decided."""
        s = self.status
        if s in (VERIFIED, REFUTED):
            return proved()
        if s == NUMERIC:
            return float_check()
        return not_decided("a step sympy could not decide" if s == INCOMPLETE else "a step's check crashed")

    def as_dict(self) -> dict:
        return {
            "key": self.theorem.key,
            "title": self.theorem.title,
            "statement": self.theorem.statement,
            "status": self.status,
            "strength": self.strength.as_dict(),
            "steps": [
                {"statement": s.statement, "status": r.status, "detail": r.detail,
                 "counterexample": r.counterexample, "seconds": round(r.seconds, 3)}
                for s, r in self.steps
            ],
        }


@dataclass
class ProveResult:
    """The results of :func:`prove`, in the order run. ``refuted``: keys of the theorems with a
    refuted or crashed step (the CLI's exit status is 1 when it is non-empty)."""

    #: what :meth:`as_dict` may emit (meanings: docs/commands/prove.md)
    KEYS = Keys("prove", "seconds", "refuted", strength=STRENGTH_KEYS, theorems=ListOf(Keys(
        "prove.theorem", "key", "title", "statement", "status", "pack", strength=STRENGTH_KEYS,
        steps=ListOf(Keys("prove.step", "statement", "status", "detail", "counterexample", "seconds")))))

    results: list[TheoremResult]
    seconds: float
    #: theorem key → the pack it belongs to
    packs: dict[str, str] = field(default_factory=dict)

    @property
    def refuted(self) -> list[str]:
        return [r.theorem.key for r in self.results if r.status in (REFUTED, ERROR)]

    @property
    def ok(self) -> bool:
        return not self.refuted

    def __getitem__(self, key: str) -> TheoremResult:
        for r in self.results:
            if r.theorem.key == key:
                return r
        raise KeyError(key)

    def as_dict(self) -> dict:
        """What ``theorycheck prove --json`` prints (docs/commands/prove.md)."""
        strength = Strength.weakest([r.strength for r in self.results]) if self.results else not_decided("no theorem")
        return {"theorems": [{**r.as_dict(), "pack": self.packs.get(r.theorem.key)} for r in self.results],
                "seconds": round(self.seconds, 2), "refuted": self.refuted, "strength": strength.as_dict()}


def verified(detail: str) -> StepResult:
    return StepResult(VERIFIED, detail)


def refuted(detail: str, counterexample: dict) -> StepResult:
    return StepResult(REFUTED, detail, counterexample=counterexample)


def incomplete(detail: str, counterexample: dict | None = None) -> StepResult:
    return StepResult(INCOMPLETE, detail, counterexample=counterexample)

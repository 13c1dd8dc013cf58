"""Running claims: :func:`run_claim` checks one claim on its pinned inputs and on inputs
drawn by hypothesis and gives a :class:`~theorycheck.claims.claim.ClaimVerdict`; :func:`verify_claims`
runs a selection of claims (a pack's and the user's: :func:`theorycheck.api.verify` chooses them) and gives a
:class:`VerifyResult` whose :meth:`~VerifyResult.as_dict` is what ``theorycheck verify --json`` writes."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from theorycheck.claims.claim import (
    COLUMNS,
    ERROR,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    MAX_GRID_SHOWN,
    PROVED,
    Claim,
    ClaimVerdict,
    GridCount,
    Outcome,
    Verdict,
)
from theorycheck.errors import ArgumentError
from theorycheck.jsonio import to_plain
from theorycheck.record import Keys, ListOf
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import Strength, float_check, holds_on, not_decided, proved
from theorycheck.vocabulary import PROFILES

__all__ = ["PROFILES", "VerifyResult", "run_claim", "verify_claims"]


class _Disagrees(AssertionError):
    pass


class _Crashed(Exception):
    pass


#: inconclusive inputs kept per verdict (shown by ``theorycheck verify``)
MAX_INCONCLUSIVE_SHOWN = 3


@contextmanager
def _no_local_constants() -> Iterator[None]:
    """Hypothesis (≥ 6.131) draws, with probability 1/20 per draw, a constant harvested from the
    source of every *local* module in ``sys.modules`` (not under site-packages). Which modules
    are loaded depends on what ran before in the process (packs and solvers import lazily) and
    on where theorycheck is installed, so the drawn inputs did too: ``verify --pack lp-margin
    --claims LM.l1`` and the full ``verify`` tried different inputs for LM.l1 with the same
    seed. Here the local pool is empty (the global constants, fixed by the hypothesis version,
    are kept) and hypothesis's cache of the permitted constants is cleared on entry and exit."""
    try:
        from hypothesis.internal.conjecture import providers as _p

        original, cache, empty = _p._get_local_constants, _p.CONSTANTS_CACHE, _p.Constants()
    except (ImportError, AttributeError):  # an older hypothesis without local constants
        yield
        return
    cache.cache.clear()
    _p._get_local_constants = lambda: empty
    try:
        yield
    finally:
        _p._get_local_constants = original
        cache.cache.clear()


def _first_reason(undecided: list[dict]) -> str:
    """Why the first undecided check was not decided, when its detail says so (``why``, ``reason`` or ``status``:
    a budget that ran out, data that are missing, a confidence interval that straddles 0); '' otherwise."""
    for u in undecided:
        d = u.get("detail")
        if isinstance(d, dict):
            for k in ("why", "reason", "status"):
                if d.get(k):
                    return f"first: {d[k]}"
    return ""


def _strength_of(status: Verdict, tried: int, claim: Claim, because: str = "") -> Strength:
    """A sampled verdict's strength: holds on the inputs tried; a disagreement is a floating-point check
    at the check's precision; inconclusive and error verdicts are not decided (``because`` says why)."""
    if status == HOLDS and tried > 0:
        return holds_on(tried)
    if status == FAILS:
        return float_check(claim.digits)
    return not_decided(because or "no input was tried")


def _proved_or_refuted(claim: Claim, examples: int, seed_: int, progress,
                       prove_seconds: float) -> ClaimVerdict | list:
    """``verify --prove``: the claim's prover on its stated boxes. A proved verdict when every box is
    proved, a failing one (with the point) when a box holds a counterexample, else the proof
    attempts (a list of dicts) for the sampled verdict to carry."""
    t0 = time.perf_counter()
    proofs = claim.prover(max_seconds=prove_seconds)
    dicts = [p.as_dict() for p in proofs]
    bad = next((p for p in proofs if p.status == "refuted"), None)
    if bad is not None:
        v = ClaimVerdict(claim.key, claim.statement, FAILS, 0, 0, None, claim.tolerance, time.perf_counter() - t0,
                    to_plain(bad.counterexample["input"]), to_plain(bad.counterexample["detail"]),
                    f"ball arithmetic: the statement is false at this point of the box {to_plain(bad.box.as_dict())}",
                    proof=dicts, strength=proved((k, proved()) for k in bad.rests_on))
        if claim.refined is not None:
            v.refined = run_claim(claim.refined, examples=examples, seed_=seed_, progress=progress, prove=True,
                                  prove_seconds=prove_seconds)
        return v
    if all(p.status == "proved" for p in proofs):
        rests = sorted({k for p in proofs for k in p.rests_on})
        return ClaimVerdict(claim.key, claim.statement, PROVED, 0, 0, None, claim.tolerance, time.perf_counter() - t0,
                       message=f"proved for every input in {len(proofs)} stated box(es) by ball arithmetic, resting "
                               f"on theorem(s) {', '.join(rests)}", proof=dicts,
                       strength=proved((k, proved()) for k in rests))
    return dicts


class _Tally:
    """One claim's run: every check goes through :meth:`check`, which counts it (by phase: pinned,
    grid, drawn), keeps the worst finite deviation and the first inconclusive inputs, and turns an
    exception of the check into :class:`_Crashed` (remembering the input)."""

    def __init__(self, claim: Claim, progress) -> None:
        self.claim, self.progress = claim, progress
        self.tried, self.inconclusive, self.pinned, self.worst = 0, 0, 0, None
        self.undecided: list[dict] = []  # the first MAX_INCONCLUSIVE_SHOWN inconclusive inputs
        self.crash: tuple[Any, Exception] | None = None
        self.grid: GridCount | None = None
        self.first = {}  # phase → (input, outcome) of the first disagreement there
        self.shrink_stopped = False  # the claim's shrink budget ended hypothesis's shrinking

    def check(self, x, phase: str) -> Outcome:
        try:
            out = self.claim.check(x)
        except Exception as exc:
            self.crash = (x, exc)
            raise _Crashed() from exc
        self.tried += 1
        if self.progress:
            self.progress(self.claim.key, self.tried)
        if out.ok is None:
            self.inconclusive += 1
            if len(self.undecided) < MAX_INCONCLUSIVE_SHOWN:
                self.undecided.append({"input": to_plain(self.claim.describe(x)),
                                       "detail": to_plain(out.detail, "string")})  # free-form: inf as "inf"
        elif math.isfinite(out.deviation):
            self.worst = out.deviation if self.worst is None else max(self.worst, out.deviation)
        if out.ok is False:
            self.first.setdefault(phase, (x, out))
        return out

    def run_grid(self) -> None:
        """Every input of the claim's grid, none shrunk: the failure rate (:class:`GridCount`)."""
        inputs = self.claim.grid_inputs()
        if not inputs:
            return
        self.grid = GridCount()
        for x in inputs:
            out = self.check(x, "grid")
            self.grid.tried += 1
            self.grid.inconclusive += out.ok is None
            if out.ok is False:
                self.grid.failed += 1
                if len(self.grid.failures) < MAX_GRID_SHOWN:
                    self.grid.failures.append({"input": to_plain(self.claim.describe(x)),
                                               "deviation": to_plain(out.deviation, "string")})


def _search(tally: _Tally, n: int, seed_: int) -> None:
    """``n`` inputs drawn by hypothesis (seed ``seed_``); on a disagreement hypothesis shrinks it, and the
    shrunk input is ``tally.first["drawn"]`` (hypothesis's last failing example is its minimal one). Past the
    claim's ``shrink_budget`` (checks after the first disagreement or crash), an input not checked before
    counts as agreeing, one that failed before fails again: shrinking ends on the smallest failure found."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    budget = tally.claim.shrink_budget
    seen: dict[str, Exception] = {}  # repr(input) → what it raised, once shrinking started
    spent = {"after_failure": None}

    @settings(max_examples=n, database=None, deadline=None, derandomize=False, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False)
    @seed(seed_)
    @given(tally.claim.inputs)
    def _draws(x):
        key = repr(x)
        if spent["after_failure"] is not None and budget is not None and spent["after_failure"] >= budget:
            tally.shrink_stopped = True
            if key in seen:
                raise seen[key]
            return
        if spent["after_failure"] is not None:
            spent["after_failure"] += 1
        try:
            out = tally.check(x, "drawn")
        except _Crashed as exc:
            spent["after_failure"] = spent["after_failure"] or 0
            seen[key] = exc
            raise
        if out.ok is False:
            spent["after_failure"] = spent["after_failure"] or 0
            tally.first["drawn"] = (x, out)
            seen[key] = _Disagrees()
            raise seen[key]

    try:
        with _no_local_constants():
            _draws()
    except _Disagrees:
        pass


def _failure(t: _Tally, drawn: int) -> tuple[str, Any, Outcome] | None:
    """(message, input, outcome) of the counterexample to report: hypothesis's shrunk one, else the grid's
    first failure, else the first pinned edge case that disagrees; None when nothing disagrees."""
    describe = t.claim.describe
    also = [f"a pinned edge case fails too: {to_plain(describe(t.first['pinned'][0]))}"] if "pinned" in t.first else []
    if t.grid is not None and t.grid.failed:
        also.insert(0, t.grid.text)
    if "drawn" in t.first:
        how = "hypothesis shrank a disagreement to this input"
        if t.shrink_stopped:
            how += f" (shrinking stopped at the claim's budget of {t.claim.shrink_budget} checks)"
        return (how + (f" ({'; '.join(also)})" if also else ""), *t.first["drawn"])
    if "grid" in t.first:
        return (f"{t.grid.text} (the first is shown, not shrunk); all {drawn} drawn inputs agree", *t.first["grid"])
    if "pinned" in t.first:
        return (f"a pinned edge case disagrees; all {drawn} drawn inputs agree (the failure is at the edge case, "
                "not generic)", *t.first["pinned"])
    return None


def run_claim(claim: Claim, *, examples: int = 12, seed_: int = 0,
              progress: Callable[[str, int], None] | None = None, prove: bool = False,
              prove_seconds: float = 10.0, grid: bool = True) -> ClaimVerdict:
    """Check ``claim`` on its pinned inputs, on every input of its grid (``grid``: False skips it), then
    on ``examples`` drawn inputs; on a disagreement hypothesis shrinks to a minimal counterexample, and
    the grid's failure rate is reported beside it. The drawn inputs depend only on the claim,
    ``examples`` and ``seed_`` (not on what ran before in the process: see :func:`_no_local_constants`).
    With ``prove`` and a claim that has a prover, its boxes are decided first (``prove_seconds`` per
    box): proved, or a counterexample, or (undecided) the sampled verdict with the proof attempts in
    ``proof``. The verdict's ``strength`` says how strong it is."""
    attempts = None
    if prove and claim.prover is not None:
        got = _proved_or_refuted(claim, examples, seed_, progress, prove_seconds)
        if isinstance(got, ClaimVerdict):
            return got
        attempts = got
    t0, t = time.perf_counter(), _Tally(claim, progress)
    n = examples if claim.max_examples is None else min(examples, claim.max_examples)

    def verdict(status: Verdict, message="", ce=None, ce_detail=None) -> ClaimVerdict:
        if attempts is not None:
            done = sum(a["status"] == "proved" for a in attempts)
            message = (message + "; " if message else "") + (f"ball arithmetic proved {done} of {len(attempts)} "
                                                             "stated boxes; the rest was sampled")
        grid_n = t.grid.tried if t.grid is not None else 0
        v = ClaimVerdict(claim.key, claim.statement, status, t.tried, t.inconclusive, t.worst, claim.tolerance,
                         time.perf_counter() - t0, to_plain(ce), to_plain(ce_detail, "string"), message,
                         inconclusive_examples=list(t.undecided), pinned=t.pinned,
                         drawn=t.tried - t.pinned - grid_n, requested=int(examples),
                         cap=claim.max_examples if claim.max_examples is not None and claim.max_examples < examples
                         else None, proof=attempts, grid=t.grid,
                         strength=_strength_of(status, t.tried, claim, message))
        if claim.refined is not None and status == FAILS:
            v.refined = run_claim(claim.refined, examples=examples, seed_=seed_, progress=progress, prove=prove,
                                  prove_seconds=prove_seconds, grid=grid)
        return v

    try:
        for x in claim.pinned:
            t.check(x, "pinned")
            t.pinned += 1
        if grid:
            t.run_grid()
        before = t.tried
        if n > 0:
            _search(t, n, seed_)
    except _Crashed:
        x, exc = t.crash
        return verdict(ERROR, f"the check raised {type(exc).__name__}: {exc}", claim.describe(x))
    failure = _failure(t, t.tried - before)
    if failure is not None:
        msg, x, out = failure
        return verdict(FAILS, msg, claim.describe(x), out.detail)
    if t.inconclusive:
        why = _first_reason(t.undecided)
        return verdict(INCONCLUSIVE, f"{t.inconclusive} of {t.tried} checks gave no verdict" + (f" ({why})" if why else ""))
    return verdict(HOLDS)


@dataclass
class VerifyResult:
    """The verdicts of a :func:`verify` run. ``failed``: keys of the claims that fail as
    stated or whose check crashed (the CLI's exit status is 1 when it is non-empty)."""

    profile: str
    examples: int
    seed: int
    seconds: float
    verdicts: list[ClaimVerdict]
    #: claim key → the pack it belongs to ("user" for a user's claim)
    packs: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        return [v.key for v in self.verdicts if v.status in (FAILS, ERROR)]

    @property
    def ok(self) -> bool:
        return not self.failed

    def __getitem__(self, key: str) -> ClaimVerdict:
        for v in self.verdicts:
            if v.key == key:
                return v
        raise KeyError(key)

    def _repr_markdown_(self) -> str:
        """A notebook's view: one row per claim (and refined statement), as `theorycheck verify` prints."""
        from theorycheck.markdown import table
        from theorycheck.vocabulary import counted

        head = (f"**{counted(len(self.verdicts), 'claim')}**, up to {counted(self.examples, 'drawn input')} each (profile "
                f"{self.profile}, seed {self.seed}), {self.seconds:.1f} s; "
                + (f"fail as stated: {', '.join(self.failed)}" if self.failed else "nothing fails"))
        rows = [r for v in self.verdicts for r in v.rows()]
        return head + "\n\n" + table(COLUMNS, rows)

    #: what :meth:`as_dict` may emit (meanings: docs/commands/verify.md)
    KEYS = Keys("verify", "profile", "examples", "seed", "seconds", "failed", "packs", strength=STRENGTH_KEYS,
                claims=ListOf(ClaimVerdict.KEYS))

    def as_dict(self) -> dict:
        """What ``theorycheck verify --json FILE`` writes (docs/commands/verify.md)."""
        return {"profile": self.profile, "examples": self.examples, "seed": self.seed,
                "seconds": round(self.seconds, 2),
                "claims": [{**v.as_dict(), "pack": self.packs.get(v.key)} for v in self.verdicts],
                "failed": self.failed, "packs": sorted({self.packs[v.key] for v in self.verdicts if v.key in self.packs}),
                "strength": self.strength.as_dict()}

    @property
    def strength(self) -> Strength:
        """The weakest of the verdicts' strengths (a run is as strong as its weakest verdict)."""
        return Strength.weakest([v.strength for v in self.verdicts]) if self.verdicts else not_decided("no claim")


def verify_claims(pairs: Sequence[tuple[str, Claim]], claims: Sequence[str] | str | None = None, *,
                  examples: int | None = None, seed: int = 0, profile: str = "fast",
                  on_claim: Callable[[int, int, Claim], None] | None = None,
                  progress: Callable[[str, int], None] | None = None, prove: bool = False,
                  prove_seconds: float = 10.0, grid: bool = True) -> VerifyResult:
    """Run a selection of claims and give their verdicts.

    ``pairs``: the claims to choose from, as (pack name, claim) (:func:`theorycheck.packs.candidates`);
    ``claims``: keys or prefixes (``"C4"`` selects ``C4.*``; a comma-separated string is
    split), default all of ``pairs``. ``examples``: drawn inputs per claim (default the
    ``profile``'s: fast 12, thorough 100); ``seed``: hypothesis seed (the same inputs every
    run). ``on_claim(i, n, claim)`` is called before each claim, ``progress(key, tried)``
    after each input. ``prove``: claims with a prover are first decided on their stated boxes by
    ball arithmetic (``prove_seconds`` per box): verdict ``proved``, or a counterexample. ``grid``: check
    every input of the claims' fixed grids and report their failure rates (False: skip the grids)."""
    from theorycheck.claims.registry import pack_of, select

    if profile not in PROFILES:
        raise ArgumentError(f"profile={profile!r}: choose one of {', '.join(PROFILES)}", "profile")
    if examples is not None and (isinstance(examples, bool) or int(examples) != examples or examples < 0):
        raise ArgumentError(f"examples={examples!r}: give a whole number ≥ 0", "examples")
    n_examples = int(examples) if examples is not None else PROFILES[profile]
    if isinstance(claims, str):
        claims = [p.strip() for p in claims.split(",") if p.strip()]
    pairs = list(pairs)
    try:
        chosen = select(list(claims) if claims else None, [c for _, c in pairs])
    except KeyError as exc:
        raise ArgumentError(f"claims={exc.args[0]!r}: no claim matches (the packs' keys: "
                            "packs.get(name).claims())", "claims") from None
    verdicts = []
    t0 = time.perf_counter()
    for i, c in enumerate(chosen, 1):
        if on_claim is not None:
            on_claim(i, len(chosen), c)
        verdicts.append(run_claim(c, examples=n_examples, seed_=seed, progress=progress, prove=prove,
                                  prove_seconds=prove_seconds, grid=grid))
    return VerifyResult(profile, n_examples, seed, time.perf_counter() - t0, verdicts, pack_of(pairs))

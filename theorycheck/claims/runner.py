"""Running claims: :func:`run_claim` checks one claim on its pinned inputs and on inputs
drawn by hypothesis and gives a :class:`~theorycheck.claims.claim.ClaimVerdict`; :func:`verify_claims`
runs a selection of claims (a pack's and the user's: :func:`theorycheck.api.verify` chooses them) and gives a :class:`VerifyResult`
whose :meth:`~VerifyResult.as_dict` is what ``theorycheck verify --json`` writes."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from theorycheck.claims.claim import ERROR, FAILS, HOLDS, INCONCLUSIVE, PROVED, Claim, ClaimVerdict, Outcome, Verdict
from theorycheck.errors import ArgumentError
from theorycheck.jsonio import to_plain
from theorycheck.vocabulary import PROFILES

__all__ = ["PROFILES", "VerifyResult", "run_claim", "verify_claims"]

#: examples per claim for each profile of ``theorycheck verify``


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
                    proof=dicts)
        if claim.refined is not None:
            v.refined = run_claim(claim.refined, examples=examples, seed_=seed_, progress=progress, prove=True,
                                  prove_seconds=prove_seconds)
        return v
    if all(p.status == "proved" for p in proofs):
        rests = sorted({k for p in proofs for k in p.rests_on})
        return ClaimVerdict(claim.key, claim.statement, PROVED, 0, 0, None, claim.tolerance, time.perf_counter() - t0,
                       message=f"proved for every input in {len(proofs)} stated box(es) by ball arithmetic, resting "
                               f"on theorem(s) {', '.join(rests)}", proof=dicts)
    return dicts


def run_claim(claim: Claim, *, examples: int = 12, seed_: int = 0,
              progress: Callable[[str, int], None] | None = None, prove: bool = False,
              prove_seconds: float = 10.0) -> ClaimVerdict:
    """Check ``claim`` on its pinned inputs, then on ``examples`` drawn inputs; on a
    disagreement hypothesis shrinks to a minimal counterexample. The drawn inputs depend only
    on the claim, ``examples`` and ``seed_`` (not on what ran before in the process: see
    :func:`_no_local_constants`). With ``prove`` and a claim that has a prover, its boxes are
    decided first (``prove_seconds`` per box): proved, or a counterexample, or (undecided) the
    sampled verdict with the proof attempts in ``proof``."""
    attempts = None
    if prove and claim.prover is not None:
        got = _proved_or_refuted(claim, examples, seed_, progress, prove_seconds)
        if isinstance(got, ClaimVerdict):
            return got
        attempts = got
    t0 = time.perf_counter()
    stats = {"tried": 0, "inconclusive": 0, "worst": None, "pinned": 0}
    undecided: list[dict] = []  # the first MAX_INCONCLUSIVE_SHOWN inconclusive inputs
    last_fail: dict[str, Any] = {}

    from hypothesis import HealthCheck, Phase, given, seed, settings

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

    def verdict(status: Verdict, message="", ce=None, ce_detail=None) -> ClaimVerdict:
        if attempts is not None:
            done = sum(a["status"] == "proved" for a in attempts)
            message = (message + "; " if message else "") + (f"ball arithmetic proved {done} of {len(attempts)} "
                                                             "stated boxes; the rest was sampled")
        v = ClaimVerdict(claim.key, claim.statement, status, stats["tried"], stats["inconclusive"], stats["worst"],
                    claim.tolerance, time.perf_counter() - t0, to_plain(ce), to_plain(ce_detail), message,
                    inconclusive_examples=list(undecided), pinned=stats["pinned"],
                    drawn=stats["tried"] - stats["pinned"], requested=int(examples),
                    cap=claim.max_examples if claim.max_examples is not None and claim.max_examples < examples
                    else None, proof=attempts)
        if claim.refined is not None and status == FAILS:
            v.refined = run_claim(claim.refined, examples=examples, seed_=seed_, progress=progress, prove=prove,
                                  prove_seconds=prove_seconds)
        return v

    def crashed() -> ClaimVerdict:
        exc = last_fail["exc"]
        return verdict(ERROR, f"the check raised {type(exc).__name__}: {exc}", claim.describe(last_fail["x"]))

    pinned_fail = None
    for x in claim.pinned:
        try:
            out = one(x)
        except _Crashed:
            return crashed()
        stats["pinned"] += 1
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
            with _no_local_constants():
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
        return head + "\n\n" + table(("claim", "verdict", "tried", "worst deviation", "statement"), rows)

    def as_dict(self) -> dict:
        """Keys: profile, examples, seed, seconds, claims (one verdict dict each, with its
        ``pack``), failed, packs (the packs whose claims ran)."""
        return {"profile": self.profile, "examples": self.examples, "seed": self.seed,
                "seconds": round(self.seconds, 2),
                "claims": [{**v.as_dict(), "pack": self.packs.get(v.key)} for v in self.verdicts],
                "failed": self.failed, "packs": sorted({self.packs[v.key] for v in self.verdicts if v.key in self.packs})}


def verify_claims(pairs: Sequence[tuple[str, Claim]], claims: Sequence[str] | str | None = None, *,
                  examples: int | None = None, seed: int = 0, profile: str = "fast",
                  on_claim: Callable[[int, int, Claim], None] | None = None,
                  progress: Callable[[str, int], None] | None = None, prove: bool = False,
                  prove_seconds: float = 10.0) -> VerifyResult:
    """Run a selection of claims and give their verdicts.

    ``pairs``: the claims to choose from, as (pack name, claim) (:func:`theorycheck.packs.candidates`);
    ``claims``: keys or prefixes (``"C4"`` selects ``C4.*``; a comma-separated string is
    split), default all of ``pairs``. ``examples``: drawn inputs per claim (default the
    ``profile``'s: fast 12, thorough 100); ``seed``: hypothesis seed (the same inputs every
    run). ``on_claim(i, n, claim)`` is called before each claim, ``progress(key, tried)``
    after each input. ``prove``: claims with a prover are first decided on their stated boxes by
    ball arithmetic (``prove_seconds`` per box): verdict ``proved``, or a counterexample."""
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
                                  prove_seconds=prove_seconds))
    return VerifyResult(profile, n_examples, seed, time.perf_counter() - t0, verdicts, pack_of(pairs))

"""The packs' runs: ``reproduce`` (their experiments), ``prove`` (their theorems), ``verify`` and ``run_claim``
(their claims and the user's). Every pack is reached through its manifest (:mod:`theorycheck.packs`), none by
name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from theorycheck.errors import TheorycheckError
from theorycheck.experiments import Report
from theorycheck.record import Keys, ListOf, Record
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import float_check

if TYPE_CHECKING:
    from theorycheck.claims.claim import Claim, Verdict
    from theorycheck.claims.runner import VerifyResult
    from theorycheck.symbolic.theorem import ProveResult, Theorem

__all__ = ["ReproduceResult", "prove", "reproduce", "run_claim", "verify"]


# ---------------------------------------------------------------------------- experiments
class ReproduceResult(Record):
    """The experiments run: what ``theorycheck reproduce --json`` prints (docs/commands/reproduce.md).
    ``reports``: the Report objects."""

    KEYS = Keys("reproduce", "out", "summary_file", experiments=ListOf(Report.KEYS), strength=STRENGTH_KEYS)

    __slots__ = ("reports",)

    def __init__(self, values: dict, reports: list):
        super().__init__(values)
        object.__setattr__(self, "reports", reports)


def reproduce(names: str | Sequence[str] = "all", out: str | Path = "out/reproduce", *, pack: str | None = None,
              quick: bool = False, redraw: bool = False, backend: str = "processes", workers: int | None = None,
              scheduler: Any = None, progress: bool | None = None,
              on_experiment: Callable[[str], None] | None = None) -> ReproduceResult:
    """Run the experiments of one pack (``pack``) or of every installed pack (None): all
    (default) or those named; ``quick``: coarser grids. With ``redraw``, draw them again from the
    results saved in ``out`` by an earlier run. Writes figures (PNG, SVG), results
    (DIR/data/PACK/NAME/KEY.npz|json) and DIR/SUMMARY.md. ``on_experiment(name)`` is called
    before each."""
    from theorycheck import experiments as ex
    from theorycheck import packs
    from theorycheck.outputs import make_parent, output_folder

    plan = [(p, n, mod) for p in packs.select(pack) for n, mod in p.experiments().items()]
    if isinstance(names, str):
        names = None if names == "all" else [names]
    if names is not None:
        known = [n for _, n, _ in plan]
        unknown = [n for n in names if n not in known]
        if unknown:
            where = f"pack {pack!r} has no experiment" if pack is not None else "unknown experiment"
            raise TheorycheckError(f"{where} {unknown[0]!r}: choose one of {', '.join(known)} or all")
        plan = [x for x in plan if x[1] in names]
    out = output_folder(out, "out")
    make_parent(out / "SUMMARY.md", "out")
    ctx = ex.Context(backend="dask" if scheduler else backend, workers=workers, scheduler=scheduler, progress=progress)
    reports = []
    for p, n, mod in plan:
        if on_experiment is not None:
            on_experiment(n)
        reports.append(ex.redraw(mod, out, pack=p.name) if redraw else ex.run(mod, out, pack=p.name, quick=quick, ctx=ctx))
    summary = ex.write_summary(reports, out)
    return ReproduceResult({"out": str(out), "summary_file": str(summary),
                            "experiments": [r.as_dict() for r in reports],
                            "strength": float_check().as_dict()}, reports)  # the experiments' numbers: float64 runs


# ---------------------------------------------------------------------------- prove
def prove(keys: Iterable[str] | str | None = None, *, pack: str | None = None,
          on_theorem: Callable[[Theorem], None] | None = None) -> ProveResult:
    """Run the theorems of one pack (``pack``) or of every installed pack (None): all, or those
    whose keys are given (case-insensitive; a comma-separated string is split), in the packs'
    order. Unknown keys raise a one-line :class:`~theorycheck.errors.TheorycheckError` naming
    the known ones."""
    from time import perf_counter

    from theorycheck import packs
    from theorycheck.symbolic.theorem import ProveResult

    owner: dict[str, str] = {}
    theorems: dict[str, Theorem] = {}
    for p in packs.select(pack):
        for th in p.theorems():
            if th.key.upper() not in theorems:
                theorems[th.key.upper()] = th
                owner[th.key] = p.name
    if isinstance(keys, str):
        keys = [k for k in keys.split(",")]
    wanted = [k.strip().upper() for k in keys if k.strip()] if keys else list(theorems)
    unknown = [k for k in wanted if k not in theorems]
    if unknown:
        raise TheorycheckError(f"unknown theorem(s) {', '.join(unknown)}; known: "
                               f"{', '.join(t.key for t in theorems.values())}")
    results = []
    t0 = perf_counter()
    for k in wanted:
        if on_theorem is not None:
            on_theorem(theorems[k])
        results.append(theorems[k].run())
    return ProveResult(results, perf_counter() - t0, owner)


# ---------------------------------------------------------------------------- verify
def verify(claims: Sequence[str] | str | None = None, *, examples: int | None = None, seed: int = 0,
           profile: str = "fast", pack: str | None = None,
           on_claim: Callable[..., None] | None = None,
           progress: bool | None = None, prove: bool = False,
           prove_seconds: float = 10.0, grid: bool = True) -> VerifyResult:
    """Run claims and give their verdicts (a :class:`~theorycheck.claims.runner.VerifyResult`).

    ``claims``: keys or prefixes (``"C4"`` selects ``C4.*``; a comma-separated string is
    split), default all of the pack's (``pack``, default every installed pack) and the user's
    (:func:`theorycheck.register_claim`). ``examples``: drawn inputs per claim (default the
    ``profile``'s: fast 12, thorough 100); ``seed``: hypothesis seed (the same inputs every
    run). ``on_claim(i, n, claim)`` is called before each claim; ``progress``
    (True, False, None: when stderr is a terminal) reports the inputs tried on stderr. ``prove``: claims
    that state boxes are first decided on them by ball arithmetic (``prove_seconds`` per box): verdict
    ``proved`` (for every input in the boxes), or a counterexample. ``grid``: check every input of the
    claims' fixed grids and report each failure rate (the verdict's ``grid``: tried, failed); False skips
    the grids. Every verdict carries its ``strength``."""
    from theorycheck import packs
    from theorycheck.claims.runner import verify_claims
    from theorycheck.progress import input_reporter

    return verify_claims(packs.candidates(pack), claims, examples=examples, seed=seed, profile=profile,
                         on_claim=on_claim, progress=input_reporter(progress), prove=prove,
                         prove_seconds=prove_seconds, grid=grid)


def run_claim(claim: Claim, *, examples: int = 12, seed_: int = 0, progress: bool | None = None) -> Verdict:
    """Check one claim on its pinned inputs and ``examples`` drawn ones (hypothesis seed
    ``seed_``); on a disagreement hypothesis shrinks to a minimal counterexample. ``progress``:
    report the inputs tried on stderr (True), never (False), when stderr is a terminal (None)."""
    from theorycheck.claims.runner import run_claim as run_one
    from theorycheck.progress import input_reporter

    return run_one(claim, examples=examples, seed_=seed_, progress=input_reporter(progress))

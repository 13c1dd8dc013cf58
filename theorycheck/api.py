"""The public functions that have no other home: :func:`solve` (a trajectory),
:func:`max_margin`, :func:`describe` (a setting's summary), :func:`verify` (the claims of the
installed packs and the user's) and :func:`reproduce` (the paper's experiments). Each returns an object with ``as_dict()``, which is exactly what the matching
CLI command prints with ``--json``. Everything is exported from ``theorycheck`` (lazily)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from theorycheck.errors import ArgumentError, TheorycheckError
from theorycheck.record import Record
from theorycheck.setting import Setting, check_separable
from theorycheck.vocabulary import TimeKind

if TYPE_CHECKING:
    from theorycheck.claims.claim import Claim, Verdict
    from theorycheck.claims.runner import VerifyResult
    from theorycheck.predict.regimes import ThresholdsResult
    from theorycheck.solvers.trajectory import Trajectory
    from theorycheck.sweep.result import SweepResult
    from theorycheck.sweep.run import RunOptions
    from theorycheck.theorem import ProveResult, Theorem

__all__ = ["DEFAULT_T_MAX", "MaxMarginResult", "ReproduceResult", "SettingSummary", "describe", "heatmap",
           "max_margin", "prove", "reproduce", "run_claim", "solve", "thresholds", "verify"]

#: default final time of :func:`solve`: rescaled (one example) and real (several examples)
DEFAULT_T_MAX = {"rescaled": 50.0, "real": 1000.0}


def _setting(setting) -> Setting:
    if not isinstance(setting, Setting):
        raise TheorycheckError(f"expected a theorycheck.Setting, got {type(setting).__name__}: build one with "
                               "Setting.from_z(...) or Setting(X, y, ...)")
    return setting


def _positive(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TheorycheckError(f"{what} = {value!r} is not a number") from None
    if not (math.isfinite(v) and v > 0):
        raise TheorycheckError(f"{what} = {value!r}: give a finite number > 0")
    return v


def _count(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise TheorycheckError(f"{what} = {value!r}: give a whole number ≥ 1")
    return int(value)


def solve(setting: Setting, *, t_max: float | None = None, method: str = "auto", precision: int | None = None,
          time: str = "auto", max_steps: int = 200_000, max_seconds: float = 120.0, discrete: bool = False,
          eta: float | None = None, steps: int | None = None,
          progress: bool | None = None) -> Trajectory:
    """Integrate the setting's flow (or, with ``discrete=True``, run the discrete algorithm
    w ← w − η∇Lo(w + ε) for ``steps`` steps of size ``eta``) and return the
    :class:`~theorycheck.solvers.trajectory.Trajectory`: j†(t), its switches, collapse and
    blow-up, and why it stopped. ``t_max`` defaults to 50 (rescaled τ, one example) or 1000
    (real t); ``method``: auto | scipy | mpmath | reduced; ``precision``: mpmath digits;
    ``time``: auto | rescaled | real. Budgets: ``max_steps``, ``max_seconds``.
    ``progress``: report on stderr (True), never (False) or when stderr is a terminal (None).
    ``as_dict()`` of the result is what ``theorycheck trajectory --json`` prints."""
    from theorycheck.observe import attach
    from theorycheck.progress import flow_reporter, step_reporter
    from theorycheck.solvers.trajectory import Budget

    setting = _setting(setting)
    max_seconds = _positive(max_seconds, "max_seconds")
    max_steps = _count(max_steps, "max_steps")
    if discrete:
        if eta is None or steps is None:
            raise ArgumentError("discrete=True needs eta and steps", "discrete", "eta", "steps")
        if precision is not None or method not in ("auto",):
            raise ArgumentError("discrete=True runs float64 iterations: drop precision and method", "discrete",
                                "precision", "method")
        if t_max is not None:
            raise ArgumentError("discrete=True runs a fixed number of steps of size η (t = kη): drop t_max",
                                "discrete", "t_max")
        from theorycheck.solvers.discrete import run as run_discrete

        eta = _positive(eta, "eta")
        steps = _count(steps, "steps")
        traj = run_discrete(setting, eta=eta, steps=steps, max_seconds=max_seconds,
                            record_every=max(1, steps // 20000), progress=step_reporter(progress))
        traj.eta = eta
        return attach(traj)
    if eta is not None or steps is not None:
        raise ArgumentError("eta and steps apply to discrete=True only", "eta", "steps", "discrete")
    from theorycheck.solvers.integrate import solve as integrate

    time_kind = TimeKind.RESCALED if setting.single and time != TimeKind.REAL else TimeKind.REAL
    t_max = _positive(t_max, "t_max") if t_max is not None else DEFAULT_T_MAX[time_kind]
    return attach(integrate(setting, t_max=t_max, method=method, precision=precision, time=time,
                            budget=Budget(max_steps=max_steps, max_seconds=max_seconds),
                            progress=flow_reporter(progress)))


# ---------------------------------------------------------------------------- max margin
class MaxMarginResult(Record):
    """Keys: norm, beta (smallest margin 1; times 2^beta_log2_scale), beta_log2_scale (0 unless
    β itself leaves the float64 range), margin γ = 1/‖β‖_p, direction β/‖β‖₂, margins
    <β, z_i>, support (1-based examples with margin 1), kkt_residual, method, n_examples, d."""


def max_margin(data, norm: int) -> MaxMarginResult:
    """The ℓ1 (LP) or ℓ2 (QP with an active-set certificate) max-margin classifier of separable
    data: ``data`` a :class:`Setting`, one example z (d,) or rows z_i = y_i x_i (n×d)."""
    from theorycheck.solvers.maxmargin import max_margin as solve_max_margin

    if norm not in (1, 2) or isinstance(norm, bool):
        raise TheorycheckError(f"norm = {norm!r}: choose 1 (ℓ1) or 2 (ℓ2)")
    s = data if isinstance(data, Setting) else Setting(np.atleast_2d(np.asarray(data, dtype=float)))
    r = solve_max_margin(s.Z, norm)
    m = r.margins
    return MaxMarginResult({
        "norm": r.norm,
        "beta": r.beta.tolist(),
        "beta_log2_scale": r.log2_scale,
        "margin": r.margin,
        "direction": r.direction.tolist(),
        "margins": m.tolist(),
        "support": [int(i) + 1 for i in range(len(m)) if m[i] <= 1 + 1e-9],
        "kkt_residual": r.kkt_residual,
        "method": r.method,
        "n_examples": s.n,
        "d": s.d,
    })


# ---------------------------------------------------------------------------- a setting
class SettingSummary(Record):
    """Keys: n, d, depth, loss, optimizer, rho, init_kind, balanced, layers0, separable,
    separator (a β with margins ≥ 1; a direction with largest entry 1 when such a β would
    overflow float64), separator_min_margin, and the reachable-cone keys of
    :meth:`Setting.reachable` (``reachable_*``, ``loss_lower_bound``)."""


def describe(setting: Setting) -> SettingSummary:
    """What a user should know about a validated setting before integrating it (what
    ``theorycheck setting --json`` prints); non-separable data raise NotSeparableError."""
    setting = _setting(setting)
    beta = check_separable(setting.Z)
    margins = setting.Z @ beta
    reach = setting.reachable()
    return SettingSummary({
        "n": setting.n,
        "d": setting.d,
        "depth": setting.depth,
        "loss": setting.loss,
        "optimizer": setting.optimizer,
        "rho": setting.rho,
        "init_kind": setting.init.kind,
        "balanced": setting.balanced,
        "layers0": setting.layers0,
        "separable": True,
        "separator": beta,
        "separator_min_margin": float(margins.min()),
        **reach.as_dict(),
    })


# ---------------------------------------------------------------------------- experiments
class ReproduceResult(Record):
    """Keys: out (the folder), summary_file (DIR/SUMMARY.md), experiments (one report each:
    name, title, figures, data, summary, deviations, seconds). ``reports``: the Report objects."""

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
                            "experiments": [r.as_dict() for r in reports]}, reports)


# ---------------------------------------------------------------------------- prove
def prove(keys: Iterable[str] | str | None = None, *, pack: str | None = None,
          on_theorem: Callable[[Theorem], None] | None = None) -> ProveResult:
    """Run the theorems of one pack (``pack``) or of every installed pack (None): all, or those
    whose keys are given (case-insensitive; a comma-separated string is split), in the packs'
    order. Unknown keys raise a one-line :class:`~theorycheck.errors.TheorycheckError` naming
    the known ones."""
    from time import perf_counter

    from theorycheck import packs
    from theorycheck.theorem import ProveResult

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
           prove_seconds: float = 10.0) -> VerifyResult:
    """Run claims and give their verdicts (a :class:`~theorycheck.claims.runner.VerifyResult`).

    ``claims``: keys or prefixes (``"C4"`` selects ``C4.*``; a comma-separated string is
    split), default all of the pack's (``pack``, default every installed pack) and the user's
    (:func:`theorycheck.register_claim`). ``examples``: drawn inputs per claim (default the
    ``profile``'s: fast 12, thorough 100); ``seed``: hypothesis seed (the same inputs every
    run). ``on_claim(i, n, claim)`` is called before each claim; ``progress``
    (True, False, None: when stderr is a terminal) reports the inputs tried on stderr. ``prove``: claims
    that state boxes are first decided on them by ball arithmetic (``prove_seconds`` per box): verdict
    ``proved`` (for every input in the boxes), or a counterexample."""
    from theorycheck import packs
    from theorycheck.claims.runner import verify_claims
    from theorycheck.progress import input_reporter

    return verify_claims(packs.candidates(pack), claims, examples=examples, seed=seed, profile=profile,
                         on_claim=on_claim, progress=input_reporter(progress), prove=prove,
                         prove_seconds=prove_seconds)


def thresholds(setting: Setting, *, place: bool = False, digits: int = 12, t_max: float | None = None,
               progress: bool | None = None, prove: bool = False, certificate=None) -> ThresholdsResult:
    """The regime thresholds in α of ``setting``'s problem (its example(s), optimizer, depth, ρ;
    what ``theorycheck thresholds --json`` prints). One example: ℓ2-SAM, L = 2 (z > 0):
    ``alpha_all_shrink``, ``alpha_gd_like`` (closed forms) and ``alpha_collapse`` (α_c to
    ``digits`` certified digits); L ≥ 3: the derived initial-rate thresholds and α_c(L) for
    even L; ℓ∞-SAM: per coordinate, from the setting's α; GD: the predicted limit index.
    ``place``: also place the setting's α (its initial index, regime and the trajectory's
    switches up to ``t_max``, rescaled τ, default 40/min|z_j|). Several examples (ℓ2-SAM,
    L = 2): α_c(Z) from full integrations, not certified. ``prove`` (ℓ2-SAM, L = 2 or even L ≥ 4):
    ``alpha_collapse["proof"]``, a proved bracket of α_c; ``certificate`` (a path, L = 2 or even L ≥ 4): its steps as data."""
    from theorycheck.predict.regimes import thresholds as one_example
    from theorycheck.predict.regimes import thresholds_data

    setting = _setting(setting)
    if not setting.single:
        return thresholds_data(setting, progress=progress)
    alpha = None
    if place or setting.optimizer == "sam-linf":
        v = np.asarray(setting.init.value, dtype=float)
        alpha = float(v.reshape(-1)[0]) if v.size == 1 else v
    return one_example(setting.z, setting.rho, optimizer=setting.optimizer, alpha=alpha, depth=setting.depth,
                       t_max=t_max, digits=digits, progress=progress, prove=prove, certificate=certificate)


def heatmap(setting: Setting, *, alphas, times, method: str = "auto", opts: RunOptions | None = None,
            backend: str = "processes", workers: int | None = None, scheduler: Any = None,
            progress: bool | None = None) -> SweepResult:
    """j† over (α, time) for the uniform initialisations α·1, α in ``alphas`` (the setting's own
    α is not used), of ``setting``'s examples, optimizer, depth, ρ and loss, batched (E1; what
    ``theorycheck heatmap --json`` prints). ``times``: the grid (rescaled τ for one example, real
    t otherwise); ``method``: auto | reduced | balanced | multi; ``opts``: tolerances, step
    budget, array backend; ``backend``: serial | processes | dask (``scheduler``: its address)."""
    from theorycheck.sweep.recipes import heatmap as sweep_heatmap

    setting = _setting(setting)
    return sweep_heatmap(setting.Z, optimizer=setting.optimizer, rho=setting.rho, alphas=alphas, times=times,
                         depth=setting.depth, loss=setting.loss, method=method, opts=opts, backend=backend,
                         workers=workers, scheduler=scheduler, progress=progress)


def run_claim(claim: Claim, *, examples: int = 12, seed_: int = 0, progress: bool | None = None) -> Verdict:
    """Check one claim on its pinned inputs and ``examples`` drawn ones (hypothesis seed
    ``seed_``); on a disagreement hypothesis shrinks to a minimal counterexample. ``progress``:
    report the inputs tried on stderr (True), never (False), when stderr is a terminal (None)."""
    from theorycheck.claims.runner import run_claim as run_one
    from theorycheck.progress import input_reporter

    return run_one(claim, examples=examples, seed_=seed_, progress=input_reporter(progress))

"""The public functions that have no other home: :func:`solve` (a trajectory),
:func:`max_margin`, :func:`describe` (a setting's summary), :func:`verify` (the claims of the
installed packs and the user's) and :func:`reproduce` (the paper's experiments). Each returns an object with ``as_dict()``, which is exactly what the matching
CLI command prints with ``--json``. Everything is exported from ``theorycheck`` (lazily)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.record import Record
from theorycheck.setting import Setting, check_separable

__all__ = ["DEFAULT_T_MAX", "MaxMarginResult", "ReproduceResult", "SettingSummary", "describe", "max_margin",
           "reproduce", "solve", "verify"]

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
          progress: Callable[..., None] | None = None):
    """Integrate the setting's flow (or, with ``discrete=True``, run the discrete algorithm
    w ← w − η∇Lo(w + ε) for ``steps`` steps of size ``eta``) and return the
    :class:`~theorycheck.solvers.trajectory.Trajectory`: j†(t), its switches, collapse and
    blow-up, and why it stopped. ``t_max`` defaults to 50 (rescaled τ, one example) or 1000
    (real t); ``method``: auto | scipy | mpmath | reduced; ``precision``: mpmath digits;
    ``time``: auto | rescaled | real. Budgets: ``max_steps``, ``max_seconds``.
    ``progress(t, t_max, steps)`` (flow) or ``progress(k, steps)`` (discrete) is called now
    and then. ``as_dict()`` of the result is what ``theorycheck trajectory --json`` prints."""
    from theorycheck.observe import attach
    from theorycheck.solvers.trajectory import Budget

    setting = _setting(setting)
    max_seconds = _positive(max_seconds, "max_seconds")
    max_steps = _count(max_steps, "max_steps")
    if discrete:
        if eta is None or steps is None:
            raise TheorycheckError("--discrete needs --eta E and --steps K")
        if precision is not None or method not in ("auto",):
            raise TheorycheckError("--discrete runs float64 iterations: drop --precision/--method")
        if t_max is not None:
            raise TheorycheckError("--discrete runs K steps of size η (t = Kη): drop --t-max")
        from theorycheck.solvers.discrete import run as run_discrete

        eta = _positive(eta, "eta")
        steps = _count(steps, "steps")
        traj = run_discrete(setting, eta=eta, steps=steps, max_seconds=max_seconds,
                            record_every=max(1, steps // 20000), progress=progress)
        traj.eta = eta
        return attach(traj)
    if eta is not None or steps is not None:
        raise TheorycheckError("--eta/--steps apply to --discrete only")
    from theorycheck.solvers.integrate import solve as integrate

    time_kind = "rescaled" if setting.single and time != "real" else "real"
    t_max = _positive(t_max, "t_max") if t_max is not None else DEFAULT_T_MAX[time_kind]
    return attach(integrate(setting, t_max=t_max, method=method, precision=precision, time=time,
                            budget=Budget(max_steps=max_steps, max_seconds=max_seconds), progress=progress))


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
    (default) or those named; ``quick``: coarser grids. With ``redraw`` (the pack minor-first
    only) redraw them from the arrays saved in ``out``. Writes figures (PNG, SVG), arrays
    (DIR/data/NAME/*.npz + .json) and DIR/SUMMARY.md. ``on_experiment(name)`` is called
    before each."""
    import importlib

    from theorycheck import packs

    try:
        from theorycheck import numerics
    except ImportError:
        raise TheorycheckError("the numerics package is not importable: install theorycheck from its source "
                               "tree (pip install -e .) or run from the repository root") from None
    chosen = packs.select(pack)
    plan = [(p, n, mod) for p in chosen for n, mod in p.experiments().items()]
    if redraw:
        if pack is not None and any(p.name != "minor-first" for p in chosen):
            raise TheorycheckError("--redraw applies to the pack minor-first only")
        plan = [x for x in plan if x[0].name == "minor-first"]
    if isinstance(names, str):
        names = None if names == "all" else [names]
    if names is not None:
        known = [n for _, n, _ in plan]
        unknown = [n for n in names if n not in known]
        if unknown:
            where = f"pack {pack!r} has no experiment" if pack is not None else "unknown experiment"
            raise TheorycheckError(f"{where} {unknown[0]!r}: choose one of {', '.join(known)} or all")
        plan = [x for x in plan if x[1] in names]
    from theorycheck.outputs import make_parent, output_folder

    out = output_folder(out, "out")
    make_parent(out / "SUMMARY.md", "out")
    ctx = numerics.Context(backend="dask" if scheduler else backend, workers=workers, scheduler=scheduler,
                           progress=progress)
    reports = []
    for p, n, mod in plan:
        if on_experiment is not None:
            on_experiment(n)
        if p.name == "minor-first":
            reports.append(numerics.redraw(n, out) if redraw else numerics.run(n, out, quick=quick, ctx=ctx))
        else:
            reports.append(importlib.import_module(mod).reproduce(out, quick=quick))
    summary = numerics.write_summary(reports, out)
    return ReproduceResult({"out": str(out), "summary_file": str(summary),
                            "experiments": [r.to_dict() for r in reports]}, reports)


# ---------------------------------------------------------------------------- verify
def verify(claims: Sequence[str] | str | None = None, *, examples: int | None = None, seed: int = 0,
           profile: str = "fast", pack: str | None = None,
           on_claim: Callable[..., None] | None = None,
           progress: Callable[[str, int], None] | None = None):
    """Run claims and give their verdicts (a :class:`~theorycheck.claims.runner.VerifyResult`).

    ``claims``: keys or prefixes (``"C4"`` selects ``C4.*``; a comma-separated string is
    split), default all of the pack's (``pack``, default every installed pack) and the user's
    (:func:`theorycheck.register_claim`). ``examples``: drawn inputs per claim (default the
    ``profile``'s: fast 12, thorough 100); ``seed``: hypothesis seed (the same inputs every
    run). ``on_claim(i, n, claim)`` is called before each claim, ``progress(key, tried)``
    after each input."""
    from theorycheck import packs
    from theorycheck.claims.runner import verify_claims

    return verify_claims(packs.candidates(pack), claims, examples=examples, seed=seed, profile=profile,
                         on_claim=on_claim, progress=progress)

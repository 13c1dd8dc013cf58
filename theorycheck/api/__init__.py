"""The public functions: here :func:`solve` (a trajectory), :func:`prove_trajectory`, :func:`max_margin`,
:func:`describe` (a setting's summary), :func:`thresholds` and :func:`heatmap`; the packs' runs (``verify``,
``prove``, ``reproduce``, ``run_claim``) in :mod:`theorycheck.api.packs`, the other commands' calls in
:mod:`theorycheck.api.calls` and ``saddles`` in :mod:`theorycheck.api.saddles`, all re-exported here. Each
returns an object with ``as_dict()``, which is exactly what the matching CLI command prints with ``--json``.
Everything is exported from ``theorycheck`` (lazily)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from theorycheck import optimizers
from theorycheck.errors import ArgumentError, SettingError, TheorycheckError
from theorycheck.record import Keys, Record
from theorycheck.setting import Setting, check_separable
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import float_check
from theorycheck.vocabulary import TimeKind

if TYPE_CHECKING:
    from theorycheck.proofs.minor_first.predict.regimes import ThresholdsResult
    from theorycheck.proofs.minor_first.proved.regime_map import RegimeMap
    from theorycheck.solvers.regression import RegressionResult
    from theorycheck.solvers.trajectory import Trajectory
    from theorycheck.sweep.result import SweepResult
    from theorycheck.sweep.run import RunOptions

__all__ = ["DEFAULT_T_MAX", "MaxMarginResult", "ReproduceResult", "SettingSummary", "TrajectoryProof", "describe",
           "heatmap", "max_margin", "prove", "prove_trajectory", "reproduce", "run_claim", "solve", "thresholds",
           "verify"]

#: default final time of :func:`solve`: rescaled (one example) and real (several examples)
DEFAULT_T_MAX = {"rescaled": 50.0, "real": 1000.0}


def _setting(setting) -> Setting:
    if not isinstance(setting, Setting):
        raise TheorycheckError(f"expected a theorycheck.Setting, got {type(setting).__name__}: build one with "
                               "Setting.from_z(...) or Setting(X, y, ...)")
    return setting


def _gradient_step(setting: Setting, what: str) -> Setting:
    """``setting``, or a one-line SettingError when its optimizer's step is weighted (ASAM): ``what`` (the
    thresholds, the batched sweeps, the proofs) is written for a step ε of the gradient alone."""
    opt = optimizers.get(setting.optimizer)
    if opt.weighted:
        ok = ", ".join(o.name for o in optimizers.supporting(setting.param, setting.loss, setting.depth)
                       if not o.weighted)
        raise SettingError(f"optimizer={opt.name!r}: {what} take a step ε of the gradient alone ({ok}); "
                           f"{opt.title}'s depends on w too (its flow: theorycheck trajectory / derive)")
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


def solve(setting: Setting, *, t_max: float | None = None, method: str = "auto", digits: int | None = None,
          time: str = "auto", max_steps: int = 200_000, max_seconds: float = 120.0, discrete: bool = False,
          eta: float | None = None, steps: int | None = None, rtol: float | None = None,
          residual_tol: float = 1e-10, progress: bool | None = None) -> Trajectory | RegressionResult:
    """Integrate the setting's flow (or, with ``discrete=True``, run the discrete algorithm
    w ← w − η∇Lo(w + ε) for ``steps`` steps of size ``eta``) and return the
    :class:`~theorycheck.solvers.trajectory.Trajectory`: j†(t), its switches, collapse and
    blow-up, and why it stopped. ``t_max`` defaults to 50 (rescaled τ, one example) or 1000
    (real t); ``method``: auto | scipy | mpmath | reduced (an installed pack's reduction of the flow,
    :func:`theorycheck.packs.reductions`: the first paper's C4 scalar ODE); ``digits``: mpmath digits;
    ``time``: auto | rescaled | real; ``rtol``: the integrator's relative tolerance (default 1e-12
    float64, 10^(2−digits) mpmath). Budgets: ``max_steps``, ``max_seconds``.
    ``progress``: report on stderr (True), never (False) or when stderr is a terminal (None).
    ``as_dict()`` of the result is what ``theorycheck trajectory --json`` prints.

    A regression setting (``param`` pm or uv, squared loss) gives a
    :class:`~theorycheck.solvers.regression.RegressionResult` instead: the flow integrated until the
    residual ‖Xβ − y‖ falls below ``residual_tol``·max(1, ‖y‖) (or ``t_max``, default 1e12, or a
    budget ends it), with the final β, the effective scale per coordinate and an error bar on the
    limit; ``rtol`` defaults to 1e-10 there."""
    from theorycheck.observe import attach
    from theorycheck.progress import flow_reporter, step_reporter
    from theorycheck.solvers.trajectory import Budget

    setting = _setting(setting)
    max_seconds = _positive(max_seconds, "max_seconds")
    max_steps = _count(max_steps, "max_steps")
    if rtol is not None and not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ArgumentError(f"rtol={rtol!r}: give a relative tolerance in (0, 1)", "rtol")
    if setting.regression:
        return _solve_regression(setting, t_max=t_max, method=method, digits=digits, time=time,
                                 budget=Budget(max_steps=max_steps, max_seconds=max_seconds), discrete=discrete,
                                 rtol=rtol, residual_tol=residual_tol)
    if discrete:
        if eta is None or steps is None:
            raise ArgumentError("discrete=True needs eta and steps", "discrete", "eta", "steps")
        if digits is not None or method not in ("auto",):
            raise ArgumentError("discrete=True runs float64 iterations: drop digits and method", "discrete",
                                "digits", "method")
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
    from theorycheck.packs import reductions
    from theorycheck.solvers.integrate import solve as integrate

    time_kind = TimeKind.RESCALED if setting.single and time != TimeKind.REAL else TimeKind.REAL
    t_max = _positive(t_max, "t_max") if t_max is not None else DEFAULT_T_MAX[time_kind]
    return attach(integrate(setting, t_max=t_max, method=method, digits=digits, time=time,
                            budget=Budget(max_steps=max_steps, max_seconds=max_seconds), rtol=rtol,
                            progress=flow_reporter(progress), reductions=reductions() if method == "reduced" else ()))


class TrajectoryProof(Record):
    """What ``theorycheck trajectory --prove --json`` prints: every key of ``trajectory --json`` (the
    floating-point run, :meth:`Trajectory.as_dict`; its ``final_index``, ``final_index_status`` and
    ``final_index_reason`` are the proof's when the proof is proved), plus ``proof`` (the proved trajectory:
    :class:`theorycheck.proofs.minor_first.proved.trajectory.ProvedTrajectory`'s keys: enclosures of the switch, collapse and
    blow-up times, the fate, the final index, rests_on, inputs, strength), ``inputs`` (the exact inputs the
    proof is about) and ``strength`` (the proof's)."""


def prove_trajectory(setting: Setting, *, t_max: float | None = None, max_seconds: float = 60.0,
                     method: str = "auto", digits: int | None = None, max_steps: int = 200_000,
                     progress: bool | None = None) -> TrajectoryProof:
    """Prove what the flow of ``setting`` does (one example, uniform α; ℓ2-SAM with z > 0 at any depth ≥ 2,
    and GD) at its exact inputs, within ``max_seconds``, beside the floating-point run of :func:`solve`
    (``t_max`` default: 50, or twice the last proved time when later; ``method``, ``digits``,
    ``max_steps`` as for :func:`solve`): one result with the trajectory's keys and the proof's."""
    from theorycheck.proofs.minor_first.proved.trajectory import prove_trajectory as prove_flow

    setting = _gradient_step(_setting(setting), "the proved trajectories")
    proof = prove_flow(setting, max_seconds=_positive(max_seconds, "max_seconds")).as_dict()
    if t_max is None:
        t_max = max([DEFAULT_T_MAX["rescaled"]] + [2 * t for t in _proved_times(proof)])
    out = solve(setting, t_max=t_max, method=method, digits=digits, max_steps=max_steps,
                max_seconds=max_seconds, progress=progress).as_dict()
    if proof["proved"]:
        out.update(final_index=proof["final_index"], final_index_status=proof["final_index_status"],
                   final_index_reason=proof["final_index_reason"])
    out.update(proof=proof, inputs=proof["inputs"], strength=proof["strength"])
    return TrajectoryProof(out)


def _proved_times(proof: dict) -> list[float]:
    """The finite ends of the proof's time enclosures (switches, collapse, blow-up)."""
    encl = [w["time"] for w in proof["switches"]] + [proof.get("collapse_time"), proof.get("blowup_time")]
    return [float(t[1]) for t in encl if t and t[1] is not None and math.isfinite(float(t[1]))]


#: default horizon of a regression flow (real time t; the run normally stops on its residual first)
REGRESSION_T_MAX = 1e12


def _solve_regression(setting: Setting, *, t_max, method, digits, time, budget, discrete, rtol,
                      residual_tol) -> RegressionResult:
    """The regression branch of :func:`solve` (float64, real time, the flow only)."""
    from theorycheck.solvers.regression import solve_regression

    if discrete or method != "auto" or digits is not None or time not in ("auto", TimeKind.REAL):
        raise ArgumentError(f"param={setting.param!r} integrates the flow in float64 in real time: drop discrete, "
                            "method, digits and time", "param", "discrete", "method", "digits", "time")
    if not (isinstance(residual_tol, (int, float)) and 0 < residual_tol < 1):
        raise ArgumentError(f"residual_tol={residual_tol!r}: give a tolerance in (0, 1)", "residual_tol")
    return solve_regression(setting.X, setting.y, param=setting.param, depth=setting.depth,
                            optimizer=setting.optimizer, rho=setting.rho, alpha=setting.alpha,
                            residual_tol=residual_tol, t_max=_positive(t_max, "t_max") if t_max is not None
                            else REGRESSION_T_MAX, rtol=rtol if rtol is not None else 1e-10, budget=budget)


# ---------------------------------------------------------------------------- max margin
class MaxMarginResult(Record):
    """The max-margin solution: what ``theorycheck maxmargin --json`` prints (docs/commands/maxmargin.md)."""

    KEYS = Keys("maxmargin", "norm", "beta", "beta_log2_scale", "margin", "direction", "margins", "support",
                "kkt_residual", "method", "n_examples", "d", strength=STRENGTH_KEYS)


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
        "strength": float_check().as_dict(),  # an LP / QP in float64 with its KKT residual
    })


# ---------------------------------------------------------------------------- a setting
class SettingSummary(Record):
    """A validated setting's summary, with the reachable cone of :meth:`Setting.reachable`: what
    ``theorycheck setting --json`` prints (docs/commands/setting.md)."""

    KEYS = Keys("setting", "n", "d", "depth", "loss", "optimizer", "rho", "init_kind", "balanced", "layers0",
                "separable", "separator", "separator_min_margin", "reachable_signs", "reachable_separable",
                "param", "reachable_reason", "reachable_certificate", "reachable_certificate_weights", "loss_lower_bound",
                strength=STRENGTH_KEYS)


def describe(setting: Setting) -> SettingSummary:
    """What a user should know about a validated setting before integrating it (what
    ``theorycheck setting --json`` prints); non-separable data raise NotSeparableError."""
    setting = _setting(setting)
    common = {"n": setting.n, "d": setting.d, "depth": setting.depth, "loss": setting.loss,
              "optimizer": setting.optimizer, "rho": setting.rho, "param": setting.param,
              "init_kind": setting.init.kind, "balanced": setting.balanced, "layers0": setting.layers0}
    if setting.regression:  # real labels: separability and the reachable cone are classification's questions
        return SettingSummary({**common, "separable": None, "separator": None, "separator_min_margin": None,
                               "strength": float_check().as_dict()})
    beta = check_separable(setting.Z)
    margins = setting.Z @ beta
    return SettingSummary({**common, "separable": True, "separator": beta,
                           "separator_min_margin": float(margins.min()), **setting.reachable().as_dict(),
                           "strength": float_check().as_dict()})


def thresholds(setting: Setting, *, place: bool = False, digits: int = 12, t_max: float | None = None,
               progress: bool | None = None, prove: bool = False, certificate=None, alpha_range=None,
               max_seconds: float = 120.0) -> ThresholdsResult | RegimeMap:
    """The regime thresholds in α of ``setting``'s problem (its example(s), optimizer, depth, ρ; what
    ``theorycheck thresholds --json`` prints), each with its ``strength``, and the exact ``inputs`` they are
    about. One example: ℓ2-SAM, L = 2 (z > 0): ``alpha_all_shrink``, ``alpha_gd_like`` (closed forms) and
    ``alpha_collapse`` (α_c to ``digits`` digits, a floating-point check); L ≥ 3: the derived initial-rate
    thresholds and α_c(L) for even L; ℓ∞-SAM: per coordinate, from the setting's α; GD: the predicted limit
    index. ``place``: also place the setting's α (its initial index, regime and the trajectory's switches up
    to ``t_max``, rescaled τ, default 40/min|z_j|). Several examples (ℓ2-SAM, L = 2): α_c(Z) from full
    integrations. ``prove`` (ℓ2-SAM, L = 2 or even L ≥ 4): ``alpha_collapse["proof"]``, a bracket of α_c
    proved about the exact inputs (:func:`theorycheck.setting.exact_inputs`); ``certificate`` (a path):
    its steps as data. ``alpha_range`` (with ``prove``; "A:B" or a pair, read exactly): the proved regime map
    of [A, B] instead (:func:`theorycheck.proofs.minor_first.proved.regime_map.proved_regime_map`, budget ``max_seconds``)."""
    from theorycheck.proofs.minor_first.predict.regimes import (
        ThresholdsResult,
        float_thresholds,
        overall_strength,
        thresholds_data,
    )

    setting = _gradient_step(_setting(setting), "the regime thresholds")
    if alpha_range is not None:
        return _regime_map(setting, alpha_range, prove, max_seconds)
    _check_proof_request(setting, prove, certificate, digits)
    if not setting.single:
        return thresholds_data(setting, progress=progress)
    # with prove (L = 2) the floating α_c is computed once, 3 digits beyond the proof's: the proof's start
    ahead = 3 if prove and setting.depth == 2 else 0
    res = float_thresholds(setting, place=place or optimizers.get(setting.optimizer).discontinuous, t_max=t_max, digits=digits,
                   alpha_c_digits=digits + ahead, progress=progress)
    if not prove:
        return res
    out = res.as_dict()
    out["alpha_collapse"]["proof"] = _collapse_proof(setting, out["alpha_collapse"], digits, certificate)
    out["strength"] = overall_strength(out).as_dict()
    return ThresholdsResult(out)


def _check_proof_request(setting: Setting, prove: bool, certificate, digits: int) -> None:
    """One-line errors for a proof that cannot be asked for, before any work (the certificate's path too)."""
    if certificate is not None and not prove:
        raise ArgumentError("certificate needs prove=True (a certificate is the data of a proof)", "certificate",
                            "prove")
    if not prove:
        return
    L = setting.depth
    if not optimizers.get(setting.optimizer).normalised:
        raise ArgumentError("prove=True: a proved α_c exists for ℓ2-SAM only (the other optimizers have closed forms)",
                            "prove")
    if not setting.single:
        raise ArgumentError("prove=True: a proved α_c exists for one example (several: a floating-point bracket)",
                            "prove")
    if L != 2 and (L < 4 or L % 2):
        raise ArgumentError(f"prove=True: depth={L} has no collapse threshold to prove (L = 2 or even L ≥ 4)",
                            "prove", "depth")
    if L == 2 and not 1 <= int(digits) <= 60:
        raise ArgumentError(f"digits={digits}: give 1 to 60 for a proved α_c", "digits")
    if certificate is not None:
        from theorycheck.outputs import output_file
        from theorycheck.proofs.minor_first.proved.reduced_l2 import rescaled
        from theorycheck.setting import exact_inputs

        output_file(certificate, "certificate")
        if L == 2 and min(setting.z) > 0 and setting.rho > 0 and rescaled(exact_inputs(setting, alpha=False)):
            raise ArgumentError("certificate: not written for z or rho beyond 2^±64 in scale (the proof runs on the "
                                "exactly rescaled problem); rescale the inputs", "certificate")


def _collapse_proof(setting: Setting, ac: dict, digits: int, certificate) -> dict:
    """The proof of α_c for ``setting`` at its exact inputs (``ac``: the floating α_c, the L = 2 start), with
    its certificate written when it is proved."""
    from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c
    from theorycheck.setting import exact_inputs

    inp = exact_inputs(setting, alpha=False)
    guess = ac["value_text"] if setting.depth == 2 and ac["value"] is not None and setting.rho > 0 else None
    proof = prove_alpha_c(inp.z, inp.rho, depth=setting.depth, digits=digits, guess=guess,
                          record=certificate is not None)
    out = proof.as_dict()
    if certificate is not None and proof.status == "proved":
        from theorycheck.outputs import make_parent
        from theorycheck.proved.certificate import write_certificate

        make_parent(Path(certificate), "certificate")
        write_certificate(certificate, proof)
        out["certificate"] = str(certificate)
    return out


def _regime_map(setting: Setting, alpha_range, prove: bool, max_seconds: float):
    """The proved regime map of the exact range ``alpha_range`` for ``setting``'s example."""
    from theorycheck.arith.exact import exact_range
    from theorycheck.proofs.minor_first.proved.regime_map import proved_regime_map
    from theorycheck.setting import exact_inputs

    if not prove:
        raise ArgumentError("alpha_range is mapped with prove=True (a proved regime map)", "alpha_range", "prove")
    if not setting.single:
        raise ArgumentError("alpha_range: a proved regime map is for one example", "alpha_range")
    lo, hi = exact_range(alpha_range, "alpha_range")
    inp = exact_inputs(setting, alpha=False)  # z and ρ as typed: the map is about them
    return proved_regime_map(inp.z, inp.rho, (lo.value, hi.value), optimizer=setting.optimizer,
                             depth=setting.depth, max_seconds=_positive(max_seconds, "max_seconds"))


def heatmap(setting: Setting, *, alphas, times, method: str = "auto", opts: RunOptions | None = None,
            backend: str = "processes", workers: int | None = None, scheduler: Any = None,
            progress: bool | None = None) -> SweepResult:
    """j† over (α, time) for the uniform initialisations α·1, α in ``alphas`` (the setting's own
    α is not used), of ``setting``'s examples, optimizer, depth, ρ and loss, batched (E1; what
    ``theorycheck heatmap --json`` prints). ``times``: the grid (rescaled τ for one example, real
    t otherwise); ``method``: auto | reduced | balanced | multi; ``opts``: tolerances, step
    budget, array backend; ``backend``: serial | processes | dask (``scheduler``: its address). The boundaries
    drawn (meta ``thresholds``) are the first paper's (C5, ℓ2-SAM at L = 2, one example; None elsewhere); one
    example runs on an installed pack's reduction of the flow where one applies (:func:`theorycheck.packs.reductions`:
    the first paper's C4 scalar ODE at ℓ2-SAM, L = 2), balanced otherwise."""
    from theorycheck.packs import reductions
    from theorycheck.proofs.minor_first.predict.grids import heatmap_thresholds
    from theorycheck.sweep.recipes import heatmap as sweep_heatmap

    return sweep_heatmap(_gradient_step(_setting(setting), "the batched sweeps"), alphas=alphas, times=times, method=method, opts=opts, backend=backend,
                         workers=workers, scheduler=scheduler, progress=progress, thresholds=heatmap_thresholds,
                         reductions=reductions())


# the calls of the remaining commands (certificates, derivations, packs, image experiments, figures)
from theorycheck.api.calls import (  # noqa: E402, F401
    check_certificate,
    claim_candidates,
    cnn_config,
    derive,
    linear_images,
    linear_images_config,
    linear_images_pairs,
    list_experiments,
    list_packs,
    plot_heatmap,
    plot_trajectory,
    predict_limit,
    run_cnn,
    time_grid,
    visits,
)
from theorycheck.api.packs import ReproduceResult, prove, reproduce, run_claim, verify  # noqa: E402, F401
from theorycheck.api.saddles import SaddlesResult, saddles  # noqa: E402, F401

__all__ += ["SaddlesResult", "saddles"]

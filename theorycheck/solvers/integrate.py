"""Solve the GD, ℓ2-SAM and ℓ∞-SAM flows of a :class:`~theorycheck.setting.Setting`.

One entry point, :func:`solve`, returns a :class:`~theorycheck.trajectory.Trajectory` that
says why it stopped (``stopped_because``) instead of raising from inside the solver.

- what to solve: a system of :mod:`theorycheck.solvers.systems`, chosen from the setting (one
  example → rescaled time τ; several → real time t; balanced → log coordinates);
- how: float64 (scipy's DOP853, the 8th-order method of ``solve_ivp``) or mpmath at ``digits`` digits
  (Gragg–Bulirsch–Stoer), through the engine's one float loop, :func:`theorycheck.solvers.driver.run_system`
  (budgets, events located by root finding, restarts of a hybrid system, the arc-length clock).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import mpmath
import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.setting import Setting
from theorycheck.solvers import reduction
from theorycheck.solvers.backends import FloatBackend, MpBackend
from theorycheck.solvers.driver import run_system
from theorycheck.solvers.systems import (
    BalancedL2System,
    BranchSystem,
    FlowSystem,
    LayersSystem,
    Thresholds,
)
from theorycheck.solvers.trajectory import Budget, Trajectory, twin_coordinates
from theorycheck.status import Status
from theorycheck.vocabulary import SOLVE_METHODS, TIME_CHOICES

__all__ = ["solve", "choose_system", "METHODS", "Budget", "Trajectory"]

METHODS: tuple[str, ...] = SOLVE_METHODS
#: default relative tolerance of the float64 integrator
FLOAT_RTOL = 1e-12
MIN_DIGITS = 16


def _tied_u0(setting: Setting) -> np.ndarray | None:
    W0 = setting.layers0
    return W0[0].copy() if np.all(W0 == W0[0]) else None


def choose_system(setting: Setting, bk, *, time: str = "auto", reduced: bool = False, reductions=()) -> FlowSystem:
    """The system (coordinates and events) that suits the setting; see :mod:`systems`. ``reduced``: the first of a
    theory's ``reductions`` (:mod:`theorycheck.solvers.reduction`) that reduces the setting, or an error."""
    thr = Thresholds.for_backend(bk)
    L, rho, opt = setting.depth, setting.rho, get_optimizer(setting.optimizer)
    if time not in TIME_CHOICES:
        raise TheorycheckError(f"time = {time!r}: choose auto, rescaled or real")
    if time == "rescaled" and not setting.single:
        raise TheorycheckError(f"rescaled time needs one example; this setting has {setting.n}: use real time")
    rescaled = setting.single and time != "real"
    u0 = _tied_u0(setting)
    if reduced:
        return reduction.for_flow(reductions, setting, bk, thr, rescaled=rescaled, u0=u0)
    # the balanced systems are written for a step of the gradient alone: a weighted one (ASAM) runs in W
    if rescaled and u0 is not None and L >= 2 and not opt.weighted:
        if not opt.normalised:  # GD and ℓ∞-SAM: the locked-branch system (C2, C3)
            return BranchSystem(bk, setting.z, u0, L, rho, opt, thr)
        if np.all(u0 > 0):
            return BalancedL2System(bk, setting.z, u0, L, rho, thr, opt)
    return LayersSystem(bk, setting.Z, setting.layers0, L, rho, opt, setting.loss,
                        rescaled=rescaled, tied=u0 is not None, thr=thr)


def solve(setting: Setting, *, t_max: float, method: str = "auto", digits: int | None = None,
          time: str = "auto", budget: Budget | None = None, rtol: float | None = None,
          progress: Callable[[float, float, int], None] | None = None, reductions=()) -> Trajectory:
    """Integrate the setting's flow from 0 to ``t_max`` (rescaled τ for one example,
    real t for several; ``time`` overrides). ``method``: "scipy" (float64), "mpmath"
    (``digits`` digits, default 30), "reduced" (the first of a theory's ``reductions`` that reduces the setting,
    :mod:`theorycheck.solvers.reduction`: the first paper's is C4's scalar ODE; float64 unless
    ``digits``), "auto" (mpmath when ``digits`` is given). ``rtol`` defaults to
    1e-12 (float64) or 10^{2−digits}. Never raises for numerical trouble: the result's
    ``stopped_because`` says what happened."""
    if method not in METHODS:
        raise TheorycheckError(f"method {method!r}: choose one of {', '.join(METHODS)}")
    try:
        t_max = float(t_max)
    except (TypeError, ValueError):
        raise TheorycheckError(f"t_max = {t_max!r} is not a number") from None
    if not math.isfinite(t_max) or t_max <= 0:
        raise TheorycheckError(f"t_max = {t_max}: give a finite final time > 0")
    if method == "mpmath" and digits is None:
        digits = 30
    if digits is not None:
        if isinstance(digits, bool) or int(digits) != digits or digits < MIN_DIGITS:
            raise TheorycheckError(f"digits = {digits!r}: give a whole number of digits ≥ {MIN_DIGITS} (30 or more recommended)")
        digits = int(digits)
        if digits > 1000:
            raise TheorycheckError(f"digits = {digits}: at most 1000 digits")
    if method == "scipy" and digits is not None:
        raise TheorycheckError("method scipy is float64: drop digits, or use method mpmath")
    mp = digits is not None
    budget = budget or Budget()
    if rtol is not None and not (0 < rtol < 1):
        raise TheorycheckError(f"rtol = {rtol!r}: give a tolerance in (0, 1)")
    ctx = mpmath.workdps(digits + 12) if mp else contextlib.nullcontext()
    with ctx, np.errstate(all="ignore"):
        bk = MpBackend(digits + 12, digits) if mp else FloatBackend()
        system = choose_system(setting, bk, time=time, reduced=method == "reduced", reductions=reductions)
        if mp:
            tol = mpmath.mpf(rtol) if rtol is not None else mpmath.mpf(10) ** (2 - digits)
            k = int(min(16, max(6, round(digits / 3) + 2)))
        else:
            tol, k = (rtol if rtol is not None else FLOAT_RTOL), 0
        res = run_system(system, t_max, mp=mp, rtol=tol, k=k, budget=budget, progress=progress)
        obs = res["obs"]
        la = np.array([o[0] for o in obs])
        sg = np.array([o[1] for o in obs], dtype=int)
    label = "reduced" if method == "reduced" else ("mpmath" if mp else "scipy")
    reason = Status(res["stop"])
    msg = res["message"] or reason.message
    return Trajectory(setting=setting, time_kind=system.time_kind, method=label, digits=digits,
                      t=res["t"], log_abs_beta=la, sign_beta=sg, stopped_because=reason, t_max=t_max,
                      collapse_time=res["collapse_time"], blowup_time=res["blowup_time"], events=res["events"],
                      n_steps=res["n_steps"], n_evaluations=res["n_eval"], message=msg, system=system.name,
                      _steps=res["steps"], twins=twin_coordinates(setting.Z, setting.layers0),
                      **(_exact_fields(res) if mp else {}))


def _exact_fields(res: dict) -> dict:
    """The mpmath values of an mpmath run (Trajectory.t_exact, log_abs_beta_exact, …)."""
    obs_x = res["obs_exact"]
    return {"t_exact": list(res["t_exact"]),
            "log_abs_beta_exact": None if any(o is None for o in obs_x) else [list(o) for o in obs_x],
            "collapse_time_exact": res["collapse_exact"], "blowup_time_exact": res["blowup_exact"]}

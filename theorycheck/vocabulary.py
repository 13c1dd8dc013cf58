"""The tool's vocabulary: optimizers, losses and the argument checks every layer shares.

Plain Python (no numpy, no sympy), so that :class:`~theorycheck.setting.Setting`, the CLI
parser and the symbolic layer take their names from one place and ``import theorycheck``
stays light.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any

from theorycheck.errors import SettingError

__all__ = ["REGIMES", "REGIME_DESCRIPTIONS", "TimeKind", "LOSSES", "REGRESSION_LOSSES",
           "LOSS_DESCRIPTIONS", "PARAMETRISATIONS", "REGRESSION_PARAMETRISATIONS", "check_param", "check_combination", "SOLVE_METHODS", "TIME_CHOICES", "SWEEP_METHODS", "SWEEP_BACKENDS", "DASK_LOCAL_SCHEDULERS",
           "ARRAY_BACKENDS", "PROFILES", "NORMS", "CNN_DATASETS", "CNN_UPSAMPLING", "CNN_DEVICES", "check_optimizer",
           "check_loss", "check_depth", "check_rho", "TIE_RTOL", "TIE_LOG", "counted"]

class TimeKind(StrEnum):
    """Which time a result's times are in, one word pair everywhere (trajectories, sweeps,
    figures): rescaled (τ, one example, dτ = −ℓ'(m̂) dt) or real (t)."""

    RESCALED = "rescaled"
    REAL = "real"

    @property
    def symbol(self) -> str:
        """τ or t."""
        return "τ" if self is TimeKind.RESCALED else "t"

    @property
    def label(self) -> str:
        """An axis label."""
        return "rescaled time τ" if self is TimeKind.RESCALED else "time t"


#: the regimes of ℓ2-SAM at L = 2 in α (C5), one table: code -> (short name, what happens). Code 0:
#: not decided (a budget ran out, or α in α_c's bracket); the sweeps' ``regime`` arrays
#: hold the codes
REGIMES: dict[int, tuple[str, str]] = {
    0: ("budget ran out", "undecided"),
    1: ("collapse", "collapse (the predictor goes to 0, the loss does not vanish)"),
    2: ("sequential amplification",
        "sequential amplification (minor features before the major one; near α_c the path first moves "
        "to a more minor feature: verify's C4.sequential)"),
    3: ("GD-like (j† = argmax z throughout)", "GD-like (straight to the major feature)"),
}
#: code -> what happens (regimes 1..3)
REGIME_DESCRIPTIONS: dict[int, str] = {k: v[1] for k, v in REGIMES.items() if k}


#: loss name -> one line
LOSS_DESCRIPTIONS: dict[str, str] = {
    "logistic": "ℓ(s) = log(1 + exp(-s))",
    "exponential": "ℓ(s) = exp(-s)",
}

#: the tie rule of j† (one for every index the tool reports): coordinates with
#: |β_j| ≥ (1 − TIE_RTOL)·max_k |β_k| are tied, i.e. ln|β_j| ≥ ln|β|_max − TIE_LOG: relative in
#: |β|, so it means the same at every scale
TIE_RTOL = 1e-9
TIE_LOG = -math.log1p(-TIE_RTOL)

LOSSES: tuple[str, ...] = tuple(LOSS_DESCRIPTIONS)
#: losses of the regression setting (real labels; with the parametrisations pm and uv)
REGRESSION_LOSSES: tuple[str, ...] = ("squared",)
#: β = w_1 ⊙ … ⊙ w_L (product), β = w₊^D − w₋^D (pm, the signed parametrisation) or β = u ⊙ v (uv)
PARAMETRISATIONS: tuple[str, ...] = ("product", "pm", "uv")
#: the parametrisations of the regression flows (squared loss, real labels)
REGRESSION_PARAMETRISATIONS: tuple[str, ...] = ("pm", "uv")


def __getattr__(name: str):
    """``OPTIMIZERS`` (the registered names) and ``OPTIMIZER_DESCRIPTIONS`` (name → one line): read
    from the optimizers' registry (:mod:`theorycheck.optimizers`) when asked, so that no name is
    written here."""
    if name in ("OPTIMIZERS", "OPTIMIZER_DESCRIPTIONS"):
        from theorycheck.optimizers import registry

        return registry.names() if name == "OPTIMIZERS" else registry.descriptions()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# The names every entry point accepts, defined once (the CLI's choices come from here).
#: how ``solve`` integrates one trajectory
SOLVE_METHODS: tuple[str, ...] = ("auto", "scipy", "mpmath", "reduced")
#: the clock ``solve`` runs in (auto: rescaled τ for one example, real t otherwise)
TIME_CHOICES: tuple[str, ...] = ("auto", "rescaled", "real")
#: which system integrates a sweep
SWEEP_METHODS: tuple[str, ...] = ("auto", "reduced", "balanced", "multi")
#: where a sweep runs
SWEEP_BACKENDS: tuple[str, ...] = ("serial", "processes", "dask")
#: local Dask schedulers for independent tasks (sweep.run.run_tasks); a scheduler address is the other choice
DASK_LOCAL_SCHEDULERS: tuple[str, ...] = ("threads", "processes", "sync")
#: the arrays a sweep computes on
ARRAY_BACKENDS: tuple[str, ...] = ("auto", "numpy", "numba", "torch")
#: verify's profiles: drawn inputs per claim
PROFILES: dict[str, int] = {"fast": 12, "thorough": 100}
#: the max-margin norms p
NORMS: tuple[int, ...] = (1, 2)
#: the cnn experiment's datasets, Grad-CAM upsamplings and devices
CNN_DATASETS: tuple[str, ...] = ("mnist", "cifar10", "svhn")
CNN_UPSAMPLING: tuple[str, ...] = ("rf", "center", "bilinear")
CNN_DEVICES: tuple[str, ...] = ("cpu", "cuda")


def check_optimizer(optimizer: str) -> str:
    """``optimizer`` if it is a registered optimizer's name (:mod:`theorycheck.optimizers`), else a
    one-line SettingError naming the choices."""
    from theorycheck.optimizers.registry import check_optimizer as check

    return check(optimizer)


def _refusal(message: str) -> SettingError:
    err = SettingError(message)
    err.arguments = ("param", "loss", "optimizer", "depth")  # the CLI writes them as its flags
    return err


def check_combination(param: str, loss: str, optimizer, depth: int) -> Any:
    """The optimizer object when the engine integrates its flow for (param, loss, depth) — the loss
    fits the parametrisation and :meth:`Optimizer.supports` agrees — else a one-line SettingError that
    names the arguments (``arguments``: param, loss, optimizer, depth) and says what is integrated."""
    from theorycheck.optimizers.registry import registered, supported_names

    if param not in PARAMETRISATIONS:
        raise _refusal(f"param={param!r}: choose one of {', '.join(PARAMETRISATIONS)}")
    if param in REGRESSION_PARAMETRISATIONS and loss not in REGRESSION_LOSSES:
        raise _refusal(f"param={param!r} goes with loss='squared' and " + ("depth ≥ 2" if param == "pm" else "depth=2"))
    if param not in REGRESSION_PARAMETRISATIONS and loss not in LOSSES:
        raise _refusal(f"loss={loss!r} goes with param='pm' or param='uv'" if loss in REGRESSION_LOSSES
                      else f"unknown loss {loss!r}: choose one of {', '.join(LOSSES)}")
    if param == "uv" and depth != 2:
        raise _refusal(f"param='uv' is β = u ⊙ v: depth=2 only (got depth={depth})")
    if param == "pm" and depth < 2:
        raise _refusal(f"param='pm' goes with loss='squared' and depth ≥ 2 (got depth={depth})")
    opt = registered(optimizer)
    why = opt.supports(param, loss, depth)
    if why is not None:
        ok = ", ".join(supported_names(param, loss, depth)) or "none"
        raise _refusal(f"optimizer={opt.name!r} with param={param!r}, loss={loss!r}, depth={depth}: {why} "
                      f"(integrated here: {ok})")
    return opt


def check_param(param: str) -> str:
    """``param`` if it is one of :data:`PARAMETRISATIONS`, else a one-line SettingError."""
    if param not in PARAMETRISATIONS:
        raise SettingError(f"unknown parametrisation {param!r}: choose one of {', '.join(PARAMETRISATIONS)}")
    return param


def check_loss(loss: str) -> str:
    """``loss`` if it is one of :data:`LOSSES`, else a one-line SettingError."""
    if loss not in LOSSES:
        raise SettingError(f"unknown loss {loss!r}: choose one of {', '.join(LOSSES)}")
    return loss


def check_depth(depth) -> int:
    """The depth L as an int ≥ 1 (bools and non-integers are refused)."""
    try:
        ok = not isinstance(depth, bool) and float(depth).is_integer() and depth >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise SettingError(f"depth = {depth!r}: the depth L must be an integer ≥ 1")
    return int(depth)


def check_rho(rho) -> float:
    """The SAM radius ρ as a finite float ≥ 0."""
    try:
        rho = float(rho)
    except (TypeError, ValueError):
        raise SettingError(f"rho = {rho!r} is not a number") from None
    if not math.isfinite(rho):
        raise SettingError(f"rho = {rho}: ρ must be a finite number ≥ 0")
    if rho < 0:
        raise SettingError(f"rho = {rho:g}: the SAM radius ρ must be ≥ 0")
    return rho


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 claim"``, ``"2 claims"``: a count with its noun in the right number (``plural``
    when it is not noun + "s")."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"

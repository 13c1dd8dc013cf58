"""The discrete algorithms whose η → 0 limits are the flows (THEORY.md, Setting):
GD ``w ← w − η ∇Lo(w)`` and SAM ``w ← w − η ∇Lo(w + ε(w))``, numpy, float64.

Every formula is compiled (:mod:`theorycheck.symbolic.forms`): the layer gradient, the
perturbation ε and the overflow-free ℓ'. The flows are compared with the iterates along
the path (direction at equal ‖β‖), not at equal time: one example's flow runs in
rescaled time, and t = kη only matches real time to first order anyway.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import supporting
from theorycheck.setting import Setting
from theorycheck.solvers.trajectory import Trajectory, twin_coordinates
from theorycheck.status import Status
from theorycheck.symbolic import forms as C
from theorycheck.symbolic.model import LOSSES
from theorycheck.vocabulary import TimeKind

__all__ = ["sam_step", "run"]

#: run-specific messages (the status word is shared with the flows; what overflowed differs)
_MESSAGES = {Status.NON_FINITE: "the next iterate overflowed (the record ends at the last finite one)"}


def _check(W: np.ndarray, Z: np.ndarray, optimizer: str, rho: float, eta: float, loss: str) -> None:
    if W.ndim != 2 or Z.ndim != 2 or W.shape[1] != Z.shape[1]:
        raise TheorycheckError(f"sam_step: W must be L×d and Z n×d with the same d (got {W.shape} and {Z.shape})")
    opt = get_optimizer(optimizer)
    if opt.per_example or not opt.rescalable:
        ok = ", ".join(o.name for o in supporting("product", loss if loss in LOSSES else "logistic", 2))
        raise TheorycheckError(f"sam_step takes the product flows' optimizers ({ok}), not {opt.name!r}")
    if loss not in LOSSES:
        raise TheorycheckError(f"unknown loss {loss!r}: choose one of {', '.join(LOSSES)}")
    if not (math.isfinite(rho) and rho >= 0):
        raise TheorycheckError(f"rho = {rho!r}: ρ must be a finite number ≥ 0")
    if not (math.isfinite(eta) and eta > 0):
        raise TheorycheckError(f"eta = {eta!r}: the step η must be a finite number > 0")


def _gradient(W: np.ndarray, Z: np.ndarray, risk: C.EmpiricalRisk, grad: Callable) -> np.ndarray:
    """∇_W Lo: G = ∂Lo/∂β (:func:`theorycheck.symbolic.forms.empirical_risk`), then ∂Lo/∂w_k = G ⊙ Π_{m≠k} w_m (compiled)."""
    G = risk.gradient(C.predictor(W.shape[0])(*W), Z)
    L, d = W.shape
    return np.stack([np.broadcast_to(np.asarray(g, dtype=float), (d,)) for g in grad(G, *W)])


def sam_step(W: np.ndarray, Z: np.ndarray, *, optimizer: str, rho: float, eta: float,
             loss: str = "logistic") -> np.ndarray:
    """One step ``W − η ∇Lo(W + ε(W))`` (GD: ε = 0; ℓ2: ρ g/‖g‖₂ over all layers jointly,
    ε = 0 where g = 0; ℓ∞: ρ sign g; ASAM: ρ W² g/‖W ⊙ g‖₂). ``W`` is L×d (row k = layer k), ``Z`` n×d
    (z_i = y_i x_i). Returns the new L×d array; W is not modified."""
    W = np.asarray(W, dtype=float)
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    rho, eta = float(rho), float(eta)
    _check(W, Z, optimizer, rho, eta, loss)
    risk = C.empirical_risk(loss)
    grad = C.layer_gradient(W.shape[0])
    with np.errstate(over="ignore", under="ignore"):
        g = _gradient(W, Z, risk, grad)
        opt = get_optimizer(optimizer)
        if not opt.perturbs:
            What = W
        else:
            T = C.norm_weight(opt)  # S = ‖g‖₂, or ‖T(W) ⊙ g‖₂ for a weighted step (ASAM)
            S = float(np.sqrt(np.sum(np.square(g if T is None else T(W) * g))))
            eps_f = C.perturbation(opt)
            if opt.normalised and S == 0:
                eps = np.zeros_like(W)
            else:
                eps = np.asarray(eps_f(g, S, rho, W), dtype=float)
            What = W + eps
        return W - eta * _gradient(What, Z, risk, grad)


def _log_norm(W: np.ndarray) -> float:
    """ln‖β‖₂ of β = Π_k w_k from the layers (no overflow; −inf for β = 0)."""
    with np.errstate(divide="ignore"):
        la = np.sum(np.log(np.abs(W)), axis=0)
    return float(0.5 * logsumexp(2 * la)) if np.max(la) > -np.inf else -math.inf


def run(setting: Setting, *, eta: float, steps: int, record_every: int = 1, max_seconds: float = 60.0,
        stop_log_norm: float | None = None, progress: Callable[[int, int], None] | None = None) -> Trajectory:
    """Iterate :func:`sam_step` from the setting's initial layers for ``steps`` steps
    (budget: ``max_seconds``; optionally stop once ln‖β‖₂ ≥ ``stop_log_norm``). Returns a
    :class:`Trajectory` in real time t = kη (method "discrete"; its dense output
    interpolates ln|β| linearly between recorded iterates)."""
    if isinstance(steps, bool) or int(steps) != steps or steps < 1:
        raise TheorycheckError(f"steps = {steps!r}: give a whole number ≥ 1")
    if int(record_every) != record_every or record_every < 1:
        raise TheorycheckError(f"record_every = {record_every!r}: give a whole number ≥ 1")
    Z = setting.Z
    W = setting.layers0.astype(float)
    _check(W, Z, setting.optimizer, setting.rho, float(eta), setting.loss)
    ts, las, sgs = [0.0], [], []

    def record(W):
        # ln|β_j| = Σ_k ln|w_kj| and sign β_j = Π_k sign w_kj: finite whenever the layers
        # are (the product itself overflows for L ≥ 2 long before the layers do)
        with np.errstate(divide="ignore"):
            las.append(np.sum(np.log(np.abs(W)), axis=0))
        sgs.append(np.prod(np.sign(W), axis=0).astype(int))

    record(W)
    stop = Status.STEPS
    t0 = _time.monotonic()
    last = t0
    for k in range(1, int(steps) + 1):
        W_new = sam_step(W, Z, optimizer=setting.optimizer, rho=setting.rho, eta=eta, loss=setting.loss)
        if not np.all(np.isfinite(W_new)):
            stop = Status.NON_FINITE
            if ts[-1] != (k - 1) * float(eta):  # the last finite iterate ends the record
                ts.append((k - 1) * float(eta))
                record(W)
            break
        W = W_new
        done = stop_log_norm is not None and _log_norm(W) >= stop_log_norm
        if k % record_every == 0 or k == steps or done:
            ts.append(k * float(eta))
            record(W)
        if done:
            stop = Status.NORM_REACHED
            break
        now = _time.monotonic()
        if now - t0 > max_seconds:
            stop = Status.MAX_SECONDS
            if ts[-1] != k * float(eta):
                ts.append(k * float(eta))
                record(W)
            break
        if progress is not None and now - last > 2.0:
            progress(k, int(steps))
            last = now
    return Trajectory(setting=setting, time_kind=TimeKind.REAL, method="discrete", digits=None, t=np.array(ts),
                      log_abs_beta=np.array(las), sign_beta=np.array(sgs), stopped_because=stop,
                      t_max=float(steps) * float(eta), n_steps=len(ts) - 1, message=_MESSAGES.get(stop, stop.message),
                      system=f"discrete η = {eta:g}", twins=twin_coordinates(setting.Z, setting.layers0))

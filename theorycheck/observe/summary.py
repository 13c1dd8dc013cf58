"""What a run reports: the final direction, margins and loss along the run (in mpmath where float64
cannot hold them), the summary and the full report that ``theorycheck trajectory --json`` prints, and the
exact texts of an mpmath run."""

from __future__ import annotations

import math

import mpmath
import numpy as np

from theorycheck.observe.index import direction, index_chain, log_norm
from theorycheck.observe.lockin import final_index_status
from theorycheck.solvers.trajectory import Trajectory
from theorycheck.symbolic import forms as C

__all__ = ["final_direction", "margins_and_loss", "summary", "report", "attach", "exact_texts"]


def final_direction(traj: Trajectory) -> np.ndarray:
    """β/‖β‖ at the end (the zero vector after a collapse)."""
    if traj.collapsed:
        return np.zeros(traj.d)
    return direction(traj.log_abs_beta[-1], traj.sign_beta[-1])


def _margins_loss_row(la: np.ndarray, sg: np.ndarray, Z: np.ndarray, loss: str) -> dict[str, float]:
    """One state: ``log_norm`` ln‖β‖₂, ``normalized_margin`` min_i <β/‖β‖₂, z_i>, ``min_margin``
    min_i <β, z_i>, ``loss`` Lo = (1/n) Σ ℓ(<β, z_i>) and ``log_loss`` ln Lo. Margins are
    ‖β‖₂·<β/‖β‖₂, z_i> (never forming β); when a margin leaves the float64 range the loss is
    evaluated with mpmath (the same compiled ℓ, unbounded exponents). A value beyond the
    float64 range is ±inf here (:func:`summary` reports it as null and names it)."""
    u = direction(la, sg)
    lb = log_norm(la)
    p = Z @ u
    if lb == -math.inf:  # β = 0
        ell0 = float(C.stable_loss_functions(loss)[0](0.0))
        return {"log_norm": lb, "normalized_margin": 0.0, "min_margin": 0.0, "loss": ell0, "log_loss": math.log(ell0)}
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        nb = math.exp(lb) if lb < 709.0 else math.inf
        m = p * nb if nb < math.inf else np.where(p == 0, 0.0, p * math.inf)
        m_min = float(np.min(m))
        lo = float(np.mean(C.stable_loss_functions(loss)[0](m))) if np.all(np.isfinite(m)) else math.nan
    if math.isfinite(lo) and lo > 0:
        return {"log_norm": lb, "normalized_margin": float(np.min(p)), "min_margin": m_min, "loss": lo,
                "log_loss": math.log(lo)}
    ell = C.stable_loss_functions(loss, "mpmath")[0]
    with mpmath.workdps(30):
        lo_mp = mpmath.fsum(ell(mpmath.mpf(float(pi)) * mpmath.exp(mpmath.mpf(lb))) for pi in p) / len(p)
        log_lo = float(mpmath.log(lo_mp)) if lo_mp > 0 else -math.inf  # float(): ±inf beyond float64
        lo_f = float(lo_mp)  # inf above, 0 below the float64 range
    return {"log_norm": lb, "normalized_margin": float(np.min(p)), "min_margin": m_min, "loss": lo_f,
            "log_loss": log_lo}


def margins_and_loss(traj: Trajectory, loss: str | None = None) -> dict[str, np.ndarray]:
    """Over the stored times: ``min_margin`` min_i <β, z_i>, ``normalized_margin``
    min_i <β/‖β‖₂, z_i>, ``loss`` Lo = (1/n) Σ ℓ(<β, z_i>), ``log_loss`` ln Lo and ``log_norm``
    ln‖β‖₂, computed from (ln|β|, sign β) without forming β (see :func:`_margins_loss_row`;
    values beyond the float64 range are ±inf, their logarithms stay finite)."""
    s = traj.setting
    rows = [_margins_loss_row(la, sg, s.Z, loss or s.loss) for la, sg in zip(traj.log_abs_beta, traj.sign_beta)]
    out = {"t": traj.t.copy()}
    for k in ("min_margin", "normalized_margin", "loss", "log_loss", "log_norm"):
        out[k] = np.array([r[k] for r in rows])
    return out


def _finite_or_none(key: str, v: float, overflow: list[str]) -> float | None:
    if math.isfinite(v):
        return float(v)
    overflow.append(key)
    return None


def summary(traj: Trajectory) -> dict:
    """The observables the CLI reports (JSON keys: docs/commands/trajectory.md)."""
    chain = index_chain(traj)
    status, reason = final_index_status(traj, chain)
    out = {
        "time_kind": traj.time_kind,
        "stopped_because": traj.stopped_because,
        "message": traj.message,
        "t_end": traj.t_end,
        "t_max": traj.t_max,
        "initial_index": chain.initial,
        "final_index": chain.final,
        "final_index_status": status,
        "final_index_reason": reason,
        "collapsed": traj.collapsed,
        "collapse_time": traj.collapse_time,
        "blowup_time": traj.blowup_time,
        "switches": [w.as_dict() for w in chain.switches],
        "direction": final_direction(traj).tolist(),
        "log_abs_beta": [None if not np.isfinite(v) else float(v) for v in traj.log_abs_beta[-1]],
        "events": [{"time": e.time, "kind": e.kind, "index": e.index} for e in traj.events],
    }
    if traj.setting.n > 1 or traj.time_kind == "real":
        r = _margins_loss_row(traj.log_abs_beta[-1], traj.sign_beta[-1], traj.setting.Z, traj.setting.loss)
        over: list[str] = []
        out["final_margin"] = _finite_or_none("final_margin", r["min_margin"], over)
        out["final_normalized_margin"] = float(r["normalized_margin"])
        out["final_loss"] = _finite_or_none("final_loss", r["loss"], over)
        out["final_log_loss"] = _finite_or_none("final_log_loss", r["log_loss"], over)
        out["final_log_norm"] = (None if r["log_norm"] == -math.inf  # β = 0
                                 else _finite_or_none("final_log_norm", r["log_norm"], over))
        out["overflow"] = over
    return out


def report(traj: Trajectory) -> dict:
    """What ``theorycheck trajectory --json`` prints (keys: docs/commands/trajectory.md): the
    :func:`summary`, how it ran, the setting, and the angles between the final direction and
    the ℓ1 / ℓ2 max-margin solutions. :meth:`Trajectory.as_dict` returns this."""
    from theorycheck.solvers.maxmargin import angle_degrees, max_margin

    setting = traj.setting
    out = summary(traj)
    out.update({
        "method": traj.method,
        "digits": traj.digits,
        "system": traj.system,
        "depth": setting.depth,
        "optimizer": setting.optimizer,
        "rho": setting.rho,
        "loss": setting.loss,
        "n_examples": setting.n,
        "d": setting.d,
        "steps": traj.n_steps,
        "evaluations": traj.n_evaluations,
    })
    if traj.eta is not None:
        out["eta"] = traj.eta
    out.update(exact_texts(traj))
    from theorycheck.strength import float_check, not_decided

    out["strength"] = (float_check(traj.digits) if traj.successful
                       else not_decided(f"{out['stopped_because']}: {out['message']}")).as_dict()
    for p in (1, 2):
        out[f"angle_l{p}_deg"] = angle_degrees(out["direction"], max_margin(setting.Z, p).beta)
    return out


def attach(traj: Trajectory) -> Trajectory:
    """Compute :func:`report` once and attach it to the trajectory (``traj.observed``), so that
    ``traj.as_dict()`` returns it; returns ``traj``."""
    traj.observed = report(traj)
    return traj


def exact_texts(traj: Trajectory) -> dict:
    """With ``digits`` D: the numbers the run knows to D digits, as decimal strings
    (``time_text`` = the final time, ``log_abs_beta_text`` = ln|β_j| there, ``collapse_time_text``,
    ``blowup_time_text``); nothing for float64 runs."""
    import mpmath as mp

    if not traj.digits or getattr(traj, "t_exact", None) is None:
        return {}
    D = int(traj.digits)

    def text(x):
        return None if x is None else mp.nstr(x, D, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)

    out = {"time_text": text(traj.t_exact[-1]), "collapse_time_text": text(traj.collapse_time_exact),
           "blowup_time_text": text(traj.blowup_time_exact)}
    if traj.log_abs_beta_exact is not None:
        out["log_abs_beta_text"] = [text(v) for v in traj.log_abs_beta_exact[-1]]
    return out

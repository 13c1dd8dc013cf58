"""Observables of a :class:`~theorycheck.trajectory.Trajectory`: the direction β/‖β‖, the
dominant index j†(t) = argmax_j |β_j(t)| (1-based; 0 for β = 0 or after a collapse), its
switches located by root finding on the dense output, and margins and loss.

Ties: j† is the smallest index among exactly equal |β_j| (as numpy's argmax), so equal
coordinates that stay equal (equal z_j and α_j) never produce a switch; a tie at the start
(uniform α) is resolved by j†(0+): the index of the first stored state whose leader is
ahead by more than 1e-9 (relative), so no switch is reported inside the rounding of the tie.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from theorycheck.solve.trajectory import Trajectory
from theorycheck.symbolic import compile as C

__all__ = ["Switch", "direction", "dominant_index", "index_path", "switches", "margins_and_loss",
           "final_direction", "final_index", "initial_index", "summary", "log_norm", "direction_at_norm"]


@dataclass(frozen=True)
class Switch:
    """j† changes from ``from_`` to ``to`` (1-based; 0 = the zero vector) at ``time``."""

    time: float
    from_: int
    to: int

    def as_dict(self) -> dict:
        return {"time": self.time, "from": self.from_, "to": self.to}


def direction(log_abs_beta: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """β/‖β‖₂ from (ln|β|, sign β) without forming β (no overflow); zeros for β = 0."""
    la = np.asarray(log_abs_beta, dtype=float)
    if la.size == 0 or not np.any(np.isfinite(la)) or np.max(la) == -np.inf:
        return np.zeros(la.shape)
    m = np.max(la)
    with np.errstate(under="ignore"):
        v = np.asarray(sign, dtype=float) * np.exp(la - m)
    return v / np.linalg.norm(v)


def dominant_index(log_abs_beta: np.ndarray, tie: float = 0.0) -> int:
    """j† = argmax_j |β_j| (1-based), 0 when β = 0. With ``tie`` > 0, coordinates whose
    ln|β_j| is within ``tie`` (relative) of the maximum count as tied and the smallest
    index is returned (equal z and α evolve identically up to rounding)."""
    la = np.asarray(log_abs_beta, dtype=float)
    if la.size == 0 or np.max(la) == -np.inf:
        return 0
    if tie > 0:
        m = np.max(la)
        return int(np.flatnonzero(la >= m - tie * max(1.0, abs(m)))[0]) + 1
    return int(np.argmax(la)) + 1


def index_path(traj: Trajectory) -> np.ndarray:
    """j† at the stored steps (0 at and after a collapse)."""
    idx = np.array([dominant_index(row) for row in traj.log_abs_beta], dtype=int)
    if traj.collapsed and len(idx):
        idx[-1] = 0
    return idx


def _index_at(traj: Trajectory, t: float) -> int:
    return dominant_index(traj.at(t)[0])


def _locate(traj: Trajectory, ta: float, ja: int, tb: float, jb: int, depth: int = 0) -> list[Switch]:
    """Switches of j† in (ta, tb] given j†(ta) = ja ≠ jb = j†(tb)."""
    width = tb - ta
    tiny = 4 * np.finfo(float).eps * max(abs(ta), abs(tb), 1e-300)
    if width <= tiny or depth > 60:
        return [Switch(float(tb), ja, jb)]
    if ja > 0 and jb > 0:
        def D(t: float) -> float:
            la = traj.at(t)[0]
            return float(la[jb - 1] - la[ja - 1])

        da, db = D(ta), D(tb)
        if da < 0 <= db or (da <= 0 < db):
            try:
                tr = brentq(D, ta, tb, xtol=tiny, rtol=4 * np.finfo(float).eps, maxiter=200)
            except (ValueError, RuntimeError):
                tr = 0.5 * (ta + tb)
            # accept a single switch when ja and jb lead at the crossing itself and j† is
            # ja just before and jb just after (otherwise another index intervenes: split)
            la_r = traj.at(tr)[0]
            lead = max(la_r[ja - 1], la_r[jb - 1]) >= np.max(la_r) - 1e-12 * (1 + abs(np.max(la_r)))
            left, right = 0.5 * (ta + tr), 0.5 * (tr + tb)
            if lead and _index_at(traj, left) == ja and _index_at(traj, right) == jb:
                return [Switch(float(tr), ja, jb)]
            tm = tr if ta < tr < tb else 0.5 * (ta + tb)
        else:
            tm = 0.5 * (ta + tb)
    else:
        tm = 0.5 * (ta + tb)
    jm = _index_at(traj, tm)
    out: list[Switch] = []
    if jm != ja:
        out += _locate(traj, ta, ja, tm, jm, depth + 1)
    if jm != jb:
        out += _locate(traj, tm, jm, tb, jb, depth + 1)
    return out


def switches(traj: Trajectory) -> list[Switch]:
    """Every change of j†, in time order, each located to about machine precision on the
    dense output (root of ln|β_to| − ln|β_from|); a collapse adds a switch to 0."""
    raw = [dominant_index(row) for row in traj.log_abs_beta]
    t = traj.t
    start = _tie_resolved(traj.log_abs_beta)
    raw[:start] = [raw[start]] * start
    out: list[Switch] = []
    for i in range(len(raw) - 1):
        if raw[i] == raw[i + 1]:
            continue
        if t[i + 1] > t[i]:
            out += _locate(traj, float(t[i]), raw[i], float(t[i + 1]), raw[i + 1])
        else:
            out.append(Switch(float(t[i + 1]), raw[i], raw[i + 1]))
    if traj.collapsed and raw and raw[-1] != 0:
        out.append(Switch(float(traj.collapse_time), raw[-1], 0))
    return [w for w in out if w.time > t[start - 1 if start else 0]]


def _tie_resolved(la: np.ndarray, gap: float = 1e-9) -> int:
    """Index of the first stored row whose largest ln|β_j| leads the next by more than
    ``gap`` (relative), when row 0 is a tie (uniform α); 0 when row 0 is not a tie. Rows
    before it are within rounding of the tie and take j†(0+) from that row."""
    def lead(row):
        f = np.sort(row[np.isfinite(row)])
        if f.size < 2:
            return math.inf
        return (f[-1] - f[-2]) / (1.0 + abs(f[-1]))

    if la.shape[0] < 2 or lead(la[0]) > 0:
        return 0
    for i in range(1, la.shape[0]):
        if lead(la[i]) > gap:
            return i
    return 0


def log_norm(log_abs_beta: np.ndarray) -> float:
    """ln‖β‖₂ from ln|β_j| (−inf for β = 0)."""
    la = np.asarray(log_abs_beta, dtype=float)
    m = np.max(la)
    if m == -np.inf:
        return -math.inf
    return float(m + 0.5 * np.log(np.sum(np.exp(2 * (la - m)))))


def direction_at_norm(traj: Trajectory, level: float) -> np.ndarray | None:
    """β/‖β‖₂ where ln‖β‖₂ first reaches ``level`` (root on the dense output), or None if it
    never does. Compares a flow with its discrete algorithm along the path, since their
    clocks differ (rescaled τ, or t = kη)."""
    norms = np.array([log_norm(row) for row in traj.log_abs_beta])
    above = np.flatnonzero(norms >= level)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return direction(traj.log_abs_beta[0], traj.sign_beta[0])

    def g(t: float) -> float:
        return log_norm(traj.at(t)[0]) - level

    t = brentq(g, float(traj.t[i - 1]), float(traj.t[i]), xtol=1e-300, rtol=4 * np.finfo(float).eps)
    return direction(*traj.at(t))


def initial_index(traj: Trajectory) -> int:
    """j†(0+): j† at the first stored step where a uniform start's tie is resolved."""
    la = traj.log_abs_beta
    return dominant_index(la[_tie_resolved(la)]) if len(la) else 0


def final_index(traj: Trajectory) -> int:
    """j† at the end (0 after a collapse)."""
    return 0 if traj.collapsed else dominant_index(traj.log_abs_beta[-1])


def final_direction(traj: Trajectory) -> np.ndarray:
    """β/‖β‖ at the end (the zero vector after a collapse)."""
    if traj.collapsed:
        return np.zeros(traj.d)
    return direction(traj.log_abs_beta[-1], traj.sign_beta[-1])


def margins_and_loss(traj: Trajectory, loss: str | None = None) -> dict[str, np.ndarray]:
    """Over the stored times: ``min_margin`` min_i <β, z_i>, ``normalized_margin``
    min_i <β/‖β‖₂, z_i>, and ``loss`` Lo = (1/n) Σ ℓ(<β, z_i>) (overflow-free ℓ); margins
    beyond ±1e300 are clipped (the loss is then exactly 0 or huge)."""
    s = traj.setting
    Z = s.Z
    ell = C.stable_loss_functions(loss or s.loss)[0]
    mins, norms, losses = [], [], []
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for la, sg in zip(traj.log_abs_beta, traj.sign_beta):
            u = direction(la, sg)
            lmax = np.max(la) if np.any(np.isfinite(la)) else -np.inf
            if lmax == -np.inf:
                m = np.zeros(Z.shape[0])
            else:
                scale = math.exp(min(lmax, 690.0)) * np.linalg.norm(sg * np.exp(la - lmax))
                m = np.clip(Z @ u * scale if lmax <= 690.0 else Z @ u * np.inf, -1e300, 1e300)
                m = np.nan_to_num(m, nan=0.0)
            mins.append(float(np.min(m)))
            norms.append(float(np.min(Z @ u)) if lmax > -np.inf else 0.0)
            losses.append(float(np.mean(ell(m))))
    return {"t": traj.t.copy(), "min_margin": np.array(mins), "normalized_margin": np.array(norms),
            "loss": np.array(losses)}


def summary(traj: Trajectory) -> dict:
    """The observables the CLI reports (JSON keys documented in the README)."""
    sw = switches(traj)
    out = {
        "time_kind": traj.time_kind,
        "stopped_because": traj.stopped_because,
        "message": traj.message,
        "t_end": traj.t_end,
        "t_max": traj.t_max,
        "initial_index": initial_index(traj),
        "final_index": final_index(traj),
        "collapsed": traj.collapsed,
        "collapse_time": traj.collapse_time,
        "blowup_time": traj.blowup_time,
        "switches": [w.as_dict() for w in sw],
        "direction": final_direction(traj).tolist(),
        "log_abs_beta": [None if not np.isfinite(v) else float(v) for v in traj.log_abs_beta[-1]],
        "events": [{"time": e.time, "kind": e.kind, "index": e.index} for e in traj.events],
    }
    if traj.setting.n > 1 or traj.time_kind == "real":
        ml = margins_and_loss(traj)
        out["final_margin"] = float(ml["min_margin"][-1])
        out["final_normalized_margin"] = float(ml["normalized_margin"][-1])
        out["final_loss"] = float(ml["loss"][-1])
    return out


def report(traj: Trajectory) -> dict:
    """What ``theorycheck trajectory --json`` prints (keys documented in the README): the
    :func:`summary`, how it ran, the setting, and the angles between the final direction and
    the ℓ1 / ℓ2 max-margin solutions. :meth:`Trajectory.as_dict` returns this."""
    from theorycheck.solve.maxmargin import angle_degrees, max_margin

    setting = traj.setting
    out = summary(traj)
    out.update({
        "method": traj.method,
        "precision": traj.precision,
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
    for p in (1, 2):
        out[f"angle_l{p}_deg"] = angle_degrees(out["direction"], max_margin(setting.Z, p).beta)
    return out


def exact_texts(traj: Trajectory) -> dict:
    """With ``precision`` D: the numbers the run knows to D digits, as decimal strings
    (``time_text`` = the final time, ``log_abs_beta_text`` = ln|β_j| there, ``collapse_time_text``,
    ``blowup_time_text``); nothing for float64 runs."""
    import mpmath as mp

    if not traj.precision or getattr(traj, "t_exact", None) is None:
        return {}
    D = int(traj.precision)

    def text(x):
        return None if x is None else mp.nstr(x, D, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)

    out = {"time_text": text(traj.t_exact[-1]), "collapse_time_text": text(traj.collapse_time_exact),
           "blowup_time_text": text(traj.blowup_time_exact)}
    if traj.log_abs_beta_exact is not None:
        out["log_abs_beta_text"] = [text(v) for v in traj.log_abs_beta_exact[-1]]
    return out


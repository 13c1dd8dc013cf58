"""Observables of a :class:`~theorycheck.trajectory.Trajectory`: the direction β/‖β‖, the
dominant index j†(t) = argmax_j |β_j(t)| (1-based; 0 for β = 0 or after a collapse), its
switches located by root finding on the dense output, and margins and loss.

One rule defines the current index (:func:`next_index`), and :func:`index_chain` applies
it along the run, so ``initial_index``, ``switches`` and ``final_index`` always chain:
coordinates whose |β_j| are within :data:`TIE_RTOL` (relative, in |β|) of the largest,
|β_j| ≥ (1 − TIE_RTOL)·max_k |β_k|, are tied (compared as ln|β_j| ≥ ln|β|_max + ln(1 − TIE_RTOL),
so the rule means the same at |β| ~ 1e-300 and 1e300); j† stays where it is while it is among
them and otherwise moves to the smallest tied index. A tie at the start (uniform α) is resolved by the first-order tie-break (the tied
coordinate that pulls ahead first, e.g. C5's argmax_j z_j(1 − ρz_j/N0)); coordinates that
stay tied (equal z_j and α_j) never produce a switch and the smallest index stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from theorycheck.solvers.trajectory import Trajectory
from theorycheck.vocabulary import TIE_RTOL as _TIE_RTOL

__all__ = ["Switch", "IndexChain", "TIE_RTOL", "direction", "dominant_index", "next_index", "index_chain",
           "index_path", "switches", "log_norm", "direction_at_norm", "final_index", "initial_index"]


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
    if la.size == 0 or np.max(la) == -np.inf:
        return np.zeros(la.shape)
    m = np.max(la)
    if m == np.inf:  # coordinates beyond any scale dominate the others
        v = np.where(la == np.inf, np.asarray(sign, dtype=float), 0.0)
        return v / np.linalg.norm(v)
    with np.errstate(under="ignore"):
        v = np.asarray(sign, dtype=float) * np.exp(la - m)
    return v / np.linalg.norm(v)


def dominant_index(log_abs_beta: np.ndarray, tie: float = 0.0) -> int:
    """j† = argmax_j |β_j| (1-based), 0 when β = 0. With ``tie`` > 0, coordinates with
    |β_j| ≥ (1 − tie)·max_k |β_k| count as tied and the smallest index is returned."""
    la = np.asarray(log_abs_beta, dtype=float)
    if la.size == 0 or np.max(la) == -np.inf:
        return 0
    if tie > 0:
        m = np.max(la)
        return int(np.flatnonzero(la >= m - _log_tie(tie))[0]) + 1
    return int(np.argmax(la)) + 1


#: |β_j| ≥ (1 − TIE_RTOL)·max_k |β_k| count as tied (vocabulary.TIE_RTOL): relative in |β| (not
#: in ln|β|), so the rule is the same at every scale. Exact ties (equal z_j and α_j:
#: exchangeable coordinates) are equal bit for bit (see Trajectory.twins).
TIE_RTOL = _TIE_RTOL


def _log_tie(rel: float) -> float:
    """The gap in ln|β| that a relative gap ``rel`` in |β| is: −ln(1 − rel)."""
    return -math.log1p(-rel)


def _tie_tol(m: float) -> float:
    return _log_tie(TIE_RTOL)


def _leaders(la: np.ndarray) -> np.ndarray:
    """0-based indices within the tie tolerance of the largest ln|β_j| (empty for β = 0)."""
    m = np.max(la) if la.size else -np.inf
    if m == -np.inf or not m == m:
        return np.zeros(0, dtype=int)
    return np.flatnonzero(la >= m - _tie_tol(m))


def next_index(log_abs_beta: np.ndarray, current: int) -> int:
    """THE rule for the current index j† (1-based; 0 for β = 0), given the current one: j†
    stays ``current`` while that coordinate is among the leaders (within the tie tolerance
    :data:`TIE_RTOL` of the largest |β_j|, relative in |β|); otherwise it becomes the smallest index among
    the leaders. The initial index, every switch and the final index all follow it."""
    la = np.asarray(log_abs_beta, dtype=float)
    lead = _leaders(la)
    if lead.size == 0:
        return 0
    if current > 0 and (current - 1) in lead:
        return current
    return int(lead[0]) + 1


@dataclass(frozen=True)
class IndexChain:
    """j† over a run: ``initial`` (j†(0+)), the ``switches`` in time order (each starts from
    the index the previous one reached) and ``final``. Invariant: initial, then each switch's
    from → to, chain to final."""

    initial: int
    switches: tuple[Switch, ...]
    final: int

    def path(self) -> list[int]:
        return [self.initial] + [w.to for w in self.switches]


def _initial(la: np.ndarray) -> int:
    """j†(0+): the leaders of the first row; a tie among them (uniform α) is broken by the
    first-order tie-break read off the solution: the tied coordinates whose ln|β_j| grew
    most since t = 0 at the first later row that separates them (e.g. C5's argmax_j
    z_j(1 − ρz_j/N0)), narrowed again at each later row that splits the remaining set.
    Increments are compared with a relative tolerance, so a first step of 1e-12 already
    decides; coordinates tied throughout (equal z_j and α_j) → the smallest index."""
    if la.shape[0] == 0:
        return 0
    tied = _leaders(la[0])
    if tied.size == 0:
        return 0
    base = la[0, tied]
    eps = np.finfo(float).eps
    for row in la[1:]:
        if tied.size == 1:
            break
        inc = row[tied] - base
        if not np.all(np.isfinite(inc)):
            continue
        m = float(np.max(inc))
        tol = TIE_RTOL * abs(m) + 16 * eps * (float(np.max(np.abs(row[tied]))) + float(np.max(np.abs(base))))
        keep = inc >= m - tol
        if not np.all(keep):
            tied, base = tied[keep], base[keep]
    return int(tied[0]) + 1


def _index_at(traj: Trajectory, t: float, current: int) -> int:
    return next_index(traj.at(t)[0], current)


def _root(D, ta: float, tb: float, tiny: float) -> float:
    try:
        r, _ = brentq(D, ta, tb, xtol=tiny, rtol=4 * np.finfo(float).eps, maxiter=2200, full_output=True, disp=False)
        return float(r)
    except (ValueError, RuntimeError):
        return 0.5 * (ta + tb)


def _locate(traj: Trajectory, ta: float, ja: int, tb: float, jb: int, depth: int = 0) -> tuple[list[Switch], int]:
    """Switches of j† in (ta, tb], given j† = ja at ta and jb = next_index(ln|β(tb)|, ja) ≠ ja.
    Returns them and the index reached at tb (the chain continues from it)."""
    width = tb - ta
    tiny = 4 * np.finfo(float).eps * max(abs(ta), abs(tb), 1e-300)
    if width <= tiny or depth > 60:
        return [Switch(float(tb), ja, jb)], jb
    tm = 0.5 * (ta + tb)
    if ja > 0 and jb > 0:
        def D(t: float) -> float:
            la = traj.at(t)[0]
            return float(la[jb - 1] - la[ja - 1])

        da, db = D(ta), D(tb)
        if da < 0 < db:
            tr = _root(D, ta, tb, tiny)
            # one switch when ja and jb lead at the crossing and nobody else takes over
            # between (otherwise another index intervenes: split there)
            la_r = traj.at(tr)[0]
            lead = _leaders(la_r)
            if ((ja - 1) in lead or (jb - 1) in lead) and _index_at(traj, 0.5 * (ta + tr), ja) == ja \
                    and _index_at(traj, 0.5 * (tr + tb), jb) == jb:
                return [Switch(tr, ja, jb)], jb
            if ta < tr < tb:
                tm = tr
    jm = _index_at(traj, tm, ja)
    if jm == ja:
        return _locate(traj, tm, ja, tb, jb, depth + 1)
    out, cur = _locate(traj, ta, ja, tm, jm, depth + 1)
    jb2 = _index_at(traj, tb, cur)
    if jb2 == cur:
        return out, cur
    more, cur = _locate(traj, tm, cur, tb, jb2, depth + 1)
    return out + more, cur


def _back_crossing(traj: Trajectory, i: int, i_min: int, ja: int, jb: int) -> float | None:
    """When jb already led ja (within the tie tolerance) at row i − 1: the last time in
    [t[i_min], t[i]] where ln|β_jb| − ln|β_ja| crossed 0, from the stored rows and the dense
    output; None if it did not (they were tied since t[i_min])."""
    la, t = traj.log_abs_beta, traj.t
    for k in range(i - 1, i_min - 1, -1):
        if la[k, jb - 1] - la[k, ja - 1] < 0:
            def D(s: float) -> float:
                row = traj.at(s)[0]
                return float(row[jb - 1] - row[ja - 1])

            tiny = 4 * np.finfo(float).eps * max(abs(t[k]), abs(t[k + 1]), 1e-300)
            return _root(D, float(t[k]), float(t[k + 1]), tiny) if D(float(t[k + 1])) > 0 else float(t[k + 1])
    return None


def index_chain(traj: Trajectory) -> IndexChain:
    """j† over the run by the one rule of :func:`next_index`: the initial index (see
    :func:`_initial`), every change of j†, in time order, located to about machine precision
    on the dense output (root of ln|β_to| − ln|β_from|), and the final index; a collapse
    adds a switch to 0 at the collapse time."""
    la, t = traj.log_abs_beta, traj.t
    cur = _initial(la)
    initial = cur
    out: list[Switch] = []
    last_row = 0
    with np.errstate(invalid="ignore"):
        for i in range(1, la.shape[0]):
            new = next_index(la[i], cur)
            if new == cur:
                continue
            ta, tb = float(t[i - 1]), float(t[i])
            if tb <= ta:
                sw, reached = [Switch(tb, cur, new)], new
            elif cur > 0 and new > 0 and la[i - 1, new - 1] - la[i - 1, cur - 1] >= 0:
                tc = _back_crossing(traj, i, last_row, cur, new)
                sw, reached = [Switch(tb if tc is None else tc, cur, new)], new
            else:
                sw, reached = _locate(traj, ta, cur, tb, new)
            t_prev = out[-1].time if out else float(t[0])
            for w in sw:  # times never run backwards (a located root may round below t_prev)
                t_prev = max(t_prev, w.time)
                out.append(Switch(t_prev, w.from_, w.to))
            cur, last_row = reached, i
    if traj.collapsed and cur != 0:
        t_c = max(float(traj.collapse_time), out[-1].time if out else float(t[0]))
        out.append(Switch(t_c, cur, 0))
        cur = 0
    return IndexChain(initial, tuple(out), cur)


def index_path(traj: Trajectory) -> np.ndarray:
    """j† at the stored steps, from :func:`index_chain` (0 at and after a collapse)."""
    ch = index_chain(traj)
    times = np.array([w.time for w in ch.switches])
    path = np.array(ch.path(), dtype=int)
    idx = path[np.searchsorted(times, traj.t, side="right")] if len(times) else np.full(len(traj.t), ch.initial)
    if traj.collapsed and len(idx):
        idx[-1] = 0
    return idx


def switches(traj: Trajectory) -> list[Switch]:
    """Every change of j† (see :func:`index_chain`), in time order."""
    return list(index_chain(traj).switches)


def log_norm(log_abs_beta: np.ndarray) -> float:
    """ln‖β‖₂ from ln|β_j| (−inf for β = 0)."""
    la = np.asarray(log_abs_beta, dtype=float)
    m = np.max(la)
    if m == -np.inf or m == np.inf:
        return float(m)
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

    t = _root(g, float(traj.t[i - 1]), float(traj.t[i]), 1e-300)
    return direction(*traj.at(t))


def initial_index(traj: Trajectory) -> int:
    """j†(0+) (see :func:`index_chain`)."""
    return index_chain(traj).initial


def final_index(traj: Trajectory) -> int:
    """j† at the end (0 after a collapse), where the chain of switches from
    :func:`initial_index` ends."""
    return index_chain(traj).final

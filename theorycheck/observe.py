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

import mpmath
import numpy as np
from scipy.optimize import brentq

from theorycheck.optimizers import SAM_L2
from theorycheck.optimizers import get as get_optimizer
from theorycheck.solvers.trajectory import Trajectory
from theorycheck.strength import Kind
from theorycheck.symbolic import forms as C
from theorycheck.vocabulary import TIE_RTOL as _TIE_RTOL

__all__ = ["Switch", "IndexChain", "TIE_RTOL", "direction", "dominant_index", "next_index", "index_chain",
           "index_path", "switches", "margins_and_loss", "final_direction", "final_index", "initial_index", "summary",
           "log_norm", "direction_at_norm", "final_index_status", "FINAL_PROVED",
           "FINAL_FLOAT_CHECK", "FINAL_NOT_DECIDED"]


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


#: the words of ``final_index_status``: how strong the reported final index is
#: (the strength kinds: theorycheck.strength.Kind)
FINAL_PROVED, FINAL_FLOAT_CHECK, FINAL_NOT_DECIDED = Kind.PROVED.value, Kind.FLOAT_CHECK.value, Kind.NOT_DECIDED.value


def _logsumexp(a: np.ndarray) -> float:
    m = float(np.max(a))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(a - m))))


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _fmt_exp(ln: float) -> str:
    """e^ln as a number when it is one in float64, else as e^ln."""
    return _fmt(math.exp(ln)) if -700 < ln < 700 else f"e^{_fmt(ln)}"


def _lockin_depth_l(z: np.ndarray, theta: np.ndarray, k: int, rho: float, L: int, what: str) -> tuple[bool, str]:
    """The L ≥ 3 lock-in lemma (proofs/minor_first/lockin.py) at one state θ = ln u (``rho`` 0 for GD and for
    ℓ∞-SAM's w = u − ρ): u_k ≥ ρ√L and every rival j with z_j > z_k scores below k."""
    f = C.depth_lockin(L)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = float(f.log_floor(rho))
        if not theta[k] >= floor:
            return False, f"{what}_{k + 1} = e^{_fmt(theta[k])} is below the lock-in floor ρ√L = {_fmt_exp(floor)}"
        win = float(f.winner(z[k], theta[k], rho))
        rivals = np.flatnonzero(z > z[k])
        if rivals.size:
            score = np.asarray(f.rival(z[rivals], theta[rivals], rho), dtype=float).reshape(-1)
            worst = int(rivals[int(np.argmax(score))])
            if not win > float(np.max(score)):
                return False, (f"coordinate {worst + 1} (larger z) may still overtake: its blow-up score "
                               f"e^{_fmt(float(np.max(score)))} is not below j†'s guaranteed e^{_fmt(win)}")
    floor_text = f"{what}_j† ≥ ρ√L: " if rho > 0 else ""
    if not rivals.size:
        return True, f"j† = argmax z and {floor_text}no smaller z_j can overtake it (L ≥ 3 lock-in)"
    return True, (f"j† wins the blow-up race against every larger z_j and {floor_text}no smaller z_j can overtake "
                  "it (L ≥ 3 lock-in)")


def final_index_status(traj: Trajectory, chain: IndexChain | None = None) -> tuple[str, str]:
    """How strong the run's final index is: ``("floating-point check", why)`` when a persisting condition of
    the lock-in lemma (proofs/minor_first/lockin.py, one example, balanced init, the flow) holds at the last
    state in floating point, or the run ended in a collapse; ``("not decided", why)`` when the
    horizon or a budget ended the run first, or no lemma covers the setting. ("proved" comes
    only from a validated integration: ``trajectory --prove``.)"""
    chain = chain or index_chain(traj)
    s = traj.setting
    end = f"τ = {traj.t_end:.10g}" if traj.time_kind == "rescaled" else f"t = {traj.t_end:.10g}"
    if traj.collapsed:
        return FINAL_FLOAT_CHECK, f"the run collapsed (β = 0 at {end}): the index stays 0"
    if traj.method == "discrete":
        return FINAL_NOT_DECIDED, "no lock-in lemma covers the discrete algorithm: j† may still change after the last step"
    if not s.single or traj.time_kind != "rescaled":
        return FINAL_NOT_DECIDED, ("no lock-in lemma covers several examples (or real time): j† may still change "
                                 f"after {end}")
    if chain.final == 0:
        return FINAL_NOT_DECIDED, f"β = 0 at {end} without a collapse event"
    ok, why = lockin_condition(s, traj.log_abs_beta[-1], traj.sign_beta[-1], chain.final)
    if ok:
        return FINAL_FLOAT_CHECK, why
    return FINAL_NOT_DECIDED, (f"the run ended at {end} ({traj.stopped_because}) before a lock-in condition held: "
                             f"j† may still change ({why})")


def lockin_condition(setting, log_abs_beta: np.ndarray, sign_beta: np.ndarray, index: int) -> tuple[bool, str]:
    """Whether the lock-in lemma (proofs/minor_first/lockin.py) holds at one state of the flow of ``setting``
    (one example, balanced layers) with current j† = ``index`` (1-based): (True, which condition)
    — then j† = index for ever (until a blow-up) — or (False, what fails). Evaluated in float64."""
    s = setting
    if not s.single:
        return False, "no lock-in lemma covers several examples"
    if not s.balanced:
        return False, "no lock-in lemma covers unbalanced layers"
    la, sg = np.asarray(log_abs_beta, float), np.asarray(sign_beta, float)
    k = int(index) - 1
    if k < 0:
        return False, "β = 0"
    z, L, opt = np.asarray(s.z, float), s.depth, get_optimizer(s.optimizer)
    rho = opt.radius(s.rho)
    if L == 1:  # w_j = α_j + z_j τ for every optimizer (the gradient does not depend on w)
        if abs(z[k]) == np.max(np.abs(z)) and np.sign(z[k]) == sg[k]:
            return True, ("j† has the largest |z_j| and moves away from 0: |w_j†| − |w_j| never "
                      "decreases (L = 1)")
        return False, f"j† = {k + 1} is not the coordinate of the largest |z_j| moving outwards"
    if opt.weighted:
        return False, f"no lock-in lemma covers {opt.title}'s weighted step (the lemmas take ε of the gradient alone)"
    slid = opt.discontinuous and L >= 2  # ℓ∞: a coordinate at u_j = 0 slides there for good
    pos = (sg >= 0) & (np.isfinite(la) | (slid & (la == -np.inf)))
    if not (np.all(np.asarray(s.layers0)[0] > 0) and np.all(pos) and sg[k] > 0 and np.isfinite(la[k])):
        return False, "the lemma needs every u_j > 0"
    theta = la / L  # ln u_j, β_j = u_j^L
    if opt.discontinuous:
        if np.any(z <= 0):
            return False, "the ℓ∞ lemma is derived for z > 0"
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lw = theta + np.log(-np.expm1(np.log(rho) - theta)) if rho > 0 else theta  # ln(u − ρ)
        up = np.isfinite(lw) & (theta > (math.log(rho) if rho > 0 else -np.inf))
        if not up[k]:
            return False, "u_j† ≤ ρ"
        if L == 2:
            if z[k] >= np.max(z[up]):
                return True, ("j† has the largest z_j among the u_j > ρ: (u_j − ρ)/(u_j† − ρ) never "
                      "increases and u_j ≤ ρ stays ≤ ρ (ℓ∞, L = 2)")
            return False, "a larger z_j with u_j > ρ grows faster than j†"
        zz = np.where(up, z, -np.inf)
        ok, why = _lockin_depth_l(zz, np.where(up, lw, -np.inf), k, 0.0, L, "w")
        return (True, f"{why} (ℓ∞: GD on w = u − ρ)") if ok else (False, why)
    # GD (ρ = 0) and ℓ2-SAM
    if L == 2:
        if opt.normalised and (np.any(z < 0) or not np.any(z > 0)):
            return False, "the L = 2 lemma is derived for z ≥ 0"
        equal = bool(np.all(z == z[0]))
        if equal and rho == 0:
            return True, "every z_j is equal: the gaps θ_k − θ_j never change (GD, L = 2)"
        if z[k] != np.max(z):
            return False, f"j† = {k + 1} is not argmax z"
        below = z[z < z[k]]
        nxt = float(max(below.max(), 0.0)) if below.size else 0.0  # every z_j equal: the level is ρ z_max
        sc = float(z[k])  # the level and N are homogeneous in z: evaluate on z/z_max (no overflow at 1e±300)
        level = float(C.l2_lockin_level()(1.0, nxt / sc, rho))
        ln_level = math.log(level) + math.log(sc) if level > 0 else -math.inf
        with np.errstate(divide="ignore"):
            lnN = 0.5 * _logsumexp(np.asarray(C.balanced_log_field(2, SAM_L2).log_summand(z / sc, theta), float))
            lnN += math.log(sc)
        if rho == 0:
            return True, ("j† = argmax z: every gap θ_j† − θ_j = ln(α_j†/α_j) + (z_j† − z_j)τ grows "
                          "(GD, L = 2)")
        if equal:  # the gaps never change, but below ρ z_max the run can still collapse to β = 0
            if lnN >= ln_level:
                return True, (f"every z_j is equal and N = {_fmt_exp(lnN)} ≥ ρ z_max = {_fmt_exp(ln_level)}: N never "
                              "falls (no collapse) and the gaps θ_k − θ_j never change (L = 2)")
            return False, f"every z_j is equal but N = {_fmt_exp(lnN)} < ρ z_max = {_fmt_exp(ln_level)}: it may collapse"
        if lnN >= ln_level:
            return True, (f"j† = argmax z and N = {_fmt_exp(lnN)} ≥ ρ(z_(d) + z_next) = {_fmt_exp(ln_level)}: N "
                          "keeps growing and every gap θ_j† − θ_j grows from then on (L = 2 lock-in)")
        return False, f"N = {_fmt_exp(lnN)} < ρ(z_(d) + z_next) = {_fmt_exp(ln_level)}"
    if not z[k] > 0:
        return False, "z_j† ≤ 0"
    ok, why = _lockin_depth_l(z, theta, k, rho, L, "u")
    return (True, why) if ok else (False, why)


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


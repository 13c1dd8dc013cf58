"""How strong a run's final index is: the lock-in lemmas (proofs/minor_first/lockin.py: one example,
balanced layers, the flow) evaluated at the run's last state in float64. A condition that holds makes the
final j† a floating-point check; a run that ended first, or a setting no lemma covers, leaves it not
decided ("proved" comes only from a validated integration)."""

from __future__ import annotations

import math

import numpy as np

from theorycheck.observe.index import IndexChain, index_chain
from theorycheck.optimizers import get as get_optimizer
from theorycheck.solvers.trajectory import Trajectory
from theorycheck.strength import Kind
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import theory_forms as MF

__all__ = ["final_index_status", "lockin_condition", "FINAL_PROVED", "FINAL_FLOAT_CHECK", "FINAL_NOT_DECIDED"]


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
    f = MF.depth_lockin(L)
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
        level = float(MF.l2_lockin_level()(1.0, nxt / sc, rho))
        ln_level = math.log(level) + math.log(sc) if level > 0 else -math.inf
        with np.errstate(divide="ignore"):
            lnN = 0.5 * _logsumexp(np.asarray(C.balanced_log_summand(2)(z / sc, theta), float))
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

"""``trajectory --prove``: a trajectory's switch, collapse and blow-up times as enclosures and its final index
from a lock-in certificate (ball arithmetic; proofs/minor_first/lockin.py), for the settings a proof covers (one example,
uniform α): ℓ2-SAM at L = 2 (z > 0: C4's reduced ODE integrated in ball arithmetic,
:mod:`theorycheck.proved.regime_map` on the point interval [α, α]), balanced ℓ2-SAM at depth L ≥ 3 (z > 0:
the balanced flow itself, :mod:`theorycheck.proved.path`) and GD (the static index, C6; at L ≥ 3 its
closed-form blow-up time)."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from theorycheck.errors import TheorycheckError

__all__ = ["ProvedTrajectory", "prove_trajectory"]


class ProvedTrajectory:
    """Keys of ``as_dict()``: proved (bool), fate (collapse | growth | null), sequence (j† from the start,
    0 last for a collapse), sequence_complete (bool: every switch before the limit is listed), proved_until
    ([lo, hi] of τ up to which the listed sequence is proved when it is not complete, else null), switches
    (list of {from, to, time: [lo, hi] decimal strings of τ, hi null when only a lower bound is proved}),
    collapse_time and blowup_time ([lo, hi] or null; hi null when only a lower bound is proved), final_index
    (the limit index: 0 after a collapse), final_index_status ("proved" | "not final"), final_index_reason,
    time_kind ("rescaled"), method, rests_on, seconds, setting {optimizer, depth, z, rho, alpha}."""

    def __init__(self, values: dict):
        self.values = values

    def __getitem__(self, key):
        return self.values[key]

    def as_dict(self) -> dict:
        return dict(self.values)


def _refine(F, alpha: Fraction, ends: list, w: dict, deadline: float, pieces: int = 64) -> list | None:
    """A tighter enclosure of one switch: the run established exactly one crossing of the level between the
    cells of w["from"] and w["to"] inside w["time"]; integrate that window again from the enclosure of I at
    its start, in steps of at most 1/``pieces`` of it, and keep the last step end still certainly before
    the level and the first one certainly beyond it."""
    from flint import arb

    from theorycheck.proved import regime_map as rm
    from theorycheck.proved.validated import Budget, arb_context, integrate

    lo_t, hi_t = Fraction(w["time"][0]), Fraction(w["time"][1])
    cell = {j: c for c, j in enumerate(F.index_of_cell)}
    a_cell, b_cell = cell.get(w["from"]), cell.get(w["to"])
    if a_cell is None or b_cell is None or abs(a_cell - b_cell) != 1:
        return None
    with arb_context(prec=128):
        zb, rb, levels = F.balls()
        level = levels[min(a_cell, b_cell)]
        up = b_cell > a_cell
        start = None
        for t, I in ends:  # the last recorded state at or before the window's start
            if rm._exact_fraction(t.upper()) <= lo_t:
                start = (t, I)
        if start is None:
            return None
        al = arb(alpha.numerator) / alpha.denominator
        best = {"lo": start[0], "hi": None}

        def stop(step):
            nbar = step.t1 / step.end[0]
            before = nbar < level if up else nbar > level
            beyond = nbar > level if up else nbar < level
            if before:
                best["lo"] = step.t1
            if beyond:
                best["hi"] = step.t1
                return "beyond"
            return None

        h = float((hi_t - lo_t) / pieces)
        try:
            integrate(F.system, [start[1]], params=[*zb, al, rb], t0=start[0], t_end=None, order=12, prec=128,
                      tol=1e-12, h_max=h, stop=stop, record=False, slack=False,
                      budget=Budget(max_seconds=max(0.1, deadline - time.perf_counter()), max_steps=4 * pieces + 400))
        except (ValueError, ZeroDivisionError, ArithmeticError):
            return None
        if best["hi"] is None:
            return None
        lo, hi = rm._down(best["lo"]), rm._up(best["hi"])
        if Fraction(hi) - Fraction(lo) >= hi_t - lo_t:
            return None
        return [max(lo, w["time"][0], key=Fraction), min(hi, w["time"][1], key=Fraction)]


def prove_trajectory(setting, *, max_seconds: float = 60.0) -> ProvedTrajectory:
    """Prove what the flow of ``setting`` does (see the module docstring): the j† sequence with its switch
    times enclosed, the fate, the collapse time enclosed, and the final index from a lock-in certificate
    — or say that the budget ran out first (``final_index_status`` "not final"). Other settings raise a
    one-line :class:`TheorycheckError`."""
    from theorycheck.proved import regime_map as rm

    s = setting
    t0 = time.perf_counter()
    if not s.single or s.init.kind != "scalar":
        raise TheorycheckError("a proved trajectory is available for one example with a uniform α (scalar alpha)")
    z = np.asarray(s.z, float)
    a = float(s.init.value)
    head = {"optimizer": s.optimizer, "depth": s.depth, "z": z.tolist(), "rho": s.rho, "alpha": a}
    if s.optimizer == "gd":
        j = int(np.flatnonzero(z == z.max())[0]) + 1
        return ProvedTrajectory({
            "proved": True, "fate": "growth" if z.max() > 0 else None, "sequence": [j], "sequence_complete": True,
            "proved_until": None, "switches": [], "collapse_time": None,
            "blowup_time": _gd_blowup(s.depth, float(z.max()), a) if s.depth >= 3 and z.max() > 0 else None,
            "final_index": j, "final_index_status": "proved",
            "final_index_reason": "GD with uniform α: u_j is ordered as z_j for every τ > 0 (C6); ties: the smallest index",
            "time_kind": "rescaled", "method": "closed form (C6)", "rests_on": ["C6"],
            "seconds": time.perf_counter() - t0, "setting": head})
    if s.optimizer != "sam-l2" or s.depth < 2:
        raise TheorycheckError("a proved trajectory is available for ℓ2-SAM at depth ≥ 2 and for GD (uniform α)")
    if np.any(z <= 0) or not s.rho > 0:
        raise TheorycheckError("a proved ℓ2-SAM trajectory needs z > 0 and ρ > 0")
    if s.depth >= 3:
        return _prove_depth(s, z, a, head, t0, max_seconds)
    s_pow = 2.0 ** int(np.frexp(float(np.max(z)))[1])  # work on z/s (exact): times scale back by 1/s
    F = rm._forms(tuple(float(v) / s_pow for v in z), float(s.rho))
    x = Fraction(a)
    ends: list = []
    p = rm._decide(F, x, x, max_seconds, 12, 128, tighten=1e-6, ends=ends, clock=s_pow)
    seq = list(p.sequence)
    switches = [{"from": seq[k], "to": seq[k + 1], "time": list(t)} for k, t in enumerate(p.switch_times)]
    if p.status == rm.PROVED:
        deadline = t0 + max_seconds
        for w in switches:
            if w["to"] != 0 and w["time"][1] is not None and time.perf_counter() < deadline:
                w["time"] = _refine(F, x, ends, w, deadline) or w["time"]
    for w in switches:
        w["time"] = [rm._scaled(w["time"][0], s_pow, False), rm._scaled(w["time"][1], s_pow, True)]
    if p.collapse_time:
        p.collapse_time = [rm._scaled(p.collapse_time[0], s_pow, False), rm._scaled(p.collapse_time[1], s_pow, True)]
    proved = p.status == rm.PROVED
    return ProvedTrajectory({
        "proved": proved, "fate": p.fate, "sequence": seq, "sequence_complete": proved,
        "proved_until": None, "switches": switches,
        "collapse_time": p.collapse_time, "blowup_time": None, "final_index": (seq[-1] if seq else None) if proved else None,
        "final_index_status": "proved" if proved else "not final",
        "final_index_reason": p.reason if proved else f"no lock-in certificate: {p.reason}",
        "time_kind": "rescaled",
        "method": "validated Taylor integration of C4's reduced ODE in ball arithmetic (proved/validated), the lock-in "
                  "lemma", "rests_on": ["C4", "C5", "LOCK"], "seconds": time.perf_counter() - t0, "setting": head})


def _gd_blowup(L: int, zmax: float, alpha: float) -> list:
    """GD at L ≥ 3 from u = α·1: β blows up at τ* = 1/((L−2) z_max α^{L−2}) (C3 at ρ = 0), enclosed."""
    from flint import arb

    from theorycheck.proved import regime_map as rm
    from theorycheck.proved.validated import arb_context
    from theorycheck.symbolic import closed_forms as cf
    from theorycheck.symbolic import forms as C

    f = C.arb_function((cf.z_j, cf.alpha_j), [cf.gd_blowup_time(int(L))])
    with arb_context(prec=128):
        t = f(arb(zmax), arb(alpha))[0]
        return rm._lo_hi(t)


def _prove_depth(s, z, a: float, head: dict, t0: float, max_seconds: float) -> ProvedTrajectory:
    """Balanced ℓ2-SAM at depth L ≥ 3 (:func:`theorycheck.proved.path.decide_path` at the point α)."""
    from theorycheck.proved.path import decide_path, depth_forms, scale_of

    s_pow = scale_of(z)
    F = depth_forms(int(s.depth), tuple(float(v) / s_pow for v in z), float(s.rho))
    x = Fraction(a)
    r = decide_path(F, x, x, max_seconds=max_seconds, clock=s_pow)
    seq = list(r["sequence"])
    times = list(r["switch_times"])
    if r["fate"] == "collapse" and r["status"] == "proved" and r["sequence_complete"]:
        times = times + [list(r["collapse_time"])]  # the switch to 0 is the collapse
    switches = [{"from": seq[k], "to": seq[k + 1], "time": times[k]} for k in range(min(len(times), len(seq) - 1))]
    proved = r["status"] == "proved"
    rests = ["LOCK"] if r["fate"] == "growth" or not proved else ["P4"]
    return ProvedTrajectory({
        "proved": proved, "fate": r["fate"] if proved else None, "sequence": seq,
        "sequence_complete": r["sequence_complete"], "proved_until": r["proved_until"], "switches": switches,
        "collapse_time": r["collapse_time"], "blowup_time": r["blowup_time"],
        "final_index": r["final_index"] if proved else None,
        "final_index_status": "proved" if proved else "not final",
        "final_index_reason": r["reason"] if proved else f"no lock-in certificate: {r['reason']}",
        "time_kind": "rescaled",
        "method": "validated Taylor integration (Lohner's method) of the balanced ℓ2-SAM flow in v = u − α in ball "
                  "arithmetic (proved/validated); switches where the order of u_j changes transversally; the lock-in "
                  "lemma (blow-up order) or the even-L collapse lemma",
        "rests_on": rests, "seconds": time.perf_counter() - t0, "setting": head})

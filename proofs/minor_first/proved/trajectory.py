"""``trajectory --prove``: a trajectory's switch, collapse and blow-up times as enclosures and its final index
from a lock-in certificate (ball arithmetic; proofs/minor_first/lockin.py), for the settings a proof covers (one example,
uniform α): ℓ2-SAM at L = 2 (z > 0: C4's reduced ODE integrated in ball arithmetic,
:mod:`theorycheck.proofs.minor_first.proved.regime_map` on the point interval [α, α]), balanced ℓ2-SAM at depth L ≥ 3 (z > 0:
the balanced flow itself, :mod:`theorycheck.proved.path`) and GD (the static index, C6; at L ≥ 3 its
closed-form blow-up time)."""

from __future__ import annotations

import time
from dataclasses import replace
from fractions import Fraction

import numpy as np

from theorycheck.arith.decimals import down, fraction_of, lo_hi, scaled, up
from theorycheck.arith.exact import exact
from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.solvers.trajectory import PROVED_KEYS
from theorycheck.strength import Kind

__all__ = ["ProvedTrajectory", "prove_trajectory"]


class ProvedTrajectory:
    """A proved trajectory (``theorycheck trajectory --prove``): its switches, fate and final index as
    enclosures (keys and meanings: docs/commands/trajectory.md)."""

    KEYS = PROVED_KEYS

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

    from theorycheck.arith.balls import arb_context
    from theorycheck.proved.validated import integrate
    from theorycheck.status import Budget

    lo_t, hi_t = Fraction(w["time"][0]), Fraction(w["time"][1])
    cell = {j: c for c, j in enumerate(F.index_of_cell)}
    a_cell, b_cell = cell.get(w["from"]), cell.get(w["to"])
    if a_cell is None or b_cell is None or abs(a_cell - b_cell) != 1:
        return None
    with arb_context(prec=128):
        zb, rb, levels = F.balls()
        level = levels[min(a_cell, b_cell)]
        upward = b_cell > a_cell
        start = None
        for t, I in ends:  # the last recorded state at or before the window's start
            if fraction_of(t.upper()) <= lo_t:
                start = (t, I)
        if start is None:
            return None
        al = exact(alpha).ball()
        best = {"lo": start[0], "hi": None}

        def stop(step):
            nbar = step.t1 / step.end[0]
            before = nbar < level if upward else nbar > level
            beyond = nbar > level if upward else nbar < level
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
        lo, hi = down(best["lo"]), up(best["hi"])
        if Fraction(hi) - Fraction(lo) >= hi_t - lo_t:
            return None
        return [max(lo, w["time"][0], key=Fraction), min(hi, w["time"][1], key=Fraction)]


#: the lemmas (theorycheck.proofs.minor_first.lemmas) each kind of proved trajectory rests on
LEMMAS_L2 = ("C4", "P1", "LOCK")  # C4's reduction, the collapse lemma, the lock-in lemma (growth and after)
LEMMAS_GD = ("LOCK",)  # ρ = 0: j† = argmax z from the start and locked in (the lock-in lemma at ρ = 0)


def prove_trajectory(setting, *, max_seconds: float = 60.0) -> ProvedTrajectory:
    """Prove what the flow of ``setting`` does (see the module docstring) at its exact inputs
    (:func:`theorycheck.setting.exact_inputs`): the j† sequence with its switch times enclosed, the fate, the
    collapse time enclosed, and the final index from a lock-in certificate — or say that the budget ran out
    first (``final_index_status`` "not decided"). Other settings raise a one-line :class:`TheorycheckError`."""
    from theorycheck.setting import exact_inputs

    s = setting
    t0 = time.perf_counter()
    if not s.single or s.init.kind != "scalar":
        raise TheorycheckError("a proved trajectory is available for one example with a uniform α (scalar alpha)")
    inp = exact_inputs(s)
    head = {"optimizer": s.optimizer, "depth": s.depth, "z": s.z.tolist(), "rho": s.rho, "alpha": float(s.init.value)}
    if not get_optimizer(s.optimizer).perturbs:
        return _finish(_prove_gd(s, inp), LEMMAS_GD, inp, head, t0)
    if not get_optimizer(s.optimizer).normalised or s.depth < 2:
        raise TheorycheckError("a proved trajectory is available for ℓ2-SAM at depth ≥ 2 and for GD (uniform α)")
    if min(inp.zq) <= 0 or not inp.rho.value > 0:
        raise TheorycheckError("a proved ℓ2-SAM trajectory needs z > 0 and ρ > 0")
    if s.depth >= 3:
        values, lemmas, inp = _prove_depth(s, inp, max_seconds)
        return _finish(values, lemmas, inp, head, t0)
    return _finish(_prove_l2(inp, t0, max_seconds), LEMMAS_L2, inp, head, t0)


def _finish(values: dict, lemmas, inputs, head: dict, t0: float) -> ProvedTrajectory:
    """The proved trajectory's keys, with what it rests on: proved only when the enclosures reached their lemma
    (``values["proved"]``) and every lemma is proved for this (L, d)."""
    from theorycheck.proofs.minor_first.lemmas import BOOK, LEMMAS

    from theorycheck.proved.lemmas import lemma_strengths, resting_strength
    from theorycheck.strength import not_decided

    rests = lemma_strengths(lemmas, depth=inputs.depth, dim=len(inputs.z), book=BOOK)
    strength = resting_strength(rests) if values["proved"] else not_decided(values["final_index_reason"])
    if values["proved"] and not strength.proved:
        values.update(proved=False, final_index_status=Kind.NOT_DECIDED.value,
                      final_index_reason=f"{values['final_index_reason']}; but the proof {strength.because}")
    values.update(rests_on=[{"name": n, "statement": LEMMAS.get(n, ""), "strength": st.as_dict()} for n, st in rests],
                  seconds=time.perf_counter() - t0, setting=head, inputs=inputs.as_dict(),
                  strength=strength.as_dict())
    return ProvedTrajectory(values)


def _prove_gd(s, inp) -> dict:
    """GD with uniform α (ρ = 0): j† = argmax z for every τ > 0 (C6; the lock-in lemma at ρ = 0), and at
    L ≥ 3 the closed-form blow-up time enclosed."""
    zq = inp.zq
    top = max(zq)
    j = zq.index(top) + 1
    return {"proved": True, "fate": "growth" if top > 0 else None, "sequence": [j], "sequence_complete": True,
            "proved_until": None, "switches": [], "collapse_time": None,
            "blowup_time": _gd_blowup(s.depth, top, inp.alpha.value) if s.depth >= 3 and top > 0 else None,
            "final_index": j, "final_index_status": Kind.PROVED.value,
            "final_index_reason": "GD with uniform α: u_j is ordered as z_j for every τ > 0 (C6); ties: the smallest index",
            "time_kind": "rescaled", "method": "closed form (C6) and the lock-in lemma at ρ = 0"}


def _prove_l2(inp, t0: float, max_seconds: float) -> dict:
    """ℓ2-SAM at L = 2: the regime map's decision on the point interval [α, α] of C4's reduced ODE, with
    the exact z/s and ρ (s a power of two: times scale back by 1/s), its switches refined."""
    from theorycheck.proofs.minor_first.proved import regime_map as rm

    zq = inp.zq
    s_pow = 2.0 ** int(np.frexp(float(max(zq)))[1])  # work on z/s (exact): times scale back by 1/s
    F = rm.l2_forms(tuple(v / Fraction(s_pow) for v in zq), inp.rho.value)
    x = inp.alpha.value
    ends: list = []
    p = rm.decide_piece(F, x, x, max_seconds=max_seconds, order=12, prec=128, tighten=1e-6, ends=ends, clock=s_pow)
    seq = list(p.sequence)
    switches = [{"from": seq[k], "to": seq[k + 1], "time": list(t)} for k, t in enumerate(p.switch_times)]
    if p.status == rm.PROVED:
        deadline = t0 + max_seconds
        for w in switches:
            if w["to"] != 0 and w["time"][1] is not None and time.perf_counter() < deadline:
                w["time"] = _refine(F, x, ends, w, deadline) or w["time"]
    for w in switches:
        w["time"] = [scaled(w["time"][0], s_pow, False), scaled(w["time"][1], s_pow, True)]
    if p.collapse_time:
        p.collapse_time = [scaled(p.collapse_time[0], s_pow, False), scaled(p.collapse_time[1], s_pow, True)]
    proved = p.status == rm.PROVED
    return {
        "proved": proved, "fate": p.fate, "sequence": seq, "sequence_complete": proved,
        "proved_until": None, "switches": switches,
        "collapse_time": p.collapse_time, "blowup_time": None, "final_index": (seq[-1] if seq else None) if proved else None,
        "final_index_status": (Kind.PROVED if proved else Kind.NOT_DECIDED).value,
        "final_index_reason": p.reason if proved else f"no lock-in certificate: {p.reason}",
        "time_kind": "rescaled",
        "method": "validated Taylor integration of C4's reduced ODE in ball arithmetic (proved/validated), the lock-in "
                  "lemma"}


def _gd_blowup(L: int, zmax: Fraction, alpha: Fraction) -> list:
    """GD at L ≥ 3 from u = α·1: β blows up at τ* = 1/((L−2) z_max α^{L−2}) (C3 at ρ = 0), enclosed at the
    exact inputs."""
    from theorycheck.arith.balls import arb_context
    from theorycheck.symbolic import closed_forms as cf
    from theorycheck.symbolic import forms as C
    from theorycheck.symbolic import theory_exprs as TE

    f = C.arb_function((cf.z_j, cf.alpha_j), [TE.gd_blowup_time(int(L))])
    with arb_context(prec=128):
        t = f(exact(zmax).ball(), exact(alpha).ball())[0]
        return lo_hi(t)


def _prove_depth(s, inp, max_seconds: float) -> tuple[dict, tuple, object]:
    """Balanced ℓ2-SAM at depth L ≥ 3 (:func:`theorycheck.proved.path.decide_path` at the point α). The path's
    forms take z and ρ as floats: the proof is about their binary values, and its inputs say so."""
    from theorycheck.proved.path import decide_path, depth_forms, scale_of

    z = np.asarray(s.z, float)
    s_pow = scale_of(z)
    F = depth_forms(int(s.depth), tuple(float(v) / s_pow for v in z), float(s.rho))
    x = inp.alpha.value
    r = decide_path(F, x, x, max_seconds=max_seconds, clock=s_pow)
    seq = list(r["sequence"])
    times = list(r["switch_times"])
    if r["fate"] == "collapse" and r["status"] == "proved" and r["sequence_complete"]:
        times = times + [list(r["collapse_time"])]  # the switch to 0 is the collapse
    switches = [{"from": seq[k], "to": seq[k + 1], "time": times[k]} for k in range(min(len(times), len(seq) - 1))]
    proved = r["status"] == "proved"
    lemmas = ("LOCK",) if r["fate"] == "growth" or not proved else ("P4",)
    used = replace(inp, z=tuple(e.as_float_used() for e in inp.z), rho=inp.rho.as_float_used())
    return {
        "proved": proved, "fate": r["fate"] if proved else None, "sequence": seq,
        "sequence_complete": r["sequence_complete"], "proved_until": r["proved_until"], "switches": switches,
        "collapse_time": r["collapse_time"], "blowup_time": r["blowup_time"],
        "final_index": r["final_index"] if proved else None,
        "final_index_status": (Kind.PROVED if proved else Kind.NOT_DECIDED).value,
        "final_index_reason": r["reason"] if proved else f"no lock-in certificate: {r['reason']}",
        "time_kind": "rescaled",
        "method": "validated Taylor integration (Lohner's method) of the balanced ℓ2-SAM flow in v = u − α in ball "
                  "arithmetic (proved/validated); switches where the order of u_j changes transversally; the lock-in "
                  "lemma (blow-up order) or the even-L collapse lemma"}, lemmas, used

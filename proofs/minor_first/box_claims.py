"""Provers of the pack's claims on boxes of inputs (``theorycheck verify --prove``).

Each prover states its boxes (around the claim's pinned inputs, and a box of the claim's domain)
and decides the claim's statement on every point of each box by ball arithmetic
(:func:`theorycheck.proved.boxes.prove_on_box`), resting on the symbolic steps of the theorem it
names: C2/C3 (ℓ∞-SAM's closed-form solutions), and, for the α-box claims of C4/C5, the validated
integration of C4's reduced ODE with the lock-in lemma (theorycheck.proofs.minor_first.proved.regime_map).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import sympy as sp
from theorycheck.proofs.minor_first.lemmas import BOOK

from theorycheck.proved.boxes import (
    PROVED,
    REFUTED,
    UNDECIDED,
    Box,
    BoxProof,
    Decision,
    certain_argmax,
    prove_on_box,
    sign,
)
from theorycheck.symbolic import closed_forms as cf
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import model as sy
from theorycheck.symbolic import theory_exprs as TE

#: relative half-width of the boxes around pinned inputs
PIN_RADIUS = 1e-3


def input_box(x: dict, rel: float = PIN_RADIUS) -> Box:
    """The box of relative half-width ``rel`` around one input {z, alpha, rho[, L]} of a C2/C3 claim."""
    z = list(x["z"])
    a = x["alpha"] if isinstance(x["alpha"], (list, tuple)) else [x["alpha"]] * len(z)
    b = {f"z{j + 1}": (v * (1 - rel), v * (1 + rel)) for j, v in enumerate(z)}
    b.update({f"alpha{j + 1}": (v * (1 - rel), v * (1 + rel)) for j, v in enumerate(a)})
    b["rho"] = (x["rho"] * (1 - rel), x["rho"] * (1 + rel))
    return Box.of(b, {"L": int(x.get("L", 2)), "d": len(z)})


def _d(box: Box) -> int:
    return dict(box.fixed)["d"]


def _text(ball) -> list[str]:
    return [ball.lower().str(20, radius=False), ball.upper().str(20, radius=False)]


def _signs(b: dict, box: Box) -> tuple[list, dict | None]:
    """sign(α_j − ρ) for each j, and a hint (α_j = ρ at the centre) for the first undecided one."""
    out, hint = [], None
    c = box.center()
    for j in range(1, _d(box) + 1):
        s = sign(b[f"alpha{j}"] - b["rho"])
        out.append(s)
        if s is None and hint is None:
            hint = {f"alpha{j}": c["rho"]}
    return out, hint


_COMPILED: dict[str, Callable] = {}


def _arb(name: str, args, expr) -> Callable:
    """The ball-arithmetic form of a closed form (compiled once)."""
    f = _COMPILED.get(name)
    if f is None:
        f = _COMPILED[name] = C.arb_function(args, [expr])
    return f


def _zero_time(a, z, r):
    return _arb("linf_l2_zero_time", (cf.alpha_j, cf.z_j, sy.rho), TE.linf_l2_zero_time())(a, z, r)[0]


def _blowup_time(a, z, r, L):
    return _arb(f"linf_blowup_time{L}", (cf.alpha_j, cf.z_j, sy.rho), TE.linf_blowup_time(sp.Integer(L)))(a, z, r)[0]


def _blowup_score(a, z, r, L):
    return _arb(f"linf_blowup_score{L}", (cf.alpha_j, cf.z_j, sy.rho), TE.linf_blowup_score(sp.Integer(L)))(a, z, r)[0]


# ---------------------------------------------------------------- C2 (ℓ∞-SAM, L = 2)
def c2_solution(b: dict, box: Box) -> Decision:
    """C2.solution: each branch (α_j > ρ, α_j < ρ, α_j = ρ) is an identity of theorem C2, so the
    statement holds at every point; where the branch is certain on the box, the zero time τ_j is
    enclosed."""
    s, _ = _signs(b, box)
    times = {}
    for j, sj in enumerate(s, 1):
        if sj == -1:
            times[str(j)] = _text(_zero_time(b[f"alpha{j}"], b[f"z{j}"], b["rho"]))
    return Decision(PROVED, {"zero_times": times, "branches": s})


def _tie_hint(box: Box, pair: list[int], key: str) -> dict | None:
    """A point where the sides ``key``i and ``key``j of the top candidates take one common value."""
    if len(pair) < 2:
        return None
    i, j = pair[:2]
    lo_i, hi_i = dict((k, (lo, hi)) for k, lo, hi in box.bounds)[f"{key}{i}"]
    lo_j, hi_j = dict((k, (lo, hi)) for k, lo, hi in box.bounds)[f"{key}{j}"]
    lo, hi = max(lo_i, lo_j), min(hi_i, hi_j)
    if lo > hi:
        return None
    m = 0.5 * (lo + hi)
    return {f"{key}{i}": m, f"{key}{j}": m}


def c2_limit(b: dict, box: Box) -> Decision:
    """C2.limit as THEORY.md states it: the limit is e_(j°), j° = argmax{z_j : α_j > ρ}, or 0 when no
    α_j > ρ. False at a tie of the top z_j among the α_j > ρ (the limit ∝ (α_j − ρ)² over the tie,
    theorem C2's solution) and where some α_j = ρ and none is above (u_j ≡ ρ, the limit ∝ 1[α_j = ρ])."""
    s, hint = _signs(b, box)
    if hint is not None:
        return Decision(UNDECIDED, {"why": "the branch α_j ≷ ρ is not certain"}, hint)
    grow = [j for j, sj in enumerate(s, 1) if sj == 1]
    if not grow:
        at = [j for j, sj in enumerate(s, 1) if sj == 0]
        if at:
            return Decision(REFUTED, {"why": f"α_j = ρ for j = {at} and no α_j > ρ: u_j ≡ ρ, so the limit is "
                                             "∝ 1[α_j = ρ], not 0"})
        return Decision(PROVED, {"limit_index": 0})
    top, cand = certain_argmax({j: b[f"z{j}"] for j in grow})
    if top is not None:
        return Decision(PROVED, {"limit_index": top})
    zs = [b[f"z{j}"] for j in cand]
    if all(x.is_exact() for x in zs) and all(x == zs[0] for x in zs):
        return Decision(REFUTED, {"why": f"z_j tie at the top among α_j > ρ (j = {cand}): β_j/β_k → "
                                         "((α_j − ρ)/(α_k − ρ))², the limit is not a basis vector"})
    return Decision(UNDECIDED, {"why": "the top z_j among α_j > ρ is not certain"}, _tie_hint(box, cand, "z"))


# ---------------------------------------------------------------- C3 (ℓ∞-SAM, L ≥ 3)
def c3_blowup_time(b: dict, box: Box) -> Decision:
    """C3.blowup-time: u_j − ρ solves GD's blow-up ODE exactly for α_j > ρ (theorem C3), and no
    α_j ≤ ρ blows up, so the flow blows up at min over α_j > ρ of τ_j*; enclosed on the box."""
    L = dict(box.fixed)["L"]
    s, hint = _signs(b, box)
    times = {j: _blowup_time(b[f"alpha{j}"], b[f"z{j}"], b["rho"], L) for j, sj in enumerate(s, 1) if sj == 1}
    if not times:
        if hint is not None:
            return Decision(UNDECIDED, {"why": "no α_j > ρ is certain"}, hint)
        return Decision(PROVED, {"blowup": None})
    lo = min(t.lower() for t in times.values())
    hi = min(t.upper() for t in times.values())
    for j, sj in enumerate(s, 1):  # α_j − ρ ∈ (−, ub]: if it is above ρ, τ_j* ≥ τ*(ρ + ub), which may be the min
        if sj is None:
            ub = (b[f"alpha{j}"] - b["rho"]).upper()
            if not _blowup_time(b["rho"] + ub, b[f"z{j}"], b["rho"], L).lower() > hi:
                return Decision(UNDECIDED, {"why": f"α_{j} ≷ ρ is not certain and τ_{j}* may be the smallest"}, hint)
    return Decision(PROVED, {"blowup_time": [lo.str(20, radius=False), hi.str(20, radius=False)]})


def c3_winner(b: dict, box: Box) -> Decision:
    """C3.winner as THEORY.md states it: the direction tends to e_j, j = argmax z_j (α_j − ρ)^(L−2)
    among α_j > ρ. False at a tie of the top score (the tied coordinates blow up together)."""
    L = dict(box.fixed)["L"]
    s, hint = _signs(b, box)
    grow = [j for j, sj in enumerate(s, 1) if sj == 1]
    if hint is not None and not grow:
        return Decision(UNDECIDED, {"why": "no α_j > ρ is certain"}, hint)
    if not grow:
        return Decision(PROVED, {"winner": None, "why": "no α_j > ρ: no blow-up, the claim is vacuous"})
    scores = {j: _blowup_score(b[f"alpha{j}"], b[f"z{j}"], b["rho"], L) for j in grow}
    for j, sj in enumerate(s, 1):  # an undecided α_j − ρ ∈ [−, +]: its score is at most its upper end
        if sj is None:
            scores[j] = _blowup_score(b[f"alpha{j}"], b[f"z{j}"], b["rho"], L)
    top, cand = certain_argmax(scores)
    if top is not None and s[top - 1] == 1:
        return Decision(PROVED, {"winner": top})
    sc = [scores[j] for j in cand]
    if len(cand) > 1 and all(x.is_exact() for x in sc) and all(x == sc[0] for x in sc):
        return Decision(REFUTED, {"why": f"the top blow-up score ties (j = {cand}): these coordinates blow up "
                                         "together and the direction is not a basis vector"})
    return Decision(UNDECIDED, {"why": "the top blow-up score is not certain"}, _score_tie_hint(box, cand, L) or hint)


def _score_tie_hint(box: Box, cand: list[int], L: int) -> dict | None:
    """A point of the box where the two top blow-up scores z_j (α_j − ρ)^(L−2) are equal (floats; the
    point is a counterexample only if the scores are then exactly equal in ball arithmetic)."""
    if len(cand) < 2:
        return None
    c = box.center()
    i, k = cand[:2]
    gap = c[f"alpha{i}"] - c["rho"]
    if gap <= 0:
        return None
    ak = c["rho"] + gap * (c[f"z{i}"] / c[f"z{k}"]) ** (1.0 / (L - 2))
    hint = {f"alpha{k}": ak}
    return hint if box.contains(hint) else None


# ---------------------------------------------------------------- provers
def prover(statement: Callable, boxes: Sequence[Box], rests_on: tuple[str, ...]) -> Callable[..., list[BoxProof]]:
    """A claim's prover: decides ``statement`` on each of ``boxes`` (``max_seconds`` per box)."""
    def run(max_seconds: float = 10.0) -> list[BoxProof]:
        return [prove_on_box(statement, bx, max_seconds=max_seconds, rests_on=rests_on, book=BOOK) for bx in boxes]

    run.boxes = list(boxes)
    return run


def domain_box(z: Sequence[tuple[float, float]], alpha: Sequence[tuple[float, float]], rho: tuple[float, float],
               L: int = 2) -> Box:
    b = {f"z{j + 1}": v for j, v in enumerate(z)}
    b.update({f"alpha{j + 1}": v for j, v in enumerate(alpha)})
    b["rho"] = rho
    return Box.of(b, {"L": L, "d": len(z)})


# ---------------------------------------------------------------- C4/C5 on α boxes (the proved regime map)
def alpha_box_prover(z: Sequence[float], rho: float, boxes: Sequence[tuple[str, str, Callable, str]],
                     rests_on: tuple[str, ...] = ("C4", "C5", "LOCK")) -> Callable[..., list[BoxProof]]:
    """A prover for a C4/C5 claim on α boxes of one example: each box (lo, hi, statement, what) is mapped by
    :func:`theorycheck.proofs.minor_first.proved.regime_map.proved_regime_map` (every α of a proved piece: its fate and j† sequence)
    and ``statement(piece)`` is checked on every proved piece: all proved and true → proved; true nowhere
    on a proved piece → refuted (its midpoint is the counterexample); else undecided."""
    from fractions import Fraction

    def run(max_seconds: float = 10.0) -> list[BoxProof]:
        import time

        from theorycheck.proofs.minor_first.proved.regime_map import proved_regime_map

        out = []
        for lo, hi, statement, what in boxes:
            t0 = time.perf_counter()
            r = proved_regime_map(z, rho, (Fraction(lo), Fraction(hi)), max_seconds=max_seconds)
            box = Box.of({"alpha": (float(lo), float(hi))}, {"d": len(z)})
            pieces = r.pieces
            bad = next((p for p in pieces if p.status == "proved" and not statement(p)), None)
            facts = {"statement": what, "z": list(map(float, z)), "rho": float(rho),
                     "pieces": [p.as_dict() for p in pieces]}
            if bad is not None:
                mid = float((bad.lower + bad.upper) / 2)
                ce = {"input": {"z": list(map(float, z)), "rho": float(rho), "alpha": mid},
                      "detail": {"why": f"proved for every α in [{bad.as_dict()['lower']}, {bad.as_dict()['upper']}]: "
                                        f"fate {bad.fate}, j† sequence {bad.sequence}; the statement ({what}) is false "
                                        "there"}}
                status = REFUTED
            else:
                ce = None
                status = PROVED if all(p.status == "proved" for p in pieces) else UNDECIDED
            und = [Box.of({"alpha": (float(p.lower), float(p.upper))}, {"d": len(z)}) for p in pieces
                   if p.status != "proved"]
            out.append(BoxProof(status, box, [b for b in [box] if status == PROVED], und, ce, len(pieces),
                                time.perf_counter() - t0, 96, rests_on, facts, r.values.get("stopped"), book=BOOK))
        return out

    run.boxes = [b[:2] for b in boxes]
    return run


def _core(seq: list[int]) -> list[int]:
    """j†'s sequence without the final 0 of a collapse."""
    return seq[:-1] if seq and seq[-1] == 0 else seq


def only_up(z: Sequence[float]) -> Callable:
    """C4.sequential: every switch goes to a larger z (the final switch to 0 of a collapse aside)."""
    def statement(p) -> bool:
        s = _core(p.sequence)
        return all(z[b - 1] > z[a - 1] for a, b in zip(s, s[1:]))
    return statement


def down_then_up(z: Sequence[float]) -> Callable:
    """C4.sequential-refined: the switch directions are down*, then up* (at most one change, down first)."""
    def statement(p) -> bool:
        s = _core(p.sequence)
        ups = [z[b - 1] > z[a - 1] for a, b in zip(s, s[1:])]
        turns = sum(1 for u, v in zip(ups, ups[1:]) if u != v)
        return turns == 0 or (turns == 1 and not ups[0])
    return statement


def regime(kind: str, z: Sequence[float]) -> Callable:
    """C5.regimes on a box inside one regime: collapse; sequential (growth, j† starts below the major
    coordinate and ends on it); gd-like (growth, j† = argmax z throughout)."""
    major = int(np.argmax(z)) + 1 if len(z) else 0

    def statement(p) -> bool:
        if kind == "collapse":
            return p.fate == "collapse"
        if kind == "sequential":
            return p.fate == "growth" and p.sequence[0] != major and p.sequence[-1] == major
        return p.fate == "growth" and p.sequence == [major]
    return statement

"""Claims of the flows at tiny α against the exact jump process (numerics/saddle_to_saddle/flows.py for the
definitions of observed jump times, gaps and plateau distances). Each check runs the float64 log-chart flow at
α = 1e-10, 1e-30, 1e-100, 1e-300 (budgets in steps and evaluations; a run that exhausts one is inconclusive).

The first gap's constant (SS.flow.first): when the first saddle has one coordinate i, only β_i moves during
the first jump (the others stay below α^c), and β_i follows the scalar flow dβ/dt = −4√(β² + 4α⁴)(aβ − b),
a = ‖x_i‖²/n, b = ⟨x_i, y⟩/n, from 0. The loss midpoint is β = uβ*, u = 1 − 1/√2 (β* = b/a), reached at
t = ∫₀^{uβ*} dβ / (4√(β² + 4α⁴)(b − aβ)) = (2λ + ln(u|β*|/(1 − u)))/(4|b|) + O(α²), so with t̃₁ = 1/(2|b|):
gap₁·ln(1/α) → n·ln((√2 − 1)|β¹_i|) / (4|⟨x_i, y⟩|), and its sign is that of (√2 − 1)|β¹_i| − 1.
"""

from __future__ import annotations

from functools import lru_cache

from hypothesis import strategies as st
from theorycheck.proofs.saddle_to_saddle.flows import LEAVES, first_gap_constant, problem, sweep

from theorycheck.claims.claim import Claim, Outcome

SCALES = ("1e-10", "1e-30", "1e-100", "1e-300")
#: a plateau shorter than this (in t̃) is not measured mid-way: at α = 1e-300 a jump takes ~ 5/ln(1/α) ≈ 0.007
MIN_PLATEAU = 0.05
N1 = {"X": [["0.5", "-2", "1"]], "y": ["3"]}
ORTHO = {"X": [["2", "0"], ["0", "1"]], "y": ["1", "-3"]}
GRID = tuple({"seed": s, "n": 2, "d": 3} for s in range(6))


@st.composite
def _inputs(draw):
    n = draw(st.integers(1, 2))
    return {"seed": draw(st.integers(0, 100_000)), "n": n, "d": draw(st.integers(1, 3))}


def _describe(x) -> dict:
    X, y = problem(x)
    return {**x, "X": X, "y": y}


@lru_cache(maxsize=64)
def _sweep(key: str):
    import json

    X, y = json.loads(key)
    return sweep(X, y, SCALES)


def _run(x):
    import json

    s = _sweep(json.dumps(problem(x)))
    if not s["process"].jumps:
        return s, Outcome(None, detail={"why": "no jump (Xᵀy = 0)"})
    bad = [r["status"] for r in s["rows"] if r["status"] != "t_max"]
    if bad or any(g is None for r in s["rows"] for g in r["gaps"]):
        return s, Outcome(None, detail={"why": f"a run stopped early or missed a jump: {bad}"})
    return s, None


def check_limit(x) -> Outcome:
    """SS.flow.limit: at α = 1e-300 every plateau (longer than MIN_PLATEAU) is within 1e-5(1 + ‖β^k‖∞) of its
    saddle mid-way, and no farther than at α = 1e-10."""
    s, u = _run(x)
    if u is not None:
        return u
    jumps = s["process"].jumps
    ends = [float(j.time) for j in jumps[1:]] + [float(jumps[-1].time) + 1.0]
    lo, hi = s["rows"][0]["plateau_distance"], s["rows"][-1]["plateau_distance"]
    worst, ok = 0.0, True
    for k, j in enumerate(jumps):
        if ends[k] - float(j.time) < MIN_PLATEAU or hi[k] is None:
            continue
        scale = 1.0 + max(abs(float(b)) for b in j.beta)
        worst = max(worst, hi[k] / scale)
        ok = ok and hi[k] <= 1e-5 * scale and hi[k] <= max(lo[k], 1e-7 * scale)
    return Outcome(ok, worst, {"distance_1e-10": lo, "distance_1e-300": hi})


def check_shrinks(x) -> Outcome:
    """SS.flow.limit.shrinks (refined): every measured plateau distance and every |gap| decreases from α = 1e-10
    to α = 1e-300 (or both distances are below 1e-7(1 + ‖β^k‖∞)): the path tends to the process, at whatever
    rate. Deviation: the largest ratio late/early of a quantity that did not decrease."""
    s, u = _run(x)
    if u is not None:
        return u
    jumps = s["process"].jumps
    lo, hi = s["rows"][0], s["rows"][-1]
    worst = 0.0
    for k, j in enumerate(jumps):
        scale = 1.0 + max(abs(float(b)) for b in j.beta)
        d0, d1 = lo["plateau_distance"][k], hi["plateau_distance"][k]
        if d0 is not None and d1 is not None and max(d0, d1) > 1e-7 * scale and d1 >= d0:
            worst = max(worst, d1 / max(d0, 1e-300))
        g0, g1 = abs(lo["gaps"][k]), abs(hi["gaps"][k])
        if g1 >= g0 and g1 > 1e-9:
            worst = max(worst, g1 / max(g0, 1e-300))
    return Outcome(worst == 0.0, worst, {"distance_1e-10": lo["plateau_distance"], "distance_1e-300":
                                         hi["plateau_distance"], "gaps_1e-10": lo["gaps"], "gaps_1e-300": hi["gaps"]})


def check_rate(x) -> Outcome:
    """SS.flow.rate: every gap fits a + b/ln(1/α) with a = 0 (|a| ≤ 3 se + 1e-5), gap·ln(1/α) settling
    (1e-100 vs 1e-300 within 1e-2(1 + |b|))."""
    s, u = _run(x)
    if u is not None:
        return u
    worst, ok, out = 0.0, True, []
    for k, f in enumerate(s["fits"]):
        a_ok = abs(f["a"]) <= 3 * f["a_se"] + 1e-5
        drift = abs(s["rows"][-1]["scaled_gaps"][k] - s["rows"][-2]["scaled_gaps"][k]) / (1 + abs(f["b"]))
        ok = ok and a_ok and drift <= 1e-2
        worst = max(worst, abs(f["a"]))
        out.append({"a": f["a"], "a_se": f["a_se"], "b": f["b"], "b_se": f["b_se"], "drift": drift})
    return Outcome(ok, worst, {"fits": out})


def _first(x):
    """The sweep, the first gap's closed-form constant, and an undecided outcome where either is missing (a run
    that stopped early, or a tie at the first jump: no one-coordinate first saddle)."""
    s, u = _run(x)
    if u is not None:
        return s, None, u
    c = first_gap_constant(s["process"])
    if c is None:
        return s, None, Outcome(None, detail={"why": "the first saddle has several coordinates (a tie)"})
    return s, c, None


def check_first(x) -> Outcome:
    """SS.flow.first: one-coordinate first saddle: gap₁·ln(1/α) at α = 1e-300 equals the closed form
    n·ln((√2 − 1)|β¹_i|)/(4|⟨x_i, y⟩|) within 1e-4(1 + |C|) (module doc)."""
    s, c, u = _first(x)
    if u is not None:
        return u
    got = s["rows"][-1]["scaled_gaps"][0]
    dev = abs(got - c) / (1 + abs(c))
    return Outcome(dev <= 1e-4, dev, {"closed_form": c, "observed": got})


def check_early(x) -> Outcome:
    """SS.flow.early (naive): the flow reaches every saddle before the limit process (every gap < 0)."""
    s, u = _run(x)
    if u is not None:
        return u
    gaps = s["rows"][-1]["gaps"]
    late = [k + 1 for k, g in enumerate(gaps) if g >= 0]
    return Outcome(not late, float(len(late)), {"gaps_1e-300": gaps, "late_jumps": late})


def check_first_sign(x) -> Outcome:
    """SS.flow.early.first (refined): the first gap has the sign of (√2 − 1)|β¹_i| − 1 (one-coordinate start)."""
    s, c, u = _first(x)
    if u is not None:
        return u
    g = s["rows"][-1]["gaps"][0]
    return Outcome((g < 0) == (c < 0), 0.0 if (g < 0) == (c < 0) else abs(g), {"gap": g, "constant": c})


def check_tiny(x) -> Outcome:
    """SS.flow.tiny: at α = 1e-2048, 30 digits (mpmath): gap₁·ln(1/α) equals the closed form within 1e-8."""
    from theorycheck.proofs.saddle_to_saddle.algorithm import jump_process
    from theorycheck.proofs.saddle_to_saddle.flows import mp_first_jump

    X, y = problem(x)
    c = first_gap_constant(jump_process(X, y))
    if c is None:
        return Outcome(None, detail={"why": "no one-coordinate first saddle"})
    m = mp_first_jump(X, y, "1e-2048", 30)
    if m["scaled_gap"] is None or m["status"] != "converged":
        return Outcome(None, detail={"why": m["status"]})
    dev = abs(m["scaled_gap"] - c)
    return Outcome(dev <= 1e-8, dev, {"closed_form": c, "observed": m["scaled_gap"], "steps": m["steps"]})


FLOAT = "float64 log-chart flows at α = 1e-10 … 1e-300 (rtol 1e-10)"
_SHRINKS = Claim(key="SS.flow.limit.shrinks", statement="from α = 1e-10 to 1e-300 every mid-plateau distance and "
                 "every jump-time gap shrinks", inputs=_inputs(), check=check_shrinks, tolerance=FLOAT,
                 pinned=(LEAVES,), describe=_describe, grid=GRID, max_examples=4)
_EARLY_FIRST = Claim(key="SS.flow.early.first", statement="the first jump-time gap has the sign of "
                     "(√2 − 1)|β¹_i| − 1 (a one-coordinate first saddle)", inputs=_inputs(), check=check_first_sign,
                     tolerance=FLOAT, pinned=(LEAVES, N1), describe=_describe, grid=GRID, max_examples=4)


def claims() -> list[Claim]:
    return [
        Claim(key="SS.flow.limit", statement="as α → 0 the flow's path tends to the jump process: mid-plateau "
              "distances to the saddles shrink (≤ 1e-5 at α = 1e-300)", inputs=_inputs(), check=check_limit,
              tolerance=FLOAT, pinned=(LEAVES, ORTHO), refined=_SHRINKS, describe=_describe, grid=GRID, max_examples=4),
        Claim(key="SS.flow.rate", statement="the jump-time gap is O(1/ln(1/α)): it fits b/ln(1/α) with no "
              "constant term", inputs=_inputs(), check=check_rate, tolerance=FLOAT, pinned=(LEAVES, N1), refined=_SHRINKS,
              describe=_describe, grid=GRID, max_examples=4),
        Claim(key="SS.flow.first", statement="a one-coordinate first saddle: gap₁·ln(1/α) → "
              "n·ln((√2 − 1)|β¹_i|)/(4|⟨x_i, y⟩|)", inputs=_inputs(), check=check_first, tolerance=FLOAT,
              pinned=(LEAVES, N1, ORTHO), describe=_describe, grid=GRID, max_examples=4),
        Claim(key="SS.flow.early", statement="the flow reaches every saddle before the limit process (every gap "
              "< 0)", inputs=_inputs(), check=check_early, tolerance=FLOAT, pinned=(LEAVES,), refined=_EARLY_FIRST,
              describe=_describe, grid=GRID, max_examples=4),
        Claim(key="SS.flow.tiny", statement="at α = 1e-2048 (mpmath, 30 digits) the first gap·ln(1/α) is the "
              "closed form", inputs=st.just(LEAVES), check=check_tiny, tolerance="mpmath 30 digits, 1e-8",
              pinned=(LEAVES, N1), describe=_describe, max_examples=1, digits=30),
    ]

"""α_c(L) at even L ≥ 4 in floating point: the bisection in c on the ratio reduction blown up at r = 1 (new,
minor_first/predict/blowup.py through minor_first/predict/depth.depth_collapse_threshold) against the previous bisection in ln α on the flow in
θ = ln u (the baseline, rebuilt here from ``predict.depth.classify`` with the previous horizon 2000·α^(2−L) per
trial, now under a step budget instead of seconds), in the same process: significant digits of the checked
bracket, integrations, DOP853 steps, CPU seconds.

    python benchmarks/bench_depth_alpha_c.py [--L 4] [--write benchmarks/DEPTH_ALPHA_C.md]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time

import numpy as np
from theorycheck.proofs.minor_first.predict import depth as dl

from theorycheck.arith.decimals import common_digits
from theorycheck.status import Fate
from theorycheck.symbolic import theory_forms as MF

CASES = [(1.0, 2.0, 3.0), (1.0, 2.0, 3.0, 4.0, 5.0), (0.5, 1.0, 2.0, 4.0)]


def baseline(z, rho: float, L: int, *, rel: float = 1e-13, max_steps: int = 20000, max_evaluations: int = 120,
             horizon: float = 2000.0):
    """The previous search: bisection in ln α between the closed-form ends, each trial classified in θ = ln u up
    to τ = 2000·α^(2−L) (the previous default), quarter points when the midpoint is undecided, stop when all three
    are. Returns (lower, upper, evaluations, steps, stopped)."""
    u = np.asarray(z, float) / max(z)
    fa = MF.depth_zero_rate_alpha(L)
    nrm = float(np.linalg.norm(u))
    lo, hi = float(fa(u.min(), nrm, rho)), float(fa(u.max(), nrm, rho))
    evals = steps = 0
    stopped = None
    while hi / lo - 1 > rel and evals < max_evaluations:
        w = math.log(hi / lo)
        decided = None
        for frac in (0.5, 0.25, 0.75):
            a = lo * math.exp(frac * w)
            c = dl.classify(u, a, rho, L, t_max=horizon * a ** (2 - L), max_steps=max_steps)
            evals += 1
            steps += c.steps
            if c.kind != Fate.UNDECIDED:
                decided = c
                break
            stopped = c.why
        if decided is None:
            break
        stopped = None
        if decided.kind == Fate.COLLAPSE:
            lo = decided.alpha
        else:
            hi = decided.alpha
    return lo, hi, evals, steps, stopped


def _timed(fn):
    c = time.process_time()
    out = fn()
    return out, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--L", type=int, default=4)
    ap.add_argument("--write", default=None)
    a = ap.parse_args()
    L = a.L
    load = os.getloadavg()[0]
    _, t_cold = _timed(lambda: dl.depth_collapse_threshold(CASES[0], 1.0, L))  # compile both systems once
    dl.classify(CASES[0], 0.25, 1.0, L, max_steps=10)
    rows = []
    for z in CASES:
        (blo, bhi, bev, bst, bstop), c_old = _timed(lambda z=z: baseline(z, 1.0, L))
        (llo, lhi, lev, lst, lstop), c_long = _timed(lambda z=z: baseline(z, 1.0, L, horizon=1e30))
        Dlong, _ = common_digits(llo, lhi, 17)
        t, c_new = _timed(lambda z=z: dl.depth_collapse_threshold(z, 1.0, L))
        ch = t["check"]
        nsteps = ch["collapses"]["steps"] + ch["grows"]["steps"]
        Dold, _ = common_digits(blo, bhi, 17)
        inside = blo <= ch["collapses"]["alpha"] and ch["grows"]["alpha"] <= bhi
        rows.append((z, Dold, blo, bhi, bev, bst, bstop, c_old, ch, t["value_text"], nsteps, c_new, inside,
                     (Dlong, llo, lhi, lev, lst, lstop, c_long)))
        print(rows[-1][:8], ch["significant_digits"], ch["evaluations"], c_new, flush=True)
    lines = ["# α_c(L) at even L: bisection in c on the blown-up ratio system against the previous bisection in ln α",
             "", "Produced by (one process, back to back):", "", "```bash",
             f"python benchmarks/bench_depth_alpha_c.py --L {L} --write benchmarks/DEPTH_ALPHA_C.md", "```", "",
             f"Machine: {platform.platform()}, Python {platform.python_version()}; shared host, load average "
             f"{load:.1f} at the start: CPU seconds (process_time). Cold first call (sympy + lambdify of the blown-up "
             f"system, then α_c): {t_cold:.2f} s CPU. L = {L}, ρ = 1. Both searches stop at relative width 1e-13 or "
             "at their first undecided trial (midpoint and quarter points), each trial under 20000 DOP853 steps; "
             "the previous one integrates in θ = ln u up to τ = 2000·α^(2−L) (its previous default horizon), or with no "
             "horizon (the 20000 steps only). The new search's steps column counts the two runs at the bracket's "
             "ends; the previous one's every run.", "",
             "| z | method | significant digits | bracket | integrations | steps (all runs; new: the two ends) "
             "| CPU s | stopped | ratio (previous / new, CPU) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for z, Dold, blo, bhi, bev, bst, bstop, c_old, ch, text, nsteps, c_new, inside, long in rows:
        zs = "(" + ", ".join(f"{v:g}" for v in z) + ")"
        lines.append(f"| {zs} | previous (θ = ln u, ln α) | {Dold} | [{blo!r}, {bhi!r}] | {bev} | {bst} | {c_old:.2f} "
                     f"| {bstop or '—'} | 1 |")
        Dl, llo, lhi, lev, lst, lstop, c_long = long
        lines.append(f"| {zs} | previous, no horizon (steps only) | {Dl} | [{llo!r}, {lhi!r}] | {lev} | {lst} "
                     f"| {c_long:.2f} | {lstop or '—'} | {c_long / c_new:.1f}× (this row / new) |")
        lines.append(f"| {zs} | new (blow-up, ln c) | {ch['significant_digits']} (`{text}`) | "
                     f"[{ch['bracket'][0]}, {ch['bracket'][1]}] | {ch['evaluations']} | {nsteps} | {c_new:.2f} | "
                     f"{ch['stopped'] or '—'} | {c_old / c_new:.1f}× |")
        lines.append(f"| {zs} | agreement | | new bracket inside the previous one: {inside} | | | | | |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        with open(a.write, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()

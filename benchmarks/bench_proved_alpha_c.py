"""Proved α_c (validated ball-arithmetic integration + persisting lemmas) against the floating-point α_c (both ends checked),
in the same process: CPU and wall seconds, and seconds per significant digit; and the validated runs with their
Taylor series by Newton's iteration (what the integrator uses for one state) against the same runs by Picard's
iteration (the baseline, same process, same steps rule).

    python benchmarks/bench_proved_alpha_c.py [--digits 12,20,30] [--out benchmarks/PROVED.md]

The proof starts from the floating-point value at digits + 3 (what ``thresholds --prove`` computes once and
reports), so "proved" = "float (digits + 3)" + two validated runs. CPU seconds are ``time.process_time`` (the
figure to compare on a shared machine); wall seconds depend on the load (say which).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

from theorycheck.proofs.minor_first.predict.alpha_c import collapse_threshold
from theorycheck.proofs.minor_first.proved.alpha_c import prove_alpha_c
from theorycheck.proofs.minor_first.proved.reduced_l2 import ReducedL2


def _timed(fn):
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c, time.perf_counter() - w


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--z", default="1,2,3,4,5")
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--digits", default="12,20,30")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    z = [float(v) for v in a.z.split(",")]
    load = os.getloadavg()[0]
    # compile the ball-arithmetic field once, outside the timings (a cold start pays it once per process)
    _, t_compile, _ = _timed(lambda: ReducedL2(z, a.rho, 12).system.field_and_state_jacobian.get())
    rows = []
    for D in [int(v) for v in a.digits.split(",")]:
        f, c_float, w_float = _timed(lambda: collapse_threshold(z, a.rho, digits=D, progress=False))
        g, c_guess, w_guess = _timed(lambda: collapse_threshold(z, a.rho, digits=D + 3, progress=False))
        p, c_proof, w_proof = _timed(lambda: prove_alpha_c(z, a.rho, digits=D, guess=g.value_text, max_seconds=1200))
        # the baseline: the same two runs with Picard's series (a system without the field-and-Jacobian function)
        pr = ReducedL2(z, a.rho, D + 3)
        pr.system = dataclasses.replace(pr.system, field_and_state_jacobian=None)
        (lo, hi), c_pic, _ = _timed(lambda: (pr.run(p.lower), pr.run(p.upper)))
        same = lo.fate == "collapse" and hi.fate == "growth"
        steps = (p.collapses.steps + p.grows.steps, lo.steps + hi.steps)
        rows.append((D, c_float, w_float, p.status, p.digits, p.lower, p.upper, c_guess, w_guess, c_proof, w_proof,
                     c_pic, same, steps))
        print(rows[-1], flush=True)
    lines = [f"z = ({a.z}), ρ = {a.rho:g}; one process; load average {load:.1f} at the start; compiling the "
             f"ball-arithmetic field and ∂f/∂w: {t_compile:.2f} s CPU (once per process)", "",
             "| digits | floating-point CPU s (wall) | CPU s/digit | proved | proved digits | guess at D+3 CPU s (wall) "
             "| two validated runs CPU s (wall) | CPU s/digit (guess + runs) | (guess + runs) / float (CPU) "
             "| runs by Picard's series CPU s | Picard / Newton | steps Newton, Picard |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for D, cf, wf, st, pd, _lo, _hi, cg, wg, cp, wp, cpic, same, steps in rows:
        lines.append(f"| {D} | {cf:.2f} ({wf:.2f}) | {cf / D:.3f} | {st} | {pd} | {cg:.2f} ({wg:.2f}) | "
                     f"{cp:.2f} ({wp:.2f}) | {(cg + cp) / D:.3f} | {(cg + cp) / cf:.2f} | {cpic:.2f}"
                     f"{'' if same else ' (not proved)'} | {cpic / cp:.1f} | {steps[0]}, {steps[1]} |")
    lines += ["", "brackets:"] + [f"- {r[0]} digits: [{r[5]}, {r[6]}]" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()

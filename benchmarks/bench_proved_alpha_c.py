"""Proved α_c (validated ball-arithmetic integration + persisting lemmas) against the floating-point certified α_c,
in the same process: seconds, and seconds per significant digit.

    python benchmarks/bench_proved_alpha_c.py [--digits 12,20,30] [--out benchmarks/PROVED.md]

The proof starts from the floating certified value (digits + 3), so "proved" = "float (digits + 3)" + two validated
runs; the ratio column is proof / float at the same digits. Wall-clock seconds on the machine it runs on (say which).
"""

from __future__ import annotations

import argparse
import time

from theorycheck.predict.proved_alpha_c import prove_alpha_c
from theorycheck.predict.thresholds import collapse_threshold


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--z", default="1,2,3,4,5")
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--digits", default="12,20,30")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    z = [float(v) for v in a.z.split(",")]
    rows = []
    for D in [int(v) for v in a.digits.split(",")]:
        t0 = time.perf_counter()
        f = collapse_threshold(z, a.rho, digits=D, progress=False)
        t_float = time.perf_counter() - t0
        t0 = time.perf_counter()
        g = collapse_threshold(z, a.rho, digits=D + 3, progress=False)
        t_guess = time.perf_counter() - t0
        t0 = time.perf_counter()
        p = prove_alpha_c(z, a.rho, digits=D, guess=g.value_text, max_seconds=1200)
        t_proof = time.perf_counter() - t0
        rows.append((D, f.value_text, t_float, p.status, p.digits, p.lower, p.upper, t_guess, t_proof,
                     p.collapses.seconds if p.collapses else None, p.grows.seconds if p.grows else None))
        print(rows[-1], flush=True)
    lines = [f"z = ({a.z}), ρ = {a.rho:g}; wall seconds, one process, this machine (shared, loaded)", "",
             "| digits | float certified (s) | s/digit | proved | proved digits | guess at D+3 (s) | two validated runs (s) "
             "| s/digit (guess + runs) | (guess + runs) / float |",
             "|---|---|---|---|---|---|---|---|---|"]
    for D, _, tf, st, pd, lo, hi, tg, tp, _c, _g in rows:
        lines.append(f"| {D} | {tf:.1f} | {tf / D:.2f} | {st} | {pd} | {tg:.1f} | {tp:.1f} | {(tg + tp) / D:.2f} | "
                     f"{(tg + tp) / tf:.1f} |")
    lines += ["", "brackets:"] + [f"- {D} digits: [{lo}, {hi}]" for D, _, _, _, _, lo, hi, *_ in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()

"""Benchmark: α_c (ℓ2-SAM, L = 2, one example) by the new method against the previous one,
in one process, back to back.

- new: ``proofs/minor_first/predict/alpha_c.collapse_threshold(z, ρ, digits=D)`` — Taylor series integration
  of C4's reduced ODE (float64, then fixed point at D + 12 digits), false position on the
  saddle's unstable coordinate over a ladder of horizons, both sides of the answer checked (each end reaches a persisting condition).
- previous: ``claims.thresholds.collapse_threshold_bisection`` — bisection in ln α on the
  reduced ODE through ``solve.integrate.solve`` (float64 classifications to a relative
  bracket of 1e-12), the bracket's ends re-classified at 30 mpmath digits. It cannot give
  more than ≈ 12 digits.

Each case is run once cold (first call in the process: includes lambdify and sympy work)
only for the new method's first case; every timed run is warm. Agreement: the previous
value must lie within its own bracket of the new checked value, and the new value's
digits are compared with the old one's. Wall times vary with load (the host is shared):
the ratio is what matters; both are measured in this process, one after the other.

Run: ``PYTHONPATH=. python benchmarks/bench_alpha_c.py --write benchmarks/ALPHA_C.md``
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import mpmath as mp
from theorycheck.proofs.minor_first.predict import alpha_c as AC

CASES = [("z = (1, 2, 3)", [1.0, 2.0, 3.0]), ("z = (1, …, 5)", [1.0, 2.0, 3.0, 4.0, 5.0]),
         ("z = (1, …, 6)", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]
DIGITS = [10, 12, 30, 50]


def timed(f):
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    out = f()
    return out, time.perf_counter() - t0, time.process_time() - cpu0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", default=None, help="write the markdown report here")
    p.add_argument("--skip-previous", action="store_true", help="do not run the previous (bisection) method")
    args = p.parse_args(argv)
    lines = ["# α_c: Taylor/false-position method against the previous bisection", "",
             "Produced by (one process, back to back):", "", "```bash",
             "PYTHONPATH=. python benchmarks/bench_alpha_c.py --write benchmarks/ALPHA_C.md", "```", "",
             f"Machine: {platform.platform()}, Python {sys.version.split()[0]}, mpmath {mp.__version__} "
             f"(backend {mp.libmp.BACKEND}); shared host (2 cores, other jobs running): wall times are noisy, "
             "CPU times (process_time) are given beside them.", ""]
    _, cold, cold_cpu = timed(lambda: AC.collapse_threshold(CASES[0][1], 1.0, digits=10))
    lines.append(f"Cold first call (sympy + lambdify of the log-summand coefficients, then α_c at 10 digits): "
                 f"{cold:.2f} s wall, {cold_cpu:.2f} s CPU.")
    lines += ["", "| case | method | digits asked | checked digits | value_text | wall | CPU | ratio (previous / new, CPU) |",
              "|---|---|---|---|---|---|---|---|"]
    for name, z in CASES:
        prev = None
        if not args.skip_previous:
            prev, pw, pc = timed(lambda: AC.collapse_threshold_bisection(z, 1.0))
            digits = prev.check["significant_digits"] if prev.check else 0
            lines.append(f"| {name} | previous (bisection) | ≈ 12 | {digits:.1f} (bracket) | {prev.value!r} | "
                         f"{pw:.2f} s | {pc:.2f} s | 1 |")
            print(lines[-1], flush=True)
        new12 = None
        for D in DIGITS:
            res, w, c = timed(lambda: AC.collapse_threshold(z, 1.0, digits=D))
            if D == 12:
                new12 = res
            ratio = f"{pc / c:.1f}×" if prev is not None else "—"
            lines.append(f"| {name} | new | {D} | {res.check['significant_digits']} | `{res.value_text}` | "
                         f"{w:.2f} s | {c:.2f} s | {ratio} |")
            print(lines[-1], flush=True)
        if prev is not None and new12 is not None:
            lo, hi = (float(x) for x in new12.check["bracket"])
            old_lo = prev.check["collapses"]["alpha"]
            old_hi = prev.check["grows"]["alpha"]
            agree = old_lo <= hi and lo <= old_hi
            lines.append(f"| {name} | agreement | | | previous bracket [{old_lo!r}, {old_hi!r}] "
                         f"{'overlaps' if agree else 'DOES NOT overlap'} the new checked bracket | | | |")
    lines += ["", "Targets: ≥ 10 correct digits in under 1 s in-process on one core (the `digits 10` rows, warm); "
              "30 digits in under 30 s (`theorycheck thresholds --z 1,2,3,4,5 --rho 1 --digits 30`). The previous method stops at ≈ 12 digits: the ratio compares its (≈ 12-digit) CPU time with the new one for the digits asked."]
    text = "\n".join(lines) + "\n"
    if args.write:
        with open(args.write, "w") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: what one heatmap call costs besides the integration, in one process.

The closed-form boundaries a heatmap reports (alpha_all_shrink, alpha_gd_like: C5) are solved
with ``sympy.solve`` once per process and compiled (``theorycheck/symbolic/theory_forms.py``, cached); before,
every call solved and simplified them again. This script times, for case (i) of
``bench_heatmap.py`` (100 α × 200 τ, z = linspace(1, 2, 100), compiled kernel, one thread):
the whole ``sweep.heatmap`` call, the kernel alone inside it, and the symbolic work that used
to run per call (the two ``sympy.solve`` + simplify + printing, uncached), median of ``--repeat``.

Run: ``PYTHONPATH=. python benchmarks/bench_hot_path.py --repeat 7``
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np
import sympy as sp
from theorycheck.proofs.minor_first.predict import thresholds as th
from theorycheck.proofs.minor_first.reduced import REDUCTIONS, kernel

from theorycheck import sweep as S
from theorycheck.symbolic import theory_exprs as TE

Z = np.linspace(1.0, 2.0, 100)

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
S_heatmap = functools.partial(S.heatmap, reductions=REDUCTIONS)
S_depth_sweep = functools.partial(S.depth_sweep, reductions=REDUCTIONS)


def _median(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args(argv)
    alphas = np.geomspace(0.5 * th.alpha_all_shrink(Z, 1.0).value, 2 * th.alpha_gd_like(Z, 1.0).value, 100)
    taus = S.time_grid(20.0, 200)

    def call():
        return S_heatmap(Z, optimizer="sam-l2", rho=1.0, alphas=alphas, times=taus, backend="serial", progress=False,
                         opts=S.RunOptions(rtol=1e-8, atol=1e-10, array_backend="numba"))

    spent = {"kernel": 0.0}
    inner = kernel.integrate_reduced

    def timed_kernel(*a, **k):
        t0 = time.perf_counter()
        out = inner(*a, **k)
        spent["kernel"] += time.perf_counter() - t0
        return out

    call()
    kernel.integrate_reduced = timed_kernel
    try:
        spent["kernel"] = 0.0
        t_call = _median(call, args.repeat)
        t_kernel = spent["kernel"] / args.repeat
    finally:
        kernel.integrate_reduced = inner

    def symbolic_per_call():  # what every call did before: solve, simplify, print the two closed forms
        for f in (TE.alpha_all_shrink.__wrapped__, TE.alpha_gd_like.__wrapped__):
            sp.sstr(f())

    t_sym = _median(symbolic_per_call, args.repeat)
    print(f"heatmap call (100 α × 200 τ, kernel, 1 thread): {t_call:.4f} s; kernel inside it: {t_kernel:.4f} s "
          f"({100 * t_kernel / t_call:.0f} %); everything else: {t_call - t_kernel:.4f} s")
    print(f"symbolic work each call used to add (two sympy.solve + simplify + sstr): {t_sym:.4f} s, "
          f"i.e. the call would take {t_call + t_sym:.4f} s ({(t_call + t_sym) / t_call:.1f}× as long)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

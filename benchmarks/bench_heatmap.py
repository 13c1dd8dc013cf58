"""Benchmark: the batched j† heatmap against the naive loop, in one process.

Problem: ℓ2-SAM, L = 2, one example z = linspace(1, 2, 100), ρ = 1, uniform α on a log grid
that covers the three regimes of C5 (from alpha_all_shrink/2 to 2·alpha_gd_like), τ on
(0, 20]. Cases: (i) 100 α × 200 τ, (ii) 1000 α × 1000 τ.

- batched: ``sweep.heatmap(..., backend="serial")`` — C4's reduced scalar ODE, every α at
  once (:class:`theorycheck.batched.systems.ReducedL2`), on two array backends: ``numba`` (the compiled
  per-member kernel, :mod:`theorycheck.proofs.minor_first.reduced.kernel`; one thread, like the naive loop; the default
  when numba is installed) and ``numpy`` (the vectorised engine). The kernel is also timed on
  every core (``backend="processes"``: threads in this process).
- batched-full: the same engine on the full d-dimensional balanced system in θ = ln u
  (:class:`theorycheck.batched.systems.BalancedLog`): how much comes from batching alone.
- naive: a Python loop of ``scipy.integrate.solve_ivp`` (RK45), one call per α, on the full
  d-dimensional balanced ℓ2-SAM field in θ = ln u from ``compile.balanced_field(2, "sam-l2",
  log=True)`` (N = sqrt(Σ summand)), the same rtol/atol, ``t_eval`` = the τ grid, and the
  same collapse stop as the batched engine (a terminal event at N = 1e-10·ρ m²/(2 z_max));
  without it the loop grinds towards the singularity at N = 0.

All methods are compiled (lambdify; numba) before timing; each batched method runs
``--repeat`` times (median reported), the naive loop once. Agreement: the fraction of cells where
j† is equal; every disagreeing cell is explained by the gap between the two largest θ_j of
the naive solution there (a near-tie: a switch boundary) and by whether j† changes at a
neighbouring cell. Wall times vary with machine load: the ratio is measured in one process,
back to back. ``--baseline-alphas K`` runs the naive loop on K evenly spaced α only and
extrapolates its time (said so in the output).

Run: ``PYTHONPATH=. python benchmarks/bench_heatmap.py --case all --write benchmarks/RESULTS.md``
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from theorycheck.proofs.minor_first.predict import thresholds as th
from theorycheck.proofs.minor_first.reduced import REDUCTIONS

from theorycheck import sweep as S
from theorycheck.symbolic import forms as C
from theorycheck.symbolic import theory_forms as MF

Z = np.linspace(1.0, 2.0, 100)
RHO = 1.0
TAU_MAX = 20.0
RTOL, ATOL = 1e-8, 1e-10
CASES = {"i": (100, 200), "ii": (1000, 1000)}

#: the sweeps with the first paper's reduction of the flow at hand (C4's ODE where it applies), as the API's
S_heatmap = functools.partial(S.heatmap, reductions=REDUCTIONS)
S_depth_sweep = functools.partial(S.depth_sweep, reductions=REDUCTIONS)


def grids(n_alpha: int, n_tau: int) -> tuple[np.ndarray, np.ndarray]:
    lo = 0.5 * th.alpha_all_shrink(Z, RHO).value
    hi = 2.0 * th.alpha_gd_like(Z, RHO).value
    return np.geomspace(lo, hi, n_alpha), S.time_grid(TAU_MAX, n_tau)


def naive_one(alpha: float, taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """One solve_ivp call on the full d-dimensional system; returns j† (T,), the gap between
    the two largest θ_j at each grid point (T,) and info."""
    f = C.balanced_field(2, "sam-l2", "numpy", log=True)
    z = Z

    def rhs(t, th_):
        N = np.sqrt(np.sum(f.summand(z, th_)))
        return f.field(z, th_, N, RHO)

    n_stop = float(MF.l2_certificate_levels(z, RHO, 1e-10)["stop"])  # the batched engine's collapse stop (C5)

    def collapse(t, th_):
        return np.sqrt(np.sum(f.summand(z, th_))) - n_stop

    collapse.terminal = True
    collapse.direction = -1
    sol = solve_ivp(rhs, (0.0, taus[-1]), np.full(z.size, np.log(alpha)), method="RK45", t_eval=taus,
                    rtol=RTOL, atol=ATOL, events=collapse)
    j = np.zeros(taus.size, dtype=np.int16)
    gap = np.full(taus.size, np.inf)
    k = sol.t.size
    if k:
        j[:k] = np.argmax(sol.y, axis=0) + 1
        top2 = np.sort(sol.y, axis=0)[-2:]
        gap[:k] = top2[1] - top2[0]
    return j, gap, {"status": int(sol.status), "nfev": int(sol.nfev), "collapsed": bool(sol.t_events[0].size)}


def naive(alphas: np.ndarray, taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, list]:
    J = np.zeros((alphas.size, taus.size), dtype=np.int16)
    G = np.zeros((alphas.size, taus.size))
    infos = []
    t0 = time.perf_counter()
    for i, a in enumerate(alphas):
        J[i], G[i], info = naive_one(float(a), taus)
        infos.append(info)
    return J, G, time.perf_counter() - t0, infos


def explain(Jb: np.ndarray, Jn: np.ndarray, gap: np.ndarray, full_rows: np.ndarray) -> dict:
    """Where the batched and naive heatmaps differ, and why."""
    diff = Jb != Jn
    cells = np.argwhere(diff)
    near_switch = 0
    for i, k in cells:
        neigh = [Jn[i, max(k - 1, 0)], Jn[i, min(k + 1, Jn.shape[1] - 1)], Jb[i, max(k - 1, 0)],
                 Jb[i, min(k + 1, Jb.shape[1] - 1)]]
        if i > 0:
            neigh.append(Jn[i - 1, k])
        if i + 1 < Jn.shape[0]:
            neigh.append(Jn[i + 1, k])
        if any(v != Jn[i, k] or v != Jb[i, k] for v in neigh):
            near_switch += 1
    gaps = gap[diff]
    zero_vs = int(np.sum(diff & ((Jb == 0) | (Jn == 0))))
    return {"cells": int(diff.size), "differ": int(diff.sum()), "fraction_equal": float(1 - diff.mean()),
            "differ_next_to_a_switch": near_switch, "differ_at_collapse_edge": zero_vs,
            "max_theta_gap_where_differ": float(np.max(gaps[np.isfinite(gaps)])) if np.isfinite(gaps).any() else None,
            "median_theta_gap_all_cells": float(np.median(gap[np.isfinite(gap)])) if full_rows.size else None,
            "min_theta_gap_all_cells": float(np.min(gap[np.isfinite(gap)])) if full_rows.size else None}


def _timed(fn, repeat: int):
    ts, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return out, float(np.median(ts)), ts


def run_case(name: str, baseline_alphas: int | None, repeat: int = 3) -> dict:
    n_a, n_t = CASES[name]
    alphas, taus = grids(n_a, n_t)
    hm = dict(optimizer="sam-l2", rho=RHO, progress=False)

    def batched(array_backend, backend="serial", method="auto", a=alphas, t=taus):
        return S_heatmap(Z, alphas=a, times=t, backend=backend, method=method,
                         opts=S.RunOptions(rtol=RTOL, atol=ATOL, array_backend=array_backend), **hm)

    # compile everything once, outside the timings
    for ab in ("numba", "numpy"):
        batched(ab, a=alphas[:2], t=taus[:3])
    batched("numpy", method="balanced", a=alphas[:2], t=taus[:3])
    naive_one(float(alphas[0]), taus[:3])

    hk, t_kernel, ts_kernel = _timed(lambda: batched("numba"), repeat)
    hk2, t_kernel_all, ts_kernel_all = _timed(lambda: batched("numba", backend="processes"), repeat)
    hb, t_batched, ts_batched = _timed(lambda: batched("numpy"), repeat)
    hf, t_full, ts_full = _timed(lambda: batched("numpy", method="balanced"), max(1, repeat // 3))
    threads = hk2.meta["run"]["workers"]

    if baseline_alphas and baseline_alphas < n_a:
        rows = np.unique(np.linspace(0, n_a - 1, baseline_alphas).round().astype(int))
    else:
        rows = np.arange(n_a)
    Jn, gap, t_naive_rows, infos = naive(alphas[rows], taus)
    t_naive = t_naive_rows * n_a / rows.size
    Jk, Jb, Jf = hk["jdag"][rows], hb["jdag"][rows], hf["jdag"][rows]
    return {
        "case": name, "n_alpha": n_a, "n_tau": n_t, "alpha_range": [float(alphas[0]), float(alphas[-1])],
        "alpha_all_shrink": th.alpha_all_shrink(Z, RHO).value, "alpha_gd_like": th.alpha_gd_like(Z, RHO).value,
        "tau_max": TAU_MAX, "rtol": RTOL, "atol": ATOL, "repeat": repeat, "kernel_threads_all": threads,
        "seconds": {"kernel": t_kernel, "kernel_all_threads": t_kernel_all, "batched_numpy": t_batched,
                    "batched_full": t_full, "naive": t_naive, "naive_measured": t_naive_rows},
        "seconds_all_repeats": {"kernel": ts_kernel, "kernel_all_threads": ts_kernel_all,
                                "batched_numpy": ts_batched, "batched_full": ts_full},
        "naive_rows": int(rows.size), "naive_extrapolated": bool(rows.size < n_a),
        "speedup": {"kernel": t_naive / t_kernel, "kernel_all_threads": t_naive / t_kernel_all,
                    "batched_numpy": t_naive / t_batched, "batched_full": t_naive / t_full},
        "agreement": {"kernel": explain(Jk, Jn, gap, rows), "batched_numpy": explain(Jb, Jn, gap, rows),
                      "batched_full": explain(Jf, Jn, gap, rows),
                      "kernel_vs_numpy_all_rows": float(np.mean(hk["jdag"] == hb["jdag"])),
                      "kernel_threads_bitwise_equal": bool(np.array_equal(hk["jdag"], hk2["jdag"])
                                                           and np.array_equal(hk["I"], hk2["I"])),
                      "reduced_vs_full_all_rows": float(np.mean(hb["jdag"] == hf["jdag"]))},
        "batched_status": hk.meta["status_counts"], "batched_steps_max": int(hk["steps"].max()),
        # per member: 6 new stages per attempted step (FSAL) + the start and the initial-step probe
        "kernel_field_evaluations": int(np.sum(6 * hk["steps"] + 2)),
        "kernel_steps_mean": float(np.mean(hk["steps"])),
        "kernel_ns_per_exp": 1e9 * t_kernel / (int(np.sum(6 * hk["steps"] + 2)) * Z.size),
        "naive_collapsed": int(sum(i["collapsed"] for i in infos)), "naive_nfev_total": int(sum(i["nfev"] for i in infos)),
    }


def markdown(results: list[dict], command: str) -> str:
    import scipy

    try:
        import numba

        nb = f", numba {numba.__version__}"
    except ImportError:  # pragma: no cover
        nb = ""
    lines = ["# Benchmarks", "", "## Batched j† heatmap against a naive `solve_ivp` loop", "",
             "Produced by (one process, back to back, compile time excluded):", "", "```bash", command, "```", "",
             f"Machine: {platform.platform()}, Python {platform.python_version()}, numpy {np.__version__}, "
             f"scipy {scipy.__version__}{nb}; the host is shared (2 cores, other jobs running), so absolute times "
             "are noisy; the ratios are what this file reports (batched times: median of "
             f"{results[0]['repeat']} runs; the naive loop: one run).", "",
             "Problem: ℓ2-SAM, L = 2, one example z = linspace(1, 2, 100), ρ = 1, τ ∈ (0, 20], rtol = 1e-8, "
             "atol = 1e-10, α log-spaced from alpha_all_shrink/2 to 2·alpha_gd_like (all three regimes of C5). "
             "See `benchmarks/bench_heatmap.py` for the exact methods.", "",
             "Methods: **kernel** = `sweep.heatmap(..., backend=\"serial\")` with numba installed (the default "
             "array backend `auto`): C4's reduced ODE, compiled per-member Dormand–Prince, one thread — the "
             "same single core as the naive loop; *kernel, all threads* = the same with `backend=\"processes\"` "
             "(the kernel runs its members on every core as threads); *numpy* = the vectorised engine "
             "(`--array-backend numpy`, the fallback without numba); *full d-dim* = the numpy engine on the full "
             "100-dimensional balanced system (what batching alone buys); *naive* = a Python loop of `solve_ivp` "
             "(RK45), one call per α, full d-dimensional system, same rtol/atol.", "",
             "| case | cells | naive loop | kernel (1 thread) | kernel (all threads) | numpy engine | full d-dim "
             "| cells equal to naive (kernel / numpy / full) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        s, a, x = r["seconds"], r["agreement"], r["speedup"]
        naive = f"{s['naive']:.1f} s" + (f" (extrapolated from {r['naive_rows']} α: {s['naive_measured']:.1f} s)"
                                          if r["naive_extrapolated"] else "")
        lines.append(f"| ({r['case']}) {r['n_alpha']} α × {r['n_tau']} τ | {r['n_alpha'] * r['n_tau']} | {naive} | "
                     f"{s['kernel']:.4f} s, **{x['kernel']:.0f}×** | "
                     f"{s['kernel_all_threads']:.4f} s, {x['kernel_all_threads']:.0f}× "
                     f"({r['kernel_threads_all']} threads) | "
                     f"{s['batched_numpy']:.3f} s, {x['batched_numpy']:.0f}× | "
                     f"{s['batched_full']:.2f} s, {x['batched_full']:.1f}× | "
                     f"{100 * a['kernel']['fraction_equal']:.3f} % / {100 * a['batched_numpy']['fraction_equal']:.3f} % / "
                     f"{100 * a['batched_full']['fraction_equal']:.3f} % |")
    lines += ["", "Disagreements (against the naive loop, on the α rows it ran):", ""]
    for r in results:
        for k in ("kernel", "batched_numpy", "batched_full"):
            a = r["agreement"][k]
            if a["differ"] == 0:
                lines.append(f"- ({r['case']}) {k}: no cell of {a['cells']} differs; the closest call is a cell where "
                             f"the two largest θ_j of the naive solution are {a['min_theta_gap_all_cells']:.2g} apart "
                             f"(median {a['median_theta_gap_all_cells']:.3g}); the two methods agree even there.")
                continue
            lines.append(f"- ({r['case']}) {k}: {a['differ']} of {a['cells']} cells differ; "
                         f"{a['differ_next_to_a_switch']} of them are next to a switch of j† (in τ or α), "
                         f"{a['differ_at_collapse_edge']} at the collapse edge (0 vs an index); the largest gap "
                         f"between the two largest θ_j of the naive solution at a differing cell is "
                         f"{a['max_theta_gap_where_differ']} (median over all cells: "
                         f"{a['median_theta_gap_all_cells']:.3g}).")
        ag = r["agreement"]
        lines.append(f"- ({r['case']}) all rows: kernel vs numpy engine {100 * ag['kernel_vs_numpy_all_rows']:.3f} % "
                     f"equal; kernel on 1 vs {r['kernel_threads_all']} threads bitwise equal: "
                     f"{ag['kernel_threads_bitwise_equal']}; reduced vs full d-dim "
                     f"{100 * ag['reduced_vs_full_all_rows']:.3f} %. Statuses: {r['batched_status']}; the naive loop "
                     f"stopped at collapse for {r['naive_collapsed']} α.")
    met = [r["speedup"]["kernel"] >= 50 and r["agreement"]["kernel"]["fraction_equal"] >= 0.999 for r in results]
    lines += ["", "Target: ≥ 50× faster with ≥ 99.9 % of cells equal, measured on ONE thread against "
              "the one-thread naive loop — "
              + "; ".join(f"case ({r['case']}): {'met' if ok else 'NOT met'} "
                          f"({r['speedup']['kernel']:.0f}×, {100 * r['agreement']['kernel']['fraction_equal']:.3f} %)"
                          for r, ok in zip(results, met)) + ".", "",
              "Where the time goes. The naive loop makes "
              + "; ".join(f"{r['naive_nfev_total'] / r['naive_rows']:.0f} field evaluations per α at "
                          f"{1e6 * r['seconds']['naive_measured'] / r['naive_nfev_total']:.0f} µs each in case "
                          f"({r['case']})" for r in results)
              + " (RK45 with error control on 100 components; the time is mostly Python and numpy call overhead). "
              "The reduced ODE needs "
              + " and ".join(f"{r['kernel_steps_mean']:.0f}" for r in results)
              + " attempted steps per α on average (one controlled component besides the clock). What is left is arithmetic that every "
              "method must do: ln N(τ, I) is a log-sum over the d = 100 features at every stage of every member "
              "(the reduction removes the d-dimensional state, not the sum over d): "
              + "; ".join(f"case ({r['case']}): {r['kernel_field_evaluations']} field evaluations × d = {Z.size} = "
                          f"{r['kernel_field_evaluations'] * Z.size / 1e6:.1f} million exponentials, "
                          f"{r['kernel_ns_per_exp']:.1f} ns each in the one-thread kernel (everything included)"
                          for r in results) + ". The numpy engine pays numpy's per-call overhead at every field evaluation (its loop runs until the "
              "slowest member is done: " + " and ".join(f"{r['batched_steps_max']}" for r in results)
              + " iterations × 6 evaluations, each a dozen or more array calls) and makes five passes over a (members × d) array per "
              "stage (exponent, max, shift, exp, sum), plus safeguarded Newton on the dense output at every "
              "(member, grid point); so it is limited by overhead for small batches and by memory traffic for "
              "large ones. The compiled kernel makes one pass per stage in registers and one Newton solve per "
              "cell with no temporaries; its cost is essentially the exponentials (libm's scalar exp). It runs "
              "the same method as the numpy engine (same tableau, error norm, step control, clock, events), so "
              "it takes the same steps: j† equal in every cell, I equal to rounding (tests/test_kernels.py bounds "
              "it by 1e-9 relative; the largest differences sit at grid points just before a collapse, where "
              "dI/dτ = 1/N → ∞ amplifies the last bits of exp). A higher-order pair does not pay here (measured "
              "once with solve_ivp on 7 α values, not by this script): scipy's DOP853 takes about 17 steps per α "
              "against RK45's 36 but as many field evaluations (about 210–260 against 180–250, before its 3 extra "
              "stages for dense output). `--array-backend torch` on a GPU is unmeasured (no GPU was lent to this task).", "",
              "Raw numbers: `benchmarks/heatmap_results.json`.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", choices=["i", "ii", "all"], default="i")
    p.add_argument("--baseline-alphas", type=int, default=None,
                   help="run the naive loop on this many evenly spaced α and extrapolate its time")
    p.add_argument("--repeat", type=int, default=3, help="runs of each batched method (median reported)")
    p.add_argument("--write", metavar="RESULTS.md", help="write the markdown report here (and the JSON beside it)")
    args = p.parse_args(argv)
    cases = ["i", "ii"] if args.case == "all" else [args.case]
    results = []
    for c in cases:
        r = run_case(c, args.baseline_alphas if c == "ii" else None, repeat=max(1, args.repeat))
        results.append(r)
        print(json.dumps(r, indent=2), file=sys.stderr)
    command = "PYTHONPATH=. python benchmarks/bench_heatmap.py " + " ".join(argv if argv is not None else sys.argv[1:])
    md = markdown(results, command)
    print(md)
    if args.write:
        out = Path(args.write)
        out.write_text(md)
        out.with_name("heatmap_results.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

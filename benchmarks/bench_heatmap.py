"""Benchmark: the batched j† heatmap against the naive loop, in one process.

Problem: ℓ2-SAM, L = 2, one example z = linspace(1, 2, 100), ρ = 1, uniform α on a log grid
that covers the three regimes of C5 (from alpha_all_shrink/2 to 2·alpha_gd_like), τ on
(0, 20]. Cases: (i) 100 α × 200 τ, (ii) 1000 α × 1000 τ.

- batched: ``sweep.heatmap(..., backend="serial")`` — C4's reduced scalar ODE, every α at
  once (:class:`theorycheck.batch.ReducedL2`).
- batched-full: the same engine on the full d-dimensional balanced system in θ = ln u
  (:class:`theorycheck.batch.BalancedLog`): how much comes from batching alone.
- naive: a Python loop of ``scipy.integrate.solve_ivp`` (RK45), one call per α, on the full
  d-dimensional balanced ℓ2-SAM field in θ = ln u from ``compile.balanced_field(2, "sam-l2",
  log=True)`` (N = sqrt(Σ summand)), the same rtol/atol, ``t_eval`` = the τ grid, and the
  same collapse stop as the batched engine (a terminal event at N = 1e-10·ρ m²/(2 z_max));
  without it the loop grinds towards the singularity at N = 0.

All methods are compiled (lambdify) before timing. Agreement: the fraction of cells where
j† is equal; every disagreeing cell is explained by the gap between the two largest θ_j of
the naive solution there (a near-tie: a switch boundary) and by whether j† changes at a
neighbouring cell. Wall times vary with machine load: the ratio is measured in one process,
back to back. ``--baseline-alphas K`` runs the naive loop on K evenly spaced α only and
extrapolates its time (said so in the output).

Run: ``PYTHONPATH=. python benchmarks/bench_heatmap.py --case all --write benchmarks/RESULTS.md``
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from theorycheck import compile as C
from theorycheck import sweep as S
from theorycheck import thresholds as th

Z = np.linspace(1.0, 2.0, 100)
RHO = 1.0
TAU_MAX = 20.0
RTOL, ATOL = 1e-8, 1e-10
CASES = {"i": (100, 200), "ii": (1000, 1000)}


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

    m = np.abs(z[z != 0]).min()
    n_stop = 1e-10 * RHO * m**2 / (2 * z.max())  # batch.ReducedL2's collapse stop, collapse_tol = 1e-10

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


def run_case(name: str, baseline_alphas: int | None) -> dict:
    n_a, n_t = CASES[name]
    alphas, taus = grids(n_a, n_t)
    # compile everything once, outside the timings
    S.heatmap(Z, optimizer="sam-l2", rho=RHO, alphas=alphas[:2], times=taus[:3], backend="serial", progress=False)
    S.heatmap(Z, optimizer="sam-l2", rho=RHO, alphas=alphas[:2], times=taus[:3], backend="serial", progress=False,
              method="balanced")
    naive_one(float(alphas[0]), taus[:3])

    opts = S.RunOptions(rtol=RTOL, atol=ATOL)
    t0 = time.perf_counter()
    hb = S.heatmap(Z, optimizer="sam-l2", rho=RHO, alphas=alphas, times=taus, backend="serial", opts=opts,
                   progress=False)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    hf = S.heatmap(Z, optimizer="sam-l2", rho=RHO, alphas=alphas, times=taus, backend="serial", opts=opts,
                   progress=False, method="balanced")
    t_full = time.perf_counter() - t0

    if baseline_alphas and baseline_alphas < n_a:
        rows = np.unique(np.linspace(0, n_a - 1, baseline_alphas).round().astype(int))
    else:
        rows = np.arange(n_a)
    Jn, gap, t_naive_rows, infos = naive(alphas[rows], taus)
    t_naive = t_naive_rows * n_a / rows.size
    Jb, Jf = hb["jdag"][rows], hf["jdag"][rows]
    return {
        "case": name, "n_alpha": n_a, "n_tau": n_t, "alpha_range": [float(alphas[0]), float(alphas[-1])],
        "alpha_all_shrink": th.alpha_all_shrink(Z, RHO).value, "alpha_gd_like": th.alpha_gd_like(Z, RHO).value,
        "tau_max": TAU_MAX, "rtol": RTOL, "atol": ATOL,
        "seconds": {"batched_reduced": t_batched, "batched_full": t_full, "naive": t_naive,
                    "naive_measured": t_naive_rows},
        "naive_rows": int(rows.size), "naive_extrapolated": bool(rows.size < n_a),
        "speedup": {"batched_reduced": t_naive / t_batched, "batched_full": t_naive / t_full},
        "agreement": {"batched_reduced": explain(Jb, Jn, gap, rows), "batched_full": explain(Jf, Jn, gap, rows),
                      "reduced_vs_full_all_rows": float(np.mean(hb["jdag"] == hf["jdag"]))},
        "batched_status": hb.meta["status_counts"], "batched_steps_max": int(hb["steps"].max()),
        "naive_collapsed": int(sum(i["collapsed"] for i in infos)), "naive_nfev_total": int(sum(i["nfev"] for i in infos)),
    }


def markdown(results: list[dict], command: str) -> str:
    import scipy

    lines = ["# Benchmarks", "", "## Batched j† heatmap against a naive `solve_ivp` loop", "",
             "Produced by (one process, back to back, compile time excluded):", "", "```bash", command, "```", "",
             f"Machine: {platform.platform()}, Python {platform.python_version()}, numpy {np.__version__}, "
             f"scipy {scipy.__version__}; the host is shared (2 cores, other jobs running), so absolute times "
             "are noisy; the ratios are what this file reports.", "",
             "Problem: ℓ2-SAM, L = 2, one example z = linspace(1, 2, 100), ρ = 1, τ ∈ (0, 20], rtol = 1e-8, "
             "atol = 1e-10, α log-spaced from alpha_all_shrink/2 to 2·alpha_gd_like (all three regimes of C5). "
             "See `benchmarks/bench_heatmap.py` for the exact methods.", "",
             "| case | cells | batched (reduced ODE) | batched (full d-dim) | naive loop | speed-up reduced | "
             "speed-up full | cells equal (reduced / full) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        s, a = r["seconds"], r["agreement"]
        naive = f"{s['naive']:.1f} s" + (f" (extrapolated from {r['naive_rows']} α: {s['naive_measured']:.1f} s)"
                                          if r["naive_extrapolated"] else "")
        lines.append(f"| ({r['case']}) {r['n_alpha']} α × {r['n_tau']} τ | {r['n_alpha'] * r['n_tau']} | "
                     f"{s['batched_reduced']:.3f} s | {s['batched_full']:.2f} s | {naive} | "
                     f"**{r['speedup']['batched_reduced']:.0f}×** | {r['speedup']['batched_full']:.1f}× | "
                     f"{100 * a['batched_reduced']['fraction_equal']:.3f} % / "
                     f"{100 * a['batched_full']['fraction_equal']:.3f} % |")
    lines += ["", "Disagreements (against the naive loop, on the α rows it ran):", ""]
    for r in results:
        for k in ("batched_reduced", "batched_full"):
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
        lines.append(f"- ({r['case']}) reduced vs full batched, all rows: "
                     f"{100 * r['agreement']['reduced_vs_full_all_rows']:.3f} % equal. Batched statuses: "
                     f"{r['batched_status']}; the naive loop stopped at collapse for {r['naive_collapsed']} α.")
    met = [r["speedup"]["batched_reduced"] >= 50 and r["agreement"]["batched_reduced"]["fraction_equal"] >= 0.999
           for r in results]
    lines += ["", "Target of issue 5: ≥ 50× faster with ≥ 99.9 % of cells equal — "
              + "; ".join(f"case ({r['case']}): {'met' if ok else 'NOT met'} "
                          f"({r['speedup']['batched_reduced']:.0f}×, "
                          f"{100 * r['agreement']['batched_reduced']['fraction_equal']:.3f} %)"
                          for r, ok in zip(results, met)) + ".", "",
              "Where the time goes: the naive loop takes about 130 RK45 steps per α (error control on 100 "
              "components) at about 20 µs of Python overhead per field evaluation; the reduced ODE needs about "
              "36 steps per α (one controlled component) and the batch pays the Python overhead once per step "
              "for all α. What is left is arithmetic that both methods must do: ln N(τ, I) is a log-sum over the "
              "d = 100 features at every stage of every member (the reduction removes the d-dimensional state, "
              "not the sum over d). With numpy on one core the log-sum alone costs about 0.4 µs per (member, stage) "
              "here (about 1.2 µs with everything else, measured with cProfile on case ii), so the ratio grows with the batch (case ii) and is limited by the per-call overhead of numpy for "
              "small batches (case i). With one ρ the log-sum's exponent K + τA + IG is one elementwise pass "
              "(einsum, no BLAS) into reused buffers, and the dense output gathers each (member, grid point) once; "
              "both are bitwise equal to the plain expressions. A higher-order pair does not pay here: on this "
              "problem scipy's DOP853 takes about 17 steps per α against RK45's 36 but as many field evaluations "
              "(about 210–260 against 180–250, before its 3 extra stages for dense output), and the cost is per "
              "evaluation and per cell, not per step. `--array-backend torch` on a GPU moves that floor; not measured here (no "
              "GPU on this machine).", "",
              "Raw numbers: `benchmarks/heatmap_results.json`.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", choices=["i", "ii", "all"], default="i")
    p.add_argument("--baseline-alphas", type=int, default=None,
                   help="run the naive loop on this many evenly spaced α and extrapolate its time")
    p.add_argument("--write", metavar="RESULTS.md", help="write the markdown report here (and the JSON beside it)")
    args = p.parse_args(argv)
    cases = ["i", "ii"] if args.case == "all" else [args.case]
    results = []
    for c in cases:
        r = run_case(c, args.baseline_alphas if c == "ii" else None)
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

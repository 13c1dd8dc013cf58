"""Benchmark: the batched pixel flows against a per-α loop of the same integrator, one process.

Problem: MNIST 0 vs 1, the full training split (n = 12,665, d = 784; 617 pixels are not always 0),
raw intensities, the doubled diagonal network at L = 2, the rescaled flow (τ), ρ = 1 for ℓ2-SAM
and ρ/√P for ℓ∞-SAM; 3 optimizers × 8 α geometric in [0.015, 1.5] (MNIST 0-vs-1 subsets put
α_c(Z) ≈ 0.04 and α_gd(Z) ≈ 0.5: the grid spans collapse, intermediate and GD-like), every run
stopped at training loss 1e-2 (or on its step budget ``--max-steps``), 120 output times.

- batched: :func:`theorycheck.batched.pixels.run_pixels` with all 24 members (one matrix
  product per field evaluation for all running members);
- loop: the same function called once per member (24 calls: the same integrator, the same
  tolerances and budgets, the products become matrix-vector products).

Peak memory: tracemalloc's peak over each phase (numpy's allocations are traced), and the
process's maximum resident set size at the end. Agreement: the largest relative difference of β
at each run's last checkpoint between the two (BLAS blocking changes the last bits).

Run (one BLAS thread: on a shared 2-core machine more threads are slower):
``OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_pixels.py --write benchmarks/pixels_results.json``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import time
import tracemalloc

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-train", type=int, default=None, help="subset (default: the full 0-vs-1 split)")
    ap.add_argument("--max-steps", type=int, default=600)
    ap.add_argument("--loop-members", type=int, default=None, help="run the loop on every k-th member only (extrapolated)")
    ap.add_argument("--write", default=None)
    a = ap.parse_args()
    from theorycheck.batched.pixels import run_pixels
    from theorycheck.pixel_task import pixel_task

    load0 = os.getloadavg()
    task = pixel_task("mnist", (0, 1), n_train=a.n_train, n_test=None)
    Z = task.Z
    d_act = int(task.active.sum())
    alphas = np.geomspace(0.015, 1.5, 8)
    opts, als, rhos = [], [], []
    for op in ("gd", "sam-l2", "sam-linf"):
        for al in alphas:
            opts.append(op)
            als.append(float(al))
            rhos.append(0.0 if op == "gd" else 1.0 if op == "sam-l2" else 1.0 / math.sqrt(2 * 2 * d_act))
    grid = np.concatenate([[0.0], np.geomspace(2e-3, 200.0, 119)])
    kw = dict(depth=2, time_kind="tau", grid=grid, loss_target=1e-2, max_steps=a.max_steps)
    run_pixels(Z[:50], opts[:3], als[:3], rhos[:3], **{**kw, "max_steps": 5})  # compile (lambdify) before timing
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    batched = run_pixels(Z, opts, als, rhos, progress="batched", **kw)
    t_batched, c_batched = time.perf_counter() - t0, time.process_time() - c0
    peak_batched = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    members = list(range(len(opts)))[:: (a.loop_members or 1)]
    t0, c0 = time.perf_counter(), time.process_time()
    singles = {}
    for b in members:
        singles[b] = run_pixels(Z, [opts[b]], [als[b]], [rhos[b]], progress=f"loop {b}", **kw)
    t_loop, c_loop = time.perf_counter() - t0, time.process_time() - c0
    peak_loop = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    scale = len(opts) / len(members)
    diffs, same_status = [], 0
    for b, s in singles.items():
        kb, ks = batched.last(b), s.last(0)
        same_status += str(batched.status[b]) == str(s.status[0])
        if kb == ks and kb >= 0:
            x, y = batched.beta[b, kb], s.beta[0, ks]
            diffs.append(float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300)))
    res = {
        "command": "OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_pixels.py"
                   + (f" --n-train {a.n_train}" if a.n_train else "") + f" --max-steps {a.max_steps}",
        "machine": f"{platform.platform()}, Python {platform.python_version()}, numpy {np.__version__}, "
                   f"{os.cpu_count()} cores (shared)",
        "load_average_before": load0, "load_average_after": os.getloadavg(),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "n": int(Z.shape[0]), "d": int(Z.shape[1]), "d_active": d_act, "members": len(opts),
        "alphas": alphas.tolist(), "loss_target": 1e-2, "max_steps": a.max_steps,
        "batched_seconds": t_batched, "loop_seconds": t_loop * scale, "loop_members_run": len(members),
        "loop_extrapolated": scale != 1, "speedup": t_loop * scale / t_batched,
        "total_seconds": t_batched + t_loop,
        "cpu_seconds": {"batched": c_batched, "loop": c_loop * scale, "speedup": c_loop * scale / c_batched},
        "peak_traced_bytes": {"batched": peak_batched, "loop": peak_loop},
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "status_batched": {o: [str(batched.status[b]) for b in range(len(opts)) if opts[b] == o] for o in set(opts)},
        "steps_batched": batched.steps.tolist(),
        "status_equal_loop": f"{same_status}/{len(members)}",
        "max_relative_beta_difference": max(diffs) if diffs else None,
        "members_compared": len(diffs),
        "final_loss_batched": [float(batched.loss[b, batched.last(b)]) for b in range(len(opts))],
    }
    print(json.dumps(res, indent=1))
    if a.write:
        with open(a.write, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()

"""Benchmark: the batched pixel flows against a per-α loop of the same integrator, one process.

Problem: MNIST 0 vs 1, the full training split (n = 12,665, d = 784; 617 pixels are not always 0),
raw intensities, the doubled diagonal network at L = 2, the rescaled flow (τ), ρ = 1 for ℓ2-SAM
and ρ/√P for ℓ∞-SAM; 3 optimizers × 8 α geometric in [0.015, 1.5] (MNIST 0-vs-1 subsets put
α_c(Z) ≈ 0.04 and α_gd(Z) ≈ 0.5: the grid spans collapse, intermediate and GD-like), every run
stopped at training loss 1e-2, at τ = 200, or on its step budget ``--max-steps``; 120 output times.

- batched: :func:`theorycheck.batched.pixels.run_pixels` with all 24 members (the products with Z
  for all running members at once; ``products="auto"``: a CSR copy of Z for up to 32 rows);
- batched, dense products (``--no-dense`` skips it): the same call with ``products="dense"``
  (BLAS on the dense Z at every width) — what the CSR products gain;
- loop (the baseline): the same function, same arguments (``products="auto"``), called once per
  member — the same Dormand–Prince integrator, tolerances, budgets, clock and events; its
  products are matrix–vector products (scipy's CSR one, the fastest kind measured for one row).
  ``--loop-members k`` runs every k-th member only (``--no-loop``: none) and extrapolates by member-steps (the time per
  member-step of the members run × the member-steps of all, from the batched run, which takes
  the same steps); the JSON says whether it did.
- products: the cost of one product β Zᵀ plus one w Z at several batch widths, for every kind —
  what bounds the ratio (a batch of B members pays products(B), the loop B × products(1)).

Memory: tracemalloc's peak over each phase (numpy's allocations; torch's CPU allocator is not
traced) and the resident-set peak of each phase (VmHWM, reset between phases through
/proc/self/clear_refs where Linux allows it). Agreement: the largest relative difference of β at
each run's last checkpoint between batched and loop (summation order changes the last bits).

Run (one thread: on a shared 2-core machine more threads are slower; the host load is recorded):
``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_pixels.py --write benchmarks/pixels_results.json``
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


def _hwm_kib() -> int | None:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class Phase:
    """Wall, CPU, traced peak and resident peak of a block."""

    def __enter__(self):
        self.reset = _reset_hwm()
        tracemalloc.reset_peak()
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.t0, time.process_time() - self.c0
        self.traced = tracemalloc.get_traced_memory()[1]
        self.rss = _hwm_kib()
        return False

    def row(self) -> dict:
        return {"wall_seconds": self.wall, "cpu_seconds": self.cpu, "peak_traced_bytes": self.traced,
                "peak_rss_kib": self.rss, "peak_rss_is_of_this_phase": self.reset}


def product_costs(Za: np.ndarray, widths=(1, 2, 4, 8, 16, 24, 32), repeat: int = 5) -> dict:
    """CPU ms of one β Zᵀ plus one w Z per kind and width (median of ``repeat``)."""
    from theorycheck.batched.ops import get_ops
    from theorycheck.batched.pixels import Products

    rng = np.random.default_rng(0)
    n, d = Za.shape
    P = Products(Za, get_ops("numpy"), "sparse")
    P.dense()
    routes = {"dense": lambda X, Y: (X @ P.dense()[1], Y @ P.dense()[0]),
              "csr-scipy": lambda X, Y: (P._csr("csr-scipy", P.S, None, X), P._csr("csr-scipy", P.ST, None, Y))}
    if P.tS is not None:
        routes["csr-torch"] = lambda X, Y: (P._csr("csr-torch", P.S, P.tS, X), P._csr("csr-torch", P.ST, P.tST, Y))
    out = {}
    for B in widths:
        X, Y = rng.standard_normal((B, d)), rng.standard_normal((B, n))
        row = {}
        for name, f in routes.items():
            f(X, Y)
            ts = []
            for _ in range(repeat):
                c0 = time.process_time()
                f(X, Y)
                ts.append(time.process_time() - c0)
            row[name] = 1e3 * float(np.median(ts))
        out[str(B)] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-train", type=int, default=None, help="subset (default: the full 0-vs-1 split)")
    ap.add_argument("--max-steps", type=int, default=600)
    ap.add_argument("--loop-members", type=int, default=None,
                    help="run the loop on every k-th member only (extrapolated by member-steps)")
    ap.add_argument("--no-dense", action="store_true", help="skip the batched run with dense products")
    ap.add_argument("--no-loop", action="store_true", help="skip the loop (the batched runs only)")
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
    # compile (lambdify) and import torch (its CSR kernel) before timing
    run_pixels(Z[:50], opts[:3], als[:3], rhos[:3], **{**kw, "max_steps": 5}, products="sparse")
    rss_load = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before any phase (data loaded)
    tracemalloc.start()
    with Phase() as ph_b:
        batched = run_pixels(Z, opts, als, rhos, progress="batched", **kw)
    dense = None
    if not a.no_dense:
        with Phase() as ph_d:
            dense = run_pixels(Z, opts, als, rhos, progress="batched, dense products", products="dense", **kw)
    members = [] if a.no_loop else list(range(len(opts)))[:: (a.loop_members or 1)]
    singles = {}
    with Phase() as ph_l:
        for b in members:
            singles[b] = run_pixels(Z, [opts[b]], [als[b]], [rhos[b]], progress=f"loop {b}", **kw)
    tracemalloc.stop()
    costs = product_costs(np.ascontiguousarray(Z[:, task.active]))
    steps = batched.steps.astype(float)
    scale = float(steps.sum() / sum(steps[b] for b in members)) if members else math.nan
    loop_wall, loop_cpu = ph_l.wall * scale, ph_l.cpu * scale
    phases = [ph_b, ph_l] + ([] if dense is None else [ph_d])
    diffs, same_status = [], 0
    for b, s in singles.items():
        kb, ks = batched.last(b), s.last(0)
        same_status += str(batched.status[b]) == str(s.status[0])
        if kb == ks and kb >= 0:
            x, y = batched.beta[b, kb], s.beta[0, ks]
            diffs.append(float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300)))
    # the batch's width over its steps: at step k, the members with more than k steps are running
    width = [int(np.sum(batched.steps > k)) for k in range(int(batched.steps.max()))]
    res = {
        "command": "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_pixels.py"
                   + (f" --n-train {a.n_train}" if a.n_train else "") + f" --max-steps {a.max_steps}"
                   + (f" --loop-members {a.loop_members}" if a.loop_members else "")
                   + (" --no-dense" if a.no_dense else "") + (" --no-loop" if a.no_loop else ""),
        "baseline": "run_pixels called once per member with the batched call's arguments (the same integrator, "
                    "tolerances, budgets and product selection: one row goes through scipy's CSR matrix-vector product)",
        "machine": f"{platform.platform()}, Python {platform.python_version()}, numpy {np.__version__}, "
                   f"{os.cpu_count()} cores (shared with other jobs)",
        "load_average_before": load0, "load_average_after": os.getloadavg(),
        "threads": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
        "n": int(Z.shape[0]), "d": int(Z.shape[1]), "d_active": d_act, "members": len(opts),
        "density_active": float(batched.meta["products"]["density"]),
        "alphas": alphas.tolist(), "loss_target": 1e-2, "max_steps": a.max_steps,
        "batched": {**ph_b.row(), "product_calls": batched.meta["products"]["calls"]},
        "batched_dense_products": None if dense is None else {**ph_d.row(),
                                                               "product_calls": dense.meta["products"]["calls"]},
        "loop": None if not members else {
            **ph_l.row(), "members_run": len(members), "members": members, "extrapolated": len(members) != len(opts),
            "extrapolation": "time per member-step × the member-steps of all members",
            "wall_seconds_all": loop_wall, "cpu_seconds_all": loop_cpu},
        "speedup": None if not members else {"wall": loop_wall / ph_b.wall, "cpu": loop_cpu / ph_b.cpu},
        "csr_gain": None if dense is None else {"wall": ph_d.wall / ph_b.wall, "cpu": ph_d.cpu / ph_b.cpu},
        "batch_width": {"member_steps": int(steps.sum()), "steps": int(steps.max()),
                        "mean_width": float(steps.sum() / steps.max()),
                        "steps_with_width_le_8": int(sum(w <= 8 for w in width))},
        "product_ms_cpu": costs,
        "peak_rss_kib": {"after_loading_data": rss_load,
                         "runs": max((p.rss for p in phases if p.rss is not None), default=None)},
        "status_batched": {o: [str(batched.status[b]) for b in range(len(opts)) if opts[b] == o]
                           for o in ("gd", "sam-l2", "sam-linf")},
        "steps_batched": batched.steps.tolist(),
        "status_equal_loop": f"{same_status}/{len(members)}",
        "status_equal_dense": None if dense is None else
        f"{sum(str(x) == str(y) for x, y in zip(batched.status, dense.status))}/{len(opts)}",
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

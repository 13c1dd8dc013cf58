"""``theorycheck heatmap``: j† over (time, α) for one optimizer, as a figure and/or JSON."""

from __future__ import annotations

import argparse

import numpy as np

from theorycheck.errors import TheorycheckError


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """Tolerances and where to run (shared by sweep commands)."""
    p.add_argument("--rtol", type=float, default=1e-8, help="relative tolerance (default 1e-8)")
    p.add_argument("--atol", type=float, default=1e-10, help="absolute tolerance (default 1e-10)")
    p.add_argument("--backend", choices=["serial", "processes", "dask"], default="processes",
                   help="where to run: this process, local processes (default) or a Dask cluster")
    p.add_argument("--workers", type=int, default=None,
                   help="number of processes / Dask workers to use (the compiled kernel: threads)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address (tcp://HOST:PORT); implies --backend dask")
    p.add_argument("--array-backend", choices=["auto", "numpy", "numba", "torch"], default="auto",
                   help="auto (default): the compiled kernel (numba) for C4's reduced ℓ2 ODE when numba is "
                        "installed, numpy otherwise; numba (reduced ODE only); numpy; torch (CUDA when present)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")


def run_options(args):
    from theorycheck.sweep.run import RunOptions

    if not (args.rtol > 0 and args.atol > 0):
        raise TheorycheckError("--rtol and --atol must be > 0")
    return RunOptions(rtol=args.rtol, atol=args.atol, array_backend=args.array_backend)


def backend_of(args) -> str:
    return "dask" if args.scheduler else args.backend


def payload(res, *, out: str | None, saved: list[str] | None) -> dict:
    """The --json document (keys documented in the README)."""
    from theorycheck.status import STATUS
    from theorycheck.sweep.run import visits

    m = res.meta
    coll = res["event_collapse"] if "event_collapse" in res.arrays else np.full(res["alpha"].size, np.inf)
    doc = {
        "optimizer": m["optimizer"], "rho": m["rho"], "depth": m["depth"], "loss": m["loss"], "n": m["n"],
        "d": m["d"], "time_kind": m["time_kind"], "system": m["system"],
        "alpha": res["alpha"], "time": res["time"], "jdag": res["jdag"].astype(int),
        "status": [STATUS[int(s)] for s in res["status"]],
        "collapse_time": [None if not np.isfinite(c) else float(c) for c in coll],
        "visits": [visits(row) for row in res["jdag"]],
        "thresholds": m.get("thresholds"),
        "rtol": m["integrator"]["rtol"], "atol": m["integrator"]["atol"], "run": m["run"],
        "out": out, "saved": saved,
    }
    return doc


def _thresholds(Z: np.ndarray, rho: float) -> dict | None:
    from theorycheck.claims import thresholds as th

    if Z.shape[0] != 1 or not np.any(Z[0] > 0):
        return None
    z = Z[0]
    try:
        return {"alpha_all_shrink": th.alpha_all_shrink(z, rho).value, "alpha_gd_like": th.alpha_gd_like(z, rho).value}
    except TheorycheckError:
        return None


def run(args: argparse.Namespace) -> int:
    from theorycheck.cli.main import emit_json, setting_from_args
    from theorycheck.report import plots
    from theorycheck.sweep import run as S

    if not (args.out or args.json or args.save):
        raise TheorycheckError("say what to write: --out FIGURE.png|svg, --json and/or --save PREFIX")
    setting = setting_from_args(args, alpha=1.0)
    alphas = S.parse_range(args.alphas, "--alphas", log=args.log)
    times = S.time_grid(args.t_max, args.nt, log=args.log_time, t_min=args.t_min)
    res = S.heatmap(setting.Z, optimizer=setting.optimizer, rho=setting.rho, alphas=alphas, times=times,
                    depth=setting.depth, loss=setting.loss, method=args.method, opts=run_options(args),
                    backend=backend_of(args), workers=args.workers, scheduler=args.scheduler, progress=args.progress)
    thr = _thresholds(setting.Z, setting.rho) if setting.optimizer == "sam-l2" and setting.depth == 2 else None
    res.meta["thresholds"] = thr
    saved = [str(p) for p in res.save(args.save)] if args.save else None
    if args.out:
        lines = []
        if thr:
            lines = [(thr["alpha_all_shrink"], "alpha_all_shrink", "--"), (thr["alpha_gd_like"], "alpha_gd_like", "-.")]
        if setting.optimizer == "sam-linf" and setting.rho > 0:
            lines = [(setting.rho, "α = ρ", ":")]
        plots.save(plots.heatmap_figure(res, lines=lines), args.out)
    if args.json:
        emit_json(payload(res, out=args.out, saved=saved))
        return 0
    m = res.meta
    print(f"j† of {m['optimizer']}, L = {m['depth']}, ρ = {m['rho']:g}: {alphas.size} α × {times.size} "
          f"{'τ (rescaled time)' if m['time_kind'] == 'tau' else 't (real time)'}, system {m['system']}, "
          f"{m['seconds']:.2f} s; statuses {m['status_counts']}")
    if thr:
        print(f"closed-form boundaries: alpha_all_shrink = {thr['alpha_all_shrink']:.6g}, "
              f"alpha_gd_like = {thr['alpha_gd_like']:.6g}")
    rows = np.unique(np.linspace(0, alphas.size - 1, min(alphas.size, 6)).round().astype(int))
    for i in rows:
        seq = "→".join(str(v) for v in S.visits(res["jdag"][i]))
        print(f"  α = {alphas[i]:.4g}: j† visits {seq}")
    for p in ([args.out] if args.out else []) + (saved or []):
        print(f"wrote {p}")
    return 0


def register(sub) -> None:
    from theorycheck.cli.main import add_setting_arguments

    p = sub.add_parser("heatmap", help="j† over (time, α): figure and/or JSON",
                       description="Integrate the flow for a grid of uniform initial scales α (all at once, "
                       "batched) and show the dominant feature j† = argmax_j |β_j| (1-based; 0 = collapse) over "
                       "time and α. One example runs in rescaled time τ, several in real time t.")
    add_setting_arguments(p, alpha=False)
    p.add_argument("--alphas", required=True, metavar="LO:HI:N", help="α grid: N values from LO to HI")
    p.add_argument("--log", action="store_true", help="geometric α grid (recommended)")
    p.add_argument("--t-max", type=float, required=True, help="last time of the grid")
    p.add_argument("--nt", type=int, default=200, help="number of time points (default 200)")
    p.add_argument("--t-min", type=float, default=None, help="first time of the grid (default t_max/nt, or "
                   "t_max·1e-4 with --log-time)")
    p.add_argument("--log-time", action="store_true", help="geometric time grid")
    p.add_argument("--method", choices=["auto", "reduced", "balanced", "multi"], default="auto",
                   help="auto: C4's reduced ODE for ℓ2-SAM, L = 2, one example; the balanced log field otherwise")
    p.add_argument("--out", metavar="FIGURE", help="write the figure (.png, .svg or .pdf)")
    p.add_argument("--save", metavar="PREFIX", help="save arrays and metadata as PREFIX.npz + PREFIX.json")
    p.add_argument("--json", action="store_true", help="print the j† array and axes as JSON")
    add_run_arguments(p)
    p.set_defaults(func=run)

"""``theorycheck heatmap``: j† over (time, α) for one optimizer, as a figure and/or JSON.
A thin shell over :func:`theorycheck.heatmap` (the JSON is the SweepResult's ``as_dict()``)."""

from __future__ import annotations

import argparse

from theorycheck.cli.arguments import (
    add_run_arguments,
    add_setting_arguments,
    backend_of,
    parse_range,
    run_options,
    setting_from_args,
)
from theorycheck.errors import TheorycheckError
from theorycheck.vocabulary import SWEEP_METHODS


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from theorycheck.api import heatmap, plot_heatmap, time_grid, visits
    from theorycheck.cli import checks
    from theorycheck.jsonio import emit

    if not (args.out or args.json or args.save):
        raise TheorycheckError("say what to write: --out FIGURE.png|svg, --json and/or --save PREFIX")
    checks.check_output_file(args.out, "--out", suffixes=checks.FIGURE_SUFFIXES)
    checks.check_output_prefix(args.save, "--save")
    checks.check_scheduler(args.scheduler)
    setting = setting_from_args(args, alpha=1.0)
    alphas = parse_range(args.alphas, "--alphas", log=args.log)
    times = time_grid(args.t_max, args.nt, log=args.log_time, t_min=args.t_min)
    checks.check_grid_size(alphas.size, times.size, what="--alphas × --nt grid")
    res = heatmap(setting, alphas=alphas, times=times, method=args.method, opts=run_options(args),
                  backend=backend_of(args), workers=args.workers, scheduler=args.scheduler, progress=args.progress)
    thr = res.meta["thresholds"]
    saved = [str(p) for p in res.save(args.save)] if args.save else None
    if args.out:
        plot_heatmap(res, args.out)
        res.outputs["out"] = args.out
    if args.json:
        emit(res.as_dict())
        return 0
    m = res.meta
    print(f"j† of {m['optimizer']}, L = {m['depth']}, ρ = {m['rho']:g}: {alphas.size} α × {times.size} "
          f"{'τ (rescaled time)' if m['time_kind'] in ('rescaled', 'tau') else 't (real time)'}, system {m['system']}, "
          f"{m['seconds']:.2f} s; statuses {m['status_counts']}")
    if thr:
        print(f"closed-form boundaries: alpha_all_shrink = {thr['alpha_all_shrink']:.6g}, "
              f"alpha_gd_like = {thr['alpha_gd_like']:.6g}")
    rows = np.unique(np.linspace(0, alphas.size - 1, min(alphas.size, 6)).round().astype(int))
    for i in rows:
        seq = "→".join(str(v) for v in visits(res["jdag"][i]))
        print(f"  α = {alphas[i]:.4g}: j† visits {seq}")
    for p in ([args.out] if args.out else []) + (saved or []):
        print(f"wrote {p}")
    return 0


def register(sub) -> None:
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
    p.add_argument("--method", choices=SWEEP_METHODS, default="auto",
                   help="auto: C4's reduced ODE for ℓ2-SAM, L = 2, one example; the balanced log field otherwise")
    p.add_argument("--out", metavar="FIGURE", help="write the figure (.png, .svg or .pdf)")
    p.add_argument("--save", metavar="PREFIX", help="save arrays and metadata as PREFIX.npz + PREFIX.json")
    p.add_argument("--json", action="store_true", help="print the j† array and axes as JSON")
    add_run_arguments(p)
    p.set_defaults(func=run)

"""``theorycheck thresholds``: regime boundaries in α (closed forms where one exists, α_c
solved and certified). A thin shell over :func:`theorycheck.thresholds`."""

from __future__ import annotations

import argparse

from theorycheck.cli.arguments import floats_or_scalar
from theorycheck.errors import TheorycheckError
from theorycheck.vocabulary import OPTIMIZERS


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from theorycheck.api import thresholds
    from theorycheck.jsonio import emit
    from theorycheck.setting import Setting, parse_floats
    from theorycheck.vocabulary import counted

    problem = dict(rho=args.rho, optimizer=args.optimizer, depth=args.depth)
    if args.data is not None:
        res = thresholds(Setting.from_csv(args.data, **problem))
        if args.json:
            emit(res.as_dict())
            return 0
        t = res["alpha_collapse"]
        print(f"{args.optimizer}, L = {args.depth}, data {args.data} ({counted(res['n'], 'example')}, d = {res['d']}), "
              f"ρ = {args.rho:g}")
        print(f"  alpha_collapse = {t['value_text'] or 'none'}   (not certified)\n  {t['note']}")
        return 0
    if args.z is None:
        raise TheorycheckError("give --z Z1,… (one example) or --data FILE.csv (several examples)")
    z = parse_floats(args.z, "z")
    if args.alpha is None and args.optimizer == "sam-linf":
        raise TheorycheckError("ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give --alpha")
    alpha = floats_or_scalar(args.alpha, "alpha")
    setting = Setting.from_z(z, **problem, alpha=1.0 if alpha is None else alpha)
    res = thresholds(setting, place=alpha is not None, t_max=args.t_max, digits=args.digits).as_dict()
    if args.json:
        emit(res)
        return 0
    print(f"{args.optimizer}, L = {args.depth}, z = {np.array2string(z, precision=6)}, ρ = {args.rho:g}")
    if "small_alpha" in res:
        print(f"  initial log-rate dθ_j/dτ(0) = {res['initial_rate']['expression']}   (r_j(0) = {res['initial_rate']['r_j0']})")
    for key in ("alpha_all_shrink", "alpha_all_grow", "alpha_gd_like", "alpha_collapse"):
        if key in res:
            t = res[key]
            val = "none" if t["value"] is None else (t.get("value_text") or f"{t['value']:.12g}")
            form = f"closed form {t['expression']}" if t["closed_form"] else "computed (no closed form)"
            print(f"  {key:17s} = {val:>20s}   {form}" if len(val) <= 20 else f"  {key:17s} = {val}\n  {'':17s}   {form}")
            if t["note"]:
                print(f"  {'':17s}   {t['note']}")
    if "small_alpha" in res:
        print(f"  small α: {res['small_alpha']}")
        if res.get("equilibrium"):
            print(f"  interior equilibrium (û = 0, z scaled to max 1): u* = {res['equilibrium']['u_star_over_max_z_units']}")
        if "regime_name" in res:
            print(f"  α = {res['alpha']:g}: {res['regime_name']}")
    if "regime" in res:
        print(f"  α = {res['alpha']:g}: regime {res['regime'] if res['regime'] is not None else '?'}: "
              f"{res['regime_name']}")
    if "predicted_index" in res:
        print(f"  predicted limit index: {res['predicted_index']} (0: the zero vector)")
    if "predicted_direction" in res:
        print(f"  predicted limit direction: {np.array2string(np.asarray(res['predicted_direction']), precision=6)}")
    if "blowup_times" in res:
        print(f"  blow-up times τ_j*: {res['blowup_times']}")
    if "final_index" in res:
        sym = "τ" if res["time_kind"] == "rescaled" else "t"
        sw = " → ".join([str(res["trajectory_initial_index"])]
                        + [f"{s['to']} ({sym} = {s['time']:.6g})" for s in res["switches"]])
        if "initial_index" in res:
            print(f"  j†(0+) from the initial rates: {res['initial_index']}"
                  + ("" if res["initial_index"] == res["trajectory_initial_index"] else
                     f" (the trajectory's observation says {res['trajectory_initial_index']})"))
        print(f"  trajectory ({res['time_kind']} time): j† {sw}; final index {res['final_index']}"
              + (f"; collapse at {sym} = {res['collapse_time']:.10g}" if res["collapsed"] else "")
              + f" [{res['stopped_because']}]")
    if "warning" in res:
        print(f"  warning: {res['warning']}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("thresholds", help="regime boundaries in α (closed form where one exists, solved where not)",
                       description="The regime thresholds in α for one example z. ℓ2-SAM (L = 2): alpha_all_shrink "
                       "and alpha_gd_like (closed forms) and alpha_collapse (α_c: Taylor integration of the reduced ODE, "
                       "root of the saddle's unstable coordinate, both sides certified, --digits D). ℓ∞-SAM: per coordinate α_j > ρ and the predicted limit index. GD: "
                       "the limit index. With --alpha: the initial index, the regime and the trajectory's switches.")
    p.add_argument("--z", default=None, metavar="Z1,Z2,…", help="the example z (z > 0 for ℓ2-SAM)")
    p.add_argument("--data", default=None, metavar="FILE.csv",
                   help="several examples (rows x1,…,xd,y): α_c(Z) for ℓ2-SAM, L = 2, from full integrations")
    p.add_argument("--rho", type=float, required=True, help="SAM radius ρ ≥ 0")
    p.add_argument("--alpha", default=None, metavar="A|A1,…", help="an initialisation to place in the regimes")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="sam-l2")
    p.add_argument("--depth", "-L", type=int, default=2)
    p.add_argument("--t-max", type=float, default=None, help="horizon of the trajectory (rescaled τ; default 40/min z)")
    p.add_argument("--digits", type=int, default=12, metavar="D",
                   help="certified significant digits of α_c (ℓ2-SAM; default 12, up to 200; 30 digits take seconds)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)

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
    if args.certificate is not None:
        from theorycheck.cli.checks import check_output_file

        check_output_file(args.certificate, "--certificate")
    z = parse_floats(args.z, "z")
    if args.alpha is not None and ":" in str(args.alpha):
        if not args.prove:
            raise TheorycheckError("a range of α (--alpha A:B) is mapped with --prove (a proved regime map)")
        from theorycheck.proved.regime_map import regime_map

        res = regime_map(z, args.rho, args.alpha, optimizer=args.optimizer, depth=args.depth,
                         max_seconds=args.max_seconds).as_dict()
        if args.json:
            emit(res)
        else:
            print_regime_map(res)
        return 0
    if args.alpha is None and args.optimizer == "sam-linf":
        raise TheorycheckError("ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give --alpha")
    alpha = floats_or_scalar(args.alpha, "alpha")
    setting = Setting.from_z(z, **problem, alpha=1.0 if alpha is None else alpha)
    res = thresholds(setting, place=alpha is not None, t_max=args.t_max, digits=args.digits, prove=args.prove,
                     certificate=args.certificate).as_dict()
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
            if t.get("proof"):
                pf = t["proof"]
                if pf["status"] == "proved":
                    print(f"  {'':17s}   PROVED: α_c ∈ [{pf['lower']}, {pf['upper']}] ({pf['digits']} significant "
                          f"digits{', asked ' + str(pf['digits_requested']) if pf['digits'] < pf['digits_requested'] else ''}; "
                          f"{pf['seconds']:.1f} s)")
                    print(f"  {'':17s}   lower collapses ({pf['collapses']['lemma']} at τ ≈ "
                          f"{float(pf['collapses']['tau'][0]):.6g}), upper grows ({pf['grows']['lemma']} at τ ≈ "
                          f"{float(pf['grows']['tau'][0]):.6g})")
                    print(f"  {'':17s}   rests on: " + "; ".join(pf["rests_on"]))
                else:
                    print(f"  {'':17s}   NOT PROVED: {pf['note']}")
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
        print(f"  final index {res['final_index_status']}: {res['final_index_reason']}")
    if "warning" in res:
        print(f"  warning: {res['warning']}")
    return 0


def _seq(p: dict) -> str:
    seq = [str(j) for j in p["sequence"]]
    if not p.get("sequence_complete", True) and len(seq) > 1:  # switches before the limit not determined
        seq = seq[:-1] + ["…", seq[-1]]
    return " → ".join(seq) if seq else "—"


def _times(p: dict) -> str:
    out = []
    for k, t in enumerate(p["switch_times"]):
        lo = f"{float(t[0]):.6g}"
        hi = "…" if t[1] is None else f"{float(t[1]):.6g}"
        out.append(f"{p['sequence'][k]}→{p['sequence'][k + 1]} [{lo}, {hi}]")
    if p.get("blowup_time"):
        out.append(f"blow-up [{float(p['blowup_time'][0]):.6g}, {float(p['blowup_time'][1]):.6g}]")
    ct = p.get("collapse_time")
    if ct and ct[1] is None and not p["switch_times"]:
        out.append(f"collapse after τ = {float(ct[0]):.6g}")
    return "; ".join(out) if out else "—"


def print_regime_map(res: dict) -> None:
    """The text rendering of :func:`theorycheck.regime_map`'s result: one row per sub-interval."""
    a, b = res["alpha_range"]
    print(f"proved regime map, {res['optimizer']}, L = {res['depth']}, z = {res['z']}, ρ = {res['rho']:g}, "
          f"α ∈ [{a}, {b}]")
    print(f"  {'α from':>12s}  {'α to':>12s}  {'status':9s}  {'fate':8s}  {'j† sequence':14s}  switch times τ (enclosures)")
    for p in res["regime_map"]:
        fate = p["fate"] or "—"
        seq = _seq(p) if p["status"] == "proved" else f"width {p['width']:.3g}"
        print(f"  {p['lower']:>12s}  {p['upper']:>12s}  {p['status']:9s}  {fate:8s}  {seq:14s}  "
              + (_times(p) if p["status"] == "proved" else p["reason"]))
    print(f"  proved width {res['proved_width']:.6g}, undecided width {res['undecided_width']:.6g}; "
          f"{res['seconds']:.1f} s" + (f" (budget ran out: {res['stopped']})" if res["stopped"] else ""))
    print(f"  method: {res['method']}; rests on {', '.join(res['rests_on'])}")


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
    p.add_argument("--alpha", default=None, metavar="A|A1,…|A:B",
                   help="an initialisation to place in the regimes, or a range A:B to map (with --prove)")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="sam-l2")
    p.add_argument("--depth", "-L", type=int, default=2)
    p.add_argument("--t-max", type=float, default=None, help="horizon of the trajectory (rescaled τ; default 40/min z)")
    p.add_argument("--digits", type=int, default=12, metavar="D",
                   help="certified significant digits of α_c (ℓ2-SAM; default 12, up to 200; 30 digits take seconds)")
    p.add_argument("--prove", action="store_true",
                   help="ℓ2-SAM: prove a bracket of α_c (validated ball-arithmetic integration + persisting lemmas): "
                        "alpha_collapse.proof")
    p.add_argument("--certificate", default=None, metavar="FILE",
                   help="with --prove (L = 2 or even L ≥ 4): write every validated step of the proof to FILE (JSON); "
                        "`theorycheck check-certificate FILE` re-checks it")
    p.add_argument("--max-seconds", type=float, default=120.0, help="time budget of a proved regime map (default 120 s)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)

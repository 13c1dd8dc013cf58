"""``theorycheck thresholds``: regime boundaries in α (closed forms where one exists, α_c computed in
floating point, proved with ``--prove``). A thin shell over :func:`theorycheck.thresholds`: the numbers
typed (``--z``, ``--rho``, ``--alpha`` and an ``A:B`` range) are read here, once and exactly, into a
Setting (and an exact range), which the library takes whole."""

from __future__ import annotations

import argparse

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers.registry import default_name, names
from theorycheck.optimizers.registry import registered as get_optimizer


def _exact_short(text: str) -> str:
    """An exact decimal as typed-looking text: 1e-310, not 0.000…01 (the JSON keeps the full expansion)."""
    if len(text) <= 24 or "/" in text:
        return text
    from decimal import Decimal, localcontext

    with localcontext() as c:
        c.prec, c.Emax, c.Emin = len(text) + 2, 10**9, -(10**9)
        short = format(Decimal(text).normalize(), "e")
    return short if len(short) < len(text) else text


def _setting(args: argparse.Namespace, alpha):
    """The Setting of the options, validated once (the numbers read exactly: "0.1" is 1/10)."""
    from theorycheck.setting import Setting

    problem = dict(rho=args.rho, optimizer=args.optimizer, depth=args.depth)
    if args.data is not None:
        return Setting.from_csv(args.data, **problem)
    if args.z is None:
        raise TheorycheckError("give --z Z1,… (one example) or --data FILE.csv (several examples)")
    return Setting.from_z(args.z, **problem, alpha="1" if alpha is None else alpha)


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import thresholds
    from theorycheck.jsonio import emit

    alpha_range = None
    if args.alpha is not None and ":" in str(args.alpha):
        from theorycheck.arith.exact import exact_range

        if not args.prove:
            raise TheorycheckError("a range of α (--alpha A:B) is mapped with --prove (a proved regime map)")
        alpha_range = exact_range(args.alpha, "alpha")
    if args.certificate is not None:
        from theorycheck.cli.checks import check_output_file

        check_output_file(args.certificate, "--certificate")
    setting = _setting(args, None if alpha_range is not None else args.alpha)
    if args.data is None and args.alpha is None and get_optimizer(args.optimizer).discontinuous:
        raise TheorycheckError("ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give --alpha")
    res = thresholds(setting, place=args.alpha is not None and alpha_range is None, t_max=args.t_max,
                     digits=args.digits, prove=args.prove, certificate=args.certificate, alpha_range=alpha_range,
                     max_seconds=args.max_seconds).as_dict()
    if args.json:
        emit(res)
    elif alpha_range is not None:
        print_regime_map(res)
    elif args.data is not None:
        print_data(res)
    else:
        print_thresholds(res)
    return 0


def print_data(res: dict) -> None:
    """The text rendering of α_c(Z) for several examples."""
    from theorycheck.vocabulary import counted

    t = res["alpha_collapse"]
    print(f"{res['optimizer']}, L = {res['depth']}, data {res['data']} ({counted(res['n'], 'example')}, "
          f"d = {res['d']}), ρ = {res['inputs']['rho']}")
    print(f"  alpha_collapse = {t['value_text'] or 'none'}   ({t['strength']['text']})\n  {t['note']}")


def print_thresholds(res: dict) -> None:
    """The text rendering of one example's thresholds (the keys of :func:`theorycheck.thresholds`)."""
    from theorycheck.arith.exact import inputs_text

    inp = res["inputs"]
    print(f"{res['optimizer']}, L = {res['depth']}, z = ({', '.join(map(_exact_short, inp['z']))}), ρ = {inp['rho']}; "
          f"strength: {res['strength']['text']}")
    if inp.get("from_float"):
        print(f"  {inputs_text(inp)}")
    if "small_alpha" in res:
        print(f"  initial log-rate dθ_j/dτ(0) = {res['initial_rate']['expression']}   (r_j(0) = {res['initial_rate']['r_j0']})")
    for key in ("alpha_all_shrink", "alpha_all_grow", "alpha_gd_like", "alpha_collapse"):
        if key in res:
            _print_threshold(key, res[key])
    _print_placement(res)


def _print_threshold(key: str, t: dict) -> None:
    val = "none" if t["value"] is None else (t.get("value_text") or f"{t['value']:.12g}")
    form = f"closed form {t['expression']}" if t["closed_form"] else "computed (no closed form)"
    how = f"{form}; {t['strength']['text']}" if t.get("strength") else form
    print(f"  {key:17s} = {val:>20s}   {how}" if len(val) <= 20 else f"  {key:17s} = {val}\n  {'':17s}   {how}")
    if t["note"]:
        print(f"  {'':17s}   {t['note']}")
    if t.get("proof"):
        _print_proof(t["proof"])


def _print_proof(pf: dict) -> None:
    """A proof of α_c in words: the bracket and its strength, each end's lemma, what it rests on, the inputs."""
    from theorycheck.arith.exact import inputs_text

    pad = f"  {'':17s}   "
    if pf["lower"] is not None:
        fewer = f", asked {pf['digits_requested']}" if pf["digits"] < pf["digits_requested"] else ""
        word = "PROVED" if pf["status"] == "proved" else "NOT PROVED (the ends' fates are proved)"
        print(f"{pad}{word}: α_c ∈ [{pf['lower']}, {pf['upper']}] ({pf['digits']} significant digits{fewer}; "
              f"{pf['seconds']:.1f} s); strength: {pf['strength']['text']}")
        print(f"{pad}lower collapses ({pf['collapses']['lemma']} at τ ≈ {float(pf['collapses']['tau'][0]):.6g}), "
              f"upper grows ({pf['grows']['lemma']} at τ ≈ {float(pf['grows']['tau'][0]):.6g})")
    else:
        print(f"{pad}NOT PROVED: {pf['note']}; strength: {pf['strength']['text']}")
    rests = [f"{r['name']} ({r['strength']['text']})" if r["name"] else r["statement"] for r in pf["rests_on"]]
    print(f"{pad}rests on: " + "; ".join(rests))
    if pf["lower"] is not None and pf["status"] != "proved" and pf["note"]:
        print(f"{pad}{pf['note']}")
    if pf.get("inputs"):
        print(f"{pad}about the {inputs_text(pf['inputs'])}")
    if pf.get("certificate"):
        print(f"{pad}certificate written to {pf['certificate']}")


def _print_placement(res: dict) -> None:
    """Where the placed α lies and what its trajectory does (a floating-point check)."""
    import numpy as np

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
        _print_trajectory(res)
    if "warning" in res:
        print(f"  warning: {res['warning']}")


def _print_trajectory(res: dict) -> None:
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
    """The text rendering of :func:`theorycheck.proved_regime_map`'s result: one row per sub-interval."""
    a, b = res["alpha_range"]
    print(f"proved regime map, {res['optimizer']}, L = {res['depth']}, z = ({', '.join(map(str, res['z']))}), ρ = {res['rho']}, "
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
                       "root of the saddle's unstable coordinate, both sides checked in floating point, --digits D; "
                       "--prove: a bracket proved about the numbers as typed). ℓ∞-SAM: per coordinate α_j > ρ and the predicted limit index. GD: "
                       "the limit index. With --alpha: the initial index, the regime and the trajectory's switches.")
    p.add_argument("--z", default=None, metavar="Z1,Z2,…",
                   help="the example z (z > 0 for ℓ2-SAM), read exactly (decimals are the rationals they denote)")
    p.add_argument("--data", default=None, metavar="FILE.csv",
                   help="several examples (rows x1,…,xd,y): α_c(Z) for ℓ2-SAM, L = 2, from full integrations")
    p.add_argument("--rho", required=True, metavar="R",
                   help="SAM radius ρ ≥ 0, read exactly (0.1 is 1/10; p/q allowed)")
    p.add_argument("--alpha", default=None, metavar="A|A1,…|A:B",
                   help="an initialisation to place in the regimes, or a range A:B to map (with --prove)")
    p.add_argument("--optimizer", choices=names(), default=default_name(),
                   help=f"default {default_name()}")
    p.add_argument("--depth", "-L", type=int, default=2)
    p.add_argument("--t-max", type=float, default=None, help="horizon of the trajectory (rescaled τ; default 40/min z)")
    p.add_argument("--digits", type=int, default=12, metavar="D",
                   help="significant digits of α_c (ℓ2-SAM; default 12, up to 200; 30 digits take seconds; with "
                        "--prove at most 60) and of the closed forms (proved beyond 15)")
    p.add_argument("--prove", action="store_true",
                   help="ℓ2-SAM: prove a bracket of α_c (validated ball-arithmetic integration + persisting lemmas): "
                        "alpha_collapse.proof")
    p.add_argument("--certificate", default=None, metavar="FILE",
                   help="with --prove (L = 2 or even L ≥ 4): write every validated step of the proof to FILE (JSON); "
                        "`theorycheck check-certificate FILE` re-checks it")
    p.add_argument("--max-seconds", type=float, default=120.0, help="time budget of a proved regime map (default 120 s)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)

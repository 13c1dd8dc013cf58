"""``theorycheck trajectory``: integrate a flow (or run the discrete algorithm) and report
j†(t), its switches, collapse / blow-up and the final direction. A thin shell over
:func:`theorycheck.solve` (the JSON is the trajectory's ``as_dict()``)."""

from __future__ import annotations

import argparse
import sys

from theorycheck.cli.arguments import add_setting_arguments, count, positive, setting_from_args
from theorycheck.errors import TheorycheckError
from theorycheck.vocabulary import PARAMETRISATIONS, SOLVE_METHODS, TIME_CHOICES


def _run_pm(args: argparse.Namespace) -> int:
    """The signed parametrisation β = w₊^D − w₋^D with the squared loss (gradient flow only)."""
    import numpy as np

    from theorycheck.jsonio import emit
    from theorycheck.setting import parse_floats, read_csv
    from theorycheck.solvers.pm_flow import flow_pm

    if args.param != "pm" or args.loss != "squared":
        raise TheorycheckError("the squared loss goes with --param pm (and --param pm with --loss squared)")
    if args.optimizer != "gd" or args.discrete:
        raise TheorycheckError("--param pm runs gradient flow only: use --optimizer gd without --discrete")
    if args.plot:
        raise TheorycheckError("--plot is not available with --param pm")
    alpha = parse_floats(args.alpha, "alpha")
    if alpha.size != 1:
        raise TheorycheckError("--param pm takes one scale --alpha A")
    X, y = read_csv(args.data) if args.data is not None else (parse_floats(args.z, "z")[None, :], np.ones(1))
    res = flow_pm(X, y, depth=args.depth, alpha=float(alpha[0]),
                  t_max=args.t_max if args.t_max is not None else 1e12, max_seconds=args.max_seconds,
                  max_evaluations=args.max_steps * 10).as_dict()
    if args.json:
        emit(res)
    else:
        print(f"beta = {res['beta']}\nfinal loss {res['final_loss']:.3e} at t = {res['t']:.6g} ({res['status']}); "
              f"error bar on the limit {res['error_bar']:.1e}")
    return 0


def _warn_unreachable(setting) -> None:
    """One line on stderr when no β the flow can reach separates the data (Setting.reachable)."""
    if setting.n == 1:
        return
    r = setting.reachable()
    if r.separable is False:
        print(f"warning: the data are not separable by any β this initialisation can reach ({r.reason}); "
              f"examples {', '.join(map(str, r.examples))} certify it: the loss stays ≥ {r.loss_lower_bound:.4g}",
              file=sys.stderr, flush=True)


def _fmt_t(x) -> str:
    return "—" if x is None else f"{x:.10g}"


def print_summary(res: dict) -> None:
    s = res
    print(f"{s['optimizer']} flow, L = {s['depth']}, ρ = {s['rho']:g}, n = {s['n_examples']}, d = {s['d']}, "
          f"{s['time_kind']} time, {s['method']}" + (f" ({s['precision']} digits)" if s["precision"] else ""))
    print(f"stopped because: {s['stopped_because']} at {'t' if s['time_kind'] == 'real' else 'τ'} = "
          f"{s['t_end']:.10g}  ({s['message']})")
    print(f"final j† = {s['final_index']}" + ("  (collapsed: β = 0)" if s["collapsed"] else "")
          + f"  [{s['final_index_status']}: {s['final_index_reason']}]")
    print(f"collapse time: {_fmt_t(s['collapse_time'])}    blow-up time: {_fmt_t(s['blowup_time'])}")
    if s["switches"]:
        print("switches of j†:")
        for w in s["switches"]:
            print(f"  {w['time']:.12g}: {w['from']} → {w['to']}")
    else:
        print("switches of j†: none")
    print("direction β/‖β‖: [" + ", ".join(f"{v:.6g}" for v in s["direction"]) + "]")
    for p in (1, 2):
        a = s[f"angle_l{p}_deg"]
        print(f"angle to the ℓ{p} max-margin solution: " + ("—" if a is None else f"{a:.6g}°"))
    if "final_loss" in s:
        def g(key):
            return "beyond float64" if s[key] is None else f"{s[key]:.6g}"

        print(f"final margin min_i <β, z_i> = {g('final_margin')}, normalised {s['final_normalized_margin']:.6g}, "
              f"loss = {g('final_loss')} (ln loss = {g('final_log_loss')})")
    slides = [e for e in s["events"] if e["kind"] in ("slide", "cross", "unfreeze", "stationary")]
    if slides:
        print("events: " + "; ".join(f"{e['kind']} j={e['index']} at {e['time']:.10g}" for e in slides[:12])
              + (" …" if len(slides) > 12 else ""))


def print_proved(res: dict) -> None:
    """The text rendering of a proved trajectory (:func:`theorycheck.proved.trajectory.prove_trajectory`)."""
    st = res["setting"]
    print(f"{st['optimizer']} flow, L = {st['depth']}, ρ = {st['rho']:g}, z = {st['z']}, α = {st['alpha']:g}: "
          f"{'proved' if res['proved'] else 'not proved'} ({res['method']}; rests on {', '.join(res['rests_on'])})")
    print(f"fate: {res['fate'] or '—'}; j† sequence: {' → '.join(map(str, res['sequence'])) or '—'}")
    for w in res["switches"]:
        hi = "…" if w["time"][1] is None else w["time"][1]
        print(f"  {w['from']} → {w['to']} at τ ∈ [{w['time'][0]}, {hi}]")
    if res.get("proved_until") and not res.get("sequence_complete", True):
        print(f"  (the sequence is proved up to τ = {res['proved_until'][1]}; switches after it are not determined)")
    for key, name in (("collapse_time", "collapse time τ_c"), ("blowup_time", "blow-up time τ*")):
        t = res.get(key)
        if t:
            print(f"{name} ∈ [{t[0]}, {t[1]}]" if t[1] is not None else f"{name} > {t[0]}")
    print(f"final j† = {res['final_index'] if res['final_index'] is not None else '—'}  "
          f"[{res['final_index_status']}: {res['final_index_reason']}]  ({res['seconds']:.1f} s)")


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import solve
    from theorycheck.cli.checks import FIGURE_SUFFIXES, check_output_file
    from theorycheck.jsonio import emit

    check_output_file(args.plot, "--plot", suffixes=FIGURE_SUFFIXES)
    if args.param == "pm" or args.loss == "squared":
        return _run_pm(args)
    setting = setting_from_args(args)
    if args.prove:
        from theorycheck.proved.trajectory import prove_trajectory

        if args.discrete or args.plot:
            raise TheorycheckError("--prove encloses the flow: drop --discrete and --plot")
        res = prove_trajectory(setting, max_seconds=args.max_seconds).as_dict()
        if args.json:
            emit(res)
        else:
            print_proved(res)
        return 0
    _warn_unreachable(setting)
    traj = solve(setting, t_max=args.t_max, method=args.method, precision=args.precision, time=args.time,
                 max_steps=args.max_steps, max_seconds=args.max_seconds, discrete=args.discrete, eta=args.eta,
                 steps=args.steps, progress=True)
    res = traj.as_dict()
    if args.plot:
        from theorycheck.report.plots import plot_trajectory

        plot_trajectory(traj, args.plot)
    if args.json:
        emit(res)
    else:
        print_summary(res)
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "trajectory", help="integrate a GD / SAM flow: j†(t), switches, collapse, blow-up",
        description="Integrate the GD, ℓ2-SAM or ℓ∞-SAM flow of an L-layer diagonal network (one example: "
        "rescaled time τ; several: real time t), or run the discrete algorithm, and report the dominant "
        "index j† = argmax_j |β_j| (1-based; 0 = the zero vector), its switches, collapse and blow-up times "
        "and the final direction. Always terminates: the output says why it stopped.")
    add_setting_arguments(p, regression=True)
    p.add_argument("--t-max", type=positive, default=None,
                   help="final time (default 50 rescaled, 1000 real)")
    p.add_argument("--precision", type=int, default=None, metavar="DIGITS",
                   help="integrate with mpmath at this many digits (≥ 16; 30+ recommended)")
    p.add_argument("--method", choices=SOLVE_METHODS, default="auto",
                   help="scipy (float64), mpmath, reduced (C4's scalar ODE: ℓ2, L = 2, one example, uniform α)")
    p.add_argument("--time", choices=TIME_CHOICES, default="auto",
                   help="time variable (auto: rescaled for one example, real for several)")
    p.add_argument("--discrete", action="store_true", help="run the discrete algorithm w ← w − η∇Lo(w + ε)")
    p.add_argument("--eta", type=positive, default=None, help="step size η of --discrete")
    p.add_argument("--steps", type=count, default=None, help="number of steps K of --discrete")
    p.add_argument("--max-seconds", type=positive, default=120.0, help="time budget (default 120 s)")
    p.add_argument("--max-steps", type=count, default=200_000, help="step budget of the integrator (default 200000)")
    p.add_argument("--plot", metavar="FILE", default=None, help="write β_j(t) (log scale) with j† marked (.png/.svg/.pdf)")
    p.add_argument("--json", action="store_true", help="print JSON (keys documented in the README)")
    p.add_argument("--prove", action="store_true",
                   help="enclose the switch and collapse times in ball arithmetic and prove the final index from a "
                   "lock-in certificate (ℓ2-SAM with z > 0 at any depth ≥ 2 and GD, one example, uniform α; at L ≥ 3 the blow-up "
                   "time too)")
    p.add_argument("--param", choices=PARAMETRISATIONS, default="product",
                   help="parametrisation: product β = w_1⊙…⊙w_L (default) or pm β = w₊^D − w₋^D, w±(0) = α "
                   "(with --loss squared)")
    p.set_defaults(func=run)

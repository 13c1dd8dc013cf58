"""``theorycheck trajectory``: integrate a flow (or run the discrete algorithm) and report
j†(t), its switches, collapse / blow-up and the final direction. A thin shell over
:func:`theorycheck.solve` (the JSON is the trajectory's ``as_dict()``)."""

from __future__ import annotations

import argparse
import sys

from theorycheck.cli.arguments import add_setting_arguments, count, positive, setting_from_args
from theorycheck.errors import TheorycheckError
from theorycheck.vocabulary import PARAMETRISATIONS, SOLVE_METHODS, TIME_CHOICES


def _run_regression(args: argparse.Namespace, setting) -> int:
    """A regression setting (--param pm|uv, --loss squared): the flow to its limit (api.solve)."""
    from theorycheck.api import solve
    from theorycheck.jsonio import emit

    if args.plot or args.prove or args.discrete:
        raise TheorycheckError("--param pm|uv integrates the flow to its limit: drop --plot, --prove and --discrete")
    res = solve(setting, t_max=args.t_max, method=args.method, digits=args.digits, time=args.time,
                max_steps=args.max_steps, max_seconds=args.max_seconds, rtol=args.rtol,
                residual_tol=args.residual_tol).as_dict()
    if args.json:
        emit(res)
        return 0
    print(f"{res['optimizer']} flow, param {res['param']}, L = {res['depth']}, ρ = {res['rho']:g}, "
          f"n = {res['n_examples']}, d = {res['d']}, squared loss")
    print(f"stopped because: {res['status']} at t = {res['t']:.6g} ({res['message']})")
    print("beta = [" + ", ".join(f"{v:.10g}" for v in res["beta"]) + "]")
    print("effective scale = [" + ", ".join(f"{v:.6g}" for v in res["effective_scale"]) + "]")
    print(f"residual ‖Xβ − y‖ = {res['residual']:.3e}; error bar on the limit {res['error_bar']:.1e} "
          f"({res['strength']['text']})")
    return 0


def _warn_unreachable(setting) -> None:
    """One line on stderr when no β the flow can reach separates the data (Setting.reachable)."""
    if setting.n == 1:
        return
    r = setting.reachable()
    if r.separable is False:
        print(f"warning: the data are not separable by any β this initialisation can reach ({r.reason}); "
              f"examples {', '.join(map(str, r.examples))} show it: the loss stays ≥ {r.loss_lower_bound:.4g}",
              file=sys.stderr, flush=True)


def _fmt_t(x) -> str:
    return "—" if x is None else f"{x:.10g}"


def print_summary(res: dict) -> None:
    s = res
    print(f"{s['optimizer']} flow, L = {s['depth']}, ρ = {s['rho']:g}, n = {s['n_examples']}, d = {s['d']}, "
          f"{s['time_kind']} time, {s['method']}" + (f" ({s['digits']} digits)" if s["digits"] else ""))
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
    """The text rendering of a proved trajectory: the floating-point run (:func:`print_summary`), then the
    proof (:func:`theorycheck.api.prove_trajectory`'s ``proof``), its strength and the exact inputs."""
    from theorycheck.arith.exact import inputs_text

    print_summary(res)
    pf = res["proof"]
    rests = ", ".join(f"{r['name']} ({r['strength']['text']})" for r in pf["rests_on"])
    print(f"proof: {'proved' if pf['proved'] else 'not proved'}; strength: {pf['strength']['text']} "
          f"({pf['method']}; rests on {rests})")
    print(f"  about the {inputs_text(pf['inputs'])}")
    print(f"  fate: {pf['fate'] or '—'}; j† sequence: {' → '.join(map(str, pf['sequence'])) or '—'}")
    for w in pf["switches"]:
        hi = "…" if w["time"][1] is None else w["time"][1]
        print(f"    {w['from']} → {w['to']} at τ ∈ [{w['time'][0]}, {hi}]")
    if pf.get("proved_until") and not pf.get("sequence_complete", True):
        print(f"    (the sequence is proved up to τ = {pf['proved_until'][1]}; switches after it are not determined)")
    for key, name in (("collapse_time", "collapse time τ_c"), ("blowup_time", "blow-up time τ*")):
        t = pf.get(key)
        if t:
            print(f"  {name} ∈ [{t[0]}, {t[1]}]" if t[1] is not None else f"  {name} > {t[0]}")
    print(f"  final j† = {pf['final_index'] if pf['final_index'] is not None else '—'}  "
          f"[{pf['final_index_status']}: {pf['final_index_reason']}]  ({pf['seconds']:.1f} s)")


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import solve
    from theorycheck.cli.checks import FIGURE_SUFFIXES, check_output_file
    from theorycheck.jsonio import emit

    check_output_file(args.plot, "--plot", suffixes=FIGURE_SUFFIXES)
    setting = setting_from_args(args)
    if setting.regression:
        return _run_regression(args, setting)
    if args.prove:
        from theorycheck.api import prove_trajectory

        if args.discrete or args.plot:
            raise TheorycheckError("--prove encloses the flow: drop --discrete and --plot")
        res = prove_trajectory(setting, t_max=args.t_max, max_seconds=args.max_seconds, method=args.method,
                               digits=args.digits, max_steps=args.max_steps, progress=True).as_dict()
        if args.json:
            emit(res)
        else:
            print_proved(res)
        return 0
    _warn_unreachable(setting)
    traj = solve(setting, t_max=args.t_max, method=args.method, digits=args.digits, time=args.time,
                 max_steps=args.max_steps, max_seconds=args.max_seconds, discrete=args.discrete, eta=args.eta,
                 steps=args.steps, rtol=args.rtol, progress=True)
    res = traj.as_dict()
    if args.plot:
        from theorycheck.api import plot_trajectory

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
        "trajectory", help="integrate a GD / SAM flow: j†(t), switches, collapse, blow-up; or a regression flow to its limit",
        description="Integrate the GD, ℓ2-SAM or ℓ∞-SAM flow of an L-layer diagonal network (one example: "
        "rescaled time τ; several: real time t), or run the discrete algorithm, and report the dominant "
        "index j† = argmax_j |β_j| (1-based; 0 = the zero vector), its switches, collapse and blow-up times "
        "and the final direction. Always terminates: the output says why it stopped.")
    add_setting_arguments(p, regression=True)
    p.add_argument("--t-max", type=positive, default=None,
                   help="final time (default 50 rescaled, 1000 real)")
    p.add_argument("--digits", type=int, default=None, metavar="D",
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
    p.add_argument("--json", action="store_true", help="print JSON (keys: docs/commands/trajectory.md; with --prove the same keys plus proof, inputs, strength)")
    p.add_argument("--prove", action="store_true",
                   help="enclose the switch and collapse times in ball arithmetic and prove the final index from a "
                   "lock-in certificate (ℓ2-SAM with z > 0 at any depth ≥ 2 and GD, one example, uniform α; at L ≥ 3 the blow-up "
                   "time too)")
    p.add_argument("--param", choices=PARAMETRISATIONS, default="product",
                   help="parametrisation: product β = w_1⊙…⊙w_L (default), pm β = w₊^D − w₋^D with w±(0) = α, or "
                   "uv β = u⊙v with u(0) = α, v(0) = 0 (pm and uv: regression, the squared loss, real labels)")
    p.add_argument("--rtol", type=positive, default=None,
                   help="relative tolerance of the integrator (default 1e-12; 1e-10 with --param pm|uv)")
    p.add_argument("--residual-tol", type=positive, default=1e-10,
                   help="--param pm|uv: stop when ‖Xβ − y‖ ≤ this·max(1, ‖y‖) (default 1e-10)")
    p.set_defaults(func=run)

"""``theorycheck trajectory``: integrate a flow (or run the discrete algorithm) and report
j†(t), its switches, collapse / blow-up and the final direction."""

from __future__ import annotations

import argparse
import math
import sys

from theorycheck.errors import TheorycheckError

#: default final time: rescaled (one example) and real (several examples)
DEFAULT_T_MAX = {"rescaled": 50.0, "real": 1000.0}


def _progress(t: float, t_max: float, steps: int) -> None:
    print(f"  … t = {t:.6g} of {t_max:.6g} ({steps} steps)", file=sys.stderr, flush=True)


def _discrete_progress(k: int, steps: int) -> None:
    print(f"  … step {k} of {steps}", file=sys.stderr, flush=True)


def compute(args: argparse.Namespace) -> dict:
    """Run what the arguments ask for; returns the JSON payload (keys in the README)."""
    from theorycheck import observe
    from theorycheck.cli.main import setting_from_args
    from theorycheck.solve.discrete import run as run_discrete
    from theorycheck.solve.integrate import solve
    from theorycheck.solve.maxmargin import angle_degrees, max_margin
    from theorycheck.solve.trajectory import Budget

    setting = setting_from_args(args)
    time_kind = "rescaled" if setting.single and args.time != "real" else "real"
    if args.discrete:
        if args.eta is None or args.steps is None:
            raise TheorycheckError("--discrete needs --eta E and --steps K")
        if args.precision is not None or args.method not in ("auto",):
            raise TheorycheckError("--discrete runs float64 iterations: drop --precision/--method")
        traj = run_discrete(setting, eta=args.eta, steps=args.steps, max_seconds=args.max_seconds,
                            record_every=max(1, args.steps // 20000), progress=_discrete_progress)
    else:
        if args.eta is not None or args.steps is not None:
            raise TheorycheckError("--eta/--steps apply to --discrete only")
        t_max = args.t_max if args.t_max is not None else DEFAULT_T_MAX[time_kind]
        budget = Budget(max_steps=args.max_steps, max_seconds=args.max_seconds)
        traj = solve(setting, t_max=t_max, method=args.method, precision=args.precision, time=args.time,
                     budget=budget, progress=_progress)
    out = observe.summary(traj)
    out.update({
        "method": traj.method,
        "precision": traj.precision,
        "system": traj.system,
        "depth": setting.depth,
        "optimizer": setting.optimizer,
        "rho": setting.rho,
        "loss": setting.loss,
        "n_examples": setting.n,
        "d": setting.d,
        "steps": traj.n_steps,
        "evaluations": traj.n_evaluations,
    })
    if args.discrete:
        out["eta"] = args.eta
    direction = out["direction"]
    for p in (1, 2):
        mm = max_margin(setting.Z, p)
        out[f"angle_l{p}_deg"] = angle_degrees(direction, mm.beta)
    out["_traj"] = traj
    return out


def _fmt_t(x) -> str:
    return "—" if x is None else f"{x:.10g}"


def print_summary(res: dict) -> None:
    s = res
    print(f"{s['optimizer']} flow, L = {s['depth']}, ρ = {s['rho']:g}, n = {s['n_examples']}, d = {s['d']}, "
          f"{s['time_kind']} time, {s['method']}" + (f" ({s['precision']} digits)" if s["precision"] else ""))
    print(f"stopped because: {s['stopped_because']} at {s['time_kind'][0] if s['time_kind'] == 'real' else 'τ'} = "
          f"{s['t_end']:.10g}  ({s['message']})")
    print(f"final j† = {s['final_index']}" + ("  (collapsed: β = 0)" if s["collapsed"] else ""))
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


def run(args: argparse.Namespace) -> int:
    from theorycheck.cli.main import emit_json
    from theorycheck.report.plots import plot_trajectory

    res = compute(args)
    traj = res.pop("_traj")
    if args.plot:
        plot_trajectory(traj, args.plot)
    if args.json:
        emit_json(res)
    else:
        print_summary(res)
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number > 0")
    return v


def _count(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number ≥ 1")
    return v


def register(sub) -> None:
    from theorycheck.cli.main import add_setting_arguments

    p = sub.add_parser(
        "trajectory", help="integrate a GD / SAM flow: j†(t), switches, collapse, blow-up",
        description="Integrate the GD, ℓ2-SAM or ℓ∞-SAM flow of an L-layer diagonal network (one example: "
        "rescaled time τ; several: real time t), or run the discrete algorithm, and report the dominant "
        "index j† = argmax_j |β_j| (1-based; 0 = the zero vector), its switches, collapse and blow-up times "
        "and the final direction. Always terminates: the output says why it stopped.")
    add_setting_arguments(p)
    p.add_argument("--t-max", type=_positive, default=None,
                   help=f"final time (default {DEFAULT_T_MAX['rescaled']:g} rescaled, {DEFAULT_T_MAX['real']:g} real)")
    p.add_argument("--precision", type=int, default=None, metavar="DIGITS",
                   help="integrate with mpmath at this many digits (≥ 16; 30+ recommended)")
    p.add_argument("--method", choices=["auto", "scipy", "mpmath", "reduced"], default="auto",
                   help="scipy (float64), mpmath, reduced (C4's scalar ODE: ℓ2, L = 2, one example, uniform α)")
    p.add_argument("--time", choices=["auto", "rescaled", "real"], default="auto",
                   help="time variable (auto: rescaled for one example, real for several)")
    p.add_argument("--discrete", action="store_true", help="run the discrete algorithm w ← w − η∇Lo(w + ε)")
    p.add_argument("--eta", type=_positive, default=None, help="step size η of --discrete")
    p.add_argument("--steps", type=_count, default=None, help="number of steps K of --discrete")
    p.add_argument("--max-seconds", type=_positive, default=120.0, help="time budget (default 120 s)")
    p.add_argument("--max-steps", type=_count, default=200_000, help="step budget of the integrator (default 200000)")
    p.add_argument("--plot", metavar="FILE", default=None, help="write β_j(t) (log scale) with j† marked (.png/.svg/.pdf)")
    p.add_argument("--json", action="store_true", help="print JSON (keys documented in the README)")
    p.set_defaults(func=run)

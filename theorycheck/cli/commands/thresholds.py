"""``theorycheck thresholds``: the regime boundaries in α for one example (C2, C3, C5)."""

from __future__ import annotations

import argparse

import numpy as np

from theorycheck.claims import thresholds as th
from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting, parse_floats

REGIMES = {1: "collapse (the predictor goes to 0, the loss does not vanish)",
           2: "sequential amplification (minor features before the major one; near α_c the path first moves "
              "to a more minor feature: verify's C4.sequential)",
           3: "GD-like (straight to the major feature)"}


def _trajectory_facts(setting: Setting, t_max: float) -> dict:
    """The trajectory's own facts. Its j†(0+) is reported as ``trajectory_initial_index`` so
    that it never overwrites the thresholds' ``initial_index`` (derived from the initial rates,
    ties broken at second order and among equal z_j by the smallest index)."""
    from theorycheck.observe import summary
    from theorycheck.solve.integrate import solve

    tr = solve(setting, t_max=t_max)
    s = summary(tr)
    out = {k: s[k] for k in ("final_index", "switches", "collapsed", "collapse_time",
                             "blowup_time", "stopped_because", "time_kind")}
    out["trajectory_initial_index"] = s["initial_index"]
    return out


def _depth_l(out: dict, z: np.ndarray, rho: float, L: int, alpha, setting, T) -> dict:
    """ℓ2-SAM at depth L ≥ 3 (claims/depth.py): derived initial-rate thresholds, α_c(L) for even
    L (certified bracket), the statement of what happens at small α, and with --alpha the
    initial index, the side of α_c and the trajectory."""
    from theorycheck.claims import depth as dl

    out.update(dl.thresholds(z, rho, L))
    if alpha is not None:
        if np.size(alpha) != 1:
            raise TheorycheckError("give one scalar --alpha for ℓ2-SAM (uniform init)")
        a = float(np.asarray(alpha).reshape(-1)[0])
        out["alpha"] = a
        out["initial_index"] = dl.initial_index(z, a, rho, L)
        ac = out["alpha_collapse"]
        if ac["value"] is None:
            out["regime_name"] = "no collapse is possible (odd L): every coordinate is nondecreasing"
        else:
            cert = ac.get("certificate") or {}
            lo = cert.get("shrinks", {}).get("alpha", ac["value"])
            hi = cert.get("grows", {}).get("alpha", ac["value"])
            out["regime_name"] = ("collapse (every coordinate shrinks from a certified time on)" if a <= lo else
                                  "growth (every coordinate grows from a certified time on)" if a >= hi else
                                  "undecided: α lies in α_c(L)'s certified bracket")
        out.update(_trajectory_facts(setting, T))
    return out


def compute(z: np.ndarray, rho: float, *, optimizer: str = "sam-l2", depth: int = 2, alpha=None,
            t_max: float | None = None, digits: int = 12, progress: bool | None = None) -> dict:
    """Everything ``theorycheck thresholds`` reports, as a dict (the JSON object)."""
    z = np.asarray(z, float)
    out: dict = {"optimizer": optimizer, "depth": depth, "z": z, "rho": rho}
    if alpha is not None:
        s = Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho, alpha=alpha)  # validates
    else:
        Setting.from_z(z, depth=depth, optimizer=optimizer, rho=rho)
    T = t_max or 40.0 / float(np.min(np.abs(z[z != 0])))
    if optimizer == "sam-l2":
        if np.any(z <= 0):
            raise TheorycheckError("the ℓ2-SAM thresholds are computed for z > 0 (a balanced network has β = u² ≥ 0)")
        if depth == 1:
            raise TheorycheckError("ℓ2-SAM at depth L = 1 has no regimes (C1: every α goes to z/‖z‖): use --depth ≥ 2")
        if depth >= 3:
            return _depth_l(out, z, rho, depth, alpha, s if alpha is not None else None, T)
        ac = th.collapse_threshold(z, rho, digits=digits, progress=progress)
        out.update(alpha_all_shrink=th.alpha_all_shrink(z, rho).to_dict(),
                   alpha_gd_like=th.alpha_gd_like(z, rho).to_dict(),
                   alpha_collapse=ac.to_dict())
        for key in ("alpha_all_shrink", "alpha_gd_like"):  # the closed forms to the digits asked for
            if out[key]["value"] is not None and digits > 15:
                out[key]["value_text"] = th.closed_form_text(key, z, rho, digits)
        if alpha is not None:
            a = float(np.asarray(alpha).reshape(-1)[0])
            if np.size(alpha) != 1:
                raise TheorycheckError("give one scalar --alpha for ℓ2-SAM (uniform init)")
            out["alpha"] = a
            out["initial_index"] = th.initial_index(z, a, rho)
            gd = out["alpha_gd_like"]["value"]
            if ac.value is None:
                out["regime"] = 1 if a < out["alpha_all_shrink"]["value"] else (3 if a >= gd else None)
            else:
                lo_b, hi_b = (float(x) for x in ac.certificate["bracket"])
                out["regime"] = 1 if a <= lo_b else (3 if a >= gd else (2 if a >= hi_b else None))
            out["regime_name"] = REGIMES.get(out["regime"], "undecided: α lies in α_c's certified bracket, or α_c "
                                             "is inconclusive")
            out.update(_trajectory_facts(s, T))
            if out["regime"] is not None and (out["regime"] == 1) != out["collapsed"]:
                out["warning"] = ("the regime from α_c and the trajectory's fate disagree (the trajectory's horizon or "
                                  "precision may be too short)")
        return out
    if optimizer == "sam-linf":
        if alpha is None:
            raise TheorycheckError("ℓ∞-SAM thresholds are per coordinate (α_j > ρ): give --alpha")
        a = np.broadcast_to(np.asarray(alpha, float), z.shape)
        out["alpha"] = a
        out["grows"] = (a > rho).tolist()
        out["stationary"] = (a == rho).tolist()
        out["predicted_index"] = th.linf_prediction(z, a, rho, depth)
        out["predicted_direction"] = th.linf_limit_direction(z, a, rho, depth)
        if depth >= 3:
            with np.errstate(divide="ignore", invalid="ignore"):
                ts = np.where(a > rho, 1.0 / ((depth - 2) * z * (a - rho) ** (depth - 2)), np.inf)
            out["blowup_times"] = [float(t) if np.isfinite(t) else None for t in ts]
        out.update(_trajectory_facts(s, T))
        return out
    out["predicted_index"] = int(np.argmax(z)) + 1
    if alpha is not None:
        out.update(_trajectory_facts(s, T))
    return out


def compute_data(path: str, rho: float, *, optimizer: str = "sam-l2", depth: int = 2) -> dict:
    """``theorycheck thresholds --data FILE.csv``: α_c(Z) for ℓ2-SAM, L = 2, several examples
    (claims/dataset.py: a bracket from full integrations, with its evidence; not certified)."""
    from theorycheck.claims import dataset as ds

    if optimizer != "sam-l2" or depth != 2:
        raise TheorycheckError("--data thresholds are computed for ℓ2-SAM at L = 2 (--optimizer sam-l2 --depth 2)")
    s = Setting.from_csv(path, depth=2, optimizer="sam-l2", rho=rho)  # validates (separability included)
    return {"optimizer": optimizer, "depth": depth, "data": str(path), "n": int(s.X.shape[0]), "d": int(s.X.shape[1]),
            "rho": rho, "alpha_collapse": ds.collapse_threshold(s.X, s.y, rho)}


def run(args: argparse.Namespace) -> int:
    from theorycheck.cli.main import emit_json

    if args.data is not None:
        res = compute_data(args.data, args.rho, optimizer=args.optimizer, depth=args.depth)
        if args.json:
            emit_json(res)
            return 0
        t = res["alpha_collapse"]
        print(f"{args.optimizer}, L = {args.depth}, data {args.data} ({res['n']} examples, d = {res['d']}), "
              f"ρ = {args.rho:g}")
        print(f"  alpha_collapse = {t['value_text'] or 'none'}   (not certified)\n  {t['note']}")
        return 0
    if args.z is None:
        raise TheorycheckError("give --z Z1,… (one example) or --data FILE.csv (several examples)")
    z = parse_floats(args.z, "z")
    alpha = None
    if args.alpha is not None:
        a = parse_floats(args.alpha, "alpha")
        alpha = float(a[0]) if a.size == 1 else a
    res = compute(z, args.rho, optimizer=args.optimizer, depth=args.depth, alpha=alpha, t_max=args.t_max,
                  digits=args.digits, progress=None if not args.json else None)
    if args.json:
        emit_json(res)
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
        sw = " → ".join([str(res["trajectory_initial_index"])] + [str(s["to"]) for s in res["switches"]])
        if "initial_index" in res:
            print(f"  j†(0+) from the initial rates: {res['initial_index']}"
                  + ("" if res["initial_index"] == res["trajectory_initial_index"] else
                     f" (the trajectory's observation says {res['trajectory_initial_index']})"))
        print(f"  trajectory ({res['time_kind']} time): j† {sw}; final index {res['final_index']}"
              + (f"; collapse at τ = {res['collapse_time']:.10g}" if res["collapsed"] else "")
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
    p.add_argument("--optimizer", choices=["sam-l2", "sam-linf", "gd"], default="sam-l2")
    p.add_argument("--depth", "-L", type=int, default=2)
    p.add_argument("--t-max", type=float, default=None, help="horizon of the trajectory (rescaled τ; default 40/min z)")
    p.add_argument("--digits", type=int, default=12, metavar="D",
                   help="certified significant digits of α_c (ℓ2-SAM; default 12, up to 200; 30 digits take seconds)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)

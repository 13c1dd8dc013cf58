"""``theorycheck maxmargin``: the ℓ1 or ℓ2 max-margin classifier of separable data.
A thin shell over :func:`theorycheck.max_margin`."""

from __future__ import annotations

import argparse

from theorycheck.vocabulary import NORMS


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import max_margin
    from theorycheck.jsonio import emit
    from theorycheck.setting import Setting

    s = Setting.from_z(args.z) if args.z is not None else Setting.from_csv(args.data)
    res = max_margin(s, args.norm)
    if args.json:
        emit(res.as_dict())
        return 0
    print(f"ℓ{res.norm} max-margin classifier of {res.n_examples} example(s), d = {res.d} ({res.method})")
    print("beta (smallest margin 1) = [" + ", ".join(f"{v:.10g}" for v in res.beta) + "]"
          + (f" · 2^{res.beta_log2_scale}" if res.beta_log2_scale else ""))
    print(f"max margin γ = 1/‖β‖_{res.norm} = {res.margin:.12g}")
    print("support (examples with margin 1): " + ", ".join(str(i) for i in res.support))
    print(f"KKT residual: {res.kkt_residual:.3g}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("maxmargin", help="ℓ1 / ℓ2 max-margin classifier of separable data",
                       description="Solve min ‖β‖_p subject to <β, y_i x_i> ≥ 1 (p = 1: LP with HiGHS; p = 2: QP "
                       "with SLSQP, or its dual over the examples when d > 2000, and an active-set certificate). β is scaled so the smallest margin is 1.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--z", metavar="Z1,Z2,…", help="one example z = y·x, comma-separated")
    src.add_argument("--data", metavar="FILE.csv", help="examples as CSV rows x1,…,xd,y (y = ±1)")
    p.add_argument("--norm", type=int, choices=NORMS, required=True, help="1 (ℓ1) or 2 (ℓ2)")
    p.add_argument("--json", action="store_true", help="print JSON (keys: docs/commands/maxmargin.md)")
    p.set_defaults(func=run)

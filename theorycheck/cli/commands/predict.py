"""``theorycheck predict``: a pack's predicted limit for one input (kernel-rich: argmin Q_α,
the min-ℓ1 and min-ℓ2 interpolators; lp-margin: the ℓ_{2/L} max-margin KKT point; sam-regression: argmin Q
at the effective scale a SAM flow reaches)."""

from __future__ import annotations

import argparse

from theorycheck.optimizers.registry import names as optimizer_names
from theorycheck.vocabulary import LOSSES, REGRESSION_PARAMETRISATIONS


def _data(args):
    import numpy as np

    from theorycheck.setting import parse_floats, read_csv

    if args.data is not None:
        return read_csv(args.data)
    z = parse_floats(args.z, "z")
    return z[None, :], np.ones(1)


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import predict_limit as predict
    from theorycheck.errors import TheorycheckError
    from theorycheck.jsonio import emit

    if args.depth < 1:
        raise TheorycheckError("--depth must be ≥ 1")
    from theorycheck.setting import parse_floats

    X, y = _data(args)
    alpha = parse_floats(args.alpha, "alpha")
    alpha = float(alpha[0]) if alpha.size == 1 else alpha.tolist()
    given = {k: getattr(args, k) for k in ("rho", "optimizer", "param") if getattr(args, k) is not None}
    res = predict(args.pack, X, y, depth=args.depth, alpha=alpha, loss=args.loss, **given)  # the pack's defaults else
    if args.json:
        emit(res)
        return 0
    for k, v in res.items():
        print(f"{k:22s} {v}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("predict", help="a pack's predicted limit for one input",
                       description="Print the limit a pack's theorem predicts for the data (kernel-rich: argmin of "
                       "Q_alpha over the interpolators, plus the min-l1 and min-l2 interpolators; lp-margin: the "
                       "l_{2/L} max-margin KKT point reachable from a positive balanced initialisation).")
    p.add_argument("--pack", required=True, metavar="NAME", help="a pack with predictions (kernel-rich, lp-margin, sam-regression)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--z", metavar="Z1,Z2,…", help="one example (x = z, y = 1)")
    src.add_argument("--data", metavar="FILE.csv", help="rows x1,…,xd,y (real y for kernel-rich, ±1 for lp-margin)")
    p.add_argument("--depth", "-D", type=int, default=2, help="depth D (kernel-rich) or L (lp-margin), default 2")
    p.add_argument("--alpha", default="1", metavar="A or A1,A2,…",
                   help="initialisation scale α (kernel-rich, sam-regression), one value or one per feature; default 1")
    p.add_argument("--rho", type=float, default=None,
                   help="SAM radius ρ (minor-first: default 1; sam-regression: default 0.1)")
    p.add_argument("--optimizer", choices=optimizer_names(), default=None,
                   help="the optimizer whose limit is predicted (minor-first: default sam-l2; sam-regression: n-sam)")
    p.add_argument("--param", choices=REGRESSION_PARAMETRISATIONS, default=None,
                   help="parametrisation (sam-regression): uv (β = u⊙v, u(0) = α, v(0) = 0, the default) or pm "
                   "(β = w₊² − w₋²)")
    p.add_argument("--loss", choices=LOSSES, default="exponential",
                   help="lp-margin's loss (the limit does not depend on it), default exponential")
    p.add_argument("--json", action="store_true", help="print JSON (the pack's keys: docs/commands/predict.md)")
    p.set_defaults(func=run)

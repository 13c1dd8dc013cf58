"""``theorycheck derive``: print a flow as derived by the symbolic layer.
A thin shell over :func:`theorycheck.derive` (the JSON is the Derivation's ``as_dict()``).

Derivation runs under a time budget (``--max-seconds``): a run that spends it prints what it
derived, marked incomplete, with the budget named. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys

from theorycheck.vocabulary import LOSSES, OPTIMIZERS, PARAMETRISATIONS, REGRESSION_LOSSES


def run(args: argparse.Namespace) -> int:
    from theorycheck.derivation import derive
    from theorycheck.jsonio import emit

    res = derive(args.depth, args.optimizer, balanced=args.balanced, dim=args.dim, loss=args.loss,
                 examples=args.examples, param=args.param, max_seconds=args.max_seconds, progress=args.progress)
    if args.param == "pm":
        if args.format == "json":
            emit(res.as_dict())
            return 0
        print(f"signed parametrisation beta = w_p^{args.depth} - w_m^{args.depth}, squared loss, gradient flow")
        for k, v in res.equations.items():
            print(f"{k}: {v}")
        return 0
    text = res.render(args.format)
    if not text["complete"]:
        print(f"theorycheck derive: incomplete: {text['stopped_because']}", file=sys.stderr)
    if args.format == "json":
        emit(res.as_dict())
        return 0
    title = (f"{args.optimizer} flow, L = {args.depth}, "
             f"{'balanced (w_k = u for all k), ' if args.balanced else ''}"
             f"{'one example, rescaled time dτ = −ℓ′(m̂) dt' if res.time == 'rescaled' else f'{args.examples} examples, real time'}")
    print(title)
    print("=" * len(title))

    def show(k, s):
        print(f"{k} =\n{s}\n" if "\n" in s else f"{k} = {s}")

    for k, v in text["equations"].items():
        show(k, v)
    if "system" in text:
        print(f"\nexplicit system for d = {args.dim}" + (", where" if text.get("definitions") else "") + ":")
        for k, v in text.get("definitions", {}).items():
            show(k, v)
        for k, v in text["system"].items():
            show(k, v)
    if not text["complete"]:
        print(f"\nincomplete: {text['stopped_because']}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("derive", help="print the GD / SAM flow derived by sympy",
                       description="Print the GD, ℓ2-SAM or ℓ∞-SAM flow for depth L, as derived by the "
                       "symbolic layer: coordinate form for any d, and with --dim the explicit system.")
    p.add_argument("--depth", "-L", type=int, default=2, help="number of layers L ≥ 1 (default 2)")
    p.add_argument("--optimizer", choices=list(OPTIMIZERS), default="sam-l2")
    p.add_argument("--balanced", action="store_true", help="restrict to balanced layers w_k = u (one example)")
    p.add_argument("--dim", type=int, default=None, help="also print the explicit system for this d (1..6)")
    p.add_argument("--examples", type=int, default=1, help="number of examples n (1: rescaled time; 2-3: real time)")
    p.add_argument("--loss", choices=(*LOSSES, *REGRESSION_LOSSES), default="logistic")
    p.add_argument("--param", choices=PARAMETRISATIONS, default="product",
                   help="product β = w_1⊙…⊙w_L (default) or pm β = w₊^D − w₋^D (with --loss squared)")
    p.add_argument("--format", choices=["text", "latex", "json"], default="text")
    p.add_argument("--max-seconds", type=float, default=60.0,
                   help="time budget (default 60 s): past it, the equations derived so far are printed and "
                        "marked incomplete")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr (default: when stderr is a terminal)")
    p.set_defaults(func=run)

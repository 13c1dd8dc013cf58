"""``theorycheck derive``: print a flow as derived by the symbolic layer.
A thin shell over :func:`theorycheck.derive`."""

from __future__ import annotations

import argparse

from theorycheck.vocabulary import LOSSES, OPTIMIZERS


def _fmt(expr, fmt: str) -> str:
    import sympy as sp

    if fmt == "latex":
        return sp.latex(expr)
    if fmt == "json":
        return sp.sstr(expr)
    return sp.pretty(expr, use_unicode=True) if "\n" in sp.pretty(expr) else sp.sstr(expr)


def run(args: argparse.Namespace) -> int:
    from theorycheck.derivation import derive
    from theorycheck.report.json import emit

    res = derive(args.depth, args.optimizer, balanced=args.balanced, dim=args.dim, loss=args.loss,
                 examples=args.examples, param=args.param)
    if args.format == "json":
        emit(res.as_dict())
        return 0
    if args.param == "pm":
        print(f"signed parametrisation beta = w_p^{args.depth} - w_m^{args.depth}, squared loss, gradient flow")
        for k, v in res.equations.items():
            print(f"{k}: {v}")
        return 0
    title = (f"{args.optimizer} flow, L = {args.depth}, "
             f"{'balanced (w_k = u for all k), ' if args.balanced else ''}"
             f"{'one example, rescaled time dτ = −ℓ′(m̂) dt' if res.time == 'rescaled' else f'{args.examples} examples, real time'}")
    print(title)
    print("=" * len(title))
    def show(k, v):
        text = _fmt(v, args.format)
        print(f"{k} =\n{text}\n" if "\n" in text else f"{k} = {text}")

    for k, v in res.equations.items():
        show(k, v)
    if res.system:
        print(f"\nexplicit system for d = {args.dim}:")
        for k, v in res.system.items():
            show(k, v)
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
    p.add_argument("--loss", choices=(*LOSSES, "squared"), default="logistic")
    p.add_argument("--param", choices=["product", "pm"], default="product",
                   help="product β = w_1⊙…⊙w_L (default) or pm β = w₊^D − w₋^D (with --loss squared)")
    p.add_argument("--format", choices=["text", "latex", "json"], default="text")
    p.set_defaults(func=run)

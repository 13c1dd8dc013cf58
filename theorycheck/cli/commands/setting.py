"""``theorycheck setting``: validate a problem and summarise it (data, separability, init).
A thin shell over :func:`theorycheck.describe`."""

from __future__ import annotations

import argparse

from theorycheck.cli.arguments import add_setting_arguments, setting_from_args


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from theorycheck.api import describe
    from theorycheck.jsonio import emit

    s = setting_from_args(args)
    info = describe(s)
    if args.json:
        emit(info.as_dict())
        return 0
    print(f"{s.n} example{'s' * (s.n != 1)}, d = {s.d}, depth L = {s.depth}, loss {s.loss}, "
          f"optimizer {s.optimizer}, ρ = {s.rho:g}")
    print(f"initialisation: {s.init.kind}{' (balanced)' if s.balanced else ''}, "
          f"layers0 = {np.array2string(s.layers0, precision=4)}")
    print(f"linearly separable: yes, e.g. β = {np.array2string(info.separator, precision=4)} "
          f"has min margin {info.separator_min_margin:.4g}")
    if info.reachable_separable is False:
        ex = ", ".join(str(i) for i in info.reachable_certificate)
        print(f"warning: not separable by any β the flow can reach ({info.reachable_reason}; signs of β: "
              f"{info.reachable_signs}): examples {ex} certify it; the loss stays ≥ "
              f"{info.loss_lower_bound:.4g} and never reaches 0")
    elif info.reachable_separable is None:
        print(f"reachable cone: {info.reachable_reason}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("setting", help="validate data, depth, ρ and init; print a summary",
                       description="Validate a problem (data from --z or a CSV, depth, optimizer, ρ, α) the way "
                       "every command does, and summarise it. Bad input gives a one-line error (exit 2); "
                       "non-separable data are proved so, naming the examples of a certificate.")
    add_setting_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)

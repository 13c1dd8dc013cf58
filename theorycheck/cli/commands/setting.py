"""``theorycheck setting``: validate a problem and summarise it (data, separability, init)."""

from __future__ import annotations

import argparse

import numpy as np

from theorycheck.setting import check_separable


def summary(setting) -> dict:
    """What a user should know about a validated Setting before integrating it: the
    separator has min margin ≥ 1 (a direction with largest entry 1 when such a β would
    overflow float64); the ``reachable_*`` keys say whether the data are separable by a β
    the flow can reach from this initialisation (:meth:`Setting.reachable`)."""
    beta = check_separable(setting.Z)
    margins = setting.Z @ beta
    reach = setting.reachable()
    return {
        "n": setting.n,
        "d": setting.d,
        "depth": setting.depth,
        "loss": setting.loss,
        "optimizer": setting.optimizer,
        "rho": setting.rho,
        "init_kind": setting.init.kind,
        "balanced": setting.balanced,
        "layers0": setting.layers0,
        "separable": True,
        "separator": beta,
        "separator_min_margin": float(margins.min()),
        **reach.as_dict(),
    }


def run(args: argparse.Namespace) -> int:
    from theorycheck.cli.main import emit_json, setting_from_args

    s = setting_from_args(args)
    info = summary(s)
    if args.json:
        emit_json(info)
        return 0
    print(f"{s.n} example{'s' * (s.n != 1)}, d = {s.d}, depth L = {s.depth}, loss {s.loss}, "
          f"optimizer {s.optimizer}, ρ = {s.rho:g}")
    print(f"initialisation: {s.init.kind}{' (balanced)' if s.balanced else ''}, "
          f"layers0 = {np.array2string(s.layers0, precision=4)}")
    print(f"linearly separable: yes, e.g. β = {np.array2string(info['separator'], precision=4)} "
          f"has min margin {info['separator_min_margin']:.4g}")
    if info["reachable_separable"] is False:
        ex = ", ".join(str(i) for i in info["reachable_certificate"])
        print(f"warning: not separable by any β the flow can reach ({info['reachable_reason']}; signs of β: "
              f"{info['reachable_signs']}): examples {ex} certify it; the loss stays ≥ "
              f"{info['loss_lower_bound']:.4g} and never reaches 0")
    elif info["reachable_separable"] is None:
        print(f"reachable cone: {info['reachable_reason']}")
    return 0


def register(sub) -> None:
    from theorycheck.cli.main import add_setting_arguments

    p = sub.add_parser("setting", help="validate data, depth, ρ and init; print a summary",
                       description="Validate a problem (data from --z or a CSV, depth, optimizer, ρ, α) the way "
                       "every command does, and summarise it. Bad input gives a one-line error (exit 2); "
                       "non-separable data are proved so, naming the examples of a certificate.")
    add_setting_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)

"""``theorycheck saddles``: the saddles and jump times of the α → 0 limit of a two-layer diagonal linear
network on regression data, in exact rational arithmetic. A thin shell over :func:`theorycheck.api.saddles`."""

from __future__ import annotations

import argparse


def _vector(values) -> str:
    return "(" + ", ".join(values) + ")"


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import saddles
    from theorycheck.jsonio import emit

    res = saddles(args.data, max_jumps=args.max_jumps)
    if args.json:
        emit(res.as_dict())
        return 0
    print(f"jump process of {res.n} example(s), d = {res.d} (β = w₊² − w₋², w±(0) = α·1, t̃ = t/ln(1/α), α → 0)")
    for k, j in enumerate(res.jumps, start=1):
        signs = ", ".join(f"{i}{'+' if s > 0 else '−'}" for i, s in j["support"].items()) or "∅"
        print(f"  jump {k}: t̃ = {j['time_exact']} ({j['time']:.6g})  enter {j['entered']}  leave {j['left']}  "
              f"support {{{signs}}}  L = {j['loss_exact']}" + ("" if j["unique"] else "  (saddle not unique)"))
        print(f"          β = {_vector(j['beta_exact'])}")
    f = res.final
    print(f"final saddle β = {_vector(f['beta_exact'])}, L = {f['loss_exact']}, ‖β‖₁ = {f['l1_norm_exact']}"
          + ("" if f["l1_certificate"] is None else
             f", minimum-ℓ1 interpolator: {'certified' if f['l1_certificate'] else 'NOT certified'}"))
    for u in res.non_unique:
        print(f"  not unique at jump {u['jump']}: {u['reason']}; another: {_vector(u['other_beta_exact'])}")
    print(f"{res.status}; strength: {res.strength['text']}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("saddles", help="the α → 0 jump process (saddles, jump times), exact",
                       description="The saddle-to-saddle limit of gradient flow on β = w₊² − w₋² from w±(0) = α·1 as "
                       "α → 0 (square loss, mean over examples, time t̃ = t/ln(1/α)): the jump times and saddles, in "
                       "exact rational arithmetic on the numbers as typed (pack saddle-to-saddle).")
    p.add_argument("--data", metavar="FILE.csv", required=True,
                   help="rows x1,…,xd,y (an optional header line; numbers as typed: 0.1 is 1/10)")
    p.add_argument("--max-jumps", type=int, default=1000, metavar="K", help="stop after K jumps (default 1000)")
    p.add_argument("--json", action="store_true", help="print JSON (keys: docs/commands/saddles.md)")
    p.set_defaults(func=run)

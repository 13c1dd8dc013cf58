"""``theorycheck packs``: the installed theorem packs (built-in and from the entry-point group
``theorycheck.packs``) with their theorems, claims and experiments counted."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import list_packs

    rows = list_packs()
    if args.json:
        from theorycheck.jsonio import emit

        emit(rows.as_dict())
        return 0
    print(f"{'pack':14s} {'theorems':>8s} {'claims':>6s} {'experiments':>11s}  title — reference")
    for r in rows:
        print(f"{r['name']:14s} {r['theorems']:8d} {r['claims']:6d} {r['experiments']:11d}  {r['title']} — "
              f"{r['reference']}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("packs", help="list the installed theorem packs",
                       description="List the theorem packs: the built-in ones and those installed as Python packages "
                       "with an entry point in the group theorycheck.packs (docs/writing-a-pack.md).")
    p.add_argument("--json", action="store_true", help="print JSON: {packs: [{name, title, reference, theorems, "
                   "claims, experiments, predict, theory}]}")
    p.set_defaults(func=run)

"""``theorycheck packs``: the installed theorem packs (built-in and from the entry-point group
``theorycheck.packs``) with their theorems, claims and experiments counted."""

from __future__ import annotations

import argparse


def list_packs() -> list[dict]:
    """Library call behind the command: every installed pack's ``as_dict()``."""
    from theorycheck import packs

    return [p.as_dict() for p in packs.available().values()]


def run(args: argparse.Namespace) -> int:
    rows = list_packs()
    if args.json:
        from theorycheck.cli.main import emit_json

        emit_json({"packs": rows})
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

"""``theorycheck prove``: run proofs/ — THEORY.md's derivations, step by step."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time

from theorycheck.errors import TheorycheckError

LEGEND = ("✓ verified symbolically   ≈ verified numerically only (sympy could not simplify)   "
          "◐ incomplete as stated (true where stated; the tool adds what is missing)   "
          "✗ refuted (counterexample)   ! step crashed")


def run(args: argparse.Namespace) -> int:
    from theorycheck import proofs as proofs
    from theorycheck.proofs._core import ERROR, MARKS, REFUTED

    keys = [k.strip().upper() for k in args.only.split(",")] if args.only else None
    try:
        if keys:
            proofs.check_keys(keys)
    except KeyError as exc:
        raise TheorycheckError(str(exc.args[0])) from None
    results = []
    t0 = time.perf_counter()
    todo = keys or [k for k in proofs.ORDER if k in proofs.REGISTRY]
    for i, key in enumerate(todo, 1):  # progress on stderr: the whole run takes tens of seconds
        print(f"[{i}/{len(todo)}] proving {key} …", file=sys.stderr, flush=True)
        results.append(proofs.REGISTRY[key].run())
    elapsed = time.perf_counter() - t0
    failed = [r for r in results if r.status in (REFUTED, ERROR)]
    if args.json:
        from theorycheck.cli.main import emit_json

        emit_json({"theorems": [r.to_dict() for r in results], "seconds": round(elapsed, 2),
                   "refuted": [r.theorem.key for r in failed]})
        return 1 if failed else 0
    width = 100
    for r in results:
        n = len(r.steps)
        print(f"{MARKS[r.status]} {r.theorem.key}: {r.theorem.title}  [{r.status}, {n} step{'s' * (n != 1)}]")
        print(textwrap.fill(r.theorem.statement, width, initial_indent="    ", subsequent_indent="    "))
        for step, res in r.steps:
            print(f"    {MARKS[res.status]} {step.statement}")
            if res.status != "verified" or args.verbose:
                print(textwrap.fill(res.detail, width, initial_indent="        ", subsequent_indent="        "))
            if res.counterexample:
                print(f"        counterexample: {res.counterexample}")
        print()
    print(LEGEND)
    counts = {s: sum(1 for r in results for _, x in r.steps if x.status == s) for s in MARKS}
    print(f"{sum(counts.values())} steps in {len(results)} theorems, {elapsed:.1f} s: "
          + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    if failed:
        print("refuted as stated in THEORY.md: " + ", ".join(r.theorem.key for r in failed)
              + " (see ✗ above; exit status 1)")
    return 1 if failed else 0


def register(sub) -> None:
    p = sub.add_parser("prove", help="check THEORY.md's derivations step by step (sympy)",
                       description="Run proofs/: every '(derived)' statement of THEORY.md as a sequence of sympy "
                       "steps, each verified (difference simplifies to 0), verified numerically, or refuted with a "
                       "counterexample. Exit status 0 when nothing is refuted, 1 otherwise.")
    p.add_argument("--only", metavar="KEYS", help="comma-separated theorem keys (R, B, C1..C6)")
    p.add_argument("--verbose", "-v", action="store_true", help="print the detail of verified steps too")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(func=run)

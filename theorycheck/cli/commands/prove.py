"""``theorycheck prove``: run proofs/ — THEORY.md's derivations, step by step."""

from __future__ import annotations

import argparse
import sys
import textwrap

LEGEND = ("✓ verified symbolically   ≈ verified numerically only (sympy could not simplify)   "
          "◐ incomplete as stated (true where stated; the tool adds what is missing)   "
          "✗ refuted (counterexample)   ! step crashed")


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import prove
    from theorycheck.jsonio import emit
    from theorycheck.symbolic.theorem import MARKS, StepStatus
    from theorycheck.vocabulary import counted

    def announce(theorem) -> None:  # progress on stderr: the whole run takes tens of seconds
        print(f"proving {theorem.key} …", file=sys.stderr, flush=True)

    proved = prove(args.only, pack=args.pack, on_theorem=announce)
    if args.json:
        emit(proved.as_dict())
        return 0 if proved.ok else 1
    results = proved.results
    width = 100
    for r in results:
        n = len(r.steps)
        print(f"{MARKS[r.status]} {r.theorem.key}: {r.theorem.title}  [{r.status}, {n} step{'s' * (n != 1)}]")
        print(textwrap.fill(r.theorem.statement, width, initial_indent="    ", subsequent_indent="    "))
        for step, res in r.steps:
            print(f"    {MARKS[res.status]} {step.statement}")
            if res.status != StepStatus.VERIFIED or args.verbose:
                print(textwrap.fill(res.detail, width, initial_indent="        ", subsequent_indent="        "))
            if res.counterexample:
                print(f"        counterexample: {res.counterexample}")
        print()
    print(LEGEND)
    counts = {s: sum(1 for r in results for _, x in r.steps if x.status == s) for s in MARKS}
    print(f"{counted(sum(counts.values()), 'step')} in {counted(len(results), 'theorem')}, {proved.seconds:.1f} s: "
          + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    if proved.refuted:
        print("refuted as stated in THEORY.md: " + ", ".join(proved.refuted) + " (see ✗ above; exit status 1)")
    return 0 if proved.ok else 1


def register(sub) -> None:
    p = sub.add_parser("prove", help="check THEORY.md's derivations step by step (sympy)",
                       description="Run proofs/: every '(derived)' statement of THEORY.md as a sequence of sympy "
                       "steps, each verified (difference simplifies to 0), verified numerically, or refuted with a "
                       "counterexample. Exit status 0 when nothing is refuted, 1 otherwise.")
    p.add_argument("--only", metavar="KEYS", help="comma-separated theorem keys (R, B, C1..C6, LOCK)")
    p.add_argument("--verbose", "-v", action="store_true", help="print the detail of verified steps too")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--pack", metavar="NAME", default=None,
                   help="the theorems of one pack (`theorycheck packs` lists them; default: every installed pack)")
    p.set_defaults(func=run)

"""``theorycheck verify``: run the packs' claims (each pack's THEORY.md) and print verdicts with numbers, failure
rates on the claims' grids and the strength of each verdict."""

from __future__ import annotations

import argparse
import sys
import textwrap

from theorycheck.vocabulary import PROFILES

#: a verdict's mark (a Verdict is its word)
MARK = {"proved": "∎", "holds": "✓", "fails": "✗", "inconclusive": "?", "error": "!"}


def _fmt_dev(v) -> str:
    return "—" if v is None else f"{v:.2e}"


def _rows(v, depth=0):
    yield depth, v
    if v.refined is not None:
        yield from _rows(v.refined, depth + 1)


def _strength_cell(r) -> str:
    """The strength column: its text, except that a not-decided verdict's reason goes on a line of its own."""
    if r.strength is None:
        return "—"
    return "not decided" if r.strength.kind == "not decided" else r.strength.text


def _print_verdict(r, depth: int) -> None:
    """One verdict's row, then its counterexample, grid failures, proof boxes and inconclusive inputs."""
    key = ("  ↳ " * depth + r.key)[:24]
    tried = f"{r.tried}" + (f" ({r.inconclusive}?)" if r.inconclusive else "")
    grid = "—" if r.grid is None else f"{r.grid.failed}/{r.grid.tried}"

    def note(text: str, lines: int = 3) -> None:
        print(textwrap.fill(text, 110, initial_indent=" " * 28, subsequent_indent=" " * 30, max_lines=lines))

    print(f"{key:24s} {MARK[r.status]} {r.status:11s} {tried:>5s} {grid:>10s} {_fmt_dev(r.worst_deviation):>10s} "
          f"{r.seconds:6.1f}s  {_strength_cell(r):32s} {textwrap.shorten(r.statement, 70)}")
    if r.strength is not None and r.strength.kind == "not decided" and r.strength.because:
        note(f"not decided: {r.strength.because}")
    if r.grid is not None and (r.grid.failed or r.grid.inconclusive):
        note(r.grid.text + ("; the first: " + "; ".join(f"{f['input']}" for f in r.grid.failures)
                            if r.grid.failures else ""))
    if not r.status.ok:
        note(f"counterexample: {r.counterexample}", 10**6)
        if r.counterexample_detail:
            note(f"observed: {r.counterexample_detail}", 4)
        print(" " * 28 + r.message)
    for pr in r.proof or []:
        what = {"proved": "proved on", "refuted": "counterexample in", "undecided": "undecided on"}
        note(f"{what.get(pr['status'], pr['status'])} box {pr['box']}"
             + (f" ({pr['undecided_count']} undecided pieces)" if pr["undecided_count"] else "")
             + (f" — {pr['facts']}" if pr["facts"] else ""))
    for ex in r.inconclusive_examples:
        note(f"inconclusive: {ex['input']} — {ex['detail']}")


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import claim_candidates as candidates
    from theorycheck.api import verify
    from theorycheck.jsonio import emit

    if args.list:
        for pack, c in candidates(args.pack):
            print(f"{c.key:22s} [{pack}] {c.statement}")
            if c.refined:
                print(f"{'  ↳ ' + c.refined.key:22s} {c.refined.statement}")
        return 0
    from theorycheck.cli.checks import check_output_file

    check_output_file(args.json, "--json")
    tty = sys.stderr.isatty()

    def on_claim(i: int, n: int, claim) -> None:
        if tty and i > 1:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
        print(f"[{i}/{n}] {claim.key}", file=sys.stderr, flush=True)

    res = verify(args.claims, examples=args.examples, seed=args.seed, profile=args.profile, pack=args.pack,
                 on_claim=on_claim, progress=tty, prove=args.prove, grid=not args.no_grid)
    if tty:
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    verdicts, examples, elapsed = res.verdicts, res.examples, res.seconds
    if args.json:
        emit(res.as_dict(), args.json)
        if args.json == "-":
            return 0 if res.ok else 1
    from theorycheck.vocabulary import counted

    capped = []
    print(f"{'claim':24s} {'verdict':13s} {'tried':>5s} {'grid fails':>10s} {'worst dev.':>10s} {'time':>7s}  "
          f"{'strength':32s} statement")
    for v in verdicts:
        for depth, r in _rows(v):
            if r.cap is not None:
                capped.append(r)
            _print_verdict(r, depth)
    print(f"\n{counted(len(verdicts), 'claim')}, up to {counted(examples, 'drawn input')} each (profile {args.profile}, "
          f"seed {args.seed}) plus pinned edge cases and fixed grids, {elapsed:.0f} s; 'tried' counts the checks: the "
          "pinned edge cases, the grid inputs and the drawn inputs.")
    for r in capped:
        print(f"{r.key} draws at most {counted(r.cap, 'input')}, its own cap (max_examples; {r.requested} requested): "
              f"{r.tried} tried = {r.pinned} pinned + " + (f"{r.grid.tried} grid + " if r.grid else "")
              + f"{r.drawn} drawn.")
    print("'grid fails': of the claim's fixed grid of inputs (every one checked, none shrunk), how many disagree; "
          "'strength': how strong the verdict is (proved · a floating-point check · holds on N inputs · not decided).")
    print("∎ proved for every input in the stated boxes (prove) · ✓ holds on every input tried · ✗ fails (counterexample shrunk by "
          "hypothesis; ↳ the refined statement the tool checked instead) · ? inconclusive (a check gave no verdict: a budget ran out, data are missing, …; the row says why) · "
          "! the check crashed")
    if res.failed:
        print("fails as stated: " + ", ".join(res.failed) + "  (exit status 1)")
    return 0 if res.ok else 1


def register(sub) -> None:
    p = sub.add_parser("verify", help="check the packs' claims numerically, with verdicts",
                       description="Run the claims of every pack's THEORY.md (or of one: --pack) on pinned edge cases, "
                       "on the claim's fixed grid of inputs (if it declares one: its failure rate) and on inputs drawn "
                       "by hypothesis; each gets a verdict: holds, fails (with the shrunk counterexample and the "
                       "refined statement the tool found), inconclusive (a check gave no verdict: a budget ran out, data are missing) or error, and its strength. "
                       "Exit status 0 iff no claim fails.")
    p.add_argument("--claims", metavar="KEYS", help="comma-separated claim keys or prefixes (C4, C5.regimes, …)")
    p.add_argument("--examples", type=int, default=None, help="drawn inputs per claim (default: the profile's)")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0: the same inputs every run)")
    p.add_argument("--profile", choices=list(PROFILES), default="fast",
                   help="fast: 12 inputs per claim (a few minutes); thorough: 100")
    p.add_argument("--json", metavar="FILE", help="also write the verdicts as JSON to FILE ('-': stdout only)")
    p.add_argument("--list", action="store_true", help="list the claims and exit")
    p.add_argument("--prove", action="store_true",
                   help="first decide the claims that have a prover on their stated boxes by ball arithmetic: "
                   "proved for every input in a box, or a counterexample; the rest is sampled as before")
    p.add_argument("--no-grid", action="store_true",
                   help="skip the claims' fixed grids of inputs (their failure rates); pinned and drawn inputs still run")
    p.add_argument("--pack", metavar="NAME", default=None,
                   help="the claims of one pack (`theorycheck packs` lists them; default: every installed pack)")
    p.set_defaults(func=run)

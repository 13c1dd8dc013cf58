"""``theorycheck reproduce``: run the paper's experiments (numerics/), write PNG and SVG
figures, the arrays behind them and a short summary in numbers."""

from __future__ import annotations

import argparse
import sys

from theorycheck.cli.arguments import add_run_arguments, backend_of


def run(args: argparse.Namespace) -> int:
    from theorycheck.api import reproduce
    from theorycheck.jsonio import emit

    if args.list:
        from theorycheck.api import list_experiments

        for row in list_experiments(args.pack):
            print(f"{row['name']:18s} [{row['pack']}] {row['title']}")
        return 0

    from theorycheck.cli.checks import check_output_dir

    check_output_dir(args.out, "--out")

    def announce(name: str) -> None:
        if not args.json:
            print(f"[{name}] {'redrawing' if args.redraw else 'running'} …", file=sys.stderr, flush=True)

    res = reproduce(args.name, args.out, pack=args.pack, quick=args.quick, redraw=args.redraw, backend=backend_of(args),
                    workers=args.workers, scheduler=args.scheduler, progress=args.progress, on_experiment=announce)
    if args.json:
        emit(res.as_dict())
        return 0
    for rep in res.reports:
        print(rep.text())
    from theorycheck.vocabulary import counted

    print(f"wrote {res.summary_file} and {counted(len(sum((r.figures for r in res.reports), [])), 'figure')} in {res.out}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="run the paper's experiments: figures (PNG, SVG) and a summary",
                       description="Run the experiments of the installed packs (minor-first: E1 heatmaps, the regime map, loss plateaus, "
                       "discrete SAM against the flow), write their figures as PNG and SVG, the arrays behind them "
                       "(DIR/data/NAME/*.npz + .json) and DIR/SUMMARY.md: the outcome in numbers, and where the "
                       "figures do not show what the paper describes.")
    p.add_argument("name", nargs="?", default="all", help="an experiment (see --list) or all (default)")
    p.add_argument("--out", default="out/reproduce", metavar="DIR", help="output folder (default out/reproduce)")
    p.add_argument("--quick", action="store_true", help="coarser grids (for tests and a first look)")
    p.add_argument("--redraw", action="store_true", help="redraw figures and summary from saved arrays in DIR")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.add_argument("--pack", metavar="NAME", default=None,
                   help="the experiments of one pack (`theorycheck packs`; default: every installed pack)")
    add_run_arguments(p)
    p.set_defaults(func=run)

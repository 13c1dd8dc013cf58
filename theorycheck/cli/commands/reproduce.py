"""``theorycheck reproduce``: run the paper's experiments (numerics/), write PNG and SVG
figures, the arrays behind them and a short summary in numbers."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from theorycheck.errors import TheorycheckError


def run(args: argparse.Namespace) -> int:
    try:
        from theorycheck import numerics as numerics
    except ImportError:
        raise TheorycheckError("the numerics package is not importable: install theorycheck from its source "
                               "tree (pip install -e .) or run from the repository root") from None
    from theorycheck import packs
    from theorycheck.cli.main import emit_json

    chosen = packs.select(args.pack)
    if args.list:
        for pack in chosen:
            for name, mod in pack.experiments().items():
                print(f"{name:18s} [{pack.name}] {importlib.import_module(mod).TITLE}")
        return 0
    out = Path(args.out)
    other = [p for p in chosen if p.name != "minor-first"]
    reports: list = []
    matched = False
    if args.redraw and args.pack is not None and other:
        raise TheorycheckError("--redraw applies to the pack minor-first only")
    for pack in other if not args.redraw else []:
        exps = pack.experiments()
        if args.pack is not None and args.name != "all" and args.name not in exps:
            raise TheorycheckError(f"pack {pack.name!r} has no experiment {args.name!r}: choose one of "
                                   f"{', '.join(exps)} or all")
        for n, mod in exps.items():
            if args.name != "all" and n != args.name:
                continue
            matched = True
            out.mkdir(parents=True, exist_ok=True)
            if not args.json:
                print(f"[{pack.name}/{n}] running …", file=sys.stderr, flush=True)
            rep = importlib.import_module(mod).reproduce(out, quick=args.quick)
            reports.append(rep)
            if not args.json:
                print(rep.text())
    names: list[str] = []
    if any(p.name == "minor-first" for p in chosen):
        if args.name == "all":
            names = list(numerics.EXPERIMENTS)
        elif args.name in numerics.EXPERIMENTS or not matched:
            names = [args.name]
    for n in names:
        numerics.module(n)  # unknown names fail before any work
    out.mkdir(parents=True, exist_ok=True)
    ctx = numerics.Context(backend="dask" if args.scheduler else args.backend, workers=args.workers,
                           scheduler=args.scheduler, progress=args.progress)
    for n in names:
        if not args.json:
            print(f"[{n}] {'redrawing' if args.redraw else 'running'} …", file=sys.stderr, flush=True)
        rep = numerics.redraw(n, out) if args.redraw else numerics.run(n, out, quick=args.quick, ctx=ctx)
        reports.append(rep)
        if not args.json:
            print(rep.text())
    summary = numerics.write_summary(reports, out)
    if args.json:
        emit_json({"out": str(out), "summary_file": str(summary), "experiments": [r.to_dict() for r in reports]})
    else:
        print(f"wrote {summary} and {len(sum((r.figures for r in reports), []))} figures in {out}")
    return 0


def register(sub) -> None:
    from theorycheck.cli.commands.heatmap import add_run_arguments

    p = sub.add_parser("reproduce", help="run the paper's experiments: figures (PNG, SVG) and a summary",
                       description="Run the experiments of numerics/ (E1 heatmaps, the regime map, loss plateaus, "
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

"""The ``theorycheck`` command line: a thin layer over the library.

Each subcommand lives in ``theorycheck/commands/<name>.py`` with ``register(subparsers)``
(which sets ``func``); this module only wires them and turns user errors into one line
on stderr with exit status 2 (no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from theorycheck.errors import TheorycheckError
from theorycheck.report.plain import to_plain
from theorycheck.setting import Setting, parse_floats

#: subcommand modules, in the order ``theorycheck --help`` lists them
COMMAND_MODULES: tuple[str, ...] = (
    "theorycheck.cli.commands.setting",
    "theorycheck.cli.commands.derive",
    "theorycheck.cli.commands.prove",
    "theorycheck.cli.commands.verify",
    "theorycheck.cli.commands.thresholds",
    "theorycheck.cli.commands.trajectory",
    "theorycheck.cli.commands.maxmargin",
    "theorycheck.cli.commands.heatmap",
    "theorycheck.cli.commands.reproduce",
    "theorycheck.cli.commands.cnn",
)


# ---------------------------------------------------------------------------- helpers
def add_setting_arguments(p: argparse.ArgumentParser, *, optimizer: bool = True, alpha: bool = True) -> None:
    """The data/depth/optimizer/ρ/α options shared by the commands that build a Setting."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--z", metavar="Z1,Z2,…", help="one example z = y·x, comma-separated (label +1)")
    src.add_argument("--data", metavar="FILE.csv", help="examples as CSV rows x1,…,xd,y (y = ±1)")
    p.add_argument("--depth", "-L", type=int, default=2, help="number of layers L ≥ 1 (default 2)")
    if optimizer:
        p.add_argument("--optimizer", choices=["gd", "sam-l2", "sam-linf"], default="sam-l2",
                       help="flow to follow (default sam-l2)")
    p.add_argument("--rho", type=float, default=1.0, help="SAM radius ρ ≥ 0 (default 1)")
    if alpha:
        p.add_argument("--alpha", default="1", metavar="A|A1,…,Ad",
                       help="initialisation: one scale α for all layers, or one per feature (default 1)")
    p.add_argument("--loss", choices=["logistic", "exponential"], default="logistic", help="loss ℓ (default logistic)")


def setting_from_args(args: argparse.Namespace, **overrides: Any) -> Setting:
    """Build and validate a Setting from the options of :func:`add_setting_arguments`."""
    kw = dict(depth=args.depth, loss=args.loss, rho=args.rho)
    if hasattr(args, "optimizer"):
        kw["optimizer"] = args.optimizer
    if hasattr(args, "alpha"):
        a = parse_floats(args.alpha, "alpha")
        kw["alpha"] = float(a[0]) if a.size == 1 else a
    kw.update(overrides)
    if args.z is not None:
        return Setting.from_z(args.z, **kw)
    return Setting.from_csv(args.data, **kw)


def emit_json(obj: Any, dest: str | None = "-") -> None:
    """Write obj as JSON to stdout (dest '-' or None) or to a file. NaN/inf never pass."""
    text = json.dumps(to_plain(obj, nonfinite="raise"), indent=2, allow_nan=False, ensure_ascii=False)
    if dest in (None, "-"):
        print(text)
    else:
        Path(dest).write_text(text + "\n")


def build_parser() -> argparse.ArgumentParser:
    from theorycheck import __version__

    parser = argparse.ArgumentParser(
        prog="theorycheck",
        description="Derive, integrate and verify the implicit-bias claims of GD and SAM on "
        "L-layer linear diagonal networks (arXiv 2603.08290).",
    )
    parser.add_argument("--version", action="version", version=f"theorycheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from theorycheck.cli.checks import join_negative_values

    parser = build_parser()
    args = parser.parse_args(join_negative_values(sys.argv[1:] if argv is None else list(argv), parser))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TheorycheckError as exc:
        print(f"theorycheck {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"theorycheck {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `theorycheck … | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

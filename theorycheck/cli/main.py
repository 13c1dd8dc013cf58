"""The ``theorycheck`` command line: a thin layer over the library.

Every command parses its options, calls one library function and prints that result's
``as_dict()`` with ``--json`` (or a text report). This module only dispatches and turns
user errors into one line on stderr with exit status 2 (no traceback).
"""

from __future__ import annotations

import sys

from theorycheck.cli.parser import COMMAND_MODULES, build_parser
from theorycheck.errors import TheorycheckError

__all__ = ["COMMAND_MODULES", "build_parser", "main"]


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
        from theorycheck.cli.errors import render, subparser

        print(f"theorycheck {args.command}: error: {render(exc, args.command, subparser(parser, args.command))}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"theorycheck {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `theorycheck … | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0

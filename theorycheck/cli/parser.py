"""The ``theorycheck`` argument parser, built from a table of command modules.

Each command module ``theorycheck/cli/commands/<name>.py`` defines ``register(subparsers)``
(which sets ``func``) and imports only the standard library and light modules at import
time: the library loads when the command runs, so ``theorycheck --help`` is instant. To add
a command, add its module to :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import importlib

#: subcommand modules, in the order ``theorycheck --help`` lists them
COMMAND_MODULES: tuple[str, ...] = (
    "theorycheck.cli.commands.setting",
    "theorycheck.cli.commands.derive",
    "theorycheck.cli.commands.prove",
    "theorycheck.cli.commands.verify",
    "theorycheck.cli.commands.thresholds",
    "theorycheck.cli.commands.check_certificate",
    "theorycheck.cli.commands.trajectory",
    "theorycheck.cli.commands.maxmargin",
    "theorycheck.cli.commands.saddles",
    "theorycheck.cli.commands.heatmap",
    "theorycheck.cli.commands.reproduce",
    "theorycheck.cli.commands.cnn",
    "theorycheck.cli.commands.linear_images",
    "theorycheck.cli.commands.packs",
    "theorycheck.cli.commands.predict",
)


def build_parser() -> argparse.ArgumentParser:
    from theorycheck.version import __version__

    parser = argparse.ArgumentParser(
        prog="theorycheck",
        description="Derive, integrate and verify implicit-bias theorems of GD and SAM on "
        "linear diagonal networks, one pack per paper (`theorycheck packs` lists them).",
    )
    parser.add_argument("--version", action="version", version=f"theorycheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser

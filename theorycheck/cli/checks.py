"""Checks the command line makes before any work starts: argument shapes argparse cannot
express (negative number lists), output paths, scheduler addresses, grid sizes.

Each check raises :class:`~theorycheck.errors.TheorycheckError` with one line that names
the problem and the fix, so a long run never fails at its very end on a typo.
"""

from __future__ import annotations

import argparse
import re

from theorycheck.errors import TheorycheckError
from theorycheck.outputs import FIGURE_SUFFIXES, output_file, output_folder, output_prefix

__all__ = ["join_negative_values", "check_output_file", "check_output_dir", "check_output_prefix",
           "check_scheduler",
           "check_grid_size", "FIGURE_SUFFIXES"]

#: a number, or a list of numbers separated by "," or ":" (e.g. ``-1,2`` or ``-3:-1:5``)
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|[-+]?nan"
_NUMBER_LIST = re.compile(rf"^(?:{_NUMBER})(?:[,:](?:{_NUMBER}))*$", re.IGNORECASE)




def _value_options(parser: argparse.ArgumentParser) -> tuple[set[str], dict[str, argparse.ArgumentParser]]:
    """Long option strings of ``parser`` that take a value, and its subcommands' parsers."""
    out: set[str] = set()
    subs: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:  # argparse keeps no public view of its actions
        if isinstance(action, argparse._SubParsersAction):
            subs.update(action.choices)
        elif action.nargs != 0 and action.option_strings:
            out.update(o for o in action.option_strings if o.startswith("--"))
    return out, subs


def join_negative_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``["--z", "-1,2"]`` → ``["--z=-1,2"]``: argparse reads a value that starts with "-"
    and is not a plain negative number (``-1,2``, ``-3:-1:5``, ``-1e-3,2``) as an option.
    Only options that take a value (in the subcommand where they appear) are joined, and
    only with a value that parses as a list of numbers, so nothing else changes meaning."""
    options, subs = _value_options(parser)
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in subs:  # from here on, the subcommand's options
            options, subs = _value_options(subs[tok])
        elif (tok in options and i + 1 < len(argv) and argv[i + 1].startswith("-")
                and _NUMBER_LIST.match(argv[i + 1].strip())):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        elif tok in options and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            out += [tok, argv[i + 1]]  # the option's value, never a subcommand name
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def check_output_file(path: str | None, option: str, *, suffixes: tuple[str, ...] | None = None) -> None:
    """An output file (``-``: standard output), checked before a run by the one rule of
    :mod:`theorycheck.outputs`, its errors naming the option."""
    if path in (None, "-"):
        return
    output_file(path, option, suffixes=suffixes)


def check_output_prefix(prefix: str | None, option: str) -> None:
    """A saved sweep's prefix (PREFIX.npz + PREFIX.json), checked by the same rule."""
    if prefix is not None:
        output_prefix(prefix, option)


def check_output_dir(path: str | None, option: str) -> None:
    """An output folder (created when missing), checked by the same rule."""
    if path is not None:
        output_folder(path, option)


_ADDRESS = re.compile(r"^(?:(tcp|tls|inproc|ucx|ws|wss)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(\d{1,5}))?$")


def check_scheduler(address: str | None) -> None:
    """A Dask scheduler address: ``[tcp://]HOST[:PORT]`` (or tls/ucx/ws), port 1..65535."""
    if address is None:
        return
    m = _ADDRESS.match(str(address).strip())
    if not m or (m.group(3) is None and m.group(1) is None):
        raise TheorycheckError(f"--scheduler {address!r}: not a scheduler address; write tcp://HOST:PORT "
                               "(e.g. tcp://127.0.0.1:8786)")
    if m.group(3) is not None and not 1 <= int(m.group(3)) <= 65535:
        raise TheorycheckError(f"--scheduler {address!r}: port {m.group(3)} is outside 1..65535")


def check_grid_size(*sizes: int, what: str = "grid") -> None:
    """Refuse a grid of more than ``sweep.grid.MAX_GRID_POINTS`` points before allocating it."""
    from theorycheck.api.calls import MAX_GRID_POINTS

    total = 1
    for s in sizes:
        total *= int(s)
    if total > MAX_GRID_POINTS:
        shape = " × ".join(str(int(s)) for s in sizes)
        raise TheorycheckError(f"{what} of {shape} = {total:.3g} points exceeds the limit of "
                               f"{MAX_GRID_POINTS:.3g} points: use fewer points")

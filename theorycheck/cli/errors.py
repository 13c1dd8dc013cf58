"""Library errors in the command line's language.

The library names its arguments as Python does (``discrete=True needs eta and steps``,
``depth=0: L must be ≥ 1``); an :class:`~theorycheck.errors.ArgumentError` lists the names
its message mentions. Here, and only here, those names become the flags of the command that
ran: ``name=True`` → ``--flag``, ``name=value`` → ``--flag value``, a bare ``name`` → ``--flag``.
The flag of an argument is the option whose ``dest`` it is, unless :data:`FLAG_OF` says
otherwise for that command.
"""

from __future__ import annotations

import argparse
import re

from theorycheck.errors import TheorycheckError

#: (command, library argument) -> flag, where the option's dest is not the library's name
FLAG_OF: dict[tuple[str, str], str] = {
    ("trajectory", "path"): "--plot",
    ("heatmap", "path"): "--out",
    ("reproduce", "path"): "--out",
    ("thresholds", "alpha_range"): "--alpha",
}


#: (command, library argument) -> what the command line adds to the message
HINTS: dict[tuple[str, str], str] = {
    ("verify", "claims"): "`theorycheck verify --list` shows them",
}


def flags_of(parser: argparse.ArgumentParser | None) -> dict[str, str]:
    """dest -> its long option string (``--t-max`` for ``t_max``) for one command's parser."""
    out: dict[str, str] = {}
    for action in getattr(parser, "_actions", ()):
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs and action.dest not in out:
            out[action.dest] = max(longs, key=len) if action.dest.replace("_", "-") not in \
                [o[2:] for o in longs] else "--" + action.dest.replace("_", "-")
    return out


def _flag(name: str, command: str, flags: dict[str, str]) -> str | None:
    return FLAG_OF.get((command, name)) or flags.get(name)


def render(exc: TheorycheckError, command: str, parser: argparse.ArgumentParser | None = None) -> str:
    """The one line the CLI prints for ``exc``: its message with the library's argument names
    (those ``exc.arguments`` lists) written as the flags of ``command``."""
    msg = str(exc)
    flags = flags_of(parser)
    for name in sorted(getattr(exc, "arguments", ()), key=len, reverse=True):
        flag = _flag(name, command, flags)
        if flag is None:
            continue
        word = rf"(?<![\w.'\"-]){re.escape(name)}"
        msg = re.sub(word + r"=True\b", flag, msg)
        msg = re.sub(word + r"=(?:'([^']*)'|\"([^\"]*)\"|(?=\S))",
                     lambda m: f"{flag} {m.group(1) if m.group(1) is not None else (m.group(2) or '')}", msg)
        msg = re.sub(word + r"(?![\w=-])", flag, msg)
        if (command, name) in HINTS:
            msg = f"{msg}; {HINTS[command, name]}"
    return msg


def subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser | None:
    """The parser of one subcommand (None when unknown)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(command)
    return None

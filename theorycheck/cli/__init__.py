"""The ``theorycheck`` command line: parse, call one library function, print its result."""

from theorycheck.cli.main import main

__all__ = ["main"]

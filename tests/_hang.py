"""One hang guard for the tests: a body that runs far past its own budget fails the test
(SIGALRM, main thread) instead of blocking the suite."""

from __future__ import annotations

import signal
from contextlib import contextmanager


class Hang(AssertionError):
    """The body was still running after the guard's seconds: a budget was not enforced."""


@contextmanager
def hang_guard(seconds: float):
    def fire(*_):
        raise Hang(f"still running after {seconds:g} s: a budget was not enforced")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

"""A small progress bar on stderr for long work (no dependency)."""

from __future__ import annotations

import sys
import time


class Progress:
    """``Progress(label, enabled)``; ``update(fraction)``; ``close()``. Writes
    ``label [#####-----]  45%  3.2 s`` to stderr, at most ten times a second. ``enabled=None``
    shows it only when stderr is a terminal."""

    def __init__(self, label: str, enabled: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = (hasattr(self.stream, "isatty") and self.stream.isatty()) if enabled is None else bool(enabled)
        self.label = label
        self.t0 = time.perf_counter()
        self.last = -1.0
        self.fraction = 0.0

    def update(self, fraction: float) -> None:
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1 and self.fraction < 1.0:
            return
        self.last = now
        n = int(round(20 * self.fraction))
        self.stream.write(f"\r{self.label} [{'#' * n}{'-' * (20 - n)}] {100 * self.fraction:5.1f}%  "
                          f"{now - self.t0:6.1f} s")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own on the stream (e.g. "compiling …"), when the bar is shown."""
        if self.enabled:
            self.stream.write(f"\r{self.label}: {text}\n")
            self.stream.flush()
            self.last = -1.0

    def __call__(self, fraction: float) -> None:
        self.update(fraction)

    def close(self) -> None:
        if self.enabled:
            self.update(1.0)
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------- the one `progress` argument
# Every public entry point takes ``progress: bool | None``: True reports on stderr, False is
# silent, None (the default) reports when stderr is a terminal. The reporters below turn that
# flag into the callbacks the solvers call (internal; never part of the public API).

def enabled(progress: bool | None, stream=None) -> bool:
    """The ``progress`` flag resolved: None means "when stderr is a terminal"."""
    if progress is None:
        stream = stream or sys.stderr
        return bool(hasattr(stream, "isatty") and stream.isatty())
    if not isinstance(progress, bool):
        from theorycheck.errors import ArgumentError

        raise ArgumentError(f"progress={progress!r}: give True, False or None (when stderr is a terminal)",
                            "progress")
    return progress


def flow_reporter(progress: bool | None):
    """``report(t, t_max, steps)`` for a trajectory (called every 2 s or so), or None."""
    if not enabled(progress):
        return None

    def report(t: float, t_max: float, steps: int) -> None:
        print(f"  … t = {t:.6g} of {t_max:.6g} ({steps} steps)", file=sys.stderr, flush=True)

    return report


def step_reporter(progress: bool | None):
    """``report(k, steps)`` for a discrete run, or None."""
    if not enabled(progress):
        return None

    def report(k: int, steps: int) -> None:
        print(f"  … step {k} of {steps}", file=sys.stderr, flush=True)

    return report


def count_reporter(progress: bool | None):
    """``report(done, total, what)`` (at most twice a second, and at the end), or None."""
    if not enabled(progress):
        return None
    last = [0.0]

    def report(done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if now - last[0] > 0.5 or done == total:
            last[0] = now
            print(f"  … {done} of {total} {what}", file=sys.stderr, flush=True)

    return report


def input_reporter(progress: bool | None):
    """``report(key, tried)`` after each drawn input of a claim (one overwritten line), or None."""
    if not enabled(progress):
        return None

    def report(key: str, n: int) -> None:
        print(f"\r  {key}: {n} input{'s' * (n != 1)} …   ", end="", file=sys.stderr, flush=True)

    return report

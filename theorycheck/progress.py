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

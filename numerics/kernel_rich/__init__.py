"""Experiments of the pack ``kernel-rich`` (run by ``theorycheck reproduce --pack kernel-rich``).

Each module defines ``NAME``, ``TITLE`` and ``reproduce(out, *, quick) -> numerics.Report``
(it computes, writes its arrays as JSON, draws PNG and SVG, and summarises in numbers)."""

from __future__ import annotations

EXPERIMENTS: dict[str, str] = {
    "transition": "theorycheck.numerics.kernel_rich.transition",
}


def experiments() -> dict[str, str]:
    return dict(EXPERIMENTS)

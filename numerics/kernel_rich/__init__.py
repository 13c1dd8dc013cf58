"""Experiments of the pack ``kernel-rich`` (``theorycheck reproduce --pack kernel-rich``), one module
each, in the protocol of :mod:`theorycheck.experiments`."""

from __future__ import annotations

EXPERIMENTS: dict[str, str] = {
    "transition": "theorycheck.numerics.kernel_rich.transition",
}


def experiments() -> dict[str, str]:
    return dict(EXPERIMENTS)

"""Experiments of the pack ``lp-margin`` (``theorycheck reproduce --pack lp-margin``); the same
module interface as :mod:`theorycheck.numerics.kernel_rich`."""

from __future__ import annotations

EXPERIMENTS: dict[str, str] = {
    "directional": "theorycheck.numerics.lp_margin.directional",
}


def experiments() -> dict[str, str]:
    return dict(EXPERIMENTS)

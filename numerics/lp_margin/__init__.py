"""Experiments of the pack ``lp-margin`` (``theorycheck reproduce --pack lp-margin``), one module
each, in the protocol of :mod:`theorycheck.experiments`."""

from __future__ import annotations

EXPERIMENTS: dict[str, str] = {
    "directional": "theorycheck.numerics.lp_margin.directional",
}


def experiments() -> dict[str, str]:
    return dict(EXPERIMENTS)

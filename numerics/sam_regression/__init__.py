"""Experiments of the pack ``sam-regression`` (``theorycheck reproduce --pack sam-regression``), one module
each, in the protocol of :mod:`theorycheck.experiments`."""

from __future__ import annotations

EXPERIMENTS: dict[str, str] = {
    "rho-sweep": "theorycheck.numerics.sam_regression.rho_sweep",
}


def experiments() -> dict[str, str]:
    return dict(EXPERIMENTS)

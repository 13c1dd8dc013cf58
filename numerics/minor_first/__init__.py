"""Experiments of the pack ``minor-first`` (``theorycheck reproduce --pack minor-first``), one module
each, in the protocol of :mod:`theorycheck.experiments`."""

from __future__ import annotations

#: experiment name -> module, in the order ``reproduce all`` runs them
EXPERIMENTS: dict[str, str] = {
    "e1-one-example": "theorycheck.numerics.minor_first.e1_one_example",
    "e1-synthetic": "theorycheck.numerics.minor_first.e1_synthetic",
    "regime-map": "theorycheck.numerics.minor_first.regime_map",
    "loss-plateau": "theorycheck.numerics.minor_first.loss_plateau",
    "discrete-vs-flow": "theorycheck.numerics.minor_first.discrete_vs_flow",
}


def experiments() -> dict[str, str]:
    """The pack's experiments: name → module (run by ``theorycheck reproduce``)."""
    return dict(EXPERIMENTS)

"""Experiments of the pack ``saddle-to-saddle`` (``theorycheck reproduce --pack saddle-to-saddle``), in the
protocol of :mod:`theorycheck.experiments`; :mod:`.flows` holds the observations the claims share."""

from __future__ import annotations

EXPERIMENTS: dict[str, str] = {
    "paths": "theorycheck.numerics.saddle_to_saddle.paths",
}


def experiments() -> dict[str, str]:
    return dict(EXPERIMENTS)

"""``theorycheck reproduce``: the paper's experiments (numerics/), figures and a summary."""

from __future__ import annotations


def register(sub) -> None:  # filled in below
    pass

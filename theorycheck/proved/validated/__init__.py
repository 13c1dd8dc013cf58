"""Validated integration in ball arithmetic: every step an enclosure, never a point (see :mod:`.lohner`;
the balls themselves are :mod:`theorycheck.arith.balls`)."""

from theorycheck.proved.validated.lohner import DEFAULT_BUDGET, Flowpipe, LohnerSet, Step, integrate

__all__ = ["DEFAULT_BUDGET", "Flowpipe", "LohnerSet", "Step", "integrate"]

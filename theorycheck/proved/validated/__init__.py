"""Validated integration in ball arithmetic: every step an enclosure, never a point (see :mod:`.integrate`)."""

from theorycheck.proved.validated.balls import arb_context, ball_text, hull, interval, read_ball, to_ball
from theorycheck.proved.validated.integrate import DEFAULT_BUDGET, Flowpipe, LohnerSet, Step, integrate

__all__ = ["DEFAULT_BUDGET", "Flowpipe", "LohnerSet", "Step", "arb_context", "ball_text", "hull", "integrate", "interval",
           "read_ball", "to_ball"]

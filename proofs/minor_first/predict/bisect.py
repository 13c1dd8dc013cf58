"""One bisection of a fate in a log scale, shared by the α_c searches of the depth-L flow (in c on the blown-up
ratio system, :mod:`theorycheck.proofs.minor_first.predict.blowup`; in α on the flow in θ = ln u, :mod:`theorycheck.proofs.minor_first.predict.depth`).

The bracket's ends are decided runs. A midpoint left undecided is replaced by the quarter points; if all three are
undecided, or ``max_evaluations`` trials or ``max_steps`` integration steps over the whole search are spent, the
search stops and says which."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from theorycheck.status import Fate

__all__ = ["bisect_fate"]


def bisect_fate(lo: Any, hi: Any, trial: Callable[[float], Any], *, at: Callable[[Any], float],
                fate: Callable[[Any], Fate], upper: Fate, rel: float, max_evaluations: int,
                what: str, steps: Callable[[Any], int] | None = None,
                max_steps: int | None = None) -> tuple[Any, Any, int, str | None]:
    """Narrow [lo, hi] (runs, ``at(lo) < at(hi)``, decided) in ln x until at(hi)/at(lo) − 1 ≤ ``rel``.
    ``trial(x)``: the run at x; a decided run whose ``fate`` is ``upper`` becomes the new ``hi``, any other
    decided run the new ``lo``. Returns (lo, hi, trials spent, why it stopped early or None); ``what`` names
    x in that reason. ``steps(run)``: the integration steps a trial spent, counted against ``max_steps`` (a budget of
    the whole search, so that its work is bounded whatever each trial's own budget)."""
    evals, spent, stopped = 0, 0, None
    while at(hi) / at(lo) - 1.0 > rel:
        w = math.log(at(hi) / at(lo))
        decided = None
        for frac in (0.5, 0.25, 0.75):
            if evals >= max_evaluations:
                stopped = f"evaluation budget of {max_evaluations} integrations ran out"
                break
            if max_steps is not None and spent >= max_steps:
                stopped = f"step budget of {max_steps} steps over the search ran out"
                break
            x = at(lo) * math.exp(frac * w)
            run = trial(x)
            evals += 1
            spent += steps(run) if steps is not None else 0
            if fate(run) is not Fate.UNDECIDED:
                decided = run
                break
            stopped = f"undecided at {what} = {x!r}: {run.why}"
        if decided is None:
            break
        stopped = None
        if fate(decided) is upper:
            hi = decided
        else:
            lo = decided
    return lo, hi, evals, stopped

"""The one log-scale bisection of a fate (theorycheck.proofs.minor_first.predict.bisect): it narrows to the threshold, steps around an
undecided midpoint, and says which budget stopped it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from theorycheck.proofs.minor_first.predict.bisect import bisect_fate

from theorycheck.status import Fate


@dataclass
class Run:
    x: float
    fate: Fate
    why: str = ""


def trial_for(threshold, undecided=()):
    calls = []

    def trial(x):
        calls.append(x)
        if any(abs(x / u - 1) < 1e-12 for u in undecided):
            return Run(x, Fate.UNDECIDED, "a step budget")
        return Run(x, Fate.COLLAPSE if x > threshold else Fate.GROWTH)
    return trial, calls


def kw(**extra):
    return dict(at=lambda r: r.x, fate=lambda r: r.fate, upper=Fate.COLLAPSE, what="c") | extra


def test_narrows_to_the_threshold():
    trial, calls = trial_for(0.3)
    lo, hi, n, stopped = bisect_fate(Run(0.1, Fate.GROWTH), Run(1.0, Fate.COLLAPSE), trial,
                                     **kw(rel=1e-12, max_evaluations=200))
    assert stopped is None and n == len(calls)
    assert lo.fate is Fate.GROWTH and hi.fate is Fate.COLLAPSE and lo.x <= 0.3 < hi.x and hi.x / lo.x - 1 <= 1e-12


def test_an_undecided_midpoint_is_replaced_by_a_quarter_point():
    mid = (0.1 * 1.0) ** 0.5  # the first midpoint in ln x
    trial, calls = trial_for(0.3, undecided=[mid])
    lo, hi, _, stopped = bisect_fate(Run(0.1, Fate.GROWTH), Run(1.0, Fate.COLLAPSE), trial,
                                     **kw(rel=1e-6, max_evaluations=200))
    assert stopped is None and lo.x <= 0.3 < hi.x and calls[1] == pytest.approx(0.1 * 10 ** 0.25, rel=1e-14)


def test_three_undecided_points_stop_the_search_and_say_where():
    q = [0.1 * 10 ** f for f in (0.5, 0.25, 0.75)]
    trial, _ = trial_for(0.3, undecided=q)
    lo, hi, n, stopped = bisect_fate(Run(0.1, Fate.GROWTH), Run(1.0, Fate.COLLAPSE), trial,
                                     **kw(rel=1e-6, max_evaluations=200))
    assert (lo.x, hi.x, n) == (0.1, 1.0, 3) and stopped.startswith("undecided at c = ") and "a step budget" in stopped


def test_the_evaluation_budget_stops_it_and_says_so():
    trial, calls = trial_for(0.3)
    lo, hi, n, stopped = bisect_fate(Run(0.1, Fate.GROWTH), Run(1.0, Fate.COLLAPSE), trial,
                                     **kw(rel=1e-12, max_evaluations=5))
    assert n == 5 == len(calls) and stopped == "evaluation budget of 5 integrations ran out"
    assert lo.x <= 0.3 < hi.x

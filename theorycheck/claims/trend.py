"""Whether a sequence observed along a flow tends to 0: the extrapolation rule shared by every claim about
a limit (directions, KKT residuals, gaps to a predicted limit), one rule for every pack."""

from __future__ import annotations

import numpy as np

from theorycheck.claims.claim import Outcome

__all__ = ["tends_to_zero"]


def tends_to_zero(log_t, values, detail: dict) -> Outcome:
    """Decide whether the values (a residual ≥ 0 at the checkpoints) tend to 0.

    holds: Aitken's Δ² limit (:func:`aitken_limit`) is within 3 error bars + 1e-6 of 0 and those 3
    error bars are ≤ 1e-3 (the limit is resolved to the fails bound: a noisy extrapolation, e.g. a
    residual that bounces around 4e-3 with an error bar as large, is not evidence of 0), or the last
    value is below 1e-9. fails only when all three say the limit is positive: Aitken's limit exceeds
    3 error bars + 1e-3; the rate model a + c·r^(−p), p > 0, fitted to the last 5 checkpoints with r
    = log t and with r = log log t (directional convergence can be that slow, and the exponent is
    not known) has a − 3 s.e. > 1e-3 for every admissible p of both (:func:`power_limit`); and the
    sequence has stopped decreasing (its last step is within 3 of Aitken's error bars). Otherwise
    inconclusive: a sequence still falling is no evidence of a nonzero limit."""
    from theorycheck.solvers.lp_limits import aitken_limit, power_limit

    a, se = aitken_limit(values)
    fits = {"log_t": power_limit(log_t, values), "log_log_t": power_limit(np.log(log_t), values)}
    step = float(values[-2] - values[-1]) if len(values) >= 2 else float("inf")
    stalled = abs(step) <= 3 * se
    detail.update({"log_t": log_t, "values": values, "intercept": a, "intercept_se": se,
                   "rate_fits": fits, "last_step": step, "stopped_decreasing": stalled})
    if values[-1] <= 1e-9 or (abs(a) <= 3 * se + 1e-6 and 3 * se <= 1e-3):
        return Outcome(True, abs(a), detail)
    if a > 3 * se + 1e-3 and stalled and all(f["a_low"] > 1e-3 for f in fits.values()):
        return Outcome(False, abs(a), detail)
    detail["undecided_because"] = ("the values are still decreasing" if not stalled else
                                   "a rate model admits a limit ≤ 1e-3" if a > 3 * se + 1e-3 else
                                   "the extrapolated limit is between the holds and fails bounds" if 3 * se <= 1e-3
                                   else "the extrapolation's error bar exceeds 1e-3")
    return Outcome(None, abs(a), detail)

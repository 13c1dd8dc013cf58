"""The batched systems' protocol (:class:`BatchSystem`), their units (data scaled by a power of two, exact),
the θ = ln u systems' clock (:class:`_ClockedTheta`: dτ/ds = κ, slowed near a singularity), and the row-wise
helpers they share: j† by the tool's tie rule, the gap to a tie, the optimizers they serve."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from theorycheck.errors import TheorycheckError
from theorycheck.optimizers import get as get_optimizer
from theorycheck.optimizers import supporting
from theorycheck.vocabulary import TIE_LOG, TimeKind

__all__ = ["EVENT_LOG", "BatchSystem", "log2_unit", "log_square_summand", "product_optimizers"]

#: κ clocks and event levels: a rate |dθ/dτ| > e^{EVENT_LOG}·c means the singular time is
#: less than e^{−EVENT_LOG}/c away (c: the system's rate scale)
EVENT_LOG = 30.0


class BatchSystem:
    """What :func:`integrate` solves. State of member b: (τ_b, y_b), y of width ``m``.

    Subclasses define ``initial()``, ``rates(idx, tau, y) -> (dτ/ds, dy/ds)``,
    ``after_step(idx, tau, y, dtau, dy) -> (codes, changed)``, ``observe(idx, tau, y)``
    and ``fill(idx, codes)`` (values of the cells after a member stopped at an event)."""

    ops: Any
    B: int
    m: int
    #: observable name -> numpy dtype, and the value of a cell that was never computed
    observables: dict[str, tuple[Any, Any]] = {}
    #: per-member event records (numpy arrays, np.inf = did not happen)
    events: dict[str, np.ndarray]
    #: which time the physical time is (vocabulary.TimeKind): rescaled (one example) or real
    time_kind = TimeKind.RESCALED
    #: k: the system integrates in the time τ̂ = 2^k τ (see the module's Units)
    time_log2: int = 0
    #: the events that are times (mapped back by 2^−k); the others are counts
    time_events: tuple[str, ...] = ()

    def initial(self):
        raise NotImplementedError

    def rates(self, idx, tau, y):
        raise NotImplementedError

    def after_step(self, idx, tau, y, dtau, dy):
        return self.ops.zeros(len(idx), dtype=int), None

    def observe(self, idx, tau, y) -> dict:
        raise NotImplementedError

    def fill(self, idx: np.ndarray, codes: np.ndarray) -> dict:
        return {}

    def metadata(self) -> dict:
        return {}

    def observables_to_physical(self, obs: dict) -> dict:
        """The observables of the system's own units in the caller's (identity unless overridden)."""
        return obs

    def to_physical(self, t_stop: np.ndarray, events: dict, obs: dict) -> tuple[np.ndarray, dict, dict]:
        """(t_stop, events, observables) of a run mapped from τ̂ = 2^k τ back to τ (exact but
        where a result leaves the float64 range)."""
        k = self.time_log2
        if k == 0:
            return t_stop, events, obs
        with np.errstate(over="ignore", under="ignore"):
            ev = {name: (np.ldexp(v, -k) if name in self.time_events else v) for name, v in events.items()}
            return np.ldexp(t_stop, -k), ev, self.observables_to_physical(obs)


def log2_unit(x) -> int:
    """k with 2^k ≤ max_j |x_j| < 2^(k+1) (0 when x is 0 or not finite): x/2^k has its largest
    entry in [1, 2), and dividing by 2^k is exact (subnormal data included)."""
    a = np.abs(np.asarray(x, dtype=float))
    m = float(np.max(a)) if a.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return 0
    return math.frexp(m)[1] - 1


def _unit_data(z: np.ndarray) -> tuple[np.ndarray, int]:
    """(ẑ = z/2^k, k) with k = :func:`log2_unit` (z): the data one-example systems integrate."""
    k = log2_unit(z)
    return np.ldexp(z, -k), k


#: |x| outside [2^−SQUARE_SAFE_LOG2, 2^SQUARE_SAFE_LOG2]: x² leaves float64 (or loses digits as a subnormal)
SQUARE_SAFE_LOG2 = 500


def _ldexp(ops, x, e):
    """x·2^e, exact (e per element; torch: two halves, so that 2^e itself cannot overflow)."""
    if ops.name == "numpy":
        return np.ldexp(x, np.asarray(e).astype(np.int32))
    h = ops.floor(e / 2)
    return x * ops.pow(2.0, h) * ops.pow(2.0, e - h)


def log_square_summand(ops, f, x, th):
    """``f(x, θ)`` = ln(term j of a sum of squares), homogeneous of degree 2 in x (ln L x_j² u_j^(2L−2):
    N² of one example, S² of several), without the square of an |x_j| ≲ 1e-154 underflowing (the
    term was dropped: ℓ2's N or S of data at 1e-213 came out −inf) or of one ≳ 1e154 overflowing:
    there f is evaluated at x_j·2^−e_j (exact, e_j the binary exponent of x_j) and 2 e_j ln 2 added;
    elsewhere it is f(x, θ) bitwise. tests/test_batched_scale.py checks the homogeneity on the
    symbolic forms."""
    with ops.errstate():
        _, e = ops.frexp(x)
        a = ops.abs(x)
        far = (a > 2.0**SQUARE_SAFE_LOG2) | ((a < 2.0**-SQUARE_SAFE_LOG2) & (a > 0))
        if not ops.any(far):
            return f(x, th)
        e = ops.where(far, e, 0) * 1.0
        return f(_ldexp(ops, x, -e), th) + (2 * math.log(2.0)) * e


def _balanced_alpha_rho(alpha, rho, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(B×d α, B ρ) for a batch of balanced inits: a scalar α per member is repeated over
    the features; α_j > 0 and ρ ≥ 0 are required."""
    alpha = np.asarray(alpha, dtype=float)
    if alpha.ndim <= 1:
        alpha = np.repeat(alpha.reshape(-1, 1), d, axis=1)
    rho = np.broadcast_to(np.asarray(rho, float).reshape(-1), (alpha.shape[0],)).copy()
    if alpha.shape[1] != d or np.any(alpha <= 0) or np.any(rho < 0):
        raise TheorycheckError("balanced sweeps need α_j > 0 (one per feature) and ρ ≥ 0")
    return alpha, rho


def _col(x):
    return x[:, None]



def _leader(ops, th, L: int):
    """j† per row by the tool's tie rule (vocabulary.TIE_RTOL): the smallest index j with
    |β_j| ≥ (1 − TIE_RTOL)·max_k |β_k|, i.e. L θ_j ≥ L max θ − TIE_LOG; 0 where every θ_j = −inf
    (β = 0). A plain argmax would let a 1e-12 rounding gap pick the larger index of a tie."""
    mx = ops.amax(th, 1)
    with ops.errstate():
        near = ops.where(th * L >= (mx * L - TIE_LOG)[:, None], 1.0, 0.0)
    return ops.where(mx == -math.inf, 0, ops.argmax(near, 1) + 1)


def _top_gap(ops, th):
    """θ_(1) − θ_(2): how far the cell is from a tie of j† (inf with one live coordinate).
    A gap below the integration error (≈ rtol·|θ| + atol) means j† there is not resolved."""
    if th.shape[1] < 2:
        return ops.full((th.shape[0],), math.inf)
    top = ops.amax(th, 1)
    am = ops.argmax(th, 1)
    mask = ops.arange(th.shape[1])[None, :] == am[:, None]
    second = ops.amax(ops.where(mask, -math.inf, th), 1)
    with ops.errstate():
        return ops.where(top == -math.inf, math.inf, top - second)


def product_optimizers() -> tuple[str, ...]:
    """The optimizers of the product classification flows whose step is a function of the gradient alone
    (the batched systems' domain: their balanced forms take ε(g); a weighted step, ASAM, runs in
    :mod:`theorycheck.solvers`)."""
    return tuple(o.name for o in supporting("product", "logistic", 2) if not o.weighted)


def check_domain(optimizer: str, L: int, what: str) -> None:
    """Refuse, in one line, an optimizer or depth the balanced batched systems are not written for: a step of the
    gradient alone (:func:`product_optimizers`), GD and ℓ∞-SAM at L ≥ 2, ℓ2-SAM at L = 2."""
    if optimizer not in product_optimizers():
        raise TheorycheckError(f"batched sweeps cover {', '.join(product_optimizers())}, not {optimizer!r}")
    if L < 2 or (get_optimizer(optimizer).normalised and L != 2):
        raise TheorycheckError(f"batched {what} sweeps cover GD and ℓ∞-SAM for L ≥ 2 and ℓ2-SAM for L = 2 "
                               f"(got {optimizer}, L = {L}): use `theorycheck trajectory` for this setting")


def _decoupled(optimizer: str) -> bool:
    """GD and ℓ∞-SAM, one example: the balanced field acts coordinatewise."""
    return not get_optimizer(optimizer).normalised


class _ClockedTheta(BatchSystem):
    """Systems in θ = ln u whose clock slows where the field is large: dτ/ds = κ =
    1/(1 + ‖dθ/dτ‖/c), so singular times (sliding, blow-up) take a bounded number of steps."""

    def theta_rate(self, idx, tau, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _mark_dead(self, idx, idx_np, tau_np, newly, r):
        """Freeze the coordinates in ``newly`` (reached 0 at this step), record the first
        such time per member and an estimate of the event-time error (1/|rate|); returns
        the members that changed, or None."""
        o = self.ops
        nd = o.to_numpy(newly)
        if not nd.any():
            return None
        self.dead[idx] = self.dead[idx] | newly
        err = np.where(nd, 1.0 / np.maximum(np.abs(o.to_numpy(r)), 1e-300), 0.0).max(axis=1)
        ev = self.events
        ev["event_time_error"][idx_np] = np.maximum(ev["event_time_error"][idx_np], err)
        first = nd.any(axis=1) & ~np.isfinite(ev["first_zero"][idx_np])
        ev["first_zero"][idx_np[first]] = tau_np[first]
        return nd.any(axis=1)

    def rates(self, idx, tau, y):
        o = self.ops
        r = self.theta_rate(idx, tau, y)
        rc = r * (1.0 / self.c)  # ‖θ'‖/c as ‖θ'/c‖: θ' scales with c, so its squares cannot overflow (|z| ~ 1e200)
        kappa = 1.0 / (1.0 + o.sqrt(o.sum(rc * rc, 1)))
        return kappa, r * kappa[:, None]

"""One status vocabulary: why a run (a trajectory, a discrete run, a member of a batched
sweep) stopped, or where it stands.

`Status` is a ``StrEnum``: a member *is* its word (``Status.T_MAX == "t_max"``, and it
prints and serialises to JSON as that word), carries its one-line ``message``, whether it
is a reason of the flow or algorithm (``ok``: not a budget or the number format running
out), and, for the statuses a member of the batched engine can end in, its integer
``code`` (the ``status`` arrays of batched results hold codes; the compiled kernel uses the
module-level integers below).

No heavy imports here: the vocabulary is usable without numpy, sympy or scipy.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from theorycheck.errors import TheorycheckError


class Status(StrEnum):
    """A status word with its message, ``ok`` flag and batched ``code`` (None: not a
    batched status)."""

    message: str
    ok: bool
    code: int | None

    def __new__(cls, word: str, message: str, ok: bool, code: int | None = None):
        obj = str.__new__(cls, word)
        obj._value_ = word
        obj.message = message
        obj.ok = ok
        obj.code = code
        return obj

    # ---- flows (single trajectories) and shared
    T_MAX = "t_max", "reached the requested final time", True
    COLLAPSE = ("collapse", "the predictor reached 0 in finite time (ℓ2: N → 0; ℓ∞: every coordinate slid to 0)",
                True, 2)
    BLOWUP = "blowup", "finite-time blow-up (L ≥ 3): the norm passed the blow-up threshold", True, 3
    STATIONARY = ("stationary", "every coordinate is at an equilibrium or frozen; the state is constant from here on",
                  True)
    CRITICAL_POINT = ("critical_point",
                      "∇Lo(w) → 0 away from w = 0: ℓ2-SAM's perturbation ρ∇Lo/‖∇Lo‖ is undefined there", True, 9)
    NORM_LIMIT = ("norm_limit", "the weights left the float64 range (linear coordinates); rerun with precision (mpmath digits)",
                  False)
    NON_FINITE = "non_finite", "a field value was not finite (overflow); rerun with precision (mpmath digits)", False, 7
    RANGE_LIMIT = ("range_limit", "the problem's scales lie outside float64 (an entry near the subnormal range, or α of "
                   "its size): this float64 method cannot decide it", False)
    MAX_STEPS = "max_steps", "step budget exhausted", False, 5
    MAX_EVALUATIONS = "max_evaluations", "field-evaluation budget exhausted", False
    MAX_SECONDS = "max_seconds", "time budget exhausted", False
    MAX_EVENTS = "max_events", "event budget exhausted (too many switching events)", False
    STEP_SIZE_UNDERFLOW = ("step_size_underflow", "the step size fell below the spacing of floating-point numbers",
                           False, 6)
    SLIDING_UNSUPPORTED = ("sliding_unsupported",
                           "sliding on two coupled switching surfaces at once (ℓ∞, codimension 2) is not implemented",
                           False)
    # ---- validated (ball-arithmetic) integration
    PROVED_EVENT = ("proved_event", "the run's stop condition holds for every point of the enclosure (proved)",
                    True)
    WIDTH_LIMIT = ("width_limit", "the enclosure grew wider than the run allows: nothing more can be proved from it",
                   False)
    # ---- discrete algorithms (single runs)
    STEPS = "steps", "ran the requested number of steps", True
    NORM_REACHED = "norm_reached", "‖β‖ reached the requested level", True
    LOSS_REACHED = "loss_reached", "the training loss reached the requested level", True, 10
    CHATTERING = ("chattering", "ℓ∞-SAM flow: on a surface where the perturbation ρ sign(∇Lo) jumps the steps "
                  "shrank to nothing (a sliding mode of several examples); run the discrete algorithm there", False, 11)
    # ---- members of batched sweeps
    RUNNING = "running", "still integrating", False, 0
    DONE = "done", "reached the end of the time grid", True, 1
    NO_COLLAPSE = "no-collapse", "the no-collapse certificate N ≥ ρ z_max holds: never collapses", True, 4
    SIGN_CHANGE = ("sign_change", "discrete run: a step would take some u_j through 0 (an overshoot the flow never makes)",
                   False, 8)
    # ---- convergent solvers (pm_flow, lp_flow, interpolate)
    CONVERGED = "converged", "the residual reached the requested tolerance", True
    REACHED = "reached", "the flow reached its last checkpoint", True
    HORIZON = "horizon", "the time horizon was reached before the run converged", False
    MAX_ITERATIONS = "max_iterations", "iteration budget exhausted", False
    ROUNDING_LIMITED = ("rounding_limited", "the residual stalls above the tolerance: rounding limits the accuracy",
                        False)
    STALLED = "stalled", "the line search found no progress (the residual is the accuracy reached)", False
    INTEGRATOR_FAILED = "integrator_failed", "the integrator failed (its message says why)", False

    def __repr__(self) -> str:  # a member stands where a plain word stood: dicts and lists print it so
        return repr(self.value)

    @classmethod
    def from_code(cls, code: int) -> Status:
        """The status of a batched integer code."""
        try:
            return STATUS[int(code)]
        except KeyError:
            raise ValueError(f"no status has code {code!r}") from None


#: batched integer code -> status (the ``status`` arrays of batched results hold the codes)
STATUS: dict[int, Status] = {s.code: s for s in Status if s.code is not None}

# the integer codes as plain module constants (the compiled kernel and the array code use them)
RUNNING = Status.RUNNING.code
DONE = Status.DONE.code
COLLAPSE = Status.COLLAPSE.code
BLOWUP = Status.BLOWUP.code
NO_COLLAPSE = Status.NO_COLLAPSE.code
MAX_STEPS = Status.MAX_STEPS.code
STEP_SIZE_UNDERFLOW = Status.STEP_SIZE_UNDERFLOW.code
NON_FINITE = Status.NON_FINITE.code
SIGN_CHANGE = Status.SIGN_CHANGE.code
CRITICAL_POINT = Status.CRITICAL_POINT.code
LOSS_REACHED = Status.LOSS_REACHED.code
CHATTERING = Status.CHATTERING.code
#: codes of statuses that end a member without a budget running out
FINISHED_OK: tuple[int, ...] = tuple(sorted(c for c, s in STATUS.items() if s.ok))

__all__ = ["BatchRunEnd", "RunEnd", "Budget", "BudgetExhausted", "Fate", "Status", "STATUS", "FINISHED_OK", "RUNNING", "DONE", "COLLAPSE", "BLOWUP", "NO_COLLAPSE", "MAX_STEPS",
           "STEP_SIZE_UNDERFLOW", "NON_FINITE", "SIGN_CHANGE", "CRITICAL_POINT", "LOSS_REACHED", "CHATTERING"]


class Fate(StrEnum):
    """The fate of a run in the collapse question, one word for every solver and prediction
    (the α_c search, the several-examples and depth-L thresholds, the classification of one
    trajectory): collapse (β → 0, persisting or observed), growth (persisting or observed not to
    collapse: it trains), undecided (neither within the budget; the reason says why)."""

    COLLAPSE = "collapse"
    GROWTH = "growth"
    UNDECIDED = "undecided"

    @property
    def collapses(self) -> bool | None:
        """True, False, or None when undecided."""
        return {Fate.COLLAPSE: True, Fate.GROWTH: False}.get(self)


@dataclass(frozen=True)
class Budget:
    """The one set of limits that make a numerical routine terminate; the first one reached is its status
    (:class:`Status`). Every routine reads the limits it has of these: floating-point solvers steps,
    evaluations, seconds and events; validated runs steps, evaluations, seconds, step halvings in a row and the
    widest enclosure worth carrying (radius relative to 1 + |midpoint|); proved regime maps steps in all,
    ``piece_steps`` per piece and ``max_pieces``. ``max_seconds = math.inf``: no clock (the outcome then does
    not depend on the machine's load)."""

    max_steps: int = 200_000
    max_evaluations: int = 20_000_000
    max_seconds: float = 120.0
    max_events: int = 10_000
    max_halvings: int = 40
    max_width: float = 1e3
    piece_steps: int = 20_000
    max_pieces: int = 400

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_evaluations", "max_seconds", "max_events", "max_halvings", "max_width",
                     "piece_steps", "max_pieces"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0):
                raise TheorycheckError(f"budget {name} = {v!r}: must be a number > 0")

    @property
    def clock(self) -> bool:
        """Whether a wall-clock limit is set."""
        return math.isfinite(self.max_seconds)

    def but(self, **limits) -> Budget:
        """This budget with the limits named changed (``DEFAULT_BUDGET.but(max_seconds=math.inf)``: no clock)."""
        return dataclasses.replace(self, **limits)


@runtime_checkable
class RunEnd(Protocol):
    """How every float run of the engine says how it ended, by the same names: the trajectories of
    :func:`theorycheck.solvers.integrate.solve`, a compiled field's run, a regression flow, the LP-margin
    flow and the log-coordinate flow. ``status`` the :class:`Status` it stopped with (a stopping rule, the
    horizon, the budget that ran out, the number range), ``message`` the same in words with its numbers,
    ``ok`` whether it stopped for a reason of the flow (``status.ok``: not a budget, not the number range),
    ``evaluations`` the field evaluations it cost. A run's other keys are its own."""

    @property
    def status(self) -> Status: ...

    @property
    def message(self) -> str: ...

    @property
    def ok(self) -> bool: ...

    @property
    def evaluations(self) -> int: ...


@runtime_checkable
class BatchRunEnd(Protocol):
    """The same for a batch of members (:class:`theorycheck.batched.engine.BatchResult`, the pixel runs): ``status``
    per member, ``status_counts()`` the members per status word, ``ok`` no member stopped because a budget ran out."""

    @property
    def status(self): ...

    def status_counts(self) -> dict[str, int]: ...

    @property
    def ok(self) -> bool: ...


class BudgetExhausted(TheorycheckError):
    """A budget ran out (inside a field evaluation, a step, a search): ``status`` the
    :class:`Status` of the budget, the message says how much was spent. Every solver raises
    this one exception and turns it into its result's status."""

    def __init__(self, status: Status | str, message: str = ""):
        super().__init__(message or Status(status).message)
        self.status = Status(status)

    @property
    def reason(self) -> Status:
        """The budget's status (the stop reason of a trajectory)."""
        return self.status

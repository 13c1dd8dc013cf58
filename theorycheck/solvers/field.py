"""Any compiled vector field through the integrator every built-in flow uses.

A :class:`Field` is what a user or a pack brings: ``rhs(t, y)`` (float64 arrays), the initial
state and, optionally, stopping rules (:class:`Stop`: the run ends where a function of the state
crosses 0, located on the step's dense output) and an observation. :func:`solve_field` runs it
through :func:`theorycheck.solvers.driver.run_system`, the same loop as the GD / SAM flows: the step,
evaluation and wall-clock budgets, the stopping rules as events, the non-finite guards (a field
that leaves the number range ends the run with ``non_finite`` and the last finite state; a trial
step that overshoots is rejected and retried smaller), and the switch from DOP853 to Radau where
the stepping turns stiff. The result (:class:`FieldRun`) says why it stopped; it never raises for
numerical trouble.

    import numpy as np
    from theorycheck.solvers.field import Field, Stop, solve_field

    f = Field(rhs=lambda t, y: -y, y0=np.array([1.0, 2.0]),
              stops=[Stop(lambda t, y: np.abs(y).max() - 1e-6, "small")])
    run = solve_field(f, t_max=100.0)      # run.status == "converged", run.y ≈ 5e-7·[1, 2]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from theorycheck.errors import ArgumentError
from theorycheck.solvers.backends import FloatBackend, MpBackend
from theorycheck.solvers.systems.base import EventAction, EventFn, FlowSystem
from theorycheck.solvers.trajectory import Budget, Event, _Step
from theorycheck.status import Status
from theorycheck.vocabulary import TimeKind

__all__ = ["Field", "Stop", "FieldRun", "FieldSystem", "solve_field"]

#: the stepper of a field run: auto (DOP853, Radau from where it turns stiff), explicit, implicit
STIFF_CHOICES: tuple[str, ...] = ("auto", "explicit", "implicit")


@dataclass(frozen=True)
class Stop:
    """A stopping rule: the run ends (status ``status``) where ``fn(t, y)`` crosses 0 in
    ``direction`` (−1 downward, +1 upward, 0 either); ``name`` names it in the events."""

    fn: Callable[[float, np.ndarray], float]
    name: str
    status: Status = Status.CONVERGED
    direction: int = -1


@dataclass
class Field:
    """A vector field dy/dt = ``rhs(t, y)`` from ``y0`` (1-D float64). ``stops``: stopping rules;
    ``observe(t, y) -> (ln|β|, sign β)``: what a trajectory records per step (default: y itself);
    ``atol``: absolute tolerance per component (default rtol); ``stiff``: "auto" (DOP853, Radau
    from where the stepping turns stiff), "explicit" (DOP853 only) or "implicit" (Radau
    throughout); ``name`` and ``time_kind`` label the run."""

    rhs: Callable[[float, np.ndarray], np.ndarray]
    y0: np.ndarray
    stops: Sequence[Stop] = ()
    observe: Callable[[float, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    atol: float | np.ndarray | None = None
    stiff: str = "auto"
    name: str = "field"
    time_kind: TimeKind = TimeKind.REAL

    def __post_init__(self) -> None:
        y0 = np.asarray(self.y0, dtype=float)
        if y0.ndim != 1 or y0.size == 0:
            raise ArgumentError(f"y0 must be a non-empty 1-D array, got shape {y0.shape}", "y0")
        if not np.all(np.isfinite(y0)):
            raise ArgumentError("y0 has a non-finite entry", "y0")
        if self.stiff not in STIFF_CHOICES:
            raise ArgumentError(f"stiff={self.stiff!r}: choose one of {', '.join(STIFF_CHOICES)}", "stiff")
        self.y0 = y0


def _observe_state(t, y) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(y, dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(np.abs(a)), np.sign(a).astype(int)


class FieldSystem(FlowSystem):
    """A :class:`Field` as a flow system of :mod:`theorycheck.solvers.systems`: its stopping rules are
    the events, each ending the run with its status and the state where it fired."""

    def __init__(self, f: Field, bk: FloatBackend | MpBackend | None = None):
        self.f = f
        self.bk = bk or FloatBackend()
        self.mp = isinstance(self.bk, MpBackend)
        self.name = f.name
        self.time_kind = f.time_kind
        self.y0 = self.bk.array(f.y0) if self.mp else f.y0.copy()
        self.d = self.y0.size
        self.L = 1
        self.start_records = []
        self.stiff_switch = f.stiff == "auto"
        self._observe = f.observe or _observe_state

    def rhs(self, t, y):
        return np.asarray(self.f.rhs(t, y), dtype=object if self.mp else float)

    def observe(self, t, y):
        return self._observe(t, y)

    def atol(self, rtol):
        if self.mp:
            a = rtol if self.f.atol is None else self.f.atol
            return self.bk.array(np.broadcast_to(np.asarray(a, dtype=object), (self.d,)))
        if self.f.atol is None:
            return np.full(self.d, float(rtol))
        return np.broadcast_to(np.asarray(self.f.atol, dtype=float), (self.d,)).copy()

    def start_stop(self) -> Status | None:
        for s in self.f.stops:
            v = s.fn(0.0, self.y0)
            if v == 0 or (s.direction < 0 and v < 0) or (s.direction > 0 and v > 0):
                return s.status  # already past the rule at the start
        return None

    def events(self, t, y) -> list[EventFn]:
        return [EventFn(s.name, -1, s.fn, s.direction, data=s) for s in self.f.stops]

    def on_event(self, ev: EventFn, t, y) -> EventAction:
        return EventAction(stop=ev.data.status, y=np.array(y, dtype=object if self.mp else float),
                           records=[(ev.name, -1, "stopping rule")])


@dataclass
class FieldRun:
    """The outcome of :func:`solve_field`: ``status`` (a :class:`~theorycheck.status.Status`: the
    stopping rule's, ``t_max``, a budget, ``non_finite``, …) and ``message``; ``t`` the time it
    stopped and ``y`` the state there; ``times`` the accepted step times; ``steps``,
    ``evaluations``; ``stiff_from`` the time the run moved to Radau (None: it did not);
    ``events``; :meth:`at` the state at any time of the run (the steppers' dense output)."""

    status: Status
    message: str
    t: float
    y: np.ndarray
    times: np.ndarray
    steps: int
    evaluations: int
    stiff_from: float | None
    events: list[Event]
    _steps: list[_Step] = field(default_factory=list, repr=False)
    #: an mpmath run (``digits``): its final state and time unrounded (mpf), else None
    y_exact: np.ndarray | None = None
    t_exact: object = None

    @property
    def ok(self) -> bool:
        """Stopped for a reason of the flow (a stopping rule or t_max), not a budget or the number range."""
        return bool(self.status.ok)

    def at(self, t: float) -> np.ndarray:
        """The state at time t ∈ [0, self.t] (the dense output of the step that covers it)."""
        if not 0 <= t <= self.t:
            raise ArgumentError(f"t={t!r}: outside the run [0, {self.t:g}]", "t")
        for s in self._steps:
            if s.t0 <= t <= s.t1:
                y = s.dense(t)
                if y is not None:
                    return np.asarray(y, dtype=float)
        return self.y.copy()


def solve_field(f: Field, *, t_max: float, rtol: float = 1e-10, budget: Budget | None = None,
                progress: Callable[[float, float, int], None] | None = None, digits: int | None = None) -> FieldRun:
    """Integrate ``f`` from t = 0 to ``t_max`` (or to its first stopping rule) with relative
    tolerance ``rtol`` under ``budget`` (steps, evaluations, seconds), through the integrator's one
    loop: float64 (DOP853 / Radau), or with ``digits`` mpmath at that many digits (the loop's
    Gragg–Bulirsch–Stoer stepper; ``rhs`` and the stopping rules then take and return mpf values,
    ``rtol`` as given). Never raises for numerical trouble: ``status`` says what happened."""
    from theorycheck.solvers.driver import run_system

    if not isinstance(f, Field):
        raise ArgumentError(f"f must be a theorycheck.solvers.field.Field, got {type(f).__name__}", "f")
    try:
        t_max = float(t_max)
    except (TypeError, ValueError):
        raise ArgumentError(f"t_max={t_max!r} is not a number", "t_max") from None
    if not (math.isfinite(t_max) and t_max > 0):
        raise ArgumentError(f"t_max={t_max!r}: give a finite final time > 0", "t_max")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ArgumentError(f"rtol={rtol!r}: give a tolerance in (0, 1)", "rtol")
    if digits is not None:
        return _solve_field_mp(f, t_max, rtol, budget, progress, _check_digits(digits))
    system = FieldSystem(f)
    if f.stiff == "implicit":
        system.stiff_switch = True
    with np.errstate(all="ignore"):
        res = run_system(system, t_max, mp=False, rtol=float(rtol), k=0, budget=budget or Budget(), progress=progress,
                   stiff_from_start=f.stiff == "implicit")
    return _field_run(res)


def _check_digits(digits) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or not 16 <= digits <= 1000:
        raise ArgumentError(f"digits={digits!r}: give a whole number of digits in [16, 1000]", "digits")
    return digits


def _solve_field_mp(f: Field, t_max, rtol, budget, progress, digits: int) -> FieldRun:
    """The mpmath run of :func:`solve_field`: the same loop with the GBS stepper (explicit: no stiff switch)."""
    import mpmath

    from theorycheck.solvers.driver import run_system

    with mpmath.workdps(digits + 12):
        system = FieldSystem(f, MpBackend(digits + 12, digits))
        system.stiff_switch = False
        tol = mpmath.mpf(rtol)
        k = int(min(16, max(6, round(digits / 3) + 2)))
        res = run_system(system, t_max, mp=True, rtol=tol, k=k, budget=budget or Budget(), progress=progress)
        run = _field_run(res)
        run.y_exact = np.array(res["y_end"], dtype=object)
        run.t_exact = res["t_exact"][-1]
    return run


def _field_run(res: dict) -> FieldRun:
    stop = Status(res["stop"])
    y_end = np.asarray(res["y_end"], dtype=float)
    t_end = float(res["t"][-1])
    return FieldRun(status=stop, message=res["message"] or stop.message, t=t_end, y=y_end, times=res["t"],
                    steps=res["n_steps"], evaluations=res["n_eval"], stiff_from=res["stiff_from"],
                    events=res["events"], _steps=res["steps"])

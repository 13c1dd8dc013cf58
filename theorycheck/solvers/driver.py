"""The one float loop: :func:`run_system` integrates a flow system (:mod:`theorycheck.solvers.systems`, or a compiled
field, :mod:`theorycheck.solvers.field`) from 0 to its end time, one step at a time (:class:`_Driver`), so that
budgets, events and progress are the engine's: the step (:mod:`theorycheck.solvers.steppers`: DOP853, Radau once
stiff, or Gragg–Bulirsch–Stoer in mpmath), the events (collapse, blow-up, ℓ∞ switching, a stopping rule), each
located by root finding on the step's dense output, with a hybrid system restarted after each (simultaneous events,
as at ties, handled together), the budgets of one :class:`~theorycheck.status.Budget`, one
:class:`~theorycheck.status.Status` for the end. A segment's clock may be the arc length s (dτ/ds = N, τ a state
component) instead of time: that regularises an ℓ2 collapse."""

from __future__ import annotations

import time as _time
from collections.abc import Callable

import mpmath
import numpy as np

from theorycheck.solvers.guards import BudgetExhausted, FieldMeter
from theorycheck.solvers.steppers import (
    FieldNotFinite,
    GBSStepper,
    ImplicitStepper,
    ScipyStepper,
    StepFailed,
    StiffnessMonitor,
    find_root,
)
from theorycheck.solvers.systems import FlowSystem, extrapolate_singularity
from theorycheck.solvers.trajectory import Budget, Event, _Step
from theorycheck.status import Status

__all__ = ["ARC_BOUND", "run_system"]

#: an arc-length segment (clock s, dτ/ds = N) ends at an event; this bound on s is only
#: reached when the field is below the number range (then the run stops, non_finite)
ARC_BOUND = 1e300


def _crossed(g0, g1, direction: int) -> bool:
    up = g0 < 0 <= g1
    down = g0 > 0 >= g1
    return up if direction > 0 else down if direction < 0 else (up or down)


def _root_after(g: Callable, a, ga, b, gb, mp: bool):
    """A root of g in [a, b], returned on the far side of the crossing (so a restarted
    segment does not see the same crossing again)."""
    r = find_root(g, a, ga, b, gb, mp=mp)
    if mp:
        return r
    gr = g(r)
    if gr == 0 or (gr > 0) == (gb > 0):
        return r
    step = max(abs(r), 1e-300) * np.finfo(float).eps
    for _ in range(200):
        r2 = min(r + step, b)
        gr2 = g(r2)
        if gr2 == 0 or (gr2 > 0) == (gb > 0) or r2 >= b:
            return r2
        step *= 2
    return b


def _time_dense(seg, dense, s0, s1, mp: bool):
    """Dense output as a function of time. On an arc-length segment (dτ/ds = N, τ the last
    state component) τ(s) is increasing: invert it by root finding on the step."""
    if seg.clock == "time":
        return dense
    tau0, tau1 = seg.time_of(s0, dense(s0)), seg.time_of(s1, dense(s1))

    def at(tau):
        if tau <= tau0:
            return dense(s0)
        if tau >= tau1:
            return dense(s1)

        def g(s):
            return seg.time_of(s, dense(s)) - tau

        return dense(find_root(g, s0, tau0 - tau, s1, tau1 - tau, mp=mp))

    return at


def _stop_of(exc: Exception) -> tuple[Status, str]:
    """The status (and message) a stepper's exception ends a run with: a budget that ran out
    inside a step, a step size below the number spacing, or arithmetic that left the range."""
    if isinstance(exc, BudgetExhausted):
        stop = Status(exc.reason)
        return stop, f"{stop.message}: {exc}"
    if isinstance(exc, StepFailed):
        return Status.STEP_SIZE_UNDERFLOW, str(exc)
    if isinstance(exc, FieldNotFinite):
        return Status.NON_FINITE, f"{exc}: {Status.NON_FINITE.message}"
    return Status.NON_FINITE, f"{type(exc).__name__}: {exc}"


class _Driver:
    """The hybrid driver behind :func:`_run`: step, watch the events, restart after each. ``t`` is the
    clock of the current segment (time, or arc length s on a regularised segment) and ``tau`` time.
    A segment of a system with ``stiff_switch`` moves from DOP853 to Radau where the stepping turns
    stiff (:class:`~theorycheck.solvers.steppers.StiffnessMonitor`); the run then records a ``stiff``
    event and keeps every other rule (budgets, events, guards) unchanged."""

    def __init__(self, system: FlowSystem, t_max: float, *, mp: bool, rtol, k: int, budget: Budget,
                 progress: Callable[[float, float, int], None] | None):
        self.bk, self.mp, self.rtol, self.k, self.budget, self.progress = system.bk, mp, rtol, k, budget, progress
        system.t_max = t_max
        self.t_max = t_max
        self.T = self.bk.num(t_max)
        self.t = self.bk.num(0)
        self.y = system.y0
        self.steps: list[_Step] = []
        self.ts: list[float] = [0.0]
        self.obs = [system.observe(self.t, self.y)]
        # at mpmath precision: the same times and observations unrounded (systems with observe_exact)
        self.ts_x: list = [self.t]
        self.obs_x: list = [_exact(system, self.t, self.y)]
        self.events: list[Event] = [Event(0.0, kind, j + 1 if j >= 0 else 0, det)
                                    for kind, j, det in system.start_records]
        self.n_steps = self.n_eval = self.n_events = 0
        self.t0_wall = self.last_report = _time.monotonic()
        self.stop = system.start_stop()
        self.seg = system
        self.collapse_time = self.blowup_time = self.collapse_x = self.blowup_x = None
        if self.stop == Status.COLLAPSE:
            self.collapse_time = 0.0
        self.message = ""
        self.stiff_from = None
        self.y_stop = None
        self._g_prev: list = []
        self.guard = FieldMeter(max_seconds=budget.max_seconds, max_evaluations=budget.max_evaluations,
                                 start=self.t0_wall)

    def run(self) -> dict:
        while self.stop is None:
            if self.seg.clock == "time" and self.t >= self.T:
                self.stop = Status.T_MAX
                break
            self._segment()
        return self._finish()

    def _stepper(self, stiff: bool):
        seg, rhs = self.seg, self.guard.wrap(self.seg.rhs)
        bound = self.T if seg.clock == "time" else self.t + self.bk.num(ARC_BOUND)
        if self.mp:
            return GBSStepper(rhs, self.t, self.y, bound, self.rtol, seg.atol(self.rtol), self.k, dense_rhs=seg.rhs)
        if stiff:
            return ImplicitStepper(rhs, self.t, self.y, float(bound), self.rtol, seg.atol(self.rtol))
        return ScipyStepper(rhs, self.t, self.y, float(bound), self.rtol, seg.atol(self.rtol))

    def _segment(self) -> None:
        """One smooth segment: from (t, y) until an event restarts the run or a stop ends it."""
        seg = self.seg
        evfns = seg.events(self.t, self.y)
        g_prev = [ev.fn(self.t, self.y) for ev in evfns]
        armed = [g != 0 for g in g_prev]
        stiff = self.stiff_from is not None and getattr(seg, "stiff_switch", False)
        try:
            stepper = self._stepper(stiff)
        except (BudgetExhausted, StepFailed) as exc:
            self.stop, self.message = _stop_of(exc)
            return
        switch = getattr(seg, "stiff_switch", False) and not stiff and not self.mp
        monitor = StiffnessMonitor(self.guard.wrap(seg.rhs)) if switch else None
        n0 = stepper.nfev
        while True:
            if self._out_of_budget(stepper, n0):
                break
            if seg.clock != "time" and stepper.finished:
                self.stop = Status.NON_FINITE
                self.message = (f"the arc-length clock passed {ARC_BOUND:g} without an event near t = "
                                f"{float(seg.time_of(self.t, self.y)):.6g}: the field is below the number range; "
                                "rerun with digits (mpmath digits)")
                break
            result = self._advance(stepper, evfns, g_prev, armed)
            if result == "restart":
                self.n_eval += stepper.nfev - n0
                return
            if result is not None:
                break
            if monitor is not None and monitor.update(stepper):
                self.stiff_from = float(seg.time_of(self.t, self.y))
                self.events.append(Event(self.stiff_from, "stiff", 0, "the stepping turned stiff: Radau from here"))
                self.n_eval += stepper.nfev - n0
                return
            if seg.clock == "time" and self.t >= self.T:
                self.stop = Status.T_MAX
                break
            g_prev = self._g_prev
        self.n_eval += stepper.nfev - n0

    def _out_of_budget(self, stepper, n0) -> bool:
        now = _time.monotonic()
        if self.n_steps >= self.budget.max_steps:
            self.stop = Status.MAX_STEPS
        elif self.n_eval + stepper.nfev - n0 >= self.budget.max_evaluations:
            self.stop = Status.MAX_EVALUATIONS
        elif now - self.t0_wall >= self.budget.max_seconds:
            self.stop = Status.MAX_SECONDS
        if self.stop:
            return True
        if self.progress is not None and now - self.last_report >= 2.0:
            self.progress(float(self.seg.time_of(self.t, self.y)), float(self.t_max), self.n_steps)
            self.last_report = now
        return False

    def _advance(self, stepper, evfns, g_prev, armed):
        """One accepted step: None to go on, "stop" (``stop`` set) or "restart" (an event)."""
        seg = self.seg
        try:
            stepper.step()
        except (BudgetExhausted, StepFailed, FloatingPointError, OverflowError, ZeroDivisionError, ValueError) as exc:
            self.stop, self.message = _stop_of(exc)
            return "stop"
        self.n_steps += 1
        t1, y1 = stepper.t, stepper.y
        if not self.bk.isfinite(y1):
            self.stop = Status.NON_FINITE
            self.message = f"the state left the number range near t = {float(seg.time_of(self.t, self.y)):.6g}"
            return "stop"
        g1 = [ev.fn(t1, y1) for ev in evfns]
        if any(not (g == g) for g in g1):  # NaN
            self.stop, self.message = Status.NON_FINITE, f"an event function was NaN near t = {float(seg.time_of(t1, y1)):.6g}"
            return "stop"
        hits = [i for i, ev in enumerate(evfns) if armed[i] and _crossed(g_prev[i], g1[i], ev.direction)]
        try:  # DOP853's dense output evaluates the (guarded) field three more times
            dense = stepper.dense()
        except BudgetExhausted as exc:
            self.stop, self.message = _stop_of(exc)
            return "stop"
        tau_old = seg.time_of(stepper.t_old, stepper.y_old)
        if hits:
            self._on_hits(stepper, evfns, hits, g_prev, g1, dense, tau_old)
            return "restart" if self.stop is None else "stop"
        tau1 = seg.time_of(t1, y1)
        self._store(tau_old, tau1, _time_dense(seg, dense, stepper.t_old, t1, self.mp), seg, y1)
        for i, g in enumerate(g1):
            if g != 0:
                armed[i] = True
        self._g_prev = g1
        self.t, self.y = t1, y1
        return None

    def _store(self, tau_old, tau1, dense, seg, y1) -> None:
        self.steps.append(_Step(float(tau_old), float(tau1), dense, seg.observe))
        self.ts.append(float(tau1))
        self.obs.append(seg.observe(tau1, y1))
        self.ts_x.append(tau1)
        self.obs_x.append(_exact(seg, tau1, y1))

    def _on_hits(self, stepper, evfns, hits, g_prev, g1, dense, tau_old) -> None:
        """The first event of the step: store the step up to it, apply it (and simultaneous ones), restart."""
        seg, mp = self.seg, self.mp
        roots = []
        for i in hits:
            fn = evfns[i].fn

            def g(s, fn=fn):
                return fn(s, dense(s))

            roots.append((_root_after(g, stepper.t_old, g_prev[i], stepper.t, g1[i], mp), i))
        te, i = min(roots, key=lambda r: r[0])
        ye = dense(te)
        tau_e = seg.time_of(te, ye)
        self._store(tau_old, tau_e, _time_dense(seg, dense, stepper.t_old, te, mp), seg, ye)
        out = seg.on_event(evfns[i], te, ye)
        self.n_events += 1
        # simultaneous events (ties, e.g. equal z_j and α_j): handle them all now,
        # or the restarted segment would start on their surfaces and miss them
        tol = (abs(te) + abs(te - stepper.t_old)) * (1e-12 if not mp else mpmath.mpf(10) ** (8 - mpmath.mp.dps))
        for r, i2 in sorted(roots, key=lambda r: r[0]):
            if i2 == i or abs(r - te) > tol or out.stop or out.system is None:
                continue
            more = out.system.on_event(evfns[i2], te, out.y)
            more.records = out.records + more.records
            out = more
            self.n_events += 1
        if out.system is not None and out.y is not None:  # the state after the event
            self.obs[-1] = out.system.observe(tau_e, out.y)
            self.obs_x[-1] = _exact(out.system, tau_e, out.y)
        tau_e = self._event_time(out, seg, evfns[i], stepper, te, ye, dense, tau_e)
        self._apply(out, tau_e)

    def _event_time(self, out, seg, ev, stepper, te, ye, dense, tau_e):
        """The event's time, refined past a collapse / blow-up threshold (the singular time)."""
        if out.stop in (Status.COLLAPSE, Status.BLOWUP) and seg.clock == "time":
            te_x = _extrapolated(seg, ev, stepper.t_old, te, ye, dense)
            if te_x is not None:
                return te_x
        elif out.stop == Status.COLLAPSE and seg.clock == "arc" and hasattr(seg, "arc_tail"):
            return tau_e + seg.arc_tail(te, ye)  # the time left after the arc-clock event
        return tau_e

    def _apply(self, out, tau_e) -> None:
        for kind, j, det in out.records:
            self.events.append(Event(float(tau_e), kind, j + 1 if j >= 0 else 0, det))
        if out.stop == Status.COLLAPSE:
            self.collapse_time, self.collapse_x = float(tau_e), tau_e
        if out.stop == Status.BLOWUP:
            self.blowup_time, self.blowup_x = float(tau_e), tau_e
        if out.stop:
            self.stop = out.stop
            self.y_stop = out.y
        elif self.n_events >= self.budget.max_events:
            self.stop = Status.MAX_EVENTS
        else:
            self.seg, self.y = out.system, out.y
            self.t = tau_e if self.seg.clock == "time" else self.bk.num(0)
        if self.stop == Status.STATIONARY and float(tau_e) < self.t_max:
            _hold(self.steps, self.ts, self.obs, out.system, tau_e, out.y, self.t_max, self.ts_x, self.obs_x)

    def _finish(self) -> dict:
        stop, seg, t, y = self.stop, self.seg, self.t, self.y
        if stop == Status.STATIONARY and len(self.ts) == 1 and self.t_max > 0:
            _hold(self.steps, self.ts, self.obs, seg, t, y, self.t_max, self.ts_x, self.obs_x)
        if stop == Status.COLLAPSE and self.collapse_time is None:
            self.collapse_x = seg.time_of(t, y)
            self.collapse_time = float(self.collapse_x)
        t_sing = self.collapse_x if stop == Status.COLLAPSE else self.blowup_x if stop == Status.BLOWUP else None
        if t_sing is not None and float(t_sing) > self.ts[-1]:
            # the singular time refined past its threshold event ends the run: hold the state at the
            # threshold up to it, so that no event or switch lies after t_end
            _hold_observation(self.steps, self.ts, self.obs, t_sing, self.ts_x, self.obs_x)
        return dict(t=np.array(self.ts), obs=self.obs, t_exact=self.ts_x, obs_exact=self.obs_x,
                    collapse_exact=self.collapse_x, blowup_exact=self.blowup_x, steps=self.steps, stop=stop,
                    events=self.events, n_steps=self.n_steps, n_eval=max(self.n_eval, self.guard.evaluations),
                    collapse_time=self.collapse_time, blowup_time=self.blowup_time, message=self.message,
                    y_end=self.y_stop if self.y_stop is not None else y, system_end=seg,
                    stiff_from=self.stiff_from)


def run_system(system: FlowSystem, t_max: float, *, mp: bool, rtol, k: int, budget: Budget,
         progress: Callable[[float, float, int], None] | None, stiff_from_start: bool = False) -> dict:
    """Integrate ``system`` from 0 to ``t_max`` (:class:`_Driver`): the one loop every flow goes
    through, the built-in ones and any compiled field (:func:`theorycheck.solvers.field.solve_field`).
    ``stiff_from_start``: Radau from the first step (a system with ``stiff_switch``)."""
    driver = _Driver(system, t_max, mp=mp, rtol=rtol, k=k, budget=budget, progress=progress)
    if stiff_from_start:
        driver.stiff_from = 0.0
    return driver.run()


def _extrapolated(system, ev, t_a, t_e, y_e, dense):
    """Refine the time of a collapse / blow-up past its threshold event (see
    :func:`systems.extrapolate_singularity`); None when the system gives no rate."""
    r_e = system.event_rate(ev, t_e, y_e)
    if r_e is None or r_e == 0:
        return None
    t_b = max(t_a, t_e - 1 / abs(r_e))
    if t_b >= t_e:
        return None
    r_b = system.event_rate(ev, t_b, dense(t_b))
    return extrapolate_singularity(t_b, r_b, t_e, r_e)


def _exact(system, t, y):
    """The system's unrounded observation (mpmath log|β|) when it has one, else None."""
    f = getattr(system, "observe_exact", None)
    return None if f is None else f(t, y)


def _hold_observation(steps, ts, obs, t_end, ts_x, obs_x) -> None:
    """The last observation, held constant from the last stored time to ``t_end``."""
    la, sg = obs[-1]

    la, sg = np.array(la, copy=True), np.array(sg, copy=True)

    def observe(s, y):
        return la.copy(), sg.copy()

    steps.append(_Step(float(ts[-1]), float(t_end), lambda s: None, observe))
    ts.append(float(t_end))
    obs.append(obs[-1])
    ts_x.append(t_end)
    obs_x.append(obs_x[-1])


def _hold(steps, ts, obs, system, t, y, t_max, ts_x=None, obs_x=None) -> None:
    """The state is an equilibrium from t on: one constant piece to t_max."""
    y_c = y

    def dense(s, y_c=y_c):
        return y_c

    steps.append(_Step(float(t), float(t_max), dense, system.observe))
    ts.append(float(t_max))
    obs.append(system.observe(t_max, y_c))
    if ts_x is not None:
        ts_x.append(t_max)
        obs_x.append(_exact(system, t_max, y_c))

"""What an integration returns: :class:`Trajectory` (a solution that carries its status),
its :class:`Budget` (:class:`theorycheck.status.Budget`, re-exported) and the :class:`Event` records of a hybrid run.

A trajectory stores the predictor β(t) as ``log|β_j|`` and ``sign β_j`` (so that e^{zτ} at
τ = 10⁴ is representable), one row per accepted step, plus a dense evaluator ``at(t)``
that reproduces the integrator's own interpolant (scipy) or re-integrates one step
(mpmath). Indices in :class:`Event` are 1-based feature indices, as in the paper.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from theorycheck.arith.exact import INPUTS_KEYS
from theorycheck.errors import TheorycheckError
from theorycheck.record import Keys, ListOf
from theorycheck.status import Budget, Status
from theorycheck.strength import KEYS as STRENGTH_KEYS
from theorycheck.strength import LEMMA_KEYS

__all__ = ["Budget", "Event", "Trajectory"]


@dataclass(frozen=True)
class Event:
    """A discrete event of a hybrid run: ``kind`` in {"slide", "cross", "unfreeze",
    "stationary", "collapse", "blowup", "critical_point"}; ``index`` a 1-based feature
    (0: the whole state); ``detail`` which surface (u-, w-, G-surface) or why."""

    time: float
    kind: str
    index: int
    detail: str = ""


@dataclass
class _Step:
    t0: float
    t1: float
    dense: Callable[[Any], Any]
    observe: Callable[[Any], tuple[np.ndarray, np.ndarray]]


def twin_coordinates(Z: np.ndarray, layers0: np.ndarray) -> np.ndarray | None:
    """For each coordinate j the smallest k whose column of Z (n×d) and of the initial layers
    (L×d) equal j's (None when every coordinate is its own): such coordinates are exchanged
    by a symmetry of every flow and algorithm here, so β_j(t) = β_k(t) exactly."""
    cols = np.vstack([np.asarray(Z, float), np.asarray(layers0, float)]).T + 0.0  # −0.0 → 0.0
    _, first, inv = np.unique(cols, axis=0, return_index=True, return_inverse=True)
    rep = first[np.ravel(inv)]
    return None if np.all(rep == np.arange(len(rep))) else rep


#: a change of j† (``theorycheck.observe.Switch``) and an event of a hybrid run, as the JSON prints them
SWITCH_KEYS = Keys("trajectory.switch", "time", "from", "to")
EVENT_KEYS = Keys("trajectory.event", "time", "kind", "index")
#: the proof of a trajectory (``trajectory --prove``: :class:`theorycheck.proofs.minor_first.proved.trajectory.ProvedTrajectory`),
#: declared here because the trajectory's output holds it under ``proof``
PROVED_KEYS = Keys("trajectory.proved", "proved", "fate", "sequence", "sequence_complete", "proved_until",
                   "collapse_time", "blowup_time", "final_index", "final_index_status", "final_index_reason",
                   "time_kind", "method", "seconds",
                   switches=ListOf(Keys("trajectory.proved.switch", "from", "to", "time")),
                   rests_on=ListOf(LEMMA_KEYS),
                   setting=Keys("trajectory.proved.setting", "optimizer", "depth", "z", "rho", "alpha"),
                   inputs=INPUTS_KEYS, strength=STRENGTH_KEYS)


@dataclass
class Trajectory:
    """A solved flow. ``t`` (T,), ``log_abs_beta`` (T×d; −inf where β_j = 0) and
    ``sign_beta`` (T×d in {−1, 0, 1}) at the accepted steps; ``time_kind`` "rescaled"
    (one example, dτ = −ℓ'(m̂) dt) or "real"; ``stopped_because`` a
    :class:`~theorycheck.status.Status` (a string given is looked up; ``message`` defaults to
    its message); ``collapse_time`` / ``blowup_time`` or None."""

    #: what :meth:`as_dict` may emit (meanings: docs/commands/trajectory.md)
    KEYS = Keys("trajectory", "time_kind", "stopped_because", "message", "t_end", "t_max", "initial_index",
                "final_index", "final_index_status", "final_index_reason", "collapsed", "collapse_time",
                "blowup_time", "direction", "log_abs_beta", "final_margin", "final_normalized_margin",
                "final_loss", "final_log_loss", "final_log_norm", "overflow", "method", "digits", "system",
                "depth", "optimizer", "rho", "loss", "n_examples", "d", "steps", "evaluations", "eta",
                "time_text", "collapse_time_text", "blowup_time_text", "log_abs_beta_text", "angle_l1_deg",
                "angle_l2_deg", switches=ListOf(SWITCH_KEYS), events=ListOf(EVENT_KEYS), proof=PROVED_KEYS,
                inputs=INPUTS_KEYS, strength=STRENGTH_KEYS)

    setting: Any
    time_kind: str
    method: str
    digits: int | None
    t: np.ndarray
    log_abs_beta: np.ndarray
    sign_beta: np.ndarray
    stopped_because: Status
    t_max: float
    collapse_time: float | None = None
    blowup_time: float | None = None
    events: list[Event] = field(default_factory=list)
    n_steps: int = 0
    n_evaluations: int = 0
    message: str = ""
    system: str = ""
    eta: float | None = None  # the step size of a discrete run (method "discrete")
    #: the observed quantities (:func:`theorycheck.observe.report`), attached by the stage that
    #: observes the run (:func:`theorycheck.observe.attach`; ``theorycheck.solve`` does it)
    observed: dict | None = field(default=None, repr=False)
    _steps: list[_Step] = field(default_factory=list, repr=False)
    #: mpmath runs (``digits`` set): the same times, log|β| (where the system provides them:
    #: the balanced ℓ2-SAM and reduced systems) and singular times unrounded, as mpmath numbers
    t_exact: list | None = field(default=None, repr=False)
    log_abs_beta_exact: list | None = field(default=None, repr=False)
    collapse_time_exact: Any = None
    blowup_time_exact: Any = None
    #: twins[j] = the smallest index k of a coordinate exchangeable with j (equal columns of Z
    #: and of the initial layers): the flow keeps β_j = β_k exactly, so j reports k's values
    #: (the integrator's rounding differs between array positions, e.g. BLAS in DOP853's
    #: step, and would otherwise break an exact tie)
    twins: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        try:
            self.stopped_because = Status(self.stopped_because)
        except ValueError:
            raise TheorycheckError(f"unknown stop reason {self.stopped_because!r}") from None
        if not self.message:
            self.message = self.stopped_because.message
        if self.twins is not None:
            self.log_abs_beta = np.asarray(self.log_abs_beta)[:, self.twins]
            self.sign_beta = np.asarray(self.sign_beta)[:, self.twins]
            if self.log_abs_beta_exact is not None:
                self.log_abs_beta_exact = [[row[k] for k in self.twins] for row in self.log_abs_beta_exact]

    # ------------------------------------------------------------------ basic views
    def as_dict(self) -> dict:
        """What ``theorycheck trajectory --json`` prints: the observed quantities attached by
        :func:`theorycheck.observe.attach` (``theorycheck.solve`` attaches them). A trajectory is
        data: it does not observe itself."""
        if self.observed is None:
            raise TheorycheckError("this trajectory has not been observed yet: theorycheck.observe.attach(trajectory) "
                                   "computes what as_dict() returns (theorycheck.solve does it)")
        return copy.deepcopy(self.observed)

    def _repr_markdown_(self) -> str | None:
        """A notebook's view: the setting, why the run ended, j† with each switch and its time,
        the end state (the same numbers as :meth:`as_dict`)."""
        from theorycheck.markdown import number, table

        if self.observed is None:  # nothing observed yet: the notebook shows the plain repr
            return None
        d = self.as_dict()
        sym = "τ" if d["time_kind"] == "rescaled" else "t"
        path = " → ".join([str(d["initial_index"])] + [f"{w['to']} ({sym} = {number(w['time'])})"
                                                        for w in d["switches"]])
        rows = [("j† (0: β = 0)", path), ("final index", d["final_index"]),
                ("collapse", "none" if d["collapse_time"] is None else f"{sym} = {number(d['collapse_time'], 10)}"),
                ("blow-up", "none" if d["blowup_time"] is None else f"{sym} = {number(d['blowup_time'], 10)}"),
                ("direction β/‖β‖", "(" + ", ".join(number(x, 4) for x in d["direction"]) + ")"),
                ("stopped", f"{d['stopped_because']}: {d['message']}"),
                ("integration", f"{d['method']} ({d['system']}), {d['steps']} steps, {d['evaluations']} evaluations")]
        head = (f"**{d['optimizer']} flow**, L = {d['depth']}, ρ = {number(d['rho'])}, "
                f"{d['n_examples']} example{'s' * (d['n_examples'] != 1)}, d = {d['d']}; "
                f"{'rescaled time τ' if d['time_kind'] == 'rescaled' else 'real time t'} ∈ [0, {number(d['t_end'])}]")
        return head + "\n\n" + table(("quantity", "value"), rows)

    @property
    def t_end(self) -> float:
        return float(self.t[-1])

    @property
    def collapsed(self) -> bool:
        return self.collapse_time is not None

    @property
    def status(self) -> Status:
        """Why the run stopped (``stopped_because``; the name every run answers, :class:`~theorycheck.status.RunEnd`)."""
        return Status(self.stopped_because)

    @property
    def ok(self) -> bool:
        """:attr:`successful` (the name every run answers)."""
        return self.successful

    @property
    def evaluations(self) -> int:
        """The field evaluations the run cost (``n_evaluations``)."""
        return int(self.n_evaluations)

    @property
    def successful(self) -> bool:
        """True when the run ended for a reason of the flow (t_max, collapse, blow-up,
        stationary), not because a budget or the number format ran out."""
        return Status(self.stopped_because).ok

    @property
    def d(self) -> int:
        return self.log_abs_beta.shape[1]

    def beta(self) -> np.ndarray:
        """β at the stored steps as floats (±inf where it exceeds float64)."""
        with np.errstate(over="ignore"):
            return self.sign_beta * np.exp(self.log_abs_beta)

    # ------------------------------------------------------------------ dense output
    def at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(log|β|, sign β) at time t in [t[0], t_end], from the integrator's dense output."""
        t = float(t)
        if not self.t[0] <= t <= self.t[-1]:
            raise TheorycheckError(f"time {t:g} outside the solved interval [{self.t[0]:g}, {self.t[-1]:g}]")
        if t == self.t[-1]:  # the stored end state (after any final event)
            return self.log_abs_beta[-1].copy(), self.sign_beta[-1].copy()
        if not self._steps:  # discrete iterates: ln|β| linear between recorded points
            i = int(np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, len(self.t) - 1))
            if i == len(self.t) - 1 or self.t[i + 1] == self.t[i]:
                return self.log_abs_beta[i].copy(), self.sign_beta[i].copy()
            w = (t - self.t[i]) / (self.t[i + 1] - self.t[i])
            a, b = self.log_abs_beta[i], self.log_abs_beta[i + 1]
            with np.errstate(invalid="ignore"):
                la = np.where(np.isfinite(a) & np.isfinite(b), (1 - w) * a + w * b, a if w < 0.5 else b)
            return la, (self.sign_beta[i] if w < 0.5 else self.sign_beta[i + 1]).copy()
        ends = np.array([s.t1 for s in self._steps])
        i = int(np.searchsorted(ends, t, side="left"))
        step = self._steps[min(i, len(self._steps) - 1)]
        ctx = mpmath.workdps(self.digits + 12) if self.digits else contextlib.nullcontext()
        with ctx, np.errstate(all="ignore"):
            tt = mpmath.mpf(t) if self.digits else t
            la, sg = step.observe(tt, step.dense(tt))
        if self.twins is not None:
            return np.asarray(la)[self.twins], np.asarray(sg)[self.twins]
        return la, sg

    def step_bounds(self) -> np.ndarray:
        """(K×2) start and end times of the dense pieces (one per accepted step)."""
        return np.array([[s.t0, s.t1] for s in self._steps]) if self._steps else np.zeros((0, 2))

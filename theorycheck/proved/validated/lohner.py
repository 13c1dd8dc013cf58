"""A validated Taylor integrator in ball arithmetic (python-flint's Arb), with Lohner's QR method.

One step from the set X = {c + A r : r ∈ R} at time t (c a point, A a matrix, R a box):

1. a-priori enclosure: a box B with X + [0, h]·f([t, t+h], B) ⊂ interior(B) (interval Picard test,
   inflating B a few times, halving h when it fails): the solution through every point of X exists on
   [t, t + h] and stays in B;
2. the Taylor polynomial Φ of order K by series arithmetic (:mod:`taylor`: Newton's iteration for one state,
   Picard's for several) at c, and the Jacobian DΦ over
   the box hull of X from the variational equation's series;
3. the remainder Z = x_{K+1}([t, t+h], B)·[0, h]^{K+1} (the next coefficient over the a-priori box);
4. x(t + h) ∈ Φ(c) + Z + DΦ(X̄)·A·R (mean-value form), re-centred: c' = mid(Φ(c) + Z),
   A' = Q of a column-pivoted QR of mid(DΦ·A) (against the wrapping effect), R' = A'^{-1}(DΦ A) R + A'^{-1}(Φ(c) + Z − c').

Every step yields an enclosure (a ball per coordinate), never a point. Parameters may be balls: a
parameter with a nonzero radius is carried as a state with zero field, so the mean-value form covers
it and the enclosure holds for every parameter value in the box. Every run ends with a
:class:`~theorycheck.status.Status` (a proved stop condition, the final time, or the budget that ran out).
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from flint import arb, arb_mat

from theorycheck.arith.balls import arb_context, ball_text, hull, read_ball, to_ball, widen
from theorycheck.errors import TheorycheckError
from theorycheck.proved.validated.taylor import coefficient, series_solution, variational_coefficients
from theorycheck.status import Budget, Status

#: the limits of a validated run when none are given (:class:`theorycheck.status.Budget`: steps, field evaluations
#: — one per Picard sweep or Newton pass on series, one per ball evaluation —, seconds, step halvings in a row, the
#: widest enclosure worth carrying)
DEFAULT_BUDGET = Budget(max_steps=20_000, max_evaluations=5_000_000, max_seconds=60.0, max_halvings=40, max_width=1e3)


@dataclass
class LohnerSet:
    """The set {c + A r : r ∈ R}: ``c`` a list of balls (points up to rounding), ``A`` an invertible
    matrix (arb_mat, exact floats), ``R`` a list of balls."""

    c: list
    A: object
    R: list

    def box(self) -> list:
        """A box (one ball per coordinate) containing the set."""
        n = len(self.c)
        return [self.c[i] + sum((self.A[i, j] * self.R[j] for j in range(n)), arb(0)) for i in range(n)]

    def as_dict(self) -> dict:
        n = len(self.c)
        return {"c": [ball_text(x) for x in self.c],
                "A": [[ball_text(self.A[i, j]) for j in range(n)] for i in range(n)],
                "R": [ball_text(x) for x in self.R]}


@dataclass
class Step:
    """One validated step from ``t0`` to ``t1 = t0 + h``: ``apriori`` encloses the solution over the
    whole step (the Picard box), ``over_step`` a tighter enclosure over [t0, t1] (Taylor polynomial
    over [0, h] plus remainder, intersected with nothing: a ball per coordinate), ``end`` the box at
    t1, ``set_end`` the Lohner set at t1."""

    t0: arb
    h: arb
    t1: arb
    order: int
    apriori: list
    over_step: list
    end: list
    set_end: LohnerSet
    remainder: list
    #: the box B that passed the Picard test X + [0, h]·f([t0, t1], B) ⊂ interior(B) (``apriori`` is that image)
    picard_box: list | None = None


@dataclass
class Flowpipe:
    """The result of :func:`integrate`: every step's enclosures, why the run stopped (``status``), the
    proved stop condition (``event``, when ``status`` is PROVED_EVENT) and the final enclosure ``end``
    at ``t_end``. ``states`` names the coordinates of the enclosures (the states, then the parameters
    carried as states)."""

    system: object
    params: list
    states: tuple
    x0: list
    set0: LohnerSet
    t0: arb
    steps: list = field(default_factory=list)
    status: Status = Status.T_MAX
    event: str | None = None
    message: str = ""
    prec: int = 0
    order: int = 0
    seconds: float = 0.0
    evaluations: int = 0
    n_steps: int = 0

    @property
    def end(self) -> list:
        return self.steps[-1].end if self.steps else self.set0.box()

    @property
    def t_end(self) -> arb:
        return self.steps[-1].t1 if self.steps else self.t0

    @property
    def proved(self) -> bool:
        return self.status is Status.PROVED_EVENT

    def as_dict(self) -> dict:
        """Summary (no per-step data; see certificates for that): status, event, message, steps,
        t_end and end (balls as [midpoint, radius] decimal strings), order, prec, seconds, evaluations."""
        return {"system": self.system.name, "identity": self.system.identity, "status": self.status,
                "event": self.event, "message": self.message, "steps": self.n_steps,
                "t_end": ball_text(self.t_end), "end": [ball_text(x) for x in self.end],
                "order": self.order, "prec": self.prec, "seconds": round(self.seconds, 4),
                "evaluations": self.evaluations}


def _zero_interval(h: arb) -> arb:
    """A ball containing [0, h] (h ≥ 0 exact)."""
    return arb(h / 2, h / 2)


def _mag(x: arb) -> float:
    """|midpoint| as a float (for step-size heuristics only)."""
    v = abs(float(x.mid()))
    return v if math.isfinite(v) else 1e300


def _inverse(Q: arb_mat) -> arb_mat:
    inv = Q.inv()
    return inv


def integrate(system, x0: Sequence, *, params: Sequence = (), t0=0, t_end=None, order: int = 20, prec: int = 128,
              tol: float | None = None, h_max: float | None = None, budget: Budget | None = None,
              stop: Callable[[Step], str | None] | None = None, on_step: Callable[[Step], None] | None = None,
              record: bool = True, form: str = "lohner", slack: bool = True) -> Flowpipe:
    """Enclose the solution of ``system`` (an :class:`~theorycheck.symbolic.forms.ArbSystem`) from
    ``x0`` (one value or ball per state: arb, int, float (exact), decimal string or [mid, rad] strings)
    at ``t0`` with parameters ``params`` (same forms; balls allowed), by Taylor steps of ``order`` K at
    ``prec`` bits.

    Ends at ``t_end`` (Status.T_MAX), when ``stop(step)`` returns a name (Status.PROVED_EVENT, ``event``
    = that name: the callback must only answer what holds for every point of the step's enclosures),
    or when a :class:`Budget` runs out (MAX_STEPS, MAX_EVALUATIONS, MAX_SECONDS, STEP_SIZE_UNDERFLOW:
    the Picard test failed ``max_halvings`` times in a row, WIDTH_LIMIT, NON_FINITE). ``tol`` is the
    target local error per unit of the state (default 2^(10−prec)); ``h_max`` caps the step (a number, or a
    function of the step's start time returning a number or None: a caller's hint, e.g. smaller steps near an
    event; it never affects what is enclosed). ``form``:
    "lohner" (mean-value form with QR re-orthogonalisation: tight for wide sets and d > 1) or "interval"
    (Taylor coefficients over the box itself: one series per step fewer, for point-like 1-D sets).
    ``slack``: widen every end set by 4|Z|, 0.5 % of its radius and a few ulps, so that an independent
    re-evaluation (another order of operations: the certificate checkers) fits in it; runs that no certificate
    records pass False (the 0.5 % compounds over many steps: near a singular point it can cost the enclosure
    three orders of magnitude). Either way every end set encloses the solution.
    Returns a :class:`Flowpipe` (every step when ``record``; only the last otherwise)."""
    budget = budget or DEFAULT_BUDGET
    K = int(order)
    if K < 1:
        raise TheorycheckError(f"order must be ≥ 1, got {order!r}")
    started = _time.perf_counter()
    with arb_context(prec=prec):
        if form not in ("lohner", "interval"):
            raise TheorycheckError(f"form must be 'lohner' or 'interval', not {form!r}")
        return _run(system, x0, params, t0, t_end, K, int(prec), tol, h_max, budget, stop, on_step, record, started,
                    form, slack)


def _run(system, x0, params, t0, t_end, K, prec, tol, h_max, budget, stop, on_step, record, started, form, slack):
    return _Run(system, x0, params, t0, t_end, K, prec, tol, h_max, budget, started, form, slack).loop(
        stop, on_step, record)


class _Run:
    """One validated run of :func:`integrate`: the set {c + A r : r ∈ R} at time t, the parameters (those with a
    radius carried as states with zero field), the evaluation count, and the steps (see the module docstring)."""

    def __init__(self, system, x0, params, t0, t_end, K, prec, tol, h_max, budget, started, form, slack):
        self.system, self.K, self.prec, self.h_max, self.budget = system, K, prec, h_max, budget
        self.started, self.form = started, form
        self.pad = _pad if slack else _pad_ulps
        self.d = d = len(system.states)
        m = len(system.params)
        x0 = [read_ball(ball_text(to_ball(v))) for v in x0]
        self.params = params = [to_ball(v) for v in params]
        if len(x0) != d:
            raise TheorycheckError(f"{system.name}: {len(x0)} initial values for {d} states")
        if len(params) != m:
            raise TheorycheckError(f"{system.name}: {len(params)} parameter values for {m} parameters")
        self.free = free = [k for k, p in enumerate(params) if not p.rad().is_zero()]
        self.n = n = d + len(free)
        names = (*[str(s) for s in system.states], *[str(system.params[k]) for k in free])
        y0 = x0 + [params[k] for k in free]
        c = [arb(v.mid()) for v in y0]
        R = [v - arb(v.mid()) for v in y0]
        A = arb_mat(n, n, [arb(1) if i == j else arb(0) for i in range(n) for j in range(n)])
        self.S = LohnerSet(c, A, R)
        self.t = to_ball(t0)
        self.tend = None if t_end is None else to_ball(t_end)
        self.tol = float(tol) if tol is not None else 2.0 ** (10 - prec)
        self.pipe = Flowpipe(system, params, names, x0, self.S, self.t, prec=prec, order=K)
        self.evals = [0]
        self.zeros = [arb(0)] * len(free)
        # one state: its Taylor series by Newton's iteration (log₂ K field evaluations, proved/validated/taylor.py);
        # with several states the coefficient recurrences cost d² products each and Picard's sweeps are as fast
        self.newton = d == 1 and getattr(system, "field_and_state_jacobian", None) is not None
        self.jac_cols = [*range(d), *[d + p for p in free]]
        self.h_prev = None

    # -- the field and its series, parameters read from the state (those carried as states)
    def pc(self, y) -> list:
        """The parameter values with those carried as states read from y."""
        p = list(self.params)
        for k, idx in enumerate(self.free):
            p[idx] = y[self.d + k]
        return p

    def field_at(self, tt, y) -> list:
        self.evals[0] += 1
        return list(self.system.field.bind(*self.pc(y))(tt, *y[:self.d])) + self.zeros

    def series_of(self, tt, y, order):
        """Taylor series of the d states through (tt, y) (parameters from y), with an evaluation count."""
        evals = self.evals
        g = self.system.field.bind(*self.pc(y), series=True)

        def f(T, *X):
            evals[0] += 1
            return g(T, *X)
        if not self.newton:
            return series_solution(f, tt, y[:self.d], order)
        gj = self.system.field_and_state_jacobian.bind(*self.pc(y), series=True)

        def fj(T, *X):
            evals[0] += 1
            return gj(T, *X)
        return series_solution(f, tt, y[:self.d], order, field_jacobian=fj)

    def coef(self, ser, y, k, i):
        if i < self.d:
            return coefficient(ser[i], k)
        return y[i] if k == 0 else arb(0)

    # -- one step
    def spent(self) -> tuple | None:
        """(status, message) of a budget that has run out, or of t_end reached; None to go on."""
        b, pipe = self.budget, self.pipe
        if pipe.n_steps >= b.max_steps:
            return Status.MAX_STEPS, f"{b.max_steps} steps"
        if self.evals[0] >= b.max_evaluations:
            return Status.MAX_EVALUATIONS, f"{b.max_evaluations} evaluations"
        if _time.perf_counter() - self.started > b.max_seconds:
            return Status.MAX_SECONDS, f"{b.max_seconds:g} s"
        if self.tend is not None and not (self.t < self.tend):
            return Status.T_MAX, "reached t_end"
        return None

    def step_size(self, coef_c) -> float | None:
        """A step size from the last two Taylor coefficients at the centre (None: step to t_end exactly)."""
        K, S = self.K, self.S
        scale = 1.0 + max(_mag(v) for v in S.c)
        h = None
        for k in (K - 1, K):
            nk = max(_mag(v) for v in coef_c[k])
            if nk > 0:
                hk = (self.tol * scale / nk) ** (1.0 / k)
                h = hk if h is None else min(h, hk)
        h = 0.8 * h if h is not None else (2 * self.h_prev if self.h_prev else 1.0)
        if self.h_prev is not None:
            h = min(h, 4 * self.h_prev)
        cap = self.h_max(float(self.t.mid())) if callable(self.h_max) else self.h_max
        if cap is not None:
            h = min(h, float(cap))
        if self.tend is not None:
            left = float((self.tend - self.t).mid())
            if left <= h * 1.000001:
                return None  # step to t_end exactly
        return h

    def enclose(self, h, Xb, scale):
        """The a-priori enclosure (Picard test) and the remainder, shrinking the step while either fails:
        (hb, B, Bbox, cK, Z), or (status, message) when t_end is reached or the halvings run out."""
        K, n, t = self.K, self.n, self.t
        target = self.tol * scale
        fails = 0
        while True:
            if h is None:
                hb = arb((self.tend - t).mid())
                if not (hb > 0):
                    return Status.T_MAX, "reached t_end"
            else:
                hb = arb(_binary(h))
            got = _apriori(self.field_at, t, hb, Xb, self.prec)
            B, Bbox = (got if got is not None else (None, None))
            shrink = 0.5
            if B is not None:
                # the (K+1)-th coefficient over the a-priori box and the step's time interval
                ser_B = self.series_of(hull(t, t + hb), B, K + 1)
                cK = [self.coef(ser_B, B, K + 1, i) for i in range(n)]
                Z = [cK[i] * hb ** (K + 1) for i in range(n)]
                zmax = max(float(abs(zz).upper()) for zz in Z)
                if all(zz.is_finite() for zz in Z) and zmax <= 16 * target:
                    return hb, B, Bbox, cK, Z
                if math.isfinite(zmax) and zmax > 0:
                    shrink = min(0.5, max(0.05, 0.8 * (target / zmax) ** (1.0 / (K + 1))))
            fails += 1
            if fails > self.budget.max_halvings:
                return (Status.STEP_SIZE_UNDERFLOW, f"the Picard test or the remainder failed {fails} times in a row "
                        f"(h = {float(hb.mid()):.3g})")
            h = float(hb.mid()) * shrink

    def interval_end(self, coef_c, hb, H, Z, Zs):
        """Interval form: the Taylor coefficients over the box itself; (end set, enclosure over the step)."""
        K, n, S, prec = self.K, self.n, self.S, self.prec
        phi = [_horner([coef_c[k][i] for k in range(K + 1)], hb) + Z[i] for i in range(n)]
        over = [_horner([coef_c[k][i] for k in range(K + 1)], H) + Zs[i] for i in range(n)]
        c_new = [_written(arb(x.mid())) for x in phi]
        R_new = [_written(self.pad(phi[i] - c_new[i], Z[i], phi[i], prec)) for i in range(n)]
        return LohnerSet(c_new, S.A, R_new), over

    def lohner_end(self, coef_c, Xb, hb, H, Z, Zs):
        """Lohner's form: Taylor polynomial at the centre, the Jacobian of the Taylor map over the box hull
        (variational series at X̄), re-centred with A' = Q of a QR of mid(DΦ·A); (end set, enclosure over the step)."""
        K, n, d, S, prec, t = self.K, self.n, self.d, self.S, self.prec, self.t
        phi_c = [_horner([coef_c[k][i] for k in range(K + 1)], hb) + Z[i] for i in range(n)]
        ser_X = self.series_of(t, Xb, K)
        self.evals[0] += K
        V = variational_coefficients(self.system.jacobian.bind(*self.pc(Xb), series=True), t, ser_X, K,
                                     self.jac_cols)
        one, zero = arb(1), arb(0)
        J = arb_mat(n, n, [_horner([V[k][i][j] for k in range(K + 1)], hb) if i < d else (one if i == j else zero)
                           for i in range(n) for j in range(n)])
        over = [_horner([self.coef(ser_X, Xb, k, i) for k in range(K + 1)], H) + Zs[i] for i in range(n)]
        M = J * S.A
        c_new = [arb(v.mid()) for v in phi_c]
        v = [phi_c[i] - c_new[i] for i in range(n)]
        A_new = _qr_basis(M, S.R, n)
        Ainv = _inverse(A_new)
        MR = Ainv * M
        R_new = []
        for i in range(n):
            acc = arb(0)
            for j in range(n):
                acc += MR[i, j] * S.R[j]
            for j in range(n):
                acc += Ainv[i, j] * v[j]
            R_new.append(_written(self.pad(acc, sum((abs(Ainv[i, j]) * Z[j] for j in range(n)), arb(0)), acc, prec)))
        c_new = [_written(x) for x in c_new]
        A_store = arb_mat(n, n, [_written(A_new[i, j]) for i in range(n) for j in range(n)])
        return LohnerSet(c_new, A_store, R_new), over

    def one_step(self):
        """A validated step from the current set: a :class:`Step`, or (status, message) when none is taken."""
        K, n, t, S = self.K, self.n, self.t, self.S
        Xb = S.box()
        # -- Taylor coefficients at the centre (the point c; the box in the interval form), a step size from them
        y = S.c if self.form == "lohner" else Xb
        ser = self.series_of(t, y, K)
        coef_c = [[self.coef(ser, y, k, i) for i in range(n)] for k in range(K + 1)]
        scale = 1.0 + max(_mag(v) for v in S.c)
        got = self.enclose(self.step_size(coef_c), Xb, scale)
        if len(got) == 2:
            return got
        hb, B, Bbox, cK, Z = got
        H = _zero_interval(hb)
        Zs = [cK[i] * H ** (K + 1) for i in range(n)]  # over the step (t in [t0, t1])
        try:
            if self.form == "interval":
                S_new, over = self.interval_end(coef_c, hb, H, Z, Zs)
            else:
                S_new, over = self.lohner_end(coef_c, Xb, hb, H, Z, Zs)
        except _NotFinite:
            return Status.NON_FINITE, "an enclosure is not finite"

        return Step(t, hb, t + hb, K, B, [over[i] for i in range(n)], S_new.box(), S_new, Z, Bbox)

    def loop(self, stop, on_step, record) -> Flowpipe:
        """Steps until a stop condition is proved, t_end is reached or a budget runs out."""
        pipe = self.pipe
        while True:
            ended = self.spent()
            if ended is not None:
                return _finish(pipe, *ended, self.started, self.evals)
            step = self.one_step()
            if not isinstance(step, Step):
                return _finish(pipe, *step, self.started, self.evals)
            if any(not x.is_finite() for x in step.end):
                return _finish(pipe, Status.NON_FINITE, "an enclosure is not finite", self.started, self.evals)
            pipe.n_steps += 1
            if record:
                pipe.steps.append(step)
            else:
                pipe.steps[:] = [step]
            if on_step is not None:
                on_step(step)
            self.S, self.t, self.h_prev = step.set_end, step.t1, float(step.h.mid())
            ev = stop(step) if stop is not None else None
            if ev:
                pipe.event = ev
                return _finish(pipe, Status.PROVED_EVENT, f"proved: {ev}", self.started, self.evals)
            widest = max(float(x.rad()) / (1.0 + _mag(x)) for x in step.end)
            if not widest < self.budget.max_width:
                return _finish(pipe, Status.WIDTH_LIMIT, f"relative radius {widest:.3g}", self.started, self.evals)


class _NotFinite(ArithmeticError):
    """An enclosure that is not finite (the run ends with Status.NON_FINITE)."""


def _written(x: arb) -> arb:
    """x as a certificate writes it (:func:`ball_text`, radius rounded up; what is written is what is used); a
    ball that is not finite raises :class:`_NotFinite`."""
    if not x.is_finite():
        raise _NotFinite
    return read_ball(ball_text(x))


def _finish(pipe, status, message, started, evals):
    pipe.status = status
    pipe.message = message
    pipe.seconds = _time.perf_counter() - started
    pipe.evaluations = evals[0]
    return pipe


def _pad(x: arb, Z, ref: arb, prec: int) -> arb:
    """x widened by 4|Z| (Z the step's remainder), 0.5 % of its radius and a few ulps of ``ref``: an enclosure that
    an independent evaluation (another order of operations, :mod:`theorycheck.proved.check`) also fits in."""
    extra = abs(Z).upper() * 4 + x.rad() * arb("0.005") + (abs(ref) + 1) * arb(2) ** (8 - prec)
    return arb(x.mid(), x.rad() + extra)


def _pad_ulps(x: arb, Z, ref: arb, prec: int) -> arb:
    """x widened by a few ulps of ``ref`` only (``slack=False``: no certificate re-evaluates the step)."""
    return arb(x.mid(), x.rad() + (abs(ref) + 1) * arb(2) ** (8 - prec))


def _binary(h: float) -> float:
    """h rounded down to 20 significant bits: steps are short binary numbers, so t stays exact."""
    m, e = math.frexp(h)
    return math.ldexp(math.floor(m * 2**20), e - 20)


def _horner(coefs: list, h):
    acc = coefs[-1]
    for cf in reversed(coefs[:-1]):
        acc = acc * h + cf
    return acc


def _apriori(field_at, t, hb, Xb, prec) -> tuple | None:
    """(P, B): a box B with P = Xb + [0, h]·f([t, t+h], B) ⊂ interior(B) (the solution stays in P), or None."""
    H = _zero_interval(hb)
    T = hull(t, t + hb)
    F = field_at(T, Xb)
    if any(not f.is_finite() for f in F):
        return None
    B = [Xb[i] + H * F[i] for i in range(len(Xb))]
    tiny = arb(2) ** (-prec + 4)
    for _ in range(5):
        B = [widen(b, 1.2, (abs(b) + 1) * tiny + abs(F[i]).upper() * hb / 16) for i, b in enumerate(B)]
        F = field_at(T, B)
        if any(not f.is_finite() for f in F):
            return None
        P = [Xb[i] + H * F[i] for i in range(len(Xb))]
        if all(B[i].contains_interior(P[i]) for i in range(len(Xb))):
            return P, B
        B = [hull(B[i], P[i]) for i in range(len(Xb))]
    return None


def _qr_basis(M: arb_mat, R: list, n: int) -> arb_mat:
    """Lohner's A' = Q of the QR decomposition of mid(M) with its columns sorted by |column|·width(R_j)
    (largest first), as an exact float matrix; the identity when Q is not well conditioned."""
    if n == 1:
        return arb_mat(1, 1, [arb(1)])
    Mm = np.array([[float(M[i, j].mid()) for j in range(n)] for i in range(n)])
    w = np.array([float(R[j].rad()) + abs(float(R[j].mid())) for j in range(n)])
    if not np.all(np.isfinite(Mm)) or not np.all(np.isfinite(w)):
        return arb_mat(n, n, [arb(1) if i == j else arb(0) for i in range(n) for j in range(n)])
    order = np.argsort(-(np.linalg.norm(Mm, axis=0) * w), kind="stable")
    Q, _ = np.linalg.qr(Mm[:, order])
    if not np.all(np.isfinite(Q)):
        Q = np.eye(n)
    return arb_mat(n, n, [to_ball(Q[i, j]) for i in range(n) for j in range(n)])  # each entry's exact binary value

"""How to step: float64 (scipy's DOP853, the engine of ``solve_ivp``) and mpmath
(Gragg–Bulirsch–Stoer extrapolation, our own), behind one small interface. The number backends the
flow systems are written against are :mod:`theorycheck.solvers.backends`.

GBS: the explicit midpoint rule with n_j = 2j substeps (j = 1..k) has an error expansion
in even powers of the substep; Richardson extrapolation of the k results gives order 2k
(Hairer, Nørsett, Wanner, *Solving ODEs I*, II.9). At 30+ digits a high order is what
makes τ = 10⁴ affordable; the coefficients are rational, so there is no table to mistype.
:func:`gbs_fixed` exposes the fixed-step method so tests can measure its order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from scipy.integrate import DOP853, Radau
from scipy.optimize import brentq

from theorycheck.solvers.guards import time_scale_bounds


# ---------------------------------------------------------------------------- steppers
class StepFailed(Exception):
    """A stepper could not make progress (step size underflow)."""


class FieldNotFinite(FloatingPointError):
    """The field at the stepper's current state is not finite (beyond float64): no trial step from
    there can be accepted, so stepping on would only shrink the step to the number spacing."""


class ScipyStepper:
    """One DOP853 (8th order, 7th-order dense output) step at a time; ``nfev`` counts
    field evaluations. Time is rescaled internally by a power of two T close to the
    shortest time scale |y|/|ẏ| at the start (t = t0 + T s), because DOP853's error norm
    squares ẏ and overflows when |ẏ| ≳ 1e150 (e.g. α = 1e200 just before a blow-up)."""

    #: the scipy method class (DOP853; :class:`ImplicitStepper` uses Radau)
    METHOD: Any = DOP853

    def __init__(self, rhs: Callable, t0: float, y0: np.ndarray, t_bound: float, rtol: float, atol):
        y0 = np.asarray(y0, dtype=float)
        t0, t_bound = float(t0), float(t_bound)
        span = t_bound - t0
        if not (span > 0 and math.isfinite(span)):
            raise StepFailed(f"empty or unbounded segment [{t0:g}, {t_bound:g}]")
        tau = self._time_scale(rhs, t0, y0, atol)
        # T: a power of two near the field's time scale, bounded so that the segment is a
        # finite, nonzero number of time units (one step can never run to inf)
        lo, hi = time_scale_bounds(span)
        T = 2.0 ** round(math.log2(tau)) if tau is not None else 1.0
        T = min(max(T, lo), hi)
        self.T, self.t0 = T, t0
        s_bound = span / T
        fun = lambda s, y: T * rhs(t0 + T * s, y)  # noqa: E731
        extra = {"jac": self._jacobian(fun)} if self.METHOD is Radau else {}
        self._solver = self.METHOD(fun, 0.0, y0, s_bound, rtol=rtol, atol=atol, first_step=min(1e-3, s_bound),
                                   max_step=s_bound, **extra)
        self.t = t0
        self.y = y0
        self.t_old = self.t
        self.y_old = self.y
        self.t_bound = t_bound

    @staticmethod
    def _time_scale(rhs, t0: float, y0: np.ndarray, atol) -> float | None:
        """The shortest |y|/|ẏ| over the components (None if the field is 0 or not finite)."""
        with np.errstate(all="ignore"):
            f = np.abs(np.asarray(rhs(t0, y0), dtype=float))
            scale = np.abs(y0) + np.broadcast_to(atol, y0.shape)
            tau = scale[f > 0] / f[f > 0]
        if tau.size == 0 or not np.all(np.isfinite(tau)) or np.min(tau) <= 0:
            return None
        return float(np.clip(np.min(tau), 1e-290, 1e290))

    @property
    def nfev(self) -> int:
        return self._solver.nfev

    @property
    def finished(self) -> bool:
        """The segment reached its bound (a further step is an error)."""
        return self._solver.status == "finished"

    def step(self) -> None:
        if self._solver.status != "running":
            raise StepFailed(f"stepping past the end of the segment at t = {self.t:g}")
        if not np.all(np.isfinite(self._solver.f)):
            # every trial step from here is rejected (its error estimate is not finite): DOP853 would
            # shrink the step hundreds of times down to the spacing of t (at t = 0 the smallest
            # subnormal), a load-dependent second of work that ends in a step-size underflow
            raise FieldNotFinite(f"the field is not finite at t = {self.t:.6g} (beyond float64)")
        self.t_old, self.y_old = self.t, self.y
        if self._solver.status != "running":
            raise StepFailed(f"DOP853 reached its bound t = {self.t_bound:.6g} without an event")
        msg = self._solver.step()
        if self._solver.status == "failed":
            raise StepFailed(msg or f"{self.METHOD.__name__} failed")
        s = self._solver.t
        self.t = self.t_bound if s >= self._solver.t_bound else self.t0 + self.T * s
        self.y = self._solver.y.copy()

    def dense(self) -> Callable[[float], np.ndarray]:
        if self.t == self.t_old:
            y = self.y.copy()
            return lambda t: y
        sol = self._solver.dense_output()
        t0, T, t_old, t1 = self.t0, self.T, self.t_old, self.t
        s_old, s1 = sol.t_old, sol.t

        def at(t: float) -> np.ndarray:
            if t <= t_old:
                return sol(s_old)
            if t >= t1:
                return sol(s1)
            return sol((t - t0) / T)

        return at


class ImplicitStepper(ScipyStepper):
    """One Radau IIA step at a time (order 5, L-stable, its Jacobian by finite differences): the
    stepper a run switches to where the explicit one is held back by stability, not accuracy (a
    stiff tail: fast decaying modes beside a slow drift). Same interface and time scaling as
    :class:`ScipyStepper`; a trial stage with a non-finite field fails its Newton iteration and the
    step is retried smaller instead of ending the run."""

    METHOD = Radau

    @staticmethod
    def _jacobian(fun: Callable) -> Callable:
        """∂f/∂y by forward differences, δ_j = √ε·max(1, |y_j|); a non-finite column raises
        :class:`FieldNotFinite` (the field left the number range next to the state)."""
        h0 = math.sqrt(np.finfo(float).eps)

        def jac(s, y):
            y = np.asarray(y, dtype=float)
            f0 = np.asarray(fun(s, y), dtype=float)
            J = np.empty((y.size, y.size))
            for j in range(y.size):
                dj = h0 * max(1.0, abs(y[j]))
                yj = y.copy()
                yj[j] += dj
                J[:, j] = (np.asarray(fun(s, yj), dtype=float) - f0) / dj
            if not np.all(np.isfinite(J)):
                raise FieldNotFinite(f"the field's Jacobian is not finite at s = {s:.6g} (beyond float64)")
            return J

        return jac

    def step(self) -> None:
        with np.errstate(all="ignore"):
            super().step()


class StiffnessMonitor:
    """Detects a stiff stretch of an explicit run (Hairer–Wanner, *Solving ODEs II*, IV.2: the step is
    limited by stability when h·ρ(J) sits at the edge of the method's stability region, ρ(J) the
    spectral radius of the field's Jacobian). Every ``EVERY`` accepted DOP853 steps it estimates ρ(J)
    at the current state by a few power iterations on finite differences of the field (``ITER``
    evaluations) and compares h·ρ(J), h the last step, with ``EDGE``; ``COUNT`` checks in a row at or
    beyond it make the stretch stiff. DOP853's stability region reaches about 6 along the negative
    real axis: an accurate step sits far inside it, a stability-limited one at its edge."""

    EDGE = 2.5
    EVERY = 10
    COUNT = 3
    ITER = 8

    def __init__(self, rhs: Callable):
        self.rhs = rhs
        self.n = 0
        self.streak = 0
        self.rng = np.random.default_rng(0)

    def radius(self, t, y: np.ndarray) -> float:
        """ρ(J) at (t, y) by power iteration on (f(y + δv) − f(y))/δ."""
        f0 = np.asarray(self.rhs(t, y), dtype=float)
        v = self.rng.standard_normal(y.size)
        v /= np.linalg.norm(v)
        scale = float(np.linalg.norm(y)) + 1.0
        delta = 1e-7 * scale
        lam = 0.0
        for _ in range(self.ITER):
            jv = (np.asarray(self.rhs(t, y + delta * v), dtype=float) - f0) / delta
            lam = float(np.linalg.norm(jv))
            if not (np.isfinite(lam) and lam > 0):
                return 0.0
            v = jv / lam
        return lam

    def update(self, stepper: ScipyStepper) -> bool:
        """Feed one accepted step; True when the stretch is stiff."""
        self.n += 1
        if self.n % self.EVERY:
            return False
        h = float(stepper.t - stepper.t_old)
        if not h > 0:
            return False
        with np.errstate(all="ignore"):
            lam = self.radius(stepper.t, np.asarray(stepper.y, dtype=float))
        self.streak = self.streak + 1 if h * lam >= self.EDGE else 0
        return self.streak >= self.COUNT


def _err_norm(err, y0, y1, rtol, atol) -> Any:
    worst = 0
    for e, a, b, at in zip(np.ravel(err), np.ravel(y0), np.ravel(y1), np.ravel(atol)):
        sc = at + rtol * max(abs(a), abs(b))
        r = abs(e) / sc
        if r > worst:
            worst = r
    return worst


def _gbs_rows(rhs, t, y, H, k, f0):
    """Extrapolation table of the midpoint rule with n_j = 2j, j = 1..k: returns the
    diagonal T_jj, the differences T_jj − T_j,j−1 (None for j = 1) and the evaluations."""
    rows: list[list] = []
    diag, diffs = [], []
    nfev = 0
    mp = isinstance(H, mpmath.mpf)
    for j in range(1, k + 1):
        n = 2 * j
        h = H / n
        z0 = y
        z1 = y + f0 * h  # array first: mpf * ndarray would repr the array
        for m in range(1, n):
            z0, z1 = z1, z0 + rhs(t + m * h, z1) * (2 * h)
            nfev += 1
        row = [z1]
        for i in range(1, j):
            q = mpmath.mpf(n) / (2 * (j - i)) if mp else n / (2 * (j - i))
            row.append(row[i - 1] + (row[i - 1] - rows[-1][i - 1]) / (q * q - 1))
        rows.append(row)
        diag.append(row[-1])
        diffs.append(row[-1] - row[-2] if j > 1 else None)
    return diag, diffs, nfev


def _gbs_table(rhs, t, y, H, k, f0):
    """(T_kk, T_kk − T_k,k−1, evaluations): one GBS step of order 2k."""
    diag, diffs, nfev = _gbs_rows(rhs, t, y, H, k, f0)
    return diag[-1], (diffs[-1] if k > 1 else diag[-1] * 0), nfev


def _work(k: int) -> int:
    """Field evaluations of one GBS step with k rows (n_j = 2j), counting f(t, y)."""
    return 1 + sum(2 * j - 1 for j in range(1, k + 1))


def gbs_fixed(rhs: Callable, t0, y0, t1, n_steps: int, k: int):
    """Integrate with ``n_steps`` equal GBS steps of fixed order 2k (no error control).
    Works on floats or mpf object arrays; returns y(t1). For convergence-order tests."""
    H = (t1 - t0) / n_steps
    t, y = t0, y0
    for _ in range(n_steps):
        y = _gbs_table(rhs, t, y, H, k, rhs(t, y))[0]
        t = t + H
    return y


class GBSStepper:
    """Adaptive Gragg–Bulirsch–Stoer on mpf object arrays with step-size and order
    control (a simplified ODEX: the next order minimises evaluations per unit step among
    k−1, k, k+1, k ≤ ``kmax``). ``dense(t)`` re-integrates one step from the last accepted
    point at the order used (exact to the tolerance, unlike an interpolant)."""

    KMIN = 3

    def __init__(self, rhs: Callable, t0, y0, t_bound, rtol, atol, kmax: int, dense_rhs: Callable | None = None):
        self.rhs, self.kmax = rhs, max(kmax, self.KMIN + 1)
        #: the field the dense output re-integrates with (it runs after the integration, so
        #: it must not carry the run's budget guard)
        self.dense_rhs = dense_rhs or rhs
        self.k = min(self.kmax, max(self.KMIN + 1, (self.kmax * 2) // 3))
        self.rtol, self.atol = rtol, atol
        self.t, self.y = t0, y0
        self.t_old, self.y_old, self.k_old = t0, y0, self.k
        self.t_bound = t_bound
        self.nfev = 0
        self.f = rhs(t0, y0)
        self.f_old = self.f
        self.nfev += 1
        ny = max([abs(v) for v in np.ravel(y0)] + [mpmath.mpf(0)])
        nf = max([abs(v) for v in np.ravel(self.f)] + [mpmath.mpf(0)])
        scale = ny + max(np.ravel(atol))
        h = (scale / nf) * mpmath.mpf("0.05") if nf > 0 else t_bound - t0
        self.h = min(h, t_bound - t0) if t_bound > t0 else mpmath.mpf(0)

    @property
    def finished(self) -> bool:
        return self.t >= self.t_bound

    def single(self, t, y, f, H, k=None):
        best, err, nfev = _gbs_table(self.rhs, t, y, H, k or self.k, f)
        self.nfev += nfev
        return best, err

    def _fac(self, e, j):
        if e == 0:
            return mpmath.mpf(4)
        return min(mpmath.mpf(4), max(mpmath.mpf("0.1"), mpmath.mpf("0.9") * e ** (-mpmath.mpf(1) / (2 * j - 1))))

    def step(self) -> None:
        t, y, f = self.t, self.y, self.f
        tiny = abs(t) * mpmath.mpf(2) ** (-mpmath.mp.prec + 4) + mpmath.mpf(10) ** (-mpmath.mp.dps * 4)
        H = min(self.h, self.t_bound - t)
        if 0 < self.t_bound - t <= tiny:  # the rest of the segment is below the resolution of t:
            self.t_old, self.y_old, self.f_old, self.k_old = t, y, f, self.k  # one Euler step
            self.t, self.y = self.t_bound, y + f * (self.t_bound - t)  # (error ~ H² ≪ 10^-dps)
            self.f = self.rhs(self.t, self.y)
            self.nfev += 1
            return
        for _ in range(60):
            if H <= tiny:
                raise StepFailed(f"GBS step size {mpmath.nstr(H, 5)} below the spacing of numbers at t = {mpmath.nstr(t, 8)}")
            k = self.k
            try:
                diag, diffs, nfev = _gbs_rows(self.rhs, t, y, H, k, f)
            except (OverflowError, ZeroDivisionError, ValueError):  # a trial stage left the field's domain
                diag, diffs, nfev = None, None, _work(k)
            self.nfev += nfev
            y_new = diag[-1] if diag is not None else None
            if y_new is None or not all(mpmath.isfinite(v) for v in np.ravel(y_new)):
                errs = {j: mpmath.mpf(10) for j in range(2, k + 1)}
            else:
                errs = {j: _err_norm(diffs[j - 1], y, diag[j - 1], self.rtol, self.atol) for j in range(max(2, k - 1), k + 1)}
            # step proposals and work per unit step for columns k−1 and k
            Hk = H * self._fac(errs[k], k)
            cost_k = _work(k) / Hk
            km1 = k - 1
            Hkm1 = H * self._fac(errs[km1], km1) if km1 >= 2 and km1 in errs else None
            cost_km1 = _work(km1) / Hkm1 if Hkm1 else None
            if errs[k] <= 1:
                self.t_old, self.y_old, self.f_old, self.k_old = t, y, f, k
                self.t = t + H if self.t_bound - (t + H) > tiny else self.t_bound
                self.y = y_new
                self.f = self.rhs(self.t, self.y)
                self.nfev += 1
                if cost_km1 is not None and km1 >= self.KMIN and cost_km1 < mpmath.mpf("0.9") * cost_k:
                    self.k, self.h = km1, Hkm1
                elif k < self.kmax and (cost_km1 is None or cost_k < mpmath.mpf("0.9") * cost_km1):
                    self.k, self.h = k + 1, Hk * _work(k + 1) / _work(k)
                else:
                    self.h = Hk
                return
            if cost_km1 is not None and km1 >= self.KMIN and cost_km1 < cost_k:
                self.k, H = km1, Hkm1
            else:
                H = Hk
        raise StepFailed("GBS: 60 rejected steps in a row")

    def dense(self) -> Callable:
        t0, y0, f0, k, t1, y1 = self.t_old, self.y_old, self.f_old, self.k_old, self.t, self.y
        rhs = self.dense_rhs

        def at(t):
            t = mpmath.mpf(t)
            if t == t1:
                return y1
            if t == t0:
                return y0
            return _gbs_table(rhs, t0, y0, t - t0, k, f0)[0]

        return at


# ---------------------------------------------------------------------------- roots
def find_root(g: Callable, a, ga, b, gb, *, mp: bool, tol=None, maxit: int = 200):
    """A root of g in [a, b] given g(a), g(b) of opposite signs (or g(b) = 0): brentq in
    float64, Illinois (regula falsi with halving) on mpf."""
    if gb == 0 or a == b:
        return b
    if not mp:
        fa, fb = g(float(a)), g(float(b))
        if fb == 0 or not (fa < 0 < fb or fb < 0 < fa):
            # the stored values bracket a root but g re-evaluated does not (a step of one
            # ulp, or a dense output that differs from the step's end in the last bit):
            # the crossing is at b to the precision available
            return b
        # a root may sit anywhere in the exponent range (time scales of 1e-300 exist): allow
        # enough iterations to bisect from 1e300 to 1e-300, and take the best bracket point
        # rather than raise if even that does not meet xtol (a non-smooth g)
        r, _ = brentq(g, float(a), float(b), xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=max(maxit, 2200),
                      full_output=True, disp=False)
        return r
    tol = tol if tol is not None else (abs(b) + 1) * mpmath.mpf(10) ** (-mpmath.mp.dps + 6)
    side = 0
    c = b
    for _ in range(maxit):
        c = (a * gb - b * ga) / (gb - ga)
        if not (min(a, b) < c < max(a, b)):
            c = (a + b) / 2
        gc = g(c)
        if gc == 0:
            return c
        if (gc > 0) == (gb > 0):
            b, gb = c, gc
            if side == -1:
                ga /= 2
            side = -1
        else:
            a, ga = c, gc
            if side == 1:
                gb /= 2
            side = 1
        if abs(b - a) < tol:
            break
    return b

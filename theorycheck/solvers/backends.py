"""The number backends the flow systems are written against: float64 (:class:`FloatBackend`, numpy) and mpmath
at a working precision (:class:`MpBackend`), one interface (arrays, exp/log, log-sum-exp, norms), so that a system
is written once and runs at either precision; and :func:`log_abs_and_sign`, the one conversion of a float or mpf
to (ln|x|, sign) without overflow."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
from scipy.special import logsumexp

__all__ = ["FloatBackend", "MpBackend", "log_abs_and_sign"]


class FloatBackend:
    """float64 numpy arrays; compiled numpy functions broadcast."""

    name = "numpy"

    def array(self, x) -> np.ndarray:
        return np.array(x, dtype=float)

    def num(self, x) -> float:
        return float(x)

    def call(self, f: Callable, *args):
        return f(*[np.asarray(a) if isinstance(a, list) else a for a in args])

    def call_multi(self, f: Callable, nout: int, *args) -> list:
        out = f(*args)
        shape = None
        res = []
        for o in out:
            if not (isinstance(o, np.ndarray) and o.ndim):
                shape = shape or np.broadcast(*args).shape
                o = np.full(shape, o, dtype=float)
            res.append(o)
        return res

    def sumsq(self, a) -> float:
        return float(np.sum(np.square(a)))

    def exp(self, a):
        return np.exp(a)

    def log(self, a):
        return np.log(a)

    def lse(self, a) -> float:
        a = np.asarray(a, dtype=float)
        m = np.max(a)
        if not np.isfinite(m):
            return float(m) if m > 0 or np.all(a == -np.inf) else float(logsumexp(a))
        return float(m + np.log(np.sum(np.exp(a - m))))

    def sqrt(self, a):
        return np.sqrt(a)

    def isfinite(self, a) -> bool:
        return bool(np.all(np.isfinite(a)))

    def to_float(self, a) -> np.ndarray:
        return np.asarray(a, dtype=float)

    def complex_step(self, scale: float) -> float:
        return 1e-40 * max(scale, 1e-250)


class MpBackend:
    """numpy object arrays of mpmath ``mpf`` at the caller's working precision."""

    name = "mpmath"

    def __init__(self, dps: int, digits: int | None = None):
        self.dps = dps
        self.digits = digits if digits is not None else dps

    def array(self, x) -> np.ndarray:
        a = np.asarray(x, dtype=object)
        out = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(a.shape):
            v = a[idx]
            out[idx] = v if isinstance(v, (mpmath.mpf, mpmath.mpc)) else mpmath.mpf(v)
        return out

    def num(self, x):
        return x if isinstance(x, (mpmath.mpf, mpmath.mpc)) else mpmath.mpf(x)

    def _loop(self, f, nout, *args):
        n = None
        simple = True
        for a in args:
            if isinstance(a, (np.ndarray, list)):
                if np.ndim(a) != 1 or (n is not None and len(a) != n):
                    simple = False
                    break
                n = len(a)
        if simple and n is not None:
            cols = [a if isinstance(a, (np.ndarray, list)) else [a] * n for a in args]
            res = [f(*vals) for vals in zip(*cols)]
            if nout == 0:
                out = np.empty(n, dtype=object)
                out[:] = res
                return [out]
            outs = [np.empty(n, dtype=object) for _ in range(nout)]
            for i, r in enumerate(res):
                for o, ri in zip(outs, r):
                    o[i] = ri
            return outs
        arrs = [a if isinstance(a, np.ndarray) else np.array(a, dtype=object) for a in args]
        b = np.broadcast(*arrs)
        outs = [np.empty(b.shape, dtype=object) for _ in range(max(nout, 1))]
        for idx, vals in zip(np.ndindex(b.shape), b):
            r = f(*vals)
            if nout == 0:
                outs[0][idx] = r
            else:
                for o, ri in zip(outs, r):
                    o[idx] = ri
        return outs

    def call(self, f: Callable, *args):
        return self._loop(f, 0, *args)[0]

    def call_multi(self, f: Callable, nout: int, *args) -> list:
        return self._loop(f, nout, *args)

    def exp(self, a):
        return self.call(mpmath.exp, a)

    def sumsq(self, a):
        return mpmath.fsum(x * x for x in np.ravel(a))

    def log(self, a):
        return self.call(mpmath.log, a)

    def lse(self, a):
        a = list(np.ravel(a))
        finite = [x for x in a if x != mpmath.ninf]
        if not finite:
            return mpmath.ninf
        m = max(finite)
        return m + mpmath.log(mpmath.fsum(mpmath.exp(x - m) for x in finite))

    def sqrt(self, a):
        return self.call(mpmath.sqrt, a)

    def isfinite(self, a) -> bool:
        return all(mpmath.isfinite(x) for x in np.ravel(a))

    def to_float(self, a) -> np.ndarray:
        return np.array([float(x) for x in np.ravel(a)], dtype=float).reshape(np.shape(a))

    def complex_step(self, scale) -> Any:
        return mpmath.mpf(10) ** (-self.dps - 20) * max(mpmath.mpf(scale), mpmath.mpf(10) ** (-self.dps))




def log_abs_and_sign(x) -> tuple[float, int]:
    """(ln|x|, sign x) of one float or mpf as floats, −inf for 0 (no overflow for mpf)."""
    if isinstance(x, (mpmath.mpf,)):
        if x == 0:
            return -math.inf, 0
        return float(mpmath.log(abs(x))), (1 if x > 0 else -1)
    x = float(x)
    if x == 0:
        return -math.inf, 0
    return math.log(abs(x)), (1 if x > 0 else -1)

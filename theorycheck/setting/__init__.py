"""`Setting`: data, depth, loss, optimizer, ρ and initialisation, validated once at the edge.

Every error is a :class:`~theorycheck.errors.SettingError` whose message is one line that
names the problem and the fix; the CLI prints it without a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from theorycheck.arith.exact import Exact, ExactInputs, exact, exact_vector, representable
from theorycheck.errors import SettingError
from theorycheck.optimizers.registry import default_for
from theorycheck.setting.geometry import (
    Reachable,
    check_separable,
    equilibrate,
    pow2_scale,
    reachable_analysis,
    reachable_cone,
    scaled_to_margin_one,
)
from theorycheck.setting.tables import MAX_CSV_BYTES, MAX_CSV_CELLS, MAX_CSV_LINE, check_finite, parse_floats, read_csv
from theorycheck.vocabulary import (
    REGRESSION_PARAMETRISATIONS,
    check_combination,
    check_depth,
    check_optimizer,
    check_param,
    check_rho,
)

__all__ = ["Init", "Setting", "exact_inputs", "parse_floats", "read_csv", "check_separable", "reachable_cone",
           "reachable_analysis", "Reachable",
           "MAX_CSV_BYTES", "MAX_CSV_LINE", "MAX_CSV_CELLS", "pow2_scale", "scaled_to_margin_one", "equilibrate"]


@dataclass(frozen=True, eq=False)
class Init:
    """Initialisation of the L layers.

    kind ``"scalar"``: every entry α (balanced); ``"vector"``: every layer the vector
    (α_1..α_d) (balanced, per-coordinate); ``"layers"``: an explicit L×d array. ``exact``: the
    numbers as typed (:class:`~theorycheck.arith.exact.Exact`: one for a scalar, one per coordinate for a
    vector, rows for layers); ``value`` holds their floats."""

    kind: str
    value: np.ndarray
    exact: object = None

    def layers(self, L: int, d: int) -> np.ndarray:
        """The L×d array of initial weights."""
        if self.kind == "scalar":
            return np.full((L, d), float(self.value))
        if self.kind == "vector":
            return np.tile(self.value, (L, 1))
        return self.value.copy()

    @property
    def balanced(self) -> bool:
        return self.kind in ("scalar", "vector") or bool(np.all(self.value == self.value[0]))


def _exact_array(v, what: str):
    """Nested Python sequences of numbers (or strings, Fractions, Decimals, Exact) as nested tuples of
    :class:`Exact`, read exactly; None for anything else (an ndarray: its floats are exact binary numbers,
    made on demand). Bad entries are one-line SettingErrors naming ``what``."""
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], (list, tuple)):
        rows = [_exact_array(r, what) for r in v]
        return None if any(r is None for r in rows) else tuple(rows)
    if isinstance(v, (list, tuple)):
        if any(isinstance(x, (list, tuple, np.ndarray)) or _nonfinite(x) for x in v):
            return None  # the float path names the entry
        return tuple(exact(x, what) for x in v)
    if isinstance(v, np.ndarray) or _nonfinite(v):
        return None
    return exact(v, what)


def _nonfinite(x) -> bool:
    return isinstance(x, (float, np.floating)) and not math.isfinite(x)


def _floats_of(e, what: str) -> np.ndarray:
    """The float64 values of nested :class:`Exact` (refusing numbers beyond float64's range)."""
    if isinstance(e, Exact):
        return np.array(representable(e, what))
    return np.array([_floats_of(x, what) for x in e], dtype=float)


def _binary(a: np.ndarray):
    """Nested tuples of :class:`Exact` of a float array's entries (their binary values)."""
    if a.ndim == 0:
        return exact(float(a))
    return tuple(_binary(x) for x in a)


def _make_init(init, L: int, d: int) -> Init:
    if isinstance(init, Init):
        init = init.exact if init.exact is not None else (init.value if init.kind != "scalar" else float(init.value))
    if isinstance(init, str):
        ex = exact_vector(init, "alpha")
        init = ex[0] if len(ex) == 1 else ex
    ex = _exact_array(init, "alpha")
    a = _floats_of(ex, "alpha") if ex is not None else np.asarray(init, dtype=float)
    check_finite(np.atleast_1d(a), "alpha")
    if a.ndim == 0 or a.size == 1 and a.ndim == 1:
        v = float(a.reshape(-1)[0])
        if v <= 0:
            raise SettingError(f"alpha = {v:g}: the scalar initialisation scale must be > 0")
        e = ex if isinstance(ex, Exact) else ex[0] if ex is not None else exact(v)
        return Init("scalar", np.array(v), e)
    if a.ndim == 1:
        if a.size != d:
            raise SettingError(f"alpha has {a.size} entries but the data have d = {d} features: give one α per feature")
        if np.any(a <= 0):
            j = int(np.argmax(a <= 0)) + 1
            raise SettingError(f"alpha_{j} = {a[j - 1]:g}: per-coordinate initialisation scales must be > 0")
        return Init("vector", a.copy(), ex if ex is not None else _binary(a))
    if a.ndim == 2:
        if a.shape != (L, d):
            raise SettingError(f"explicit layers have shape {a.shape[0]}×{a.shape[1]} but depth × d is {L}×{d}: "
                               "give one row per layer, one column per feature")
        return Init("layers", a.copy(), ex)
    raise SettingError(f"alpha must be a number, a vector of d numbers or an L×d array, got {a.ndim} dimensions")


@dataclass(frozen=True, init=False, eq=False)
class Setting:
    """A validated problem: data (X, y), parametrisation, depth, loss, optimizer, ρ and initialisation.

    Defaults are the command line's: the product parametrisation, depth 2, logistic loss, the
    registry's default optimizer (ℓ2-SAM) with ρ = 1, α = 1. ``optimizer=None`` is that default (for the
    regression parametrisations, where ℓ2-SAM's flow is not integrated, gradient descent).

    ``param`` "product" (β = w_1 ⊙ … ⊙ w_L, classification: labels ±1, separable data), "pm"
    (β = w₊^L − w₋^L) or "uv" (β = u ⊙ v), the regression parametrisations (loss "squared", real
    labels, α one number or one per feature). The (param, loss, optimizer, depth) combination must be
    one the engine integrates (:meth:`theorycheck.optimizers.Optimizer.supports`).

    ``Z = y[:, None] * X`` holds the signed examples z_i = y_i x_i (THEORY.md, Setting)."""

    X: np.ndarray
    y: np.ndarray
    depth: int = 2
    loss: str = "logistic"
    optimizer: str | None = None
    rho: float = 1.0
    init: Init = field(default_factory=lambda: Init("scalar", np.array(1.0), exact(1)))
    param: str = "product"

    def __init__(self, X, y=None, *, depth: int = 2, loss: str = "logistic", optimizer: str | None = None,
                 rho=1, alpha=1, check_separability: bool = True, param: str = "product"):
        exact_X = _exact_array(X, "data") if not isinstance(X, (str, Exact)) else None
        if isinstance(exact_X, tuple) and exact_X and isinstance(exact_X[0], Exact):
            exact_X = (exact_X,)  # one example given as a flat sequence
        if exact_X is not None and not isinstance(exact_X, tuple):
            exact_X = ((exact_X,),)
        if exact_X is not None and len({len(r) for r in exact_X}) > 1:
            raise SettingError("data rows have different lengths: give one value per feature in every row")
        if exact_X is not None:
            X = _floats_of(exact_X, "data")
        else:
            X = np.asarray(X, dtype=float) if not isinstance(X, np.ndarray) else X.astype(float)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2:
            raise SettingError(f"data must be an n×d array, got {X.ndim} dimensions")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise SettingError(f"data are empty (shape {X.shape[0]}×{X.shape[1]}): give at least one example with one feature")
        check_finite(X, "data")
        if y is None:
            y = np.ones(X.shape[0])
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise SettingError(f"{X.shape[0]} examples but {y.shape[0]} labels: give one label per row")
        check_finite(y, "labels")
        regression = check_param(param) in REGRESSION_PARAMETRISATIONS
        bad = np.flatnonzero((y != 1) & (y != -1))
        if bad.size and not regression:
            raise SettingError(f"label of example {bad[0] + 1} is {y[bad[0]]:g}: labels must be +1 or -1")
        depth = check_depth(depth)
        optimizer = (default_for(param, loss, depth) if optimizer is None
                     else check_optimizer(getattr(optimizer, "name", optimizer)))
        check_combination(param, loss, optimizer, depth)
        exact_rho = exact(rho, "rho")
        rho = check_rho(representable(exact_rho, "rho"))
        init = _make_init(alpha, depth, X.shape[1])
        if regression and init.kind == "layers":
            raise SettingError(f"param={param!r} takes alpha as one number or one per feature, not one row per layer")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "depth", depth)
        object.__setattr__(self, "loss", loss)
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "init", init)
        object.__setattr__(self, "exact_rho", exact_rho)
        object.__setattr__(self, "_exact_X", exact_X)
        object.__setattr__(self, "param", param)
        # one nonzero example is separated by β = its own z (no LP, no scipy import)
        one = self.Z.shape[0] == 1 and bool(np.all(np.isfinite(self.Z))) and bool(np.any(self.Z != 0))
        if check_separability and not one and not regression:
            check_separable(self.Z)

    #: the file the examples were read from (:meth:`from_csv`), else None
    source = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_z(cls, z: Sequence | str, **kwargs) -> Setting:
        """One example z = y x (label +1): a string "0.52,0.91,1.77" or a sequence of numbers, each read
        exactly (:func:`theorycheck.arith.exact.exact`: a decimal string is the rational it denotes, a float its
        binary value)."""
        if isinstance(z, str):
            z = exact_vector(z, "z")
        if isinstance(z, np.ndarray) or (isinstance(z, (list, tuple)) and z and isinstance(z[0], (list, tuple))):
            return cls(np.atleast_2d(np.asarray(z, dtype=float)), np.ones(1), **kwargs)  # floats: binary values
        return cls([list(z) if isinstance(z, (list, tuple)) else [z]], np.ones(1), **kwargs)

    @classmethod
    def from_csv(cls, path: str | Path, **kwargs) -> Setting:
        """Examples from a CSV of rows ``x1,…,xd,y``."""
        X, y = read_csv(path)
        s = cls(X, y, **kwargs)
        object.__setattr__(s, "source", str(path))
        return s

    # ------------------------------------------------------------------ views
    @property
    def Z(self) -> np.ndarray:
        """Signed examples z_i = y_i x_i, n×d."""
        return self.y[:, None] * self.X

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def single(self) -> bool:
        """One example: the rescaled flow of THEORY.md applies."""
        return self.n == 1

    @property
    def z(self) -> np.ndarray:
        """The single example z (only when n = 1)."""
        if not self.single:
            raise SettingError(f"this setting has {self.n} examples; the one-example quantity z needs n = 1")
        return self.Z[0]

    @property
    def layers0(self) -> np.ndarray:
        """Initial weights, L×d."""
        return self.init.layers(self.depth, self.d)

    @property
    def balanced(self) -> bool:
        return self.init.balanced

    @property
    def regression(self) -> bool:
        """A regression setting (param pm or uv, squared loss, real labels)."""
        return self.param in REGRESSION_PARAMETRISATIONS

    @property
    def alpha(self) -> np.ndarray:
        """The initialisation scale per feature (d,) of a scalar or per-feature α."""
        if self.init.kind == "layers":
            raise SettingError("this setting has explicit layers: it has no per-feature scale α")
        return np.broadcast_to(np.asarray(self.init.value, dtype=float), (self.d,)).copy()

    def reachable(self) -> Reachable:
        """Separability within the cone of predictors the flow can reach from this
        initialisation (:func:`reachable_analysis`)."""
        return reachable_analysis(self.Z, self.layers0, self.loss)

    @property
    def exact_X(self) -> tuple[tuple[Exact, ...], ...]:
        """The examples' entries as typed (:class:`~theorycheck.arith.exact.Exact`); for data given as a float
        array (or read from a CSV), their binary values."""
        return self._exact_X if self._exact_X is not None else _binary(self.X)

    @property
    def exact_z(self) -> tuple[Exact, ...]:
        """The single example z = y x, exactly (only when n = 1)."""
        z = self.z  # raises for several examples
        row = self.exact_X[0]
        return tuple(e if s > 0 else Exact(-e.value, e.binary) for e, s in zip(row, np.broadcast_to(self.y[0], z.shape)))

    def exact_inputs(self, *, alpha: bool = True) -> ExactInputs:
        """The exact numbers of this setting (see :func:`exact_inputs`)."""
        return exact_inputs(self, alpha=alpha)

    def replace(self, **changes) -> Setting:
        """A copy with some fields changed (validated again); the numbers keep their exact values."""
        kw = dict(depth=self.depth, loss=self.loss, optimizer=self.optimizer, rho=self.exact_rho, param=self.param,
                  alpha=self.init.exact if self.init.exact is not None else
                  (self.init.value if self.init.kind != "scalar" else float(self.init.value)))
        X = changes.pop("X", self._exact_X if self._exact_X is not None else self.X)
        y = changes.pop("y", self.y)
        kw.update(changes)
        return Setting([list(r) for r in X] if isinstance(X, tuple) else X, y, **kw)


def exact_inputs(setting: Setting, *, alpha: bool = True) -> ExactInputs:
    """The exact inputs of ``setting`` that a proved computation is about: z (one example; None for
    several), ρ, the initialisation α (one number, or one per coordinate; None when ``alpha`` is False or
    the layers are explicit) and the depth, each an :class:`~theorycheck.arith.exact.Exact` — the number as typed
    (a decimal string is the rational it denotes) or, when it came from a float, that float's binary value.
    Every proved computation builds its balls from these (``Exact.ball()``), never from the floats."""
    a = setting.init.exact if alpha and setting.init.kind != "layers" else None
    return ExactInputs(setting.exact_z if setting.single else None, setting.exact_rho, a, setting.depth)

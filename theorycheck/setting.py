"""`Setting`: data, depth, loss, optimizer, ρ and initialisation, validated once at the edge.

Every error is a :class:`~theorycheck.errors.SettingError` whose message is one line that
names the problem and the fix; the CLI prints it without a traceback.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from theorycheck.errors import NotSeparableError, SettingError
from theorycheck.vocabulary import check_depth, check_loss, check_optimizer, check_rho

__all__ = ["Init", "Setting", "parse_floats", "read_csv", "check_separable"]


def parse_floats(text: str, what: str) -> np.ndarray:
    """Parse ``"1,2,3"`` (as typed after ``--z`` or ``--alpha``) into a float array."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or any(p == "" for p in parts):
        raise SettingError(f"{what}: {text!r} is not a comma-separated list of numbers (e.g. 1,2,3)")
    try:
        values = np.array([float(p) for p in parts])
    except ValueError:
        raise SettingError(f"{what}: {text!r} is not a comma-separated list of numbers (e.g. 1,2,3)") from None
    return values


def _finite(a: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(a)
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise SettingError(
            f"{what} has a non-finite value ({a[tuple(idx)]}) at index {tuple(int(i) + 1 for i in idx)}: "
            "replace NaN/inf by a finite number"
        )


def read_csv(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``x1,…,xd,y`` rows (an optional header line is skipped) into (X, y)."""
    path = Path(path)
    if not path.is_file():
        raise SettingError(f"data file {str(path)!r} not found: give the path of a CSV with columns x1..xd,y")
    rows: list[list[float]] = []
    width = None
    with path.open(newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh), start=1):
            cells = [c.strip() for c in row]
            if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
                continue
            try:
                values = [float(c) for c in cells]
            except ValueError:
                if not rows and lineno == 1:  # header
                    continue
                raise SettingError(f"{path}:{lineno}: not a number in {row!r}: every cell must be numeric") from None
            if width is None:
                width = len(values)
            elif len(values) != width:
                raise SettingError(f"{path}:{lineno}: {len(values)} columns where earlier rows have {width}: fix the row")
            rows.append(values)
    if not rows:
        raise SettingError(f"{path}: no data rows: the CSV needs rows x1,…,xd,y")
    if width is None or width < 2:
        raise SettingError(f"{path}: rows need at least two columns (x1..xd and the label y)")
    a = np.array(rows, dtype=float)
    return a[:, :-1], a[:, -1]


def check_separable(Z: np.ndarray) -> np.ndarray:
    """Return a β with ``<β, z_i> ≥ 1`` for all i, or raise :class:`NotSeparableError`.

    Non-separability is proved, not guessed: by Gordan's theorem, no β has ``Zβ > 0``
    iff some ``λ ≥ 0, Σλ = 1`` has ``Zᵀλ = 0``; the examples with λ_i > 0 are named."""
    from scipy.optimize import linprog  # here, not at import: `import theorycheck` stays light

    n, d = Z.shape
    scale = np.max(np.abs(Z), axis=1, keepdims=True)
    if np.any(scale == 0):
        i = int(np.argmax(scale[:, 0] == 0)) + 1
        raise NotSeparableError(
            f"data not linearly separable: example {i} is the zero vector (no β has <β, z_{i}> > 0); remove it",
            [i], [1.0])
    Zs = Z / scale  # scale rows: separability is invariant, conditioning better
    # Gordan: find λ ≥ 0, Σλ = 1, Zsᵀλ = 0
    A_eq = np.vstack([Zs.T, np.ones((1, n))])
    b_eq = np.concatenate([np.zeros(d), [1.0]])
    res = linprog(np.zeros(n), A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * n, method="highs")
    if res.status == 0:
        lam = res.x / scale[:, 0]
        lam = lam / lam.sum()
        resid = np.linalg.norm(Z.T @ lam) / max(np.linalg.norm(Z), 1.0)
        if resid < 1e-9:
            support = [int(i) + 1 for i in np.flatnonzero(lam > 1e-12)]
            shown = ", ".join(str(i) for i in support[:10]) + (" …" if len(support) > 10 else "")
            raise NotSeparableError(
                f"data not linearly separable: examples {shown} (1-based) have a nonnegative combination "
                "Σ λ_i y_i x_i = 0 (certificate); remove or relabel one of them",
                support, [float(lam[i - 1]) for i in support])
    # separable: a β with margins ≥ 1 (LP, bounded by a box for a finite answer)
    res = linprog(np.zeros(d), A_ub=-Zs, b_ub=-np.ones(n), bounds=[(None, None)] * d, method="highs")
    if res.status != 0:
        raise SettingError("could not decide linear separability (LP solver status "
                           f"{res.status}: {res.message}); rescale the data")
    return res.x


@dataclass(frozen=True, eq=False)
class Init:
    """Initialisation of the L layers.

    kind ``"scalar"``: every entry α (balanced); ``"vector"``: every layer the vector
    (α_1..α_d) (balanced, per-coordinate); ``"layers"``: an explicit L×d array."""

    kind: str
    value: np.ndarray

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


def _make_init(init, L: int, d: int) -> Init:
    if isinstance(init, Init):
        init = init.value if init.kind != "scalar" else float(init.value)
    if isinstance(init, str):
        init = parse_floats(init, "alpha")
        if init.size == 1:
            init = float(init[0])
    a = np.asarray(init, dtype=float)
    _finite(np.atleast_1d(a), "alpha")
    if a.ndim == 0 or a.size == 1 and a.ndim == 1:
        v = float(a.reshape(-1)[0])
        if v <= 0:
            raise SettingError(f"alpha = {v:g}: the scalar initialisation scale must be > 0")
        return Init("scalar", np.array(v))
    if a.ndim == 1:
        if a.size != d:
            raise SettingError(f"alpha has {a.size} entries but the data have d = {d} features: give one α per feature")
        if np.any(a <= 0):
            j = int(np.argmax(a <= 0)) + 1
            raise SettingError(f"alpha_{j} = {a[j - 1]:g}: per-coordinate initialisation scales must be > 0")
        return Init("vector", a.copy())
    if a.ndim == 2:
        if a.shape != (L, d):
            raise SettingError(f"explicit layers have shape {a.shape[0]}×{a.shape[1]} but depth × d is {L}×{d}: "
                               "give one row per layer, one column per feature")
        return Init("layers", a.copy())
    raise SettingError(f"alpha must be a number, a vector of d numbers or an L×d array, got {a.ndim} dimensions")


@dataclass(frozen=True, init=False, eq=False)
class Setting:
    """A validated problem: data (X, y), depth, loss, optimizer, ρ and initialisation.

    ``Z = y[:, None] * X`` holds the signed examples z_i = y_i x_i (THEORY.md, Setting)."""

    X: np.ndarray
    y: np.ndarray
    depth: int = 2
    loss: str = "logistic"
    optimizer: str = "gd"
    rho: float = 0.0
    init: Init = field(default_factory=lambda: Init("scalar", np.array(1.0)))

    def __init__(self, X, y=None, *, depth: int = 2, loss: str = "logistic", optimizer: str = "gd",
                 rho: float = 0.0, alpha=1.0, check_separability: bool = True):
        X = np.asarray(X, dtype=float) if not isinstance(X, np.ndarray) else X.astype(float)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2:
            raise SettingError(f"data must be an n×d array, got {X.ndim} dimensions")
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise SettingError(f"data are empty (shape {X.shape[0]}×{X.shape[1]}): give at least one example with one feature")
        _finite(X, "data")
        if y is None:
            y = np.ones(X.shape[0])
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise SettingError(f"{X.shape[0]} examples but {y.shape[0]} labels: give one label per row")
        _finite(y, "labels")
        bad = np.flatnonzero((y != 1) & (y != -1))
        if bad.size:
            raise SettingError(f"label of example {bad[0] + 1} is {y[bad[0]]:g}: labels must be +1 or -1")
        depth = check_depth(depth)
        check_loss(loss)
        check_optimizer(optimizer)
        rho = check_rho(rho)
        init = _make_init(alpha, depth, X.shape[1])
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "depth", depth)
        object.__setattr__(self, "loss", loss)
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "init", init)
        if check_separability:
            check_separable(self.Z)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_z(cls, z: Sequence[float] | str, **kwargs) -> Setting:
        """One example z = y x (label +1)."""
        if isinstance(z, str):
            z = parse_floats(z, "z")
        return cls(np.atleast_2d(np.asarray(z, dtype=float)), np.ones(1), **kwargs)

    @classmethod
    def from_csv(cls, path: str | Path, **kwargs) -> Setting:
        """Examples from a CSV of rows ``x1,…,xd,y``."""
        X, y = read_csv(path)
        return cls(X, y, **kwargs)

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

    def replace(self, **changes) -> Setting:
        """A copy with some fields changed (validated again)."""
        kw = dict(depth=self.depth, loss=self.loss, optimizer=self.optimizer, rho=self.rho,
                  alpha=self.init.value if self.init.kind != "scalar" else float(self.init.value))
        X, y = changes.pop("X", self.X), changes.pop("y", self.y)
        kw.update(changes)
        return Setting(X, y, **kw)

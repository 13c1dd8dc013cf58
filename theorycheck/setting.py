"""`Setting`: data, depth, loss, optimizer, ρ and initialisation, validated once at the edge.

Every error is a :class:`~theorycheck.errors.SettingError` whose message is one line that
names the problem and the fix; the CLI prints it without a traceback.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from theorycheck.arith.exact import Exact, ExactInputs, exact, exact_vector, representable
from theorycheck.errors import NotSeparableError, SettingError
from theorycheck.optimizers.registry import default_for
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
           "MAX_CSV_BYTES", "MAX_CSV_LINE", "MAX_CSV_CELLS"]


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


#: limits checked before anything is allocated: file size, one line, and cells in all
MAX_CSV_BYTES = 256 * 2**20
MAX_CSV_LINE = 4 * 2**20
MAX_CSV_CELLS = 20_000_000


def _decode(raw: bytes) -> str:
    """UTF-8 (with or without a byte-order mark); anything else is read as latin-1, which
    decodes every byte: numbers are ASCII either way, and a non-number cell is then named."""
    try:
        return raw.decode("utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_csv(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``x1,…,xd,y`` rows (an optional header line is skipped) into (X, y).

    Limits (checked before reading or allocating): the file has at most
    :data:`MAX_CSV_BYTES` bytes, a line at most :data:`MAX_CSV_LINE` bytes, the data at
    most :data:`MAX_CSV_CELLS` cells. Text in UTF-8 or (as a fallback) latin-1."""
    path = Path(path)
    shown_path = str(path) if len(str(path)) <= 120 else str(path)[:120] + "…"
    try:
        is_file = path.is_file()
        is_dir = not is_file and path.is_dir()
        size = path.stat().st_size if is_file else 0
    except (OSError, ValueError):  # a name too long, a NUL character, no permission…
        is_file = is_dir = False
    if is_dir:
        raise SettingError(f"data file {shown_path!r} is a folder: give the path of a CSV file in it, with "
                           "columns x1..xd,y")
    if not is_file:
        raise SettingError(f"data file {shown_path!r} not found: give the path of a CSV with columns x1..xd,y")
    try:
        return _read_rows(path, size)
    except OSError as exc:
        raise SettingError(f"data file {shown_path!r}: cannot be read ({exc.strerror or exc})") from None


def _read_rows(path: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    if size > MAX_CSV_BYTES:
        raise SettingError(f"{path}: {size} bytes exceeds the limit of {MAX_CSV_BYTES} bytes for a data file")
    rows: list[list[float]] = []
    width = None
    cells_total = 0
    with path.open("rb") as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_CSV_LINE + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > MAX_CSV_LINE:
                raise SettingError(f"{path}:{lineno}: line longer than the limit of {MAX_CSV_LINE} bytes")
            text = _decode(raw)
            if "\x00" in text:
                raise SettingError(f"{path}:{lineno}: contains a NUL byte: not a text CSV")
            try:
                row = next(csv.reader([text]), [])
            except csv.Error as exc:
                raise SettingError(f"{path}:{lineno}: unreadable CSV row ({exc})") from None
            cells = [c.strip() for c in row]
            if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
                continue
            try:
                values = [float(c) for c in cells]
            except ValueError:
                if not rows and width is None and lineno == 1:  # header
                    continue
                shown = ascii(row if len(row) <= 8 else row[:8] + ["…"])
                if len(shown) > 200:
                    shown = shown[:200] + "…"
                raise SettingError(f"{path}:{lineno}: not a number in {shown}: every cell must be numeric") from None
            if width is None:
                width = len(values)
            elif len(values) != width:
                raise SettingError(f"{path}:{lineno}: {len(values)} columns where earlier rows have {width}: fix the row")
            cells_total += width
            if cells_total > MAX_CSV_CELLS:
                raise SettingError(f"{path}: more than the limit of {MAX_CSV_CELLS} cells")
            rows.append(values)
    if not rows:
        raise SettingError(f"{path}: no data rows: the CSV needs rows x1,…,xd,y")
    if width is None or width < 2:
        raise SettingError(f"{path}: rows need at least two columns (x1..xd and the label y)")
    a = np.array(rows, dtype=float)
    return a[:, :-1], a[:, -1]


def pow2_scale(Z: np.ndarray) -> float:
    """The power of two nearest max|Z| from below (1.0 for a zero array). Dividing by it and
    multiplying back are exact in float64 (unless a result leaves the normal range)."""
    m = float(np.max(np.abs(Z))) if Z.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return 1.0
    return math.ldexp(1.0, math.frexp(m)[1] - 1)


def scaled_to_margin_one(Z: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """``c·b`` with ``min_i <c·b, z_i> ≥ 1`` in floating point (b must separate Z), or None
    when that vector is not representable in float64 (data near the subnormal range)."""
    s = pow2_scale(Z)
    Zg = Z / s
    bn = b / np.max(np.abs(b))
    m = float(np.min(Zg @ bn))
    if not m > 0:
        return None
    with np.errstate(over="ignore", under="ignore"):
        beta = bn / m / s
        for _ in range(8):
            if not np.all(np.isfinite(beta)):
                return None
            mm = float(np.min(Z @ beta))
            if mm >= 1.0:
                return beta
            if not mm > 0:
                return None
            beta = beta * (1.0 / mm) * (1 + 4 * np.finfo(float).eps)
    return None


def check_separable(Z: np.ndarray) -> np.ndarray:
    """Return a β with ``<β, z_i> ≥ 1`` for all i, or raise :class:`NotSeparableError`.

    Non-separability is proved, not guessed: by Gordan's theorem, no β has ``Zβ > 0``
    iff some ``λ ≥ 0, Σλ = 1`` has ``Zᵀλ = 0``; the examples with λ_i > 0 are named.
    When a β with margins ≥ 1 would overflow float64 (data of subnormal size), the
    separating direction is returned with its largest entry 1 (margins then below 1)."""
    b = _separating_direction(Z)
    beta = scaled_to_margin_one(Z, b)
    return beta if beta is not None else b / np.max(np.abs(b))


def _pow2_exponents(a: np.ndarray) -> np.ndarray:
    """Exponents e with 2**e ≤ a < 2**(e+1) for a > 0 (0 where a = 0)."""
    e = np.frexp(a)[1].astype(int) - 1
    return np.where(a > 0, e, 0)


def equilibrate(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Zs, c)`` with Zs = R⁻¹ Z C⁻¹ for diagonal powers of two C = diag(2**c) (columns)
    and R (rows) that bring every column and then every row to max|·| in [1, 2).
    Separability and sign constraints on β are invariant (β = C⁻¹ b for a b with Zs b > 0),
    and the scaling is exact except where an entry leaves the float64 range."""
    c = _pow2_exponents(np.max(np.abs(Z), axis=0))
    with np.errstate(under="ignore"):
        Zc = np.ldexp(Z, -c[None, :])
        r = _pow2_exponents(np.max(np.abs(Zc), axis=1))
        Zs = np.ldexp(Zc, -r[:, None])
    return Zs, c


def _unscale(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``C⁻¹ b`` up to a positive factor, with largest entry of size about 1."""
    nz = b != 0
    if not np.any(nz):
        return b
    e = np.frexp(np.abs(b))[1] - c
    shift = int(np.max(e[nz]))
    with np.errstate(under="ignore"):
        return np.ldexp(b, -c - shift)


def _separating_direction(Z: np.ndarray) -> np.ndarray:
    from scipy.optimize import linprog  # here, not at import: `import theorycheck` stays light

    n, d = Z.shape
    scale = np.max(np.abs(Z), axis=1, keepdims=True)
    if np.any(scale == 0):
        i = int(np.argmax(scale[:, 0] == 0)) + 1
        raise NotSeparableError(
            f"data not linearly separable: example {i} is the zero vector (no β has <β, z_{i}> > 0); remove it",
            [i], [1.0])
    Zs, colexp = equilibrate(Z)  # separability is invariant, conditioning better
    with np.errstate(under="ignore"):  # the row scales of Z C⁻¹: λ for Z is λs / scale
        scale = np.max(np.abs(np.ldexp(Z, -colexp[None, :])), axis=1, keepdims=True)
    # Gordan: find λ ≥ 0, Σλ = 1, Zsᵀλ = 0
    A_eq = np.vstack([Zs.T, np.ones((1, n))])
    b_eq = np.concatenate([np.zeros(d), [1.0]])
    res = linprog(np.zeros(n), A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * n, method="highs")
    if res.status == 0:
        lam_s = res.x  # certificate in the row-scaled space: λ_i = λs_i / scale_i for Z itself
        resid = np.linalg.norm(Zs.T @ lam_s) / max(np.linalg.norm(Zs), 1e-300)
        if resid < 1e-9:
            support = [int(i) + 1 for i in np.flatnonzero(lam_s > 1e-12)]
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                lam = lam_s / (scale[:, 0] / np.max(scale))
                lam = lam / lam.sum()
            if not np.all(np.isfinite(lam)):
                lam = lam_s / lam_s.sum()
            shown = ", ".join(str(i) for i in support[:10]) + (" …" if len(support) > 10 else "")
            raise NotSeparableError(
                f"data not linearly separable: examples {shown} (1-based) have a nonnegative combination "
                "Σ λ_i y_i x_i = 0 (certificate); remove or relabel one of them",
                support, [float(lam[i - 1]) for i in support])
    # separable: a β with Zs β ≥ 1 (row-scaled margins; rescaled to margin 1 by the caller)
    res = linprog(np.zeros(d), A_ub=-Zs, b_ub=-np.ones(n), bounds=[(None, None)] * d, method="highs")
    if res.status != 0 or not np.all(np.isfinite(res.x)) or not np.min(Zs @ res.x) > 0:
        raise SettingError("could not decide linear separability (LP solver status "
                           f"{res.status}: {res.message}); rescale the data")
    return _unscale(res.x, colexp)


@dataclass(frozen=True)
class Reachable:
    """Which predictors β the network can reach from its initialisation, and whether the
    data are separable by one of them (:func:`reachable_analysis`).

    ``signs[j]``: +1 (β_j ≥ 0 for all time), −1 (β_j ≤ 0), 0 (β_j = 0 for all time), or
    None (no constraint); ``signs`` itself is None when the cone is not determined (then
    ``separable`` is None too). When ``separable`` is False, ``examples``/``weights`` are a
    certificate (λ ≥ 0, Σλ = 1, with Σ_i λ_i <β, z_i> ≤ 0 for every reachable β), so some
    example keeps a margin ≤ 0 and the loss stays ≥ ``loss_lower_bound`` = ℓ(0)/n > 0."""

    signs: list | None
    separable: bool | None
    reason: str
    examples: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    loss_lower_bound: float = 0.0

    def as_dict(self) -> dict:
        return {"reachable_signs": self.signs, "reachable_separable": self.separable,
                "reachable_reason": self.reason, "reachable_certificate": self.examples,
                "reachable_certificate_weights": self.weights, "loss_lower_bound": self.loss_lower_bound}


def reachable_cone(layers0: np.ndarray) -> tuple[list | None, str]:
    """Sign constraints on β(t) = Π_k w_k(t) along the GD and SAM flows from ``layers0`` (L×d).

    L = 1: none (β = w moves freely). L ≥ 2 with balanced layers (w_k(0) = u(0) for all k):
    the flows are symmetric in the layers, so w_k(t) = u(t) for all t (uniqueness) and
    β = u^L. A coordinate with u_j = 0 has a zero field (every product Π_{m≠k} ŵ_mj has a
    factor ŵ_mj = u_j + ε_mj with ε_mj ∝ Π_{m'≠m} u_m'j = 0), so u_j never changes sign
    (ℓ∞-SAM: u_j reaching 0 slides there, THEORY.md C2). Hence sign(β_j) = sign(u_j(0))^L
    for all time: L even confines β to β ≥ 0. Unbalanced layers: not determined."""
    L, d = layers0.shape
    if L == 1:
        return [None] * d, "depth 1: β = w is unconstrained"
    if not np.all(layers0 == layers0[0]):
        return None, "unbalanced layers: the reachable cone is not determined"
    u = layers0[0]
    signs = [int(np.sign(v)) ** L if v != 0 else 0 for v in u]
    return signs, (f"balanced layers, L = {L}: sign(β_j) = sign(u_j(0))^{L} is kept by the flows")


def reachable_analysis(Z: np.ndarray, layers0: np.ndarray, loss: str = "logistic") -> Reachable:
    """Are the data separable by a β the flow can reach (:func:`reachable_cone`)? An LP
    decides it, with a certificate when not: λ ≥ 0, Σλ = 1, σ_j (Zᵀλ)_j ≤ 0 for every
    constrained coordinate, (Zᵀλ)_j = 0 for every free one (Z row-scaled for conditioning)."""
    from scipy.optimize import linprog  # here, not at import: `import theorycheck` stays light

    signs, reason = reachable_cone(layers0)
    if signs is None:
        return Reachable(None, None, reason)
    n, d = Z.shape
    Zs, _ = equilibrate(Z)  # positive diagonal scalings keep the signs of β and the cone
    # primal: ∃β with Zs β ≥ 1, σ_j β_j ≥ 0 (σ_j = 0: β_j = 0)
    bounds = [(None, None) if sg is None else (0, 0) if sg == 0 else (0, None) if sg > 0 else (None, 0)
              for sg in signs]
    res = linprog(np.zeros(d), A_ub=-Zs, b_ub=-np.ones(n), bounds=bounds, method="highs")
    if res.status == 0 and np.all(np.isfinite(res.x)) and np.min(Zs @ res.x) > 0:
        return Reachable(signs, True, reason)
    # alternative: λ ≥ 0, Σλ = 1, (Zsᵀλ)_j ≤ 0 where σ_j = +1, ≥ 0 where σ_j = −1, = 0 where free
    A_ub, A_eq = [], []
    for j, sg in enumerate(signs):
        if sg is None:
            A_eq.append(Zs[:, j])
        elif sg > 0:
            A_ub.append(Zs[:, j])
        elif sg < 0:
            A_ub.append(-Zs[:, j])
    A_eq.append(np.ones(n))
    b_eq = np.zeros(len(A_eq))
    b_eq[-1] = 1.0
    cert = linprog(np.zeros(n), A_ub=np.array(A_ub) if A_ub else None, b_ub=np.zeros(len(A_ub)) if A_ub else None,
                   A_eq=np.array(A_eq), b_eq=b_eq, bounds=[(0, None)] * n, method="highs")
    if cert.status != 0:
        raise SettingError(f"could not decide separability within the reachable cone (LP status {res.status}: "
                           f"{res.message}); rescale the data")
    lam = cert.x
    support = [int(i) + 1 for i in np.flatnonzero(lam > 1e-12)]
    ell0 = math.log(2.0) if loss == "logistic" else 1.0
    return Reachable(signs, False, reason, support, [float(lam[i - 1]) for i in support], ell0 / n)


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
    _finite(np.atleast_1d(a), "alpha")
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
        _finite(X, "data")
        if y is None:
            y = np.ones(X.shape[0])
        y = np.asarray(y, dtype=float).reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise SettingError(f"{X.shape[0]} examples but {y.shape[0]} labels: give one label per row")
        _finite(y, "labels")
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

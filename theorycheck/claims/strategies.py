"""Public hypothesis strategies for property-testing claims about GD/SAM on linear diagonal
networks — separable datasets, single examples (with ties on demand), initialisations and
whole :class:`~theorycheck.setting.Setting` objects.

Every strategy checks its arguments eagerly (at call time, not at draw time) and raises
``hypothesis.errors.InvalidArgument`` with a message naming the argument. Draws are always
valid inputs: a drawn dataset is separable, a drawn α is > 0, a drawn Setting validates.

Example::

    from hypothesis import given
    from theorycheck.claims import strategies as tcs

    @given(tcs.settings(optimizers=["sam-l2"], depths=[2], single=True))
    def test_my_claim(setting): ...
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from theorycheck.optimizers import default_set
from theorycheck.optimizers import get as get_optimizer
from theorycheck.setting import Setting
from theorycheck.vocabulary import LOSSES

#: the optimizers of the classification flows these strategies draw (product parametrisation)
OPTIMIZERS: tuple[str, ...] = tuple(o.name for o in default_set("product", "logistic", 2))

__all__ = [
    "feature_values",
    "init_scales",
    "per_coordinate_inits",
    "separable_datasets",
    "settings",
    "single_examples",
]


def _check_range(lo: float, hi: float, name: str, positive: bool = True) -> None:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise InvalidArgument(f"{name}: bounds must be finite, got ({lo}, {hi})")
    if positive and lo <= 0:
        raise InvalidArgument(f"{name}: lower bound must be > 0, got {lo}")
    if lo > hi:
        raise InvalidArgument(f"{name}: lower bound {lo} exceeds upper bound {hi}")


def _check_dim(d: int, name: str = "d", lo: int = 1) -> None:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < lo:
        raise InvalidArgument(f"{name} must be an integer ≥ {lo}, got {d!r}")


def feature_values(min_value: float = 0.1, max_value: float = 10.0) -> st.SearchStrategy[float]:
    """Positive feature magnitudes, drawn log-uniformly-ish (floats in [min, max], no NaN)."""
    _check_range(min_value, max_value, "feature_values")
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False)


@st.composite
def _examples(draw, d, min_value, max_value, ties, sort):
    dim = draw(st.integers(min_value=d[0], max_value=d[1]))
    vals = draw(st.lists(feature_values(min_value, max_value), min_size=dim, max_size=dim))
    if ties and dim >= 2 and draw(st.booleans()):
        i, j = draw(st.sampled_from([(a, b) for a in range(dim) for b in range(dim) if a < b]))
        vals[j] = vals[i]
    z = np.array(vals, dtype=float)
    return np.sort(z) if sort else z


def single_examples(d: int | tuple[int, int] = (1, 6), *, min_value: float = 0.1, max_value: float = 10.0,
                    ties: bool = False, sort: bool = False) -> st.SearchStrategy[np.ndarray]:
    """One example z > 0 of dimension d (an int or an inclusive range). With ``ties`` about
    half the draws copy one entry onto another (ties are where claims are fragile).
    ``sort`` returns z in increasing order (feature 1 minor, feature d major)."""
    rng = (d, d) if isinstance(d, (int, np.integer)) else tuple(d)
    if len(rng) != 2:
        raise InvalidArgument(f"d must be an int or a (lo, hi) pair, got {d!r}")
    _check_dim(rng[0], "d")
    _check_dim(rng[1], "d")
    if rng[0] > rng[1]:
        raise InvalidArgument(f"d range {rng} is empty")
    _check_range(min_value, max_value, "single_examples")
    return _examples(rng, min_value, max_value, ties, sort)


@st.composite
def _datasets(draw, n, d, margin, max_abs):
    nn = draw(st.integers(min_value=n[0], max_value=n[1]))
    dd = draw(st.integers(min_value=d[0], max_value=d[1]))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    rng = np.random.default_rng(seed)
    w = rng.normal(size=dd)
    w /= np.linalg.norm(w)
    X = rng.uniform(-max_abs, max_abs, size=(nn, dd))
    s = X @ w
    y = np.where(s >= 0, 1.0, -1.0)
    # push every example to margin ≥ `margin` along w: separable by construction
    X += ((margin - y * s).clip(min=0) * y)[:, None] * w[None, :]
    return X, y


def separable_datasets(n: int | tuple[int, int] = (1, 6), d: int | tuple[int, int] = (1, 5), *,
                       margin: float = 0.1, max_abs: float = 3.0) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """(X, y) with n×d features and labels ±1, linearly separable with margin ≥ ``margin``
    along a random unit direction (so ``Setting(X, y)`` always validates)."""
    rng_n = (n, n) if isinstance(n, (int, np.integer)) else tuple(n)
    rng_d = (d, d) if isinstance(d, (int, np.integer)) else tuple(d)
    for r, name in ((rng_n, "n"), (rng_d, "d")):
        if len(r) != 2:
            raise InvalidArgument(f"{name} must be an int or a (lo, hi) pair")
        _check_dim(r[0], name)
        _check_dim(r[1], name)
        if r[0] > r[1]:
            raise InvalidArgument(f"{name} range {r} is empty")
    if not margin > 0:
        raise InvalidArgument(f"margin must be > 0, got {margin}")
    _check_range(margin, max_abs, "separable_datasets (margin, max_abs)")
    return _datasets(rng_n, rng_d, margin, max_abs)


def init_scales(min_value: float = 1e-2, max_value: float = 10.0) -> st.SearchStrategy[float]:
    """A scalar initialisation scale α > 0, log-uniform on [min_value, max_value]."""
    _check_range(min_value, max_value, "init_scales")
    lo, hi = np.log(min_value), np.log(max_value)
    return st.floats(min_value=float(lo), max_value=float(hi)).map(lambda t: float(np.exp(t)))


def per_coordinate_inits(d: int, min_value: float = 1e-2, max_value: float = 10.0) -> st.SearchStrategy[np.ndarray]:
    """A vector (α_1, …, α_d) of positive per-coordinate scales."""
    _check_dim(d)
    return st.lists(init_scales(min_value, max_value), min_size=d, max_size=d).map(np.array)


@st.composite
def _settings(draw, optimizers, depths, losses, rho, single, per_coordinate, d):
    opt = draw(st.sampled_from(optimizers))
    L = draw(st.sampled_from(depths))
    loss = draw(st.sampled_from(losses))
    r = draw(st.floats(min_value=rho[0], max_value=rho[1])) if get_optimizer(opt).perturbs else 0.0
    if single:
        z = draw(single_examples(d))
        X, y = z[None, :], np.ones(1)
    else:
        X, y = draw(separable_datasets(d=d))
    dim = X.shape[1]
    alpha = draw(per_coordinate_inits(dim)) if per_coordinate and draw(st.booleans()) else draw(init_scales())
    return Setting(X, y, depth=L, loss=loss, optimizer=opt, rho=r, alpha=alpha)


def settings(*, optimizers: Sequence[str] = OPTIMIZERS, depths: Sequence[int] = (1, 2, 3),
             losses: Sequence[str] = ("logistic",), rho: tuple[float, float] = (0.0, 2.0), single: bool = True,
             per_coordinate: bool = False, d: int | tuple[int, int] = (1, 5)) -> st.SearchStrategy[Setting]:
    """Validated :class:`Setting` objects. ``single`` draws one example z > 0 (the rescaled
    flow of THEORY.md applies); otherwise a separable dataset. ``per_coordinate`` mixes in
    per-coordinate inits α_j."""
    bad = [o for o in optimizers if o not in OPTIMIZERS]
    if bad or not optimizers:
        raise InvalidArgument(f"optimizers must be a non-empty subset of {OPTIMIZERS}, got {list(optimizers)}")
    badl = [x for x in losses if x not in LOSSES]
    if badl or not losses:
        raise InvalidArgument(f"losses must be a non-empty subset of {LOSSES}, got {list(losses)}")
    if not depths:
        raise InvalidArgument("depths must be non-empty")
    for L in depths:
        _check_dim(L, "depth")
    _check_range(rho[0], rho[1], "rho", positive=False)
    if rho[0] < 0:
        raise InvalidArgument(f"rho lower bound must be ≥ 0, got {rho[0]}")
    return _settings(tuple(optimizers), tuple(depths), tuple(losses), tuple(rho), single, per_coordinate,
                     d if isinstance(d, tuple) else (d, d))

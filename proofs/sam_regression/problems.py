"""The inputs of the pack ``sam-regression``: the paper's sparse regression problems (Gaussian X, a
k-sparse β*, y = Xβ*, n < d), edge cases (ties, tiny and large α, ρ → 0, n = 1), the hypothesis
strategies that draw them and the fixed grids whose failure rates ``verify`` reports.

An input is a dict: either generated (``seed``, ``n``, ``d``, ``k``, ``signs``) or explicit (``X``,
``y``, ``beta_star``), with the run's ``log10_alpha``, ``rho`` and ``param`` ("uv" or "pm").
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

#: the parametrisations of the pack (β = u⊙v and β = w₊² − w₋²)
PARAMS = ("uv", "pm")
#: the radii drawn (unnormalised SAM: ρ multiplies the gradient)
RHOS = (0.01, 0.03, 0.1, 0.3)
#: the initial scales drawn, log10 α (the rich regime is α ≪ 1)
LOG10_ALPHAS = (-2.0, -1.5, -1.0, -0.5, 0.0)


@lru_cache(maxsize=512)
def _generated(seed: int, n: int, d: int, k: int, signs: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's problem (the authors' code: x_i ~ N(0, I_d), β* = |N(0, 1)| on k coordinates,
    normalised to ‖β*‖₂ = 1; ``signs``: random signs on the support), X rounded to 3 decimals so that
    the input is short to print and exact to re-type; y = Xβ* in float64."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, d)), 3)
    b = np.zeros(d)
    idx = rng.choice(d, size=k, replace=False)
    vals = np.abs(rng.standard_normal(k)) + 0.1
    if signs:
        vals *= rng.choice([-1.0, 1.0], size=k)
    b[idx] = vals / np.linalg.norm(vals)
    b = np.round(b, 6)
    return X, X @ b, b


def data(x: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, β*) of an input (β* is None-free: an explicit input without ``beta_star`` uses the
    minimum-ℓ2 interpolator's support-free zero vector and is never asked about generalisation)."""
    if "X" in x:
        X = np.atleast_2d(np.asarray(x["X"], float))
        y = np.asarray(x["y"], float).ravel()
        bs = np.asarray(x.get("beta_star", np.zeros(X.shape[1])), float)
        return X, y, bs
    X, y, b = _generated(int(x["seed"]), int(x["n"]), int(x["d"]), int(x["k"]), bool(x.get("signs", False)))
    return X.copy(), y.copy(), b.copy()


def alpha_of(x: dict, d: int) -> np.ndarray:
    """The initial scale, one per coordinate: ``alpha`` (a list) if given, else 10**log10_alpha."""
    if "alpha" in x:
        return np.broadcast_to(np.asarray(x["alpha"], float), (d,)).copy()
    return np.full(d, 10.0 ** float(x["log10_alpha"]))


def describe(x: dict) -> dict:
    """The input as printed in a verdict: the data written out (a counterexample re-types as is)."""
    X, y, b = data(x)
    out = {k: v for k, v in x.items() if k not in ("X", "y", "beta_star")}
    return {**out, "X": X.tolist(), "y": y.tolist(), "beta_star": b.tolist()}


@st.composite
def problems(draw, *, rhos=RHOS, log10_alphas=LOG10_ALPHAS, params=PARAMS, max_n: int = 6):
    """The paper's problems, small: n < d, a k-sparse β* (k < n), one α and ρ, one parametrisation."""
    n = draw(st.integers(2, max_n))
    d = draw(st.integers(n + 1, 2 * n + 2))
    return {"seed": draw(st.integers(0, 10_000)), "n": n, "d": d, "k": draw(st.integers(1, max(1, n - 1))),
            "signs": draw(st.booleans()), "log10_alpha": draw(st.sampled_from(log10_alphas)),
            "rho": draw(st.sampled_from(rhos)), "param": draw(st.sampled_from(params))}


def paper_grid(count: int = 40, *, n: int = 10, d: int = 20, k: int = 2, log10_alpha: float = -1.0,
               rho: float = 0.1, param: str = "uv") -> list[dict]:
    """A fixed grid of ``count`` of the paper's problems (seeds 0 … count−1, one shape, one α and ρ):
    the inputs on which ``verify`` reports a claim's failure rate."""
    return [{"seed": s, "n": n, "d": d, "k": k, "signs": False, "log10_alpha": log10_alpha, "rho": rho,
             "param": param} for s in range(count)]


#: edge cases: two equal columns (the interpolators tie in every symmetric potential), one example,
#: tiny and large α, ρ → 0
TIE = {"X": [[1.0, 1.0, 0.5], [0.5, 0.5, -1.0]], "y": [1.0, 0.5], "beta_star": [1.0, 0.0, 0.0],
       "log10_alpha": -1.0, "rho": 0.1, "param": "uv"}
ONE_EXAMPLE = {"X": [[1.0, -0.5, 0.25]], "y": [1.0], "beta_star": [1.0, 0.0, 0.0], "log10_alpha": -1.0,
               "rho": 0.1, "param": "uv"}
PAPER = {"seed": 0, "n": 6, "d": 12, "k": 2, "signs": False, "log10_alpha": -1.0, "rho": 0.1, "param": "uv"}
TINY_ALPHA = {**PAPER, "log10_alpha": -4.0}
LARGE_ALPHA = {**PAPER, "log10_alpha": 1.0}
SMALL_RHO = {**PAPER, "rho": 1e-6}
EDGES = (TIE, ONE_EXAMPLE, TINY_ALPHA, LARGE_ALPHA, SMALL_RHO, {**PAPER, "param": "pm"})


def origin_thresholds(X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """SR3's radii above which coordinate j cannot leave w = 0: |c_j|/m_j with c = Xᵀy/n and m_j = c_j² (n-SAM)
    or mean_i (x_ij y_i)² (1-SAM); inf where c_j = 0 and m_j = 0."""
    n = X.shape[0]
    c = np.abs(X.T @ y) / n
    m_one = np.mean((X * y[:, None]) ** 2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"n_sam": np.where(c > 0, 1.0 / c, np.inf), "one_sam": np.where(m_one > 0, c / m_one, np.inf)}


@st.composite
def threshold_problems(draw):
    """The paper's problems with α ≤ 0.1 and ρ on one side of SR3's thresholds for both SAMs: below every
    coordinate's (factor 0.5 or 0.9 of the least 1-SAM threshold, which is below n-SAM's), or above every one
    (factor 1.1 or 2 of the largest n-SAM threshold)."""
    x = draw(problems(log10_alphas=(-3.0, -2.0, -1.0), params=("uv",)))
    X, y, _ = data(x)
    th = origin_thresholds(X, y)
    side = draw(st.sampled_from(("all escape", "none escapes")))
    if side == "all escape":
        rho = draw(st.sampled_from((0.5, 0.9))) * float(np.min(th["one_sam"]))
    else:
        rho = draw(st.sampled_from((1.1, 2.0))) * float(np.max(th["n_sam"]))
    return {**x, "rho": float(np.float32(rho)), "side": side}

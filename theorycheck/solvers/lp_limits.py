"""What the LP-margin flow tends to, and how to read its limit off a run: how far a direction is from a KKT point of
the ℓ_{2/L} max-margin problem min Σ|β_j|^{2/L} s.t. Zβ ≥ 1 (:func:`kkt_residual`), that problem's LP solutions (the
orthant ℓ1 max margin, :func:`orthant_l1_max_margin`; the vertices, :func:`lp_vertex_solution`), and the limit of a
sequence sampled along a run (Aitken's Δ², :func:`aitken_limit`; a power law in log t, :func:`power_limit`;
:func:`extrapolate`). The flow itself is :mod:`theorycheck.solvers.lp_flow`.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
from scipy.optimize import linprog

from theorycheck.errors import TheorycheckError

#: exponents p of the rate model a + c·(log t)^(−p) tried by :func:`power_limit`
POWERS = tuple(float(p) for p in np.geomspace(1e-3, 10.0, 241))

__all__ = ["POWERS", "kkt_residual", "aitken_limit", "power_limit", "extrapolate", "orthant_l1_max_margin", "lp_vertex_solution"]


def _normalised(beta: np.ndarray, Z: np.ndarray) -> np.ndarray:
    m = Z @ beta
    mn = float(m.min())
    if mn <= 0:
        raise ValueError("the direction does not separate the data")
    return beta / mn


def kkt_residual(beta: np.ndarray, Z: np.ndarray, L: int, *, orthant: bool = False) -> dict:
    """How far β̄ = β/min_i⟨z_i, β⟩ is from a KKT point of min Σ|β_j|^p s.t. Zβ ≥ 1, p = 2/L
    (``orthant``: with β ≥ 0 added). Continuous in β (no support threshold): stationarity is
    tested multiplied by β̄_j, β̄_j·(p|β̄_j|^(p−1)sign β̄_j − (Zᵀλ)_j) = 0;
    ``residual`` = min over λ ≥ 0 (an LP) of ‖that‖₁ / (pΣ|β̄_j|^p) + complementarity
    Σλ_i(m_i − 1) / (pΣ|β̄_j|^p) + for L = 2 the violations Σ_j (|Zᵀλ|_j − 1)₊ ((Zᵀλ)_j − 1)₊ in
    the orthant). For L ≥ 3 the objective's
    subgradient at β_j = 0 is unbounded: no condition there."""
    b = _normalised(np.asarray(beta, float), Z)
    n, d = Z.shape
    p = 2.0 / L
    m = Z @ b
    gb = p * np.abs(b) ** p  # β̄_j × ∂f/∂β_j
    M = (Z * b).T  # row j: β̄_j z_ij
    scale = float(gb.sum())
    # the best multipliers: an LP over λ ≥ 0, e± ≥ 0 (stationarity error), v ≥ 0 (L = 2: |Zᵀλ|_j ≤ 1 + v_j)
    nv = d if L == 2 else 0
    c = np.concatenate([m - 1.0, np.ones(2 * d), np.ones(nv)])
    A_eq = np.hstack([M, -np.eye(d), np.eye(d), np.zeros((d, nv))])
    A_ub = b_ub = None
    if L == 2:
        rows = [np.hstack([Z.T, np.zeros((d, 2 * d)), -np.eye(d)])]
        if not orthant:
            rows.append(np.hstack([-Z.T, np.zeros((d, 2 * d)), -np.eye(d)]))
        A_ub = np.vstack(rows)
        b_ub = np.ones(A_ub.shape[0])
    r = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=gb, bounds=[(0, None)] * c.size, method="highs")
    if r.status != 0:
        raise TheorycheckError(f"the KKT multiplier LP failed: {r.message}")
    lam = r.x[:n]
    stat = float(np.abs(M @ lam - gb).sum()) / scale
    comp = float(lam @ (m - 1.0)) / scale
    off = float(r.x[n + 2 * d:].sum()) if L == 2 else 0.0
    return {"residual": stat + comp + off, "stationarity": stat, "off_support": off, "complementarity": comp,
            "multipliers": lam.tolist(), "normalised_beta": b.tolist()}


def aitken_limit(values) -> tuple[float, float]:
    """Limit of a sequence sampled where its rate variable shrinks geometrically (checkpoints
    equally spaced in log‖β‖, so log t grows by a near-constant factor): Aitken's Δ² on the last
    three values, and as error bar its change from the three before. A sequence that stopped
    changing extrapolates to its last value."""
    v = np.asarray(values, float)

    def one(a, b, c):
        den = (c - b) - (b - a)
        if abs(den) <= 1e-14 * max(abs(a), abs(b), abs(c), 1e-300):
            return c
        est = c - (c - b) ** 2 / den
        return est if np.isfinite(est) else c

    if v.size < 3:
        return float(v[-1]), float(abs(v[-1]))
    a1 = one(*v[-3:])
    a2 = one(*v[-4:-1]) if v.size >= 4 else v[-1]
    return float(a1), float(abs(a1 - a2))


def power_limit(log_t, values, *, last: int = 5) -> dict:
    """Fit the rate model the theory gives, v ≈ a + c·(log t)^(−p) with p > 0, to the last
    ``last`` checkpoints (least squares in (a, c) for each p of :data:`POWERS`). ``a``/``se``/``p``:
    the best fit, with the standard error of a from the residuals (dof = points − 3);
    ``admissible``: the exponents whose residual sum of squares is within 9σ² of the best
    (a profile 3σ band, σ² = RSS_min/dof); ``a_low``: min over the admissible exponents of
    a(p) − 3·se(p), the lower end of the limit under every admissible model. A sequence that
    stopped changing gives a = its value, se = 0. Deterministic (a fixed grid, no optimiser)."""
    x = np.asarray(log_t, float)[-last:]
    v = np.asarray(values, float)[-last:]
    if v.size < 4 or not np.all(x > 1.0):
        return {"a": float(v[-1]), "se": float(abs(v[-1])), "p": None, "a_low": -math.inf, "admissible": []}
    if float(v.max() - v.min()) <= 1e-12 * max(float(np.abs(v).max()), 1e-300):
        return {"a": float(v[-1]), "se": 0.0, "p": None, "a_low": float(v[-1]), "admissible": list(POWERS)}
    dof = v.size - 3
    fits = []
    for p in POWERS:
        A = np.vstack([np.ones_like(x), np.exp(-p * np.log(x))]).T
        coef, *_ = np.linalg.lstsq(A, v, rcond=None)
        r = v - A @ coef
        fits.append((float(r @ r), p, coef, A))
    rss_min = min(f[0] for f in fits)
    sigma2 = rss_min / dof
    best, low, adm = None, math.inf, []
    for rss, p, coef, A in fits:
        if rss > rss_min + 9.0 * sigma2:
            continue
        try:
            cov = np.linalg.inv(A.T @ A) * sigma2
        except np.linalg.LinAlgError:
            return {"a": float(coef[0]), "se": math.inf, "p": p, "a_low": -math.inf, "admissible": adm}
        se = math.sqrt(max(float(cov[0, 0]), 0.0))
        adm.append(p)
        low = min(low, float(coef[0]) - 3.0 * se)
        if rss == rss_min and best is None:
            best = (float(coef[0]), se, p)
    return {"a": best[0], "se": best[1], "p": best[2], "a_low": low, "admissible": [min(adm), max(adm)]}


def extrapolate(xs, ys) -> tuple[float, float]:
    """Linear fit y = a + b·x; (a, standard error of a). Fewer than 3 points: (y[-1], |y[-1]|)."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    if xs.size < 3:
        return float(ys[-1]), float(abs(ys[-1]))
    A = np.vstack([np.ones_like(xs), xs]).T
    coef, *_ = np.linalg.lstsq(A, ys, rcond=None)
    r = ys - A @ coef
    dof = max(xs.size - 2, 1)
    cov = np.linalg.inv(A.T @ A) * float(r @ r) / dof
    return float(coef[0]), float(math.sqrt(max(cov[0, 0], 0.0)))


def orthant_l1_max_margin(Z) -> dict:
    """min Σβ_j s.t. Zβ ≥ 1, β ≥ 0 (the ℓ1 max margin over the directions a positive start
    reaches), by HiGHS; with the unrestricted ℓ1 optimum for comparison."""
    Z = np.atleast_2d(np.asarray(Z, float))
    n, d = Z.shape
    r = linprog(np.ones(d), A_ub=-Z, b_ub=-np.ones(n), bounds=[(0, None)] * d, method="highs")
    if r.status == 2:
        raise TheorycheckError("no β ≥ 0 separates the data: the flow from a positive start cannot drive the loss "
                               "to 0 (the pack's claims assume it does)")
    if r.status != 0:
        raise TheorycheckError(f"the orthant LP failed: {r.message}")
    free = linprog(np.ones(2 * d), A_ub=-np.hstack([Z, -Z]), b_ub=-np.ones(n), bounds=[(0, None)] * (2 * d),
                   method="highs")
    return {"beta": r.x.tolist(), "l1_norm": float(r.fun),
            "unrestricted_l1_norm": float(free.fun) if free.status == 0 else None,
            "unrestricted_beta": (free.x[:d] - free.x[d:]).tolist() if free.status == 0 else None}


def lp_vertex_solution(Z, L: int, max_vertices: int = 200_000) -> dict:
    """Global min of Σβ_j^(2/L) over {Zβ ≥ 1, β ≥ 0} for L ≥ 2: the objective is concave
    there, so the minimum is at a vertex; every vertex (d active constraints among the n
    margins and the d bounds) is enumerated (budget ``max_vertices``)."""
    Z = np.atleast_2d(np.asarray(Z, float))
    n, d = Z.shape
    A = np.vstack([Z, np.eye(d)])
    rhs = np.concatenate([np.ones(n), np.zeros(d)])
    best, best_b, seen = math.inf, None, 0
    for rows in combinations(range(n + d), d):
        seen += 1
        if seen > max_vertices:
            raise TheorycheckError(f"more than {max_vertices} candidate vertices: the data are too large for "
                                   "the exhaustive lp-margin predictor")
        M = A[list(rows)]
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        b = np.linalg.solve(M, rhs[list(rows)])
        if np.all(b >= -1e-12) and np.all(Z @ b >= 1 - 1e-9):
            b = np.maximum(b, 0.0)
            v = float(np.sum(b ** (2.0 / L)))
            if v < best - 1e-12:
                best, best_b = v, b
    if best_b is None:
        raise TheorycheckError("no β ≥ 0 separates the data")
    return {"beta": best_b.tolist(), "objective": best, "vertices_tried": seen}

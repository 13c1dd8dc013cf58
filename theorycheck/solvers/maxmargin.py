"""ℓ1 and ℓ2 max-margin classifiers of separable data z_i = y_i x_i (the limits that C1,
C4 and C6 compare with), and angles to them.

- ℓ1: ``min ‖β‖₁ s.t. Zβ ≥ 1`` as an LP (β = p − q, p, q ≥ 0), scipy's HiGHS; exact up to
  HiGHS's feasibility tolerance (1e-9), then rescaled so that min_i <β, z_i> = 1 exactly.
- ℓ2: ``min ½‖β‖² s.t. Zβ ≥ 1`` by SLSQP from the ℓ1 solution (d, n ≤ 2000); beyond, its dual
  ``min ½‖Zᵀλ‖² − Σλ, λ ≥ 0`` on a growing working set of rows (L-BFGS-B, memory O(|W|·d)),
  then polished on the active set: λ ≥ 0 solving (Z_A Z_Aᵀ) λ = 1 by NNLS, β = Z_Aᵀ λ. When
  that certificate holds (all KKT conditions to ~1e-10) the answer is exact to rounding;
  ``kkt_residual`` says how well they hold either way.

The reported ``margin`` is the max-margin value γ = max_{‖β‖_p ≤ 1} min_i <β, z_i> = 1/‖β‖_p
for the β with smallest margin 1.

Scale: both problems are solved on Z/2^k with 2^k ≤ max|Z| < 2^(k+1) (entries in (−2, 2),
where HiGHS and SLSQP are accurate) and β is scaled back by 2^−k, which is exact in
float64. When the margin-1 β would leave the range where float64 computes with it (max|β|
outside 2^±500, where ‖β‖₂² overflows or underflows: data at |z| ≲ 1e-151 or ≳ 1e151),
``beta`` keeps the solution of the scaled problem and ``log2_scale`` = −k says the true β is
``beta · 2**log2_scale``; ``margin`` = 1/‖β‖_p holds for that true β.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize, nnls

from theorycheck.errors import TheorycheckError
from theorycheck.setting import Setting, check_separable, pow2_scale
from theorycheck.solvers.guards import scaled_norm

__all__ = ["MaxMargin", "max_margin", "l1_max_margin", "l2_max_margin", "l2_max_margin_large", "angle_degrees",
           "MAX_DENSE_VARIABLES"]

#: the most variables a dense solver here (SLSQP on β, NNLS on the active set) is given: their
#: workspace grows like the square of it (≈ 8·m² bytes, m³ work)
MAX_DENSE_VARIABLES = 2000


@dataclass(frozen=True)
class MaxMargin:
    """A max-margin solution: ``beta`` with min_i <β, z_i> = 1, ``margin`` γ = 1/‖β‖_p,
    ``direction`` β/‖β‖₂, ``kkt_residual`` (largest violation of the optimality conditions,
    relative), ``method``, ``margins`` <β, z_i> (≥ 1, the smallest = 1) and ``log2_scale``
    (0 unless the margin-1 β is not representable: then it is ``beta · 2**log2_scale``)."""

    norm: int
    beta: np.ndarray
    margin: float
    direction: np.ndarray
    kkt_residual: float
    method: str
    margins: np.ndarray | None = None
    log2_scale: int = 0


def _Z(data) -> np.ndarray:
    if isinstance(data, Setting):
        return data.Z
    Z = np.atleast_2d(np.asarray(data, dtype=float))
    if not np.all(np.isfinite(Z)):
        raise TheorycheckError("max margin: the data contain NaN or inf")
    check_separable(Z)
    return Z


#: β is returned as it is when max|β| lies in [2^−BETA_SAFE_LOG2, 2^BETA_SAFE_LOG2] and no entry is
#: subnormal: then ‖β‖₂² (np.linalg.norm squares the entries), β·z and 1/‖β‖ stay inside float64.
#: Outside, ``beta`` is the solution of the scaled problem and ``log2_scale`` says by how much.
BETA_SAFE_LOG2 = 500


def _norm(x: np.ndarray, p: int) -> float:
    """‖x‖_p without overflow or underflow of the squares or the sum: max|x|·‖x/max|x|‖_p."""
    if p == 2:
        return float(scaled_norm(x))
    m = float(np.max(np.abs(x), initial=0.0))
    return m * float(np.sum(np.abs(x) / m)) if m > 0 else 0.0


def _representable(out: np.ndarray) -> bool:
    nz = out != 0
    top = float(np.max(np.abs(out), initial=0.0))
    return (bool(np.all(np.isfinite(out))) and 2.0**-BETA_SAFE_LOG2 <= top <= 2.0**BETA_SAFE_LOG2
            and bool(np.all(np.abs(out[nz]) >= 2.0**-1000)))


def _finish(norm: int, beta: np.ndarray, Z: np.ndarray, kkt: float, method: str, scale: float) -> MaxMargin:
    """``beta`` solves the problem for ``Z`` = data / ``scale`` (a power of two 2^k): the answer
    for the data is β·2^−k, its margin 2^k/‖β‖_p (norms computed without overflow: data at 1e-179
    gave a β of 1e179, whose ‖β‖₂ = 1/margin np.linalg.norm returns as inf)."""
    m = Z @ beta
    beta = beta / np.min(m)  # smallest margin exactly 1
    m = Z @ beta
    nrm = _norm(beta, norm)
    k = math.frexp(scale)[1] - 1  # scale = 2**k
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(beta, -k)
    if _representable(out):
        log2 = 0
    else:
        out, log2 = beta, -k
    margin = math.ldexp(1.0 / nrm, k)
    return MaxMargin(norm=norm, beta=out, margin=margin, direction=beta / _norm(beta, 2),
                     kkt_residual=float(kkt), method=method, margins=m, log2_scale=log2)


def _scaled(data) -> tuple[np.ndarray, float]:
    Z = _Z(data)
    s = pow2_scale(Z)
    return Z / s, s


def l1_max_margin(data) -> MaxMargin:
    """``min ‖β‖₁ s.t. <β, z_i> ≥ 1`` (LP, HiGHS). ``data``: a Setting or an n×d array Z."""
    Z, scale = _scaled(data)
    n, d = Z.shape
    A = np.hstack([-Z, Z])  # −Z(p − q) ≤ −1
    res = linprog(np.ones(2 * d), A_ub=A, b_ub=-np.ones(n), bounds=[(0, None)] * (2 * d), method="highs")
    if res.status != 0:
        nz = np.abs(Z[Z != 0])
        span = math.log10(float(nz.max()) / float(nz.min())) if nz.size else 0.0
        why = (f"; the data are separable, but their nonzero entries span {span:.0f} orders of magnitude, more "
               "than HiGHS's tolerances resolve" if span > 9 else "")
        raise TheorycheckError(f"ℓ1 max-margin LP failed (HiGHS status {res.status}: {res.message}){why}")
    beta = res.x[:d] - res.x[d:]
    # KKT: duals y ≥ 0 of the margin constraints with ‖Zᵀy‖_∞ ≤ 1 and complementary slackness
    y = -np.asarray(res.ineqlin.marginals)
    g = Z.T @ y
    kkt = max(float(np.max(np.abs(g)) - 1.0), float(np.max(-y, initial=0.0)),
              abs(float(np.sum(np.abs(beta))) - float(np.sum(y))) / max(float(np.sum(np.abs(beta))), 1e-300), 0.0)
    return _finish(1, beta, Z, kkt, "linprog-highs", scale)


def _l2_certificate(Z: np.ndarray, beta: np.ndarray, tol: float = 1e-6) -> tuple[np.ndarray, float]:
    """Active-set polish: λ ≥ 0 on the constraints with margin ≤ 1 + tol, β = Z_Aᵀλ with
    Z_A β = 1; returns (β, KKT residual)."""
    m = Z @ beta
    m = m / np.min(m)
    active = np.flatnonzero(m <= 1 + tol)
    if len(active) > MAX_DENSE_VARIABLES:  # NNLS on |A|×|A| is dense: no certificate
        return beta, math.inf
    ZA = Z[active]
    lam, _ = nnls(ZA @ ZA.T, np.ones(len(active)), maxiter=50 * max(len(active), 1))
    b = ZA.T @ lam
    if not np.any(b):
        return beta, math.inf
    mb = Z @ b
    scale = max(float(scaled_norm(Z, axis=1).max()) * float(scaled_norm(b)), 1e-300)
    resid = max(float(np.max(np.abs(mb[active] - 1.0))), float(np.max(1.0 - mb, initial=0.0)))
    return b, resid / max(scale, 1.0)


def _l2_working_set(Z: np.ndarray, tol: float, working: int, max_rounds: int) -> tuple[np.ndarray, bool, int]:
    """β = Z_Wᵀλ from the dual ``min ½‖Z_Wᵀλ‖² − Σλ s.t. λ ≥ 0`` on a working set W of rows
    (L-BFGS-B, warm-started; memory O(|W|·d), never an n×n or d×d matrix), W grown by the
    ``working`` most violated rows of the full set until every margin is ≥ 1 − ``tol`` (rows
    whose λ is 0 leave W). The first W: the rows with the smallest margins under Σ_i z_i.
    Returns (β, converged, rounds)."""
    n = Z.shape[0]
    order = np.argsort(Z @ Z.sum(axis=0), kind="stable")
    W = np.sort(order[: min(working, n)])
    lam_w = np.zeros(W.size)
    beta = np.zeros(Z.shape[1])
    for rounds in range(1, max_rounds + 1):
        ZW = Z[W]

        def dual(lam, ZW=ZW):
            b = ZW.T @ lam
            return 0.5 * float(b @ b) - float(lam.sum()), ZW @ b - 1.0

        res = minimize(dual, lam_w, jac=True, method="L-BFGS-B", bounds=[(0, None)] * W.size,
                       options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12})
        lam_w = np.maximum(res.x, 0.0)
        beta = ZW.T @ lam_w
        m = Z @ beta
        viol = np.flatnonzero(m < 1.0 - tol)
        if viol.size == 0:
            return beta, True, rounds
        add = viol[np.argsort(m[viol], kind="stable")][:working]
        keep = lam_w > 0
        W_new = np.union1d(W[keep], add)
        lam_map = dict(zip(W.tolist(), lam_w.tolist()))
        W = W_new
        lam_w = np.array([lam_map.get(i, 0.0) for i in W.tolist()])
    return beta, False, max_rounds


def l2_max_margin(data, *, method: str = "auto", tol: float = 1e-6, working: int = 400,
                  max_rounds: int = 60) -> MaxMargin:
    """``min ½‖β‖² s.t. <β, z_i> ≥ 1``. ``method`` "auto": SLSQP for small problems (d and n ≤
    :data:`MAX_DENSE_VARIABLES`), the working set otherwise; "slsqp" or "working-set" force one.
    SLSQP on β from the ℓ1 solution (its workspace is dense in the variables and constraints:
    d = 200,000 would need TiB). Otherwise the dual by a working set of rows
    (:func:`_l2_working_set`: ``tol``, ``working`` rows added per round, ``max_rounds`` — a budget;
    ``method`` says when it ran out). Then the active-set certificate: λ ≥ 0 on the rows within
    ctol of the smallest margin with Z_A Z_Aᵀ λ = 1 (NNLS), β = Z_Aᵀλ; when every KKT condition
    holds to 1e-10 (SLSQP) / 1e-9 (working set, ctol from 1e-6 to 1e-3) the answer is exact to
    rounding, and ``kkt_residual`` says how well they hold either way."""
    if method not in ("auto", "slsqp", "working-set"):
        raise TheorycheckError(f"l2 max margin: method {method!r}: choose auto, slsqp or working-set")
    Z, scale = _scaled(data)
    n, d = Z.shape
    small = d <= MAX_DENSE_VARIABLES and n <= MAX_DENSE_VARIABLES
    if method == "slsqp" or (method == "auto" and small):
        start = l1_max_margin(Z).beta
        res = minimize(lambda b: 0.5 * b @ b, start, jac=lambda b: b, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda b: Z @ b - 1.0, "jac": lambda b: Z}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        beta = res.x if np.all(np.isfinite(res.x)) and np.min(Z @ res.x) > 0 else start
        polished, kkt = _l2_certificate(Z, beta)
        if kkt < 1e-10:
            return _finish(2, polished, Z, kkt, "slsqp+active-set", scale)
        m = Z @ beta
        lam_resid = float(np.max(np.maximum(1.0 - m / np.min(m), 0.0)))
        return _finish(2, beta, Z, max(kkt if math.isfinite(kkt) else 1.0, lam_resid), "slsqp", scale)
    if not (tol > 0 and working >= 1 and max_rounds >= 1):
        raise TheorycheckError("l2 max margin: tol must be > 0, working and max_rounds ≥ 1")
    beta, converged, rounds = _l2_working_set(Z, tol, int(working), int(max_rounds))
    if not (np.all(np.isfinite(beta)) and np.min(Z @ beta) > 0):
        beta = l1_max_margin(Z).beta
    best = math.inf
    for ctol in (1e-6, 1e-5, 1e-4, 1e-3):  # the active set: rows within ctol of the smallest margin
        polished, kkt = _l2_certificate(Z, beta, ctol)
        if kkt < 1e-9:
            return _finish(2, polished, Z, kkt, "dual-working-set+active-set", scale)
        best = min(best, kkt)
    mm = Z @ beta
    resid = max(float(np.max(np.maximum(1.0 - mm / np.min(mm), 0.0))), tol)
    method = "dual-working-set" + ("" if converged else f" (stopped after {rounds} rounds)")
    return _finish(2, beta, Z, max(resid, best) if math.isfinite(best) else max(resid, 1.0), method, scale)


def l2_max_margin_large(data, *, tol: float = 1e-6, working: int = 400, max_rounds: int = 60) -> MaxMargin:
    """:func:`l2_max_margin` with ``method="working-set"`` (the same solver, whatever the size)."""
    return l2_max_margin(data, method="working-set", tol=tol, working=working, max_rounds=max_rounds)


def max_margin(data, norm: int) -> MaxMargin:
    """ℓ1 (``norm`` = 1) or ℓ2 (``norm`` = 2) max-margin solution."""
    if norm == 1:
        return l1_max_margin(data)
    if norm == 2:
        return l2_max_margin(data)
    raise TheorycheckError(f"norm {norm!r}: choose 1 or 2")


def angle_degrees(u: np.ndarray, v: np.ndarray) -> float | None:
    """Angle between two vectors in degrees (None when either is 0)."""
    u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
    mu, mv = (float(np.max(np.abs(x), initial=0.0)) for x in (u, v))
    if mu == 0 or mv == 0:
        return None
    u, v = u / mu, v / mv  # scale-free: ‖β‖² of a β near 1e±300 would leave float64
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    if nu == 0 or nv == 0:
        return None
    c = float(np.clip(u @ v / (nu * nv), -1.0, 1.0))
    # arccos is ill-conditioned near ±1: use atan2 of the sine and cosine parts
    s = float(np.linalg.norm(u / nu - c * v / nv))
    return math.degrees(math.atan2(s, c))

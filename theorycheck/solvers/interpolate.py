"""Interpolators of underdetermined data Xβ = y: min ‖β‖₁, min ‖β‖₂ and argmin Q_α.

- ℓ2: the pseudo-inverse solution Xᵀ(XXᵀ)⁺y (KKT: β in the row space; residual reported).
- ℓ1: an LP (β = p − q, p, q ≥ 0) by HiGHS; the certificate is the LP dual λ with
  ‖Xᵀλ‖∞ ≤ 1 and Xᵀλ = sign(β) on the support; ``kkt_residual`` is the largest violation.
  ``unique`` says whether the minimiser is unique (checked by a second LP per coordinate
  direction of the face: it is not unique iff some β' on the optimal face differs).
- Q_α (depth D, signed parametrisation, :mod:`theorycheck.symbolic.regression`): the
  dual max_λ λᵀy − α^D Σ H_D((Xᵀλ)_j) by damped Newton; β(λ) = α^D h_D(Xᵀλ) satisfies
  ∇Q_α(β) = Xᵀλ exactly, so the KKT residual is the constraint residual ‖Xβ − y‖.
  Budget: ``max_iter`` Newton steps; the result says when it ran out.

``h_inverse`` solves h_D(θ) = z for θ (bisection to machine precision, with an error bar):
q_D has no closed form for D ≥ 3, so q_D(z) = zθ − H_D(θ) at that θ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from theorycheck.errors import TheorycheckError
from theorycheck.status import Status
from theorycheck.symbolic import regression_forms as RF

__all__ = ["Interpolator", "min_l1", "min_l2", "argmin_Q", "h_inverse", "Q_value", "q_D", "no_interpolator"]


@dataclass
class Interpolator:
    beta: np.ndarray
    objective: float
    constraint_residual: float
    kkt_residual: float
    method: str
    status: Status = Status.CONVERGED
    unique: bool | None = None
    iterations: int = 0
    dual: np.ndarray | None = None
    message: str = ""

    def as_dict(self) -> dict:
        return {"beta": self.beta.tolist(), "objective": self.objective,
                "constraint_residual": self.constraint_residual, "kkt_residual": self.kkt_residual,
                "method": self.method, "status": self.status, "message": self.message, "unique": self.unique, "iterations": self.iterations}


def no_interpolator(X: np.ndarray, y: np.ndarray) -> float:
    """‖Xβ₂ − y‖/max(1, ‖y‖) for the least-squares β₂: > 1e-9 means no β interpolates."""
    b = np.linalg.lstsq(X, y, rcond=None)[0]
    return float(np.linalg.norm(X @ b - y)) / max(1.0, float(np.linalg.norm(y)))


def _require_interpolable(X, y) -> None:
    gap = no_interpolator(X, y)
    if gap > 1e-9:
        raise TheorycheckError(f"no β interpolates the data (least-squares residual {gap:.2e}): the claims need "
                               "y in the range of X (e.g. fewer examples than features, X of full row rank)")


def min_l2(X, y) -> Interpolator:
    X, y = np.asarray(X, float), np.asarray(y, float)
    _require_interpolable(X, y)
    b = np.linalg.pinv(X) @ y
    res = float(np.linalg.norm(X @ b - y))
    P = np.linalg.pinv(X) @ X
    kkt = float(np.linalg.norm(b - P @ b))  # β must lie in the row space
    return Interpolator(b, float(np.linalg.norm(b)), res, max(res, kkt), "pinv", unique=True)


def min_l1(X, y) -> Interpolator:
    X, y = np.asarray(X, float), np.asarray(y, float)
    _require_interpolable(X, y)
    n, d = X.shape
    c = np.ones(2 * d)
    A = np.hstack([X, -X])
    lp = linprog(c, A_eq=A, b_eq=y, bounds=[(0, None)] * (2 * d), method="highs")
    if lp.status != 0:
        raise TheorycheckError(f"the ℓ1 LP failed: {lp.message}")
    b = lp.x[:d] - lp.x[d:]
    lam = -np.asarray(lp.eqlin.marginals) if lp.eqlin is not None else np.zeros(n)
    s = X.T @ lam
    # the dual of min ‖β‖₁ s.t. Xβ = y is max yᵀλ s.t. ‖Xᵀλ‖∞ ≤ 1; HiGHS's sign convention varies: take the one
    # that makes the duality gap smaller
    if abs(y @ lam - np.abs(b).sum()) > abs(-y @ lam - np.abs(b).sum()):
        lam, s = -lam, -s
    supp = np.abs(b) > 1e-9 * max(1.0, np.abs(b).max())
    kkt = max(float(np.max(np.abs(s)) - 1.0), 0.0)
    if supp.any():
        kkt = max(kkt, float(np.max(np.abs(s[supp] - np.sign(b[supp])))))
    kkt = max(kkt, abs(float(y @ lam) - float(np.abs(b).sum())) / max(1.0, float(np.abs(b).sum())))
    res = float(np.linalg.norm(X @ b - y))
    # uniqueness: on the optimal face {Xβ = y, ‖β‖₁ = opt}, maximise and minimise each coordinate
    opt = float(np.abs(b).sum())
    unique = True
    A_ub = np.concatenate([c])[None, :]
    for j in range(d):
        for sgn in (1.0, -1.0):
            cj = np.zeros(2 * d)
            cj[j], cj[d + j] = sgn, -sgn
            r = linprog(cj, A_ub=A_ub, b_ub=[opt * (1 + 1e-9) + 1e-12], A_eq=A, b_eq=y,
                        bounds=[(0, None)] * (2 * d), method="highs")
            if r.status == 0 and abs((r.x[j] - r.x[d + j]) - b[j]) > 1e-6 * max(1.0, opt):
                unique = False
                break
        if not unique:
            break
    return Interpolator(b, opt, res, max(kkt, res), "linprog-highs", unique=unique)


def h_inverse(zv, D: int, max_iter: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """θ with h_D(θ) = z (entrywise) and an error bar on θ (half the final bracket)."""
    zv = np.atleast_1d(np.asarray(zv, dtype=float))
    f = RF.pm_forms(D)
    if D == 2:
        th = np.arcsinh(zv / 2.0)
        return th, np.abs(th) * 4e-16 + 1e-300
    lo, hi = np.full(zv.shape, -1.0), np.full(zv.shape, 1.0)
    for _ in range(max_iter):  # h_D increasing on (−1, 1): bisection, overflow-safe at the ends
        mid = 0.5 * (lo + hi)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            hv = f["h"](mid)
        up = hv < zv
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        if np.all(hi - lo <= 2e-16 * np.maximum(1.0, np.abs(mid))):
            break
    return 0.5 * (lo + hi), 0.5 * (hi - lo)


def q_D(zv, D: int) -> tuple[np.ndarray, np.ndarray]:
    """q_D(z) (D = 2: the closed form) and an error bar from the inverse."""
    zv = np.atleast_1d(np.asarray(zv, dtype=float))
    if D == 2:
        return RF.pm_q2()(zv) * np.ones_like(zv), 4e-16 * (1 + np.abs(zv) * (1 + np.abs(np.arcsinh(zv / 2))))
    f = RF.pm_forms(D)
    th, dth = h_inverse(zv, D)
    val = zv * th - f["H"](th)
    # q_D(z) = max_θ zθ − H(θ): at the bisected θ the value is off by ≤ |z − h(θ)|·|Δθ| plus rounding
    err = np.abs(zv - f["h"](th)) * dth + 4e-16 * (np.abs(zv * th) + np.abs(f["H"](th)))
    return val, err


def _scales(alpha, d: int, D: int) -> tuple[np.ndarray, np.ndarray]:
    """(α, α^D) as d-vectors from one α or one per coordinate, checked (finite, > 0, α^D in float64's safe range)."""
    a = np.asarray(alpha, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(d, float(a[0]))
    if a.size != d:
        raise TheorycheckError(f"alpha has {a.size} entries but β has d = {d}: give one α or one per coordinate")
    if not np.all(np.isfinite(a) & (a > 0)):
        raise TheorycheckError(f"alpha must be positive and finite, got {a.tolist() if a.size < 8 else 'an entry that is not'}")
    with np.errstate(over="ignore", under="ignore"):
        aD = np.exp(D * np.log(a))
    if not np.all((aD > 1e-278) & (aD < 1e278)):
        raise TheorycheckError(f"alpha^D = {float(a[np.argmax((aD <= 1e-278) | (aD >= 1e278))]):g}^{D} is outside "
                               "float64's safe range: choose alpha nearer 1")
    return a, aD


def Q_value(beta, D: int, alpha) -> tuple[float, float]:
    """Q_α(β) = Σ_j α_j^D q_D(β_j/α_j^D) (α one number or one per coordinate) and its error bar."""
    beta = np.asarray(beta, float)
    _, aD = _scales(alpha, beta.size, D)
    v, e = q_D(beta / aD, D)
    return float(np.sum(aD * v)), float(np.sum(aD * e))


class _Dual:
    """The dual of min Q_α(β) s.t. Xβ = y: θ = Xᵀλ, β_j = α_j^D h_D(θ_j), φ(λ) = λᵀy − Σ_j α_j^D H_D(θ_j)."""

    def __init__(self, X, y, D: int, aD: np.ndarray):
        self.X, self.y, self.D, self.aD, self.f = X, y, D, aD, RF.pm_forms(D)

    def parts(self, lmb):
        """(θ, β, φ) at λ, or None where θ leaves h_D's domain or a value overflows."""
        th = self.X.T @ lmb
        if self.D > 2 and np.any(np.abs(th) >= 1.0):
            return None
        with np.errstate(over="raise"):
            try:
                b = self.aD * self.f["h"](th) * np.ones_like(th)
                phi = float(lmb @ self.y - np.sum(self.aD * self.f["H"](th) * np.ones_like(th)))
            except FloatingPointError:
                return None
        if not (np.all(np.isfinite(b)) and math.isfinite(phi)):
            return None
        return th, b, phi

    def newton_step(self, th, r):
        Hm = (self.X * (self.aD * self.f["dh"](th) * np.ones_like(th))) @ self.X.T
        with np.errstate(over="ignore", invalid="ignore"):
            return np.linalg.lstsq(Hm, r, rcond=None)[0]

    def line_search(self, lam, step, phi, r, rn):
        """(t, parts) of an accepted step (an ascent of φ, or a decrease of the residual), or None."""
        t_ = 1.0
        for _ in range(200):
            cand = self.parts(lam + t_ * step) if np.all(np.isfinite(step)) else None
            if cand is not None:
                with np.errstate(over="ignore"):  # an overflowing trial residual is inf: rejected
                    rc = float(np.linalg.norm(self.y - self.X @ cand[1]))
                if cand[2] > phi + 1e-4 * t_ * float(step @ r) or rc <= (1 - 1e-4 * t_) * rn:
                    return t_, cand
            t_ *= 0.5
        return None


def _warm_start(dual: _Dual, X, y, D, alpha: np.ndarray, tol, max_iter):
    """λ from a larger scale for small α (Newton from λ = 0 takes giant, overflowing steps there):
    the solution at α·(10^-2/min α) (capped at 1e-2·α/min α), its λ stretched for D = 2 (θ grows
    like log(1/α²) on the support)."""
    lam = np.zeros(X.shape[0])
    amin = float(alpha.min())
    if amin >= 1e-2:
        return lam
    factor = min(1e3, 1e-2 / amin)
    start = argmin_Q(X, y, depth=D, alpha=alpha * factor, tol=tol, max_iter=max_iter)
    lam0 = start.dual
    if D == 2 and lam0 is not None:
        lam0 = lam0 * math.log(1 / amin) / math.log(1 / (amin * factor))
    return lam0 if lam0 is not None and dual.parts(lam0) is not None else lam


def argmin_Q(X, y, *, depth: int = 2, alpha=1.0, tol: float = 1e-12, max_iter: int = 500) -> Interpolator:
    """argmin{Q_α(β) : Xβ = y}, Q_α(β) = Σ_j α_j^D q_D(β_j/α_j^D) with ``alpha`` one number or one per
    coordinate, through its dual by damped Newton (budget ``max_iter``)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    _require_interpolable(X, y)
    D = int(depth)
    if D < 2:
        raise TheorycheckError("Q_α is defined for the signed parametrisation, depth ≥ 2")
    alpha, aD = _scales(alpha, X.shape[1], D)
    dual = _Dual(X, y, D, aD)
    lam = _warm_start(dual, X, y, D, alpha, tol, max_iter)
    th, b, phi = dual.parts(lam)
    ytol = tol * max(1.0, float(np.linalg.norm(y)))
    status, message, it = Status.CONVERGED, "", 0
    best, best_it = math.inf, 0
    while True:
        r = y - X @ b
        rn = float(np.linalg.norm(r))
        if rn <= ytol:
            break
        if it >= max_iter:
            status, message = Status.MAX_ITERATIONS, f"max_iter ({max_iter})"
            break
        if rn < 0.5 * best:
            best, best_it = rn, it
        elif it - best_it >= 25 and rn <= 1e-7 * max(1.0, float(np.linalg.norm(y))):
            status = Status.ROUNDING_LIMITED
            message = "25 Newton steps without halving the residual (it is the accuracy reached)"
            break
        it += 1
        step = dual.newton_step(th, r)
        found = dual.line_search(lam, step, phi, r, rn)
        if found is None:
            status, message = Status.STALLED, Status.STALLED.message
            break
        lam = lam + found[0] * step
        th, b, phi = found[1]
    res = float(np.linalg.norm(X @ b - y))
    with np.errstate(over="ignore", invalid="ignore"):
        obj = float(np.sum(aD * dual.f["q_theta"](th) * np.ones_like(th)))  # q_D(h_D(θ)): no overflow of z² at tiny α
    if not (math.isfinite(obj) and np.all(np.isfinite(b))):
        raise TheorycheckError(f"Q_α overflows float64 at alpha = {float(alpha.min()):g} for these data: choose alpha "
                               "nearer 1")
    out = Interpolator(b, obj, res, res, f"dual-newton (D={D})", status=status, iterations=it, message=message)
    out.dual = lam
    return out

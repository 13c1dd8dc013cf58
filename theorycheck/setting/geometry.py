"""The geometry of a data set, decided once when a problem is set: its power-of-two scale, linear
separability (an LP, with its certificate) and the cone of predictors the network can reach from its
initialisation (which examples it can fit, with what weights)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from theorycheck.errors import NotSeparableError, SettingError

__all__ = ["pow2_scale", "scaled_to_margin_one", "check_separable", "equilibrate", "Reachable", "reachable_cone",
           "reachable_analysis"]


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

"""Least squares in exact rational arithmetic: min L(β) = (1/n) Σ_i ½(⟨x_i, β⟩ − y_i)² with β_j = 0 off an
allowed set and sign constraints σ_j β_j ≥ 0 on it (a sign-constrained NNLS), solved by Lawson–Hanson on
Fractions. Every tie is exact; the answer's KKT conditions are checked exactly, and whether the minimiser
is unique is decided exactly too (a second minimiser is returned when it is not).

Exact Lawson–Hanson never meets a singular subproblem: a column is added only when the residual has a
positive component along it, so it is outside the span of the current (independent) columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from theorycheck.arith.exact import exact
from theorycheck.errors import SettingError

__all__ = ["Matrix", "SignedLSQ", "exact_data", "solve_linear", "gradient", "loss", "residual",
           "sign_constrained_lsq", "nonnegative_lsq"]

Matrix = tuple[tuple[Fraction, ...], ...]
#: Lawson–Hanson iterations (outer + inner) allowed by default; each removes or adds one column
MAX_ITERATIONS = 10_000


def exact_data(X, y) -> tuple[Matrix, tuple[Fraction, ...]]:
    """X (n rows of d numbers) and y (n numbers) as Fractions, read by :func:`theorycheck.arith.exact.exact`
    (decimal strings exactly; floats as their binary values). Ragged or empty input is a one-line error."""
    rows = [list(r) for r in X]
    if not rows or not rows[0]:
        raise SettingError("X is empty: give at least one row and one column")
    d = len(rows[0])
    if any(len(r) != d for r in rows):
        raise SettingError(f"X is ragged: rows have {sorted({len(r) for r in rows})} entries, give {d} each")
    ys = list(y)
    if len(ys) != len(rows):
        raise SettingError(f"y has {len(ys)} entries but X has {len(rows)} rows")
    Xq = tuple(tuple(exact(v, f"X[{i},{j}]").value for j, v in enumerate(r)) for i, r in enumerate(rows))
    return Xq, tuple(exact(v, f"y[{i}]").value for i, v in enumerate(ys))


def solve_linear(M: Sequence[Sequence[Fraction]], b: Sequence[Fraction]) -> tuple[Fraction, ...] | None:
    """The solution of the square system M z = b (Gauss–Jordan on Fractions), or None when M is singular."""
    m = len(b)
    A = [list(map(Fraction, M[i])) + [Fraction(b[i])] for i in range(m)]
    for c in range(m):
        p = next((r for r in range(c, m) if A[r][c] != 0), None)
        if p is None:
            return None
        A[c], A[p] = A[p], A[c]
        piv = A[c][c]
        A[c] = [v / piv for v in A[c]]
        for r in range(m):
            if r != c and A[r][c] != 0:
                f = A[r][c]
                A[r] = [a - f * e for a, e in zip(A[r], A[c])]
    return tuple(A[i][m] for i in range(m))


def residual(X: Matrix, y, beta) -> tuple[Fraction, ...]:
    """r = Xβ − y, exactly."""
    return tuple(sum((a * b for a, b in zip(row, beta)), Fraction(0)) - yi for row, yi in zip(X, y))


def gradient(X: Matrix, y, beta) -> tuple[Fraction, ...]:
    """∇L(β) = (1/n) Xᵀ(Xβ − y), exactly."""
    r, n = residual(X, y, beta), len(X)
    return tuple(sum((X[i][j] * r[i] for i in range(n)), Fraction(0)) / n for j in range(len(X[0])))


def loss(X: Matrix, y, beta) -> Fraction:
    """L(β) = (1/n) Σ ½ r_i², exactly."""
    return sum((v * v for v in residual(X, y, beta)), Fraction(0)) / (2 * len(X))


def _gram(C: Sequence[Sequence[Fraction]], P: Sequence[int]) -> list[list[Fraction]]:
    return [[sum((C[i][a] * C[i][b] for i in range(len(C))), Fraction(0)) for b in P] for a in P]


def _lsq_on(C, e, P) -> tuple[Fraction, ...]:
    """The unconstrained least squares of e on the (independent) columns P of C."""
    rhs = [sum((C[i][a] * e[i] for i in range(len(C))), Fraction(0)) for a in P]
    z = solve_linear(_gram(C, P), rhs)
    if z is None:  # impossible in exact Lawson–Hanson (module docstring); never hidden
        raise ArithmeticError("Lawson–Hanson met dependent columns: this is a bug")
    return z


def nonnegative_lsq(C: Matrix, e: Sequence[Fraction], max_iterations: int = MAX_ITERATIONS):
    """min ‖C z − e‖² over z ≥ 0, exactly (Lawson–Hanson). Returns (z, passive set, iterations, status):
    status "solved", or "iteration budget" when ``max_iterations`` ran out first (z is then feasible, not optimal)."""
    m = len(C[0]) if C else 0
    z = [Fraction(0)] * m
    P: list[int] = []
    it = 0
    while it < max_iterations:
        r = [sum((C[i][j] * z[j] for j in range(m)), Fraction(0)) - e[i] for i in range(len(C))]
        w = [-sum((C[i][j] * r[i] for i in range(len(C))), Fraction(0)) for j in range(m)]
        cand = [j for j in range(m) if j not in P and w[j] > 0]
        if not cand:
            return tuple(z), tuple(sorted(P)), it, "solved"
        P.append(max(cand, key=lambda j: (w[j], -j)))  # largest w, lowest index on an exact tie
        while it < max_iterations:
            it += 1
            s = dict(zip(P, _lsq_on(C, e, P)))
            if all(v > 0 for v in s.values()):
                z = [s.get(j, Fraction(0)) for j in range(m)]
                break
            step = min(z[j] / (z[j] - s[j]) for j in P if s[j] <= 0)
            z = [z[j] + step * (s[j] - z[j]) if j in s else Fraction(0) for j in range(m)]
            P = [j for j in P if z[j] > 0]
    return tuple(z), tuple(sorted(P)), it, "iteration budget"


@dataclass(frozen=True)
class SignedLSQ:
    """A sign-constrained least squares answer, exact. ``beta`` a minimiser; ``gradient`` ∇L(β) (the same for
    every minimiser: L is strictly convex in Xβ); ``kkt``: the KKT conditions hold exactly (∇L_j = 0 where
    β_j ≠ 0, σ_j ∇L_j ≥ 0 where β_j = 0 on the allowed set); ``unique``: no other minimiser (decided exactly);
    ``other``: a second minimiser when not unique; ``reason``: why; ``status``: "solved" or "iteration budget"."""

    beta: tuple[Fraction, ...]
    gradient: tuple[Fraction, ...]
    loss: Fraction
    kkt: bool
    unique: bool | None
    other: tuple[Fraction, ...] | None
    reason: str
    iterations: int
    status: str


def _kkt(beta, g, signs) -> bool:
    allowed_zero = all(beta[j] == 0 for j in range(len(beta)) if j not in signs)
    feasible = all(signs[j] * beta[j] >= 0 for j in signs)
    stationary = all(g[j] == 0 for j in signs if beta[j] != 0)
    return allowed_zero and feasible and stationary and all(signs[j] * g[j] >= 0 for j in signs if beta[j] == 0)


def _other_minimiser(C, P, Q, max_iterations):
    """A nonzero z with C_P z_P + C_Q z_Q = 0, z_Q ≥ 0, Σ z_Q = 1 (columns P independent), or None when there is
    none: then the minimiser with support P is unique. Decided exactly as an NNLS whose optimum is 0 or not:
    min ‖Π C_Q z_Q‖² + (Σ z_Q − 1)² over z_Q ≥ 0, Π the projection off span(C_P)."""
    n = len(C)
    proj = {q: _lsq_on(C, [C[i][q] for i in range(n)], P) if P else () for q in Q}
    rows = [[C[i][q] - sum((C[i][p] * c for p, c in zip(P, proj[q])), Fraction(0)) for q in Q] for i in range(n)]
    A = tuple(tuple(r) for r in rows) + (tuple(Fraction(1) for _ in Q),)
    e = tuple([Fraction(0)] * n + [Fraction(1)])
    zq, _, _, status = nonnegative_lsq(A, e, max_iterations)
    res = [sum((A[i][k] * zq[k] for k in range(len(Q))), Fraction(0)) - e[i] for i in range(len(A))]
    if status != "solved":
        return "budget"
    if any(v != 0 for v in res):
        return None
    zp = [-sum((proj[q][a] * zq[k] for k, q in enumerate(Q)), Fraction(0)) for a in range(len(P))]
    return dict(zip(P, zp)) | dict(zip(Q, zq))


def sign_constrained_lsq(X: Matrix, y: Sequence[Fraction], signs: Mapping[int, int],
                         max_iterations: int = MAX_ITERATIONS) -> SignedLSQ:
    """min L(β) over β with β_j = 0 for j not in ``signs`` and signs[j]·β_j ≥ 0 (signs[j] = ±1), exactly.
    Columns are flipped by their signs and the NNLS is solved by :func:`nonnegative_lsq`; uniqueness is
    decided by :func:`_other_minimiser` on the flipped columns of the allowed set."""
    n, d = len(X), len(X[0])
    idx = sorted(signs)
    C = tuple(tuple(signs[j] * X[i][j] for j in idx) for i in range(n))
    z, P, it, status = nonnegative_lsq(C, y, max_iterations) if idx else ((), (), 0, "solved")
    beta = [Fraction(0)] * d
    for k, j in enumerate(idx):
        beta[j] = signs[j] * z[k]
    beta_t = tuple(beta)
    g = gradient(X, y, beta_t)
    kkt = _kkt(beta_t, g, signs)
    Q = [k for k in range(len(idx)) if k not in P]
    other, unique, reason = None, True, "the allowed columns are independent" if not Q else ""
    if Q and status == "solved":
        found = _other_minimiser(C, list(P), Q, max_iterations)
        if found == "budget":
            unique, reason = None, "the iteration budget ran out deciding uniqueness"
        elif found is None:
            reason = "no direction of the null space keeps the sign constraints"
        else:
            eps = min([Fraction(1)] + [z[k] / -v for k, v in found.items() if v < 0])  # stay feasible
            other_b = list(beta_t)
            for k, v in found.items():
                other_b[idx[k]] += signs[idx[k]] * eps * v
            other, unique = tuple(other_b), False
            moved = sorted(idx[k] for k, v in found.items() if v != 0)
            named = ", ".join(f"x{j + 1}" for j in moved)
            reason = f"columns {named} are linearly dependent within the sign constraints: another minimiser exists"
    elif status != "solved":
        unique, reason = None, "the iteration budget ran out"
    return SignedLSQ(beta_t, g, loss(X, y, beta_t), kkt, unique, other, reason, it, status)
